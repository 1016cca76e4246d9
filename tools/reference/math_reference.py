"""Golden values for the GPT course's math ops, taken from real PyTorch: sin, cos, linspace, cumsum,
topk, var, std and layer_norm (autograd/ops.hpp, autograd/tensor.hpp, nn/functional.hpp).

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/math_reference.py

It writes tests/fixtures/math.json: one case per line, each one call with its inputs, arguments,
outputs, the grad_fn's name, and the gradient of every floating input. The gradient is that of
(out * v).sum() for a recorded random cotangent v (of the first output: topk's indices have none).
Cases come in groups; each test case of tests/autograd/test_math_ops.cpp and tests/nn/test_layer_norm.cpp
replays some groups. JSON has no inf or nan, so those are the strings "inf", "-inf" and "nan";
finite floats use repr (exact).
"""

import math
import os
import sys

import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import DTYPES, FIXTURES, dtype_name, fixture_header, flat, write_cases  # noqa: E402

OUT = os.path.join(FIXTURES, "math.json")
NAN = math.nan


def randn(shape, seed, scale=1.0):
    return torch.randn(shape, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) * scale


def ties(shape, seed, levels=4):
    """Small whole numbers, so that many entries are equal (topk's ties)."""
    generator = torch.Generator().manual_seed(seed)
    return torch.randint(0, levels, shape, generator=generator).to(torch.float64)


def record(t):
    return {"shape": list(t.shape), "dtype": dtype_name(t.dtype), "values": flat(t)}


def call(op, inputs, args):
    if op == "sin":
        return torch.sin(inputs[0])
    if op == "cos":
        return torch.cos(inputs[0])
    if op == "cumsum":
        return torch.cumsum(inputs[0], args["dim"])
    if op == "topk":
        return torch.topk(inputs[0], args["k"], args["dim"], args["largest"], args["sorted"])
    if op in ("var", "std"):
        f = torch.var if op == "var" else torch.std
        if "dims" in args:
            return f(inputs[0], args["dims"], correction=args["correction"], keepdim=args["keepdim"])
        if "dim" in args:
            return f(inputs[0], args["dim"], args["unbiased"], args["keepdim"])
        return f(inputs[0])
    if op == "layer_norm":
        weight = inputs[1] if args["weight"] else None
        bias = inputs[-1] if args["bias"] else None
        return F.layer_norm(inputs[0], args["normalized_shape"], weight, bias, args["eps"])
    raise ValueError(op)


def case(group, name, op, dtype, inputs, args=None, seed=99):
    """Runs op on `inputs` (float64 tensors, converted to `dtype`) and records everything."""
    args = args or {}
    torch_dtype = DTYPES[dtype]
    xs = [x.to(torch_dtype).clone() for x in inputs]
    for x in xs:
        if x.is_floating_point():
            x.requires_grad_(True)
    result = call(op, xs, args)
    outputs = list(result) if isinstance(result, tuple) else [result]
    c = {"group": group, "name": name, "op": op, "dtype": dtype, "args": args,
         "inputs": [record(x) for x in xs], "outputs": [record(o) for o in outputs]}
    if outputs[0].requires_grad:
        c["grad_fn"] = type(outputs[0].grad_fn).__name__
        v = randn(outputs[0].shape, seed).to(torch_dtype)
        c["cotangent"] = flat(v)
        (outputs[0] * v).sum().backward()
        c["grads"] = [flat(x.grad) if x.grad is not None else None for x in xs]
    return c


def elementwise_cases():
    out = []
    x = torch.cat([randn((10,), seed=1, scale=3.0),
                   torch.tensor([0.0, -0.0, math.pi, -math.pi / 2, 100.0, -1000.0, 1e-8, NAN],
                                dtype=torch.float64)])
    for op in ["sin", "cos"]:
        for dtype in ["float32", "float64"]:
            out.append(case("sin_cos", f"{op}_{dtype}", op, dtype, [x.reshape(3, 6)]))
        out.append(case("sin_cos", f"{op}_int64", op, "int64", [torch.tensor([[0, 1, -2], [3, 10, 100]])]))
    return out


def linspace_cases():
    out = []
    runs = [(0, 1, 5, "float32"), (-3.3, 7.1, 300, "float32"), (0, 2 * math.pi, 77, "float32"),
            (1e-3, 5, 33, "float64"), (-3.3, 7.1, 300, "float64"), (5, -5, 11, "float32"), (2, 2, 4, "float32"),
            (-3, 7, 1, "float32"), (0, 1, 0, "float32"), (0, 10, 5, "int64"), (0.5, 10.7, 7, "int64"),
            (-7, 20, 4, "int64"), (0, 1, 2, "float64")]
    for start, end, steps, dtype in runs:
        values = torch.linspace(start, end, steps, dtype=DTYPES[dtype])
        out.append({"group": "linspace", "name": f"linspace_{start}_{end}_{steps}_{dtype}", "op": "linspace",
                    "dtype": dtype, "args": {"start": start, "end": end, "steps": steps}, "inputs": [],
                    "outputs": [record(values)]})
    return out


