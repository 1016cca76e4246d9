"""Golden values for minigrad's reductions (autograd/ops_reduce.cpp), taken from real PyTorch.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/reduce_reference.py

It writes tests/fixtures/reduce.json: named inputs (shape, dtype, and the values, or one "fill"
value when all are equal), then the cases. Each case is one call: an op (sum, mean, max, min,
argmax, softmax, log_softmax) on a named input, an optional dim and keepdim, and what PyTorch
returned (values, plus indices for max/min over a dim). Differentiable cases also record a
cotangent v and the gradient of sum(out * v) with respect to the input. JSON has no inf or nan,
so those are the strings "inf", "-inf" and "nan"; finite floats use repr (exact).
"""

import math
import os
import sys

import torch

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import (DTYPES, FIXTURES, dtype_name, encode_value, fixture_header,  # noqa: E402
                              flat, write_cases)

OUT = os.path.join(FIXTURES, "reduce.json")
INF = math.inf
NAN = math.nan


def run(op, x, dim, keepdim):
    """The PyTorch call a case records; returns (values, indices or None)."""
    if op in ("softmax", "log_softmax"):
        return getattr(x, op)(dim), None
    if dim is None:
        return getattr(x, op)(), None
    result = getattr(x, op)(dim, keepdim=keepdim)
    if op in ("max", "min"):
        return result.values, result.indices
    return result, None


INPUTS = {}  # name -> tensor; each input is written once and cases refer to it by name


def add_input(name, values, shape, dtype="float32"):
    INPUTS[name] = torch.tensor(values, dtype=DTYPES[dtype]).reshape(shape)
    return name


def case(name, op, input_name, dim=None, keepdim=False, grad=True):
    """Records op(INPUTS[input_name], dim, keepdim), with its gradient where it has one."""
    x = INPUTS[input_name].clone()
    differentiable = x.is_floating_point() and op != "argmax" and grad
    x.requires_grad_(differentiable)
    out, indices = run(op, x, dim, keepdim)
    record = {"name": name, "op": op, "input": input_name, "dim": dim, "keepdim": keepdim,
              "out_shape": list(out.shape), "out_dtype": dtype_name(out.dtype),
              "output": flat(out.detach())}
    if indices is not None:
        record["indices"] = flat(indices)
    if differentiable:
        generator = torch.Generator().manual_seed(7)
        v = torch.randn(out.shape, generator=generator, dtype=x.dtype)
        (out * v).sum().backward()
        record["cotangent"] = flat(v)
        record["grad"] = flat(x.grad)
    return record


def input_record(t):
    """An input as JSON: its values, or just the fill value when every element is the same."""
    record = {"shape": list(t.shape), "dtype": dtype_name(t.dtype)}
    values = t.reshape(-1)
    if t.numel() > 1 and bool((values == values[0]).all()):
        record["fill"] = encode_value(values[0].item())
    else:
        record["values"] = flat(t)
    return record


