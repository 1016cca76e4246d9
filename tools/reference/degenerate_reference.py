"""Golden values for degenerate numerics, taken from real PyTorch: what minigrad must do at the
edges (empty tensors, zeros, infinities, nan, huge and tiny logits), forward and backward.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/degenerate_reference.py

It writes tests/fixtures/degenerate.json, read by tests/autograd/test_degenerate.cpp. Each case is
one call: a group (which test reads it), an op, its inputs (shape, values), its other arguments,
and what PyTorch gave: the output (shape, dtype, values; max over a dim adds its indices) and the
gradient of every floating input for out.backward(cotangent), or the name of the exception
PyTorch raised. JSON has no inf or nan, so those are the strings "inf", "-inf" and "nan".
"""

import math
import os
import sys

import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import DTYPES, FIXTURES, dtype_name, fixture_header, flat, write_json  # noqa: E402

OUT = os.path.join(FIXTURES, "degenerate.json")
INF = math.inf
NAN = math.nan


def run(op, xs, args):
    """The PyTorch call of a case; max over a dim returns (values, indices)."""
    x = xs[0]
    if op == "linear":  # what nn.Linear.forward computes
        return F.linear(x, xs[1], xs[2])
    if op == "matmul":
        return torch.matmul(x, xs[1])
    if op == "div":
        return x / xs[1]
    if op == "pow":
        return torch.pow(x, args["exponent"])
    if op == "clamp":
        return torch.clamp(x, min=args["min"], max=args["max"])
    if op in ("softmax", "log_softmax"):
        return getattr(torch, op)(x, args["dim"])
    if op == "cross_entropy":
        target = torch.tensor(args["target"], dtype=torch.int64)
        return F.cross_entropy(x, target, reduction=args["reduction"])
    if op in ("sum", "mean", "max", "min", "argmax"):
        if args.get("dim") is None:
            return getattr(x, op)()
        result = getattr(x, op)(args["dim"], keepdim=args["keepdim"])
        return (result.values, result.indices) if op in ("max", "min") else result
    return getattr(torch, op)(x)  # log, sqrt, exp, relu, abs, sigmoid, tanh


CASES = []


def case(group, name, op, inputs, dtype="float32", cotangent=None, **args):
    """Records op(inputs, args). inputs: (values, shape) pairs; floating ones require grad.
    The cotangent defaults to ones (so each gradient is the local derivative)."""
    xs = [torch.tensor(values, dtype=DTYPES[dtype]).reshape(shape) for values, shape in inputs]
    for x in xs:
        x.requires_grad_(x.is_floating_point())
    record = {"group": group, "name": name, "op": op, "dtype": dtype, "args": args,
              "inputs": [{"shape": list(x.shape), "values": flat(x)} for x in xs]}
    try:
        out = run(op, xs, args)
    except (RuntimeError, IndexError) as error:
        record["error"] = type(error).__name__
        CASES.append(record)
        return
    if isinstance(out, tuple):
        out, indices = out
        record["indices"] = flat(indices)
    record["output"] = {"shape": list(out.shape), "dtype": dtype_name(out.dtype), "values": flat(out)}
    if out.requires_grad:
        v = torch.ones_like(out) if cotangent is None else torch.tensor(cotangent, dtype=out.dtype)
        out.backward(v.reshape(out.shape))
        record["cotangent"] = flat(v)
        record["grads"] = [flat(x.grad) if x.grad is not None else None for x in xs]
    CASES.append(record)


def elementwise_cases():
    """Each op on a row of edge values: 0, -0, negatives, +-inf, nan where it teaches something."""
    group = "elementwise"
    zeros_and_more = [0.0, -0.0, -1.0, 1.0, INF, -INF, NAN]
    for dtype in ("float32", "float64"):
        row = [(zeros_and_more, (7,))]
        case(group, f"log_at_zero_{dtype}", "log", row, dtype)  # log(0) = -inf, gradient 1/0 = inf
        case(group, f"sqrt_at_zero_{dtype}", "sqrt", row, dtype)  # gradient 1/(2 sqrt 0) = inf
        case(group, f"exp_at_infinities_{dtype}", "exp",
             [([0.0, 100.0, 1000.0, -1000.0, INF, -INF, NAN], (7,))], dtype)
        case(group, f"relu_at_zero_{dtype}", "relu", row, dtype)  # gradient 0 at exactly 0
        case(group, f"abs_at_zero_{dtype}", "abs", row, dtype)  # gradient sign(0) = 0
        case(group, f"clamp_at_its_bounds_{dtype}", "clamp", [([-1.0, 1.0, -2.0, 2.0, 0.0, INF, -INF], (7,))],
             dtype, min=-1.0, max=1.0)  # gradient 1 on both bounds
        far = [([1e4, -1e4, 0.0, 50.0, -50.0, INF, -INF], (7,))]
        case(group, f"sigmoid_far_from_zero_{dtype}", "sigmoid", far, dtype)
        case(group, f"tanh_far_from_zero_{dtype}", "tanh", far, dtype)
        # 0/0, 1/0, -1/0, 1/-0, 0/inf, inf/inf, and one ordinary quotient.
        case(group, f"div_by_zero_{dtype}", "div",
             [([0.0, 1.0, -1.0, 1.0, 0.0, INF, 6.0], (7,)),
              ([0.0, 0.0, 0.0, -0.0, INF, INF, 3.0], (7,))], dtype)
        # pow at +-0, at a negative base (a fractional exponent gives nan), at a positive one and
        # at the infinities: for +-0.5 PyTorch computes sqrt and rsqrt, so rsqrt(-0) = -inf and
        # sqrt(-inf) = nan, where C's pow gives +inf and +inf.
        bases = [([0.0, -0.0, -2.0, 2.0, -0.5, 1.0, INF, -INF, NAN], (9,))]
        for exponent in (0.0, 0.5, 2.0, -1.0, 3.0, -0.5, -2.0):
            case(group, f"pow_{exponent}_at_zero_and_negative_bases_{dtype}".replace(".", "_"), "pow",
                 bases, dtype, exponent=exponent)