def cumsum_cases():
    out = []
    x = randn((2, 3, 4), seed=2)
    for dtype in ["float32", "float64"]:
        for dim in [0, 1, 2, -1]:
            out.append(case("cumsum", f"cumsum_{dtype}_dim_{dim}", "cumsum", dtype, [x], {"dim": dim}))
    out.append(case("cumsum", "cumsum_long_float32", "cumsum", "float32", [randn((300,), seed=3)], {"dim": 0}))
    out.append(case("cumsum", "cumsum_0d", "cumsum", "float64", [torch.tensor(2.5, dtype=torch.float64)],
                    {"dim": 0}))
    out.append(case("cumsum", "cumsum_int64", "cumsum", "int64", [torch.tensor([[3, -1, 4], [1, 5, -9]])], {"dim": 1}))
    out.append(case("cumsum", "cumsum_bool", "cumsum", "bool", [torch.tensor([[1, 0, 1], [1, 1, 0]])], {"dim": 1}))
    return out


def topk_cases():
    out = []
    g = "topk"
    runs = [  # (name, input, k, dim, largest, sorted)
        ("random_k3", randn((3, 10), seed=4), 3, -1, True, True),
        ("random_smallest", randn((3, 10), seed=4), 4, 1, False, True),
        ("random_dim0", randn((5, 3, 2), seed=5), 2, 0, True, True),
        ("ties_nth_element", ties((4, 10), seed=6), 3, 1, True, True),
        ("ties_nth_element_smallest", ties((4, 10), seed=7), 5, 1, False, True),
        ("ties_unsorted", ties((4, 12), seed=8), 5, 1, True, False),
        ("ties_all", ties((3, 9), seed=9), 9, 1, True, True),
        ("ties_partial_sort", ties((3, 300), seed=10), 4, 1, True, True),
        ("ties_partial_sort_smallest", ties((2, 256), seed=11), 4, 1, False, True),
        ("ties_partial_sort_unsorted", ties((2, 200), seed=12), 3, 1, True, False),
        ("ties_65_classes", ties((4, 65), seed=13, levels=8), 10, -1, True, True),
        ("ties_65_classes_k1", ties((4, 65), seed=14, levels=3), 1, -1, True, True),
        ("nan", torch.tensor([[1.0, NAN, 3.0, 2.0, NAN], [0.5, -1.0, NAN, 4.0, 4.0]], dtype=torch.float64), 3, 1,
         True, True),
        ("nan_smallest", torch.tensor([[1.0, NAN, 3.0, 2.0, NAN]], dtype=torch.float64), 4, 1, False, True),
        ("k0", randn((2, 5), seed=15), 0, 1, True, True),
        ("0d", torch.tensor(3.5, dtype=torch.float64), 1, 0, True, True),
    ]
    for name, x, k, dim, largest, is_sorted in runs:
        args = {"k": k, "dim": dim, "largest": largest, "sorted": is_sorted}
        for dtype in ["float32", "float64"]:
            out.append(case(g, f"topk_{name}_{dtype}", "topk", dtype, [x], args))
    out.append(case(g, "topk_int64_ties", "topk", "int64", [ties((3, 10), seed=16)],
                    {"k": 4, "dim": 1, "largest": True, "sorted": True}))
    return out


def moments_cases():
    out = []
    x = randn((3, 4, 5), seed=17, scale=2.0)
    calls = [
        ("all", {}),
        ("dim_1", {"dim": 1, "unbiased": True, "keepdim": False}),
        ("dim_-1_biased_keepdim", {"dim": -1, "unbiased": False, "keepdim": True}),
        ("dims_0_2", {"dims": [0, 2], "correction": 1, "keepdim": False}),
        ("dims_2_0_keepdim", {"dims": [2, 0], "correction": 1, "keepdim": True}),
        ("dims_1_correction_0", {"dims": [1], "correction": 0, "keepdim": False}),
        ("dims_1_correction_2", {"dims": [1], "correction": 2, "keepdim": False}),
        ("dims_all_correction_0", {"dims": [0, 1, 2], "correction": 0, "keepdim": True}),
        ("dims_empty", {"dims": [], "correction": 1, "keepdim": False}),
    ]
    for op in ["var", "std"]:
        for dtype in ["float32", "float64"]:
            for name, args in calls:
                out.append(case("var_std", f"{op}_{name}_{dtype}", op, dtype, [x], args))
            # dims = [] reduces over every dim, but torch 1.13's backward then counts N as 1 (the
            # product over no dims) and returns +-inf: that gradient is a PyTorch bug, so the case
            # records the gradient of the same reduction with the dims spelled out.
            empty, spelled = out[-1], case("var_std", "spelled", op, dtype, [x],
                                           {"dims": [0, 1, 2], "correction": 1, "keepdim": False})
            assert empty["name"].endswith("dims_empty_" + dtype) and empty["outputs"] == spelled["outputs"]
            assert all(v in ("inf", "-inf") for v in empty["grads"][0])
            empty["grads"] = spelled["grads"]
        # A constant row: std 0, whose gradient PyTorch sets to 0 (var's is 0 anyway).
        flat_rows = torch.tensor([[1.5, 1.5, 1.5], [1.0, 2.0, 4.0]], dtype=torch.float64)
        out.append(case("var_std", f"{op}_constant_row", op, "float64", [flat_rows],
                        {"dim": 1, "unbiased": True, "keepdim": False}))
        # One element per row: N - correction = 0, a divisor of 0.
        out.append(case("var_std", f"{op}_single_element", op, "float64", [flat_rows],
                        {"dim": 0, "unbiased": False, "keepdim": False}))
        out.append(case("var_std", f"{op}_large_offset_float32", op, "float32",
                        [randn((4, 256), seed=18) + 1000.0], {"dim": 1, "unbiased": True, "keepdim": False}))
    return out