def random_values(shape, scale=1.0, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return (torch.randn(shape, generator=generator) * scale).reshape(-1).tolist()


def cases():
    out = []
    # Softmax rows that break the naive formula: huge (e^1e8 overflows), shifted far up or down
    # (e^1000 overflows, e^-1000 underflows to 0/0), tiny, -inf entries, an all -inf row (nan).
    hard_rows = [
        [1e8, 0.0, -1e8],
        [1e8, 1e8, 1.0],
        [1000.0, 1001.0, 1002.0],
        [-1000.0, -1001.0, -1002.0],
        [1e-30, 2e-30, 0.0],
        [0.0, -INF, 1.0],
        [-INF, 5.0, -INF],
        [-INF, -INF, -INF],
        [3.0, 3.0, 3.0],
    ]
    rows = [v for row in hard_rows for v in row]
    columns = [row[c] for c in range(3) for row in hard_rows]  # the same lanes along dim 0
    for dtype in ["float32", "float64"]:
        add_input(f"hard_rows_{dtype}", rows, (len(hard_rows), 3), dtype)
        add_input(f"hard_columns_{dtype}", columns, (3, len(hard_rows)), dtype)
        for op in ["softmax", "log_softmax"]:
            out.append(case(f"{op}_hard_rows_{dtype}", op, f"hard_rows_{dtype}", dim=1))
            out.append(case(f"{op}_hard_columns_{dtype}", op, f"hard_columns_{dtype}", dim=0))

    # Every dim of a 3-d input, both softmaxes, float32 (checks the lane walk, not just the math).
    add_input("random_2x3x4", random_values((2, 3, 4), scale=3.0, seed=1), (2, 3, 4))
    for op in ["softmax", "log_softmax"]:
        for dim in [0, 1, 2, -1]:
            out.append(case(f"{op}_3d_dim_{dim}", op, "random_2x3x4", dim=dim))

    # Long float32 sums and means: PyTorch's cascade sum against our double accumulation.
    add_input("random_4096", random_values((4096,), scale=100.0, seed=2), (4096,))
    out.append(case("sum_4096_float32", "sum", "random_4096", grad=False))
    out.append(case("mean_4096_float32", "mean", "random_4096", grad=False))
    add_input("tenths_100000", [0.1] * 100000, (100000,))  # a naive float32 loop drifts to 9998.56
    out.append(case("sum_100000_tenths_float32", "sum", "tenths_100000", grad=False))
    out.append(case("mean_100000_tenths_float32", "mean", "tenths_100000", grad=False))
    add_input("random_4x25x30", random_values((4, 25, 30), scale=10.0, seed=3), (4, 25, 30))
    for dim, keepdim in [(0, False), (1, False), (1, True), (2, False), (-1, True)]:
        for op in ["sum", "mean"]:
            out.append(case(f"{op}_3d_dim_{dim}_keepdim_{keepdim}".lower(), op, "random_4x25x30",
                            dim=dim, keepdim=keepdim, grad=False))

    # Integer and bool inputs: sum gives int64; max/min/argmax keep working.
    add_input("ints_2x4", [3, -7, 3, 12, 0, 12, -7, 5], (2, 4), "int64")
    add_input("flags_2x3", [True, False, True, True, False, True], (2, 3), "bool")
    out.append(case("sum_int64", "sum", "ints_2x4"))
    out.append(case("sum_int64_dim_1", "sum", "ints_2x4", dim=1))
    out.append(case("sum_bool", "sum", "flags_2x3"))
    out.append(case("sum_bool_dim_0_keepdim", "sum", "flags_2x3", dim=0, keepdim=True))
    for op in ["max", "min"]:
        out.append(case(f"{op}_int64", op, "ints_2x4"))
        out.append(case(f"{op}_int64_dim_1_ties", op, "ints_2x4", dim=1))
        out.append(case(f"{op}_bool", op, "flags_2x3"))
        out.append(case(f"{op}_bool_dim_1", op, "flags_2x3", dim=1))
    out.append(case("argmax_int64_ties", "argmax", "ints_2x4"))
    out.append(case("argmax_int64_dim_0_ties", "argmax", "ints_2x4", dim=0))

    # Ties: over all elements the gradient is shared evenly; over a dim the first index wins.
    add_input("tied_3x4", [1.0, 4.0, 4.0, -2.0, 4.0, 0.5, -2.0, -2.0, 0.0, 1.0, 1.0, -2.0], (3, 4))
    for op in ["max", "min"]:
        out.append(case(f"{op}_all_ties_share_the_gradient", op, "tied_3x4"))
        for dim in [0, 1]:
            out.append(case(f"{op}_dim_{dim}_ties_first_index", op, "tied_3x4", dim=dim))
    out.append(case("argmax_all_ties", "argmax", "tied_3x4"))
    out.append(case("argmax_dim_0_ties", "argmax", "tied_3x4", dim=0))
    out.append(case("argmax_dim_1_ties_keepdim", "argmax", "tied_3x4", dim=1, keepdim=True))

    # NaN propagates through max and min (and wins argmax); -inf and inf are ordinary values.
    add_input("with_nan_2x4", [1.0, NAN, 3.0, -INF, 2.0, 7.0, INF, 0.0], (2, 4))
    for op in ["max", "min", "argmax"]:
        out.append(case(f"{op}_nan_all", op, "with_nan_2x4", grad=False))
        out.append(case(f"{op}_nan_dim_1", op, "with_nan_2x4", dim=1, grad=False))

    # Empty inputs: sum is 0, mean is nan, reductions over a non-empty dim give empty outputs.
    add_input("empty_0", [], (0,))
    add_input("empty_2x0", [], (2, 0))
    add_input("empty_0x3", [], (0, 3))
    out.append(case("sum_empty", "sum", "empty_0"))
    out.append(case("mean_empty", "mean", "empty_0"))
    out.append(case("sum_dim_of_size_0", "sum", "empty_2x0", dim=1))
    out.append(case("mean_dim_of_size_0", "mean", "empty_2x0", dim=1))
    out.append(case("max_of_empty_rows", "max", "empty_0x3", dim=1))
    out.append(case("softmax_of_empty_rows", "softmax", "empty_0x3", dim=1))
    return out


def main():
    all_cases = cases()
    header = fixture_header("reduce_reference.py", notes=[
        "each case: one op on a named input; values flat, row-major",
        "max/min over a dim also record indices",
        "cotangent v and grad = d sum(out * v) / d input for differentiable cases",
        "non-finite floats are the strings inf, -inf, nan",
    ])
    inputs = {name: input_record(t) for name, t in INPUTS.items()}
    path = write_cases(OUT, header, all_cases, inputs=inputs, allow_nan=False)
    print(f"wrote {len(all_cases)} cases to {path} ({os.path.getsize(OUT)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