# Logit rows that break a naive softmax: huge (e^1e8 overflows), near float32's largest, tiny
# (float32's smallest subnormal), +inf, -inf, nan, all -inf, two +inf.
ROWS = {
    "huge": [1e8, 0.0, -1e8],
    "near_float32_max": [3e38, 3e38, 0.0],
    "float32_extremes": [3.4e38, -3.4e38, 0.0],
    "tiny": [1e-45, 0.0, -1e-45],
    "plus_inf": [INF, 0.0, 1.0],
    "minus_inf": [-INF, 0.0, 1.0],
    "nan": [NAN, 0.0, 1.0],
    "all_minus_inf": [-INF, -INF, -INF],
    "two_plus_inf": [INF, INF, 0.0],
}


def softmax_cases():
    for dtype in ("float32", "float64"):
        for row_name, row in ROWS.items():
            for op in ("softmax", "log_softmax"):
                case("softmax", f"{op}_{row_name}_{dtype}", op, [(row, (1, 3))], dtype,
                     cotangent=[1.0, 2.0, 3.0], dim=1)
            for target in (0, 2):
                case("cross_entropy", f"cross_entropy_{row_name}_target_{target}_{dtype}", "cross_entropy",
                     [(row, (1, 3))], dtype, target=[target], reduction="mean")
    # A batch mixing the rows, one loss per row.
    batch = [v for row in ROWS.values() for v in row]
    targets = [i % 3 for i in range(len(ROWS))]
    case("cross_entropy", "cross_entropy_all_rows_reduction_none", "cross_entropy", [(batch, (len(ROWS), 3))],
         target=targets, reduction="none", cotangent=[1.0] * len(ROWS))


def empty_cases():
    """Tensors with 0 rows through Linear and matmul, and reductions of empty tensors."""
    weight = ([0.5, -1.0, 2.0, 0.25, 1.5, -0.75], (2, 3))
    bias = ([0.1, -0.2], (2,))
    case("empty_products", "linear_of_0_rows", "linear", [([], (0, 3)), weight, bias])
    case("empty_products", "linear_of_0_batches_of_rows", "linear", [([], (2, 0, 3)), weight, bias])
    for a, b in [((0, 3), (3, 2)), ((2, 0), (0, 3)), ((0,), (0,)), ((3,), (3, 0)), ((0, 3), (3,)),
                 ((2, 0, 3), (3, 4)), ((0, 2, 3), (0, 3, 4))]:
        a_values = [float(i + 1) for i in range(math.prod(a))]
        b_values = [float(i - 2) for i in range(math.prod(b))]
        name = "matmul_{}_by_{}".format("x".join(map(str, a)), "x".join(map(str, b)))
        case("empty_products", name, "matmul", [(a_values, a), (b_values, b)])

    for shape in [(0,), (0, 3), (2, 0)]:
        label = "x".join(map(str, shape))
        for op in ("sum", "mean", "max", "min", "argmax"):
            case("empty_reductions", f"{op}_of_empty_{label}", op, [([], shape)])
            for dim in range(len(shape)):
                case("empty_reductions", f"{op}_of_empty_{label}_over_dim_{dim}", op, [([], shape)],
                     dim=dim, keepdim=False)
        case("empty_reductions", f"sum_of_empty_{label}_int64", "sum", [([], shape)], "int64")
    case("empty_reductions", "sum_of_empty_0x3_over_dim_0_keepdim", "sum", [([], (0, 3))], dim=0,
         keepdim=True)
    case("empty_reductions", "softmax_of_empty_0x3", "softmax", [([], (0, 3))], dim=1)
    case("empty_reductions", "log_softmax_of_empty_2x0", "log_softmax", [([], (2, 0))], dim=1)
    for reduction in ("mean", "sum", "none"):
        case("empty_reductions", f"cross_entropy_of_0_rows_{reduction}", "cross_entropy", [([], (0, 3))],
             target=[], reduction=reduction)


def main():
    elementwise_cases()
    softmax_cases()
    empty_cases()
    fixture = {"header": fixture_header("degenerate_reference.py"), "cases": CASES}
    path = write_json(OUT, fixture, allow_nan=False)
    errors = sum(1 for c in CASES if "error" in c)
    print(f"wrote {len(CASES)} cases ({errors} PyTorch errors) to {path}")


if __name__ == "__main__":
    main()