def layer_norm_cases():
    out = []
    g = "layer_norm"
    x = randn((2, 3, 8), seed=19, scale=2.0) + 0.5
    w, b = randn((8,), seed=20) + 1.0, randn((8,), seed=21)
    x34 = randn((2, 3, 4), seed=22)
    w34, b34 = randn((3, 4), seed=23), randn((3, 4), seed=24)
    gpt = randn((2, 4, 32), seed=25)
    wg, bg = randn((32,), seed=26) * 0.1 + 1.0, randn((32,), seed=27) * 0.1
    for dtype in ["float32", "float64"]:
        ln = {"normalized_shape": [8], "eps": 1e-5}
        out.append(case(g, f"ln_affine_{dtype}", "layer_norm", dtype, [x, w, b], {**ln, "weight": True, "bias": True}))
        out.append(case(g, f"ln_no_affine_{dtype}", "layer_norm", dtype, [x], {**ln, "weight": False, "bias": False}))
        out.append(case(g, f"ln_weight_only_{dtype}", "layer_norm", dtype, [x, w], {**ln, "weight": True, "bias": False}))
        out.append(case(g, f"ln_bias_only_{dtype}", "layer_norm", dtype, [x, b], {**ln, "weight": False, "bias": True}))
        out.append(case(g, f"ln_eps_1e-3_{dtype}", "layer_norm", dtype, [x, w, b],
                        {"normalized_shape": [8], "eps": 1e-3, "weight": True, "bias": True}))
        out.append(case(g, f"ln_two_dims_{dtype}", "layer_norm", dtype, [x34, w34, b34],
                        {"normalized_shape": [3, 4], "eps": 1e-5, "weight": True, "bias": True}))
        out.append(case(g, f"ln_all_dims_{dtype}", "layer_norm", dtype, [x34],
                        {"normalized_shape": [2, 3, 4], "eps": 1e-5, "weight": False, "bias": False}))
        out.append(case(g, f"ln_gpt_block_{dtype}", "layer_norm", dtype, [gpt, wg, bg],
                        {"normalized_shape": [32], "eps": 1e-5, "weight": True, "bias": True}))
        # A constant row: x_hat = 0 and the output is the bias; rstd = 1 / sqrt(eps) is large.
        constant = torch.tensor([[2.0, 2.0, 2.0, 2.0], [1.0, -1.0, 3.0, 0.5]], dtype=torch.float64)
        out.append(case(g, f"ln_constant_row_{dtype}", "layer_norm", dtype, [constant, w[:4], b[:4]],
                        {"normalized_shape": [4], "eps": 1e-5, "weight": True, "bias": True}))
    return out


def module_reprs():
    modules = {"128": torch.nn.LayerNorm(128), "4_5_no_affine": torch.nn.LayerNorm((4, 5), elementwise_affine=False),
               "3_eps_1e-6": torch.nn.LayerNorm([3], eps=1e-6), "16_eps_0.001": torch.nn.LayerNorm(16, eps=0.001)}
    return [{"group": "layer_norm_module", "name": f"LayerNorm_{name}", "op": "repr", "dtype": "float32",
             "args": {}, "inputs": [], "outputs": [], "repr": repr(m),
             "parameters": [[n, list(p.shape)] for n, p in m.named_parameters()]} for name, m in modules.items()]


def main():
    cases = (elementwise_cases() + linspace_cases() + cumsum_cases() + topk_cases() + moments_cases()
             + layer_norm_cases() + module_reprs())
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)), "case names must be unique"
    path = write_cases(OUT, fixture_header("math_reference.py"), cases)
    print(f"wrote {len(cases)} cases to {path}")


if __name__ == "__main__":
    main()
