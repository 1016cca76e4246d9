"""Golden values for minigrad's losses (nn/loss.hpp), taken from real PyTorch.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/loss_reference.py

It writes tests/fixtures/loss.json: a list of cases, each one call of a torch.nn.functional loss
(mse_loss, l1_loss, cross_entropy, nll_loss, binary_cross_entropy_with_logits) with its inputs,
options, result and gradients. Scalar results are differentiated with loss.backward(); results of
reduction "none" with (loss * v).sum().backward() for a recorded random cotangent v. Cases come in
groups; each test case of tests/nn/test_loss.cpp replays one group. Large inputs are not written
out: "pattern" names a formula the test recomputes (see pattern_values), and only some gradient
elements are recorded ("grad_input_at"). JSON has no inf or nan, so those are the strings "inf",
"-inf" and "nan"; finite floats use repr (exact).
"""

import math
import os
import sys

import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import FIXTURES, encode, fixture_header, flat, write_json  # noqa: E402

OUT = os.path.join(FIXTURES, "loss.json")
DTYPES = {"float32": torch.float32, "float64": torch.float64}  # the dtypes every case runs in
INF = math.inf
CLASS_OPS = ("cross_entropy", "nll_loss")


def randn(shape, seed, scale=1.0):
    generator = torch.Generator().manual_seed(seed)
    return torch.randn(shape, generator=generator, dtype=torch.float64) * scale


def pattern_values(pattern, numel):
    """Inputs too large to write out, recomputed by the test from the same integer formulas.
    "grid": element i is ((i * 7919) % 41 - 20) * 0.375, exact in float32 (scores in [-7.5, 7.5]).
    "classes_C": target n is (n * 7) % C.  "bits": target i is (i * 5 % 7) % 2, as a float."""
    if pattern == "grid":
        return torch.tensor([((i * 7919) % 41 - 20) * 0.375 for i in range(numel)], dtype=torch.float64)
    if pattern.startswith("classes_"):
        classes = int(pattern.split("_")[1])
        return torch.tensor([(n * 7) % classes for n in range(numel)], dtype=torch.int64)
    if pattern == "bits":
        return torch.tensor([float((i * 5 % 7) % 2) for i in range(numel)], dtype=torch.float64)
    raise ValueError(pattern)


def tensor_record(t, pattern=None):
    record = {"shape": list(t.shape)}
    if pattern:
        record["pattern"] = pattern
    else:
        record["values"] = flat(t)
    return record


def call(op, x, t, options):
    reduction = options["reduction"]
    if op == "mse_loss":
        return F.mse_loss(x, t, reduction=reduction)
    if op == "l1_loss":
        return F.l1_loss(x, t, reduction=reduction)
    if op == "cross_entropy":
        return F.cross_entropy(x, t, weight=options.get("weight"), reduction=reduction,
                               ignore_index=options["ignore_index"], label_smoothing=options["label_smoothing"])
    if op == "nll_loss":
        return F.nll_loss(x, t, weight=options.get("weight"), reduction=reduction,
                          ignore_index=options["ignore_index"])
    if op == "binary_cross_entropy_with_logits":
        return F.binary_cross_entropy_with_logits(x, t, reduction=reduction,
                                                  pos_weight=options.get("pos_weight"))
    raise ValueError(op)


def case(group, name, op, dtype, x, t, reduction="mean", ignore_index=-100, label_smoothing=0.0,
         pos_weight=None, x_pattern=None, t_pattern=None, sample=None, weight=None):
    """Records op(x, t) in `dtype`: the result and the gradients w.r.t. input (and a float target).
    `sample`: record only these flat indices of grad_input (for inputs too large to write out)."""
    torch_dtype = DTYPES[dtype]
    x = x.to(torch_dtype).clone().requires_grad_(True)
    float_target = op not in CLASS_OPS
    t = t.to(torch_dtype).clone().requires_grad_(True) if float_target else t.clone()
    options = {"reduction": reduction, "ignore_index": ignore_index, "label_smoothing": label_smoothing}
    if pos_weight is not None:
        options["pos_weight"] = pos_weight.to(torch_dtype)
    if weight is not None:
        options["weight"] = weight.to(torch_dtype)
    loss = call(op, x, t, options)

    record = {"group": group, "name": name, "op": op, "dtype": dtype,
              "input": tensor_record(x, x_pattern), "target": tensor_record(t, t_pattern),
              "reduction": reduction}
    if op in CLASS_OPS:
        record["ignore_index"] = ignore_index
    if op == "cross_entropy":
        record["label_smoothing"] = label_smoothing
    if pos_weight is not None:
        record["pos_weight"] = tensor_record(options["pos_weight"])
    if weight is not None:
        record["weight"] = tensor_record(options["weight"])
    record["loss"] = tensor_record(loss)

    if reduction == "none":
        v = randn(loss.shape, seed=99).to(torch_dtype)
        record["cotangent"] = flat(v)
        (loss * v).sum().backward()
    else:
        loss.backward()
    if sample is None:
        record["grad_input"] = flat(x.grad)
    else:
        grad = x.grad.reshape(-1)
        record["grad_input_at"] = {"index": sample, "values": encode([grad[i].item() for i in sample])}
    if float_target:
        record["grad_target"] = flat(t.grad)
    return record


def classes_target(values):
    return torch.tensor(values, dtype=torch.int64)


def regression_cases():
    out = []
    x, y = randn((4, 3), seed=1), randn((4, 3), seed=2)
    x3, y3 = randn((2, 3, 2), seed=3), randn((2, 3, 2), seed=4)
    for op in ["mse_loss", "l1_loss"]:
        for dtype in DTYPES:
            for reduction in ["mean", "sum", "none"]:
                out.append(case(f"{op}_reductions", f"{op}_{dtype}_{reduction}", op, dtype, x, y, reduction))
            out.append(case(f"{op}_reductions", f"{op}_{dtype}_3d", op, dtype, x3, y3))
    # l1 where input equals target: PyTorch's gradient there is sign(0) = 0.
    tied = torch.tensor([[0.5, -1.0, 2.0], [3.0, 0.0, -0.25]], dtype=torch.float64)
    other = torch.tensor([[0.5, 1.0, 2.0], [-3.0, 0.0, 0.75]], dtype=torch.float64)
    out.append(case("l1_loss_reductions", "l1_loss_ties_have_gradient_0", "l1_loss", "float32", tied, other))
    out.append(case("mse_loss_reductions", "mse_loss_empty_mean_is_nan", "mse_loss", "float32",
                    torch.zeros(0, dtype=torch.float64), torch.zeros(0, dtype=torch.float64)))
    return out


def cross_entropy_cases():
    out = []
    g = "cross_entropy_reductions"
    logits, target = randn((4, 5), seed=5, scale=2.0), classes_target([1, 0, 4, 2])
    for dtype in DTYPES:
        for reduction in ["mean", "sum", "none"]:
            out.append(case(g, f"ce_{dtype}_{reduction}", "cross_entropy", dtype, logits, target, reduction))

    g = "cross_entropy_label_smoothing"
    for dtype in DTYPES:
        for reduction in ["mean", "sum", "none"]:
            out.append(case(g, f"ce_smoothing_{dtype}_{reduction}", "cross_entropy", dtype, logits, target,
                            reduction, label_smoothing=0.1))
        out.append(case(g, f"ce_smoothing_1_{dtype}", "cross_entropy", dtype, logits, target,
                        label_smoothing=1.0))

    g = "cross_entropy_ignore_index"
    ignored = classes_target([1, -100, 4, -100])
    custom = classes_target([2, 0, 2, 3])
    nothing = classes_target([-100, -100, -100, -100])
    for dtype in DTYPES:
        for reduction in ["mean", "sum", "none"]:
            out.append(case(g, f"ce_ignore_default_{dtype}_{reduction}", "cross_entropy", dtype, logits,
                            ignored, reduction))
            out.append(case(g, f"ce_ignore_2_smoothing_{dtype}_{reduction}", "cross_entropy", dtype, logits,
                            custom, reduction, ignore_index=2, label_smoothing=0.1))
        # Every target ignored: the mean is 0 / 0 = nan, the sum 0, the gradient 0.
        for reduction in ["mean", "sum"]:
            for smoothing in [0.0, 0.1]:
                out.append(case(g, f"ce_all_ignored_{dtype}_{reduction}_smoothing_{smoothing}",
                                "cross_entropy", dtype, logits, nothing, reduction,
                                label_smoothing=smoothing))

    g = "cross_entropy_spatial"
    x3, t3 = randn((2, 3, 4), seed=6, scale=2.0), classes_target([[0, 2, 1, 1], [2, 2, 0, 1]])
    x4 = randn((2, 3, 2, 2), seed=7, scale=2.0)
    t4 = classes_target([[[0, 2], [1, -100]], [[2, 1], [0, 0]]])
    for dtype in DTYPES:
        for reduction in ["mean", "sum", "none"]:
            out.append(case(g, f"ce_2x3x4_{dtype}_{reduction}", "cross_entropy", dtype, x3, t3, reduction))
            out.append(case(g, f"ce_2x3x2x2_ignore_smoothing_{dtype}_{reduction}", "cross_entropy", dtype,
                            x4, t4, reduction, label_smoothing=0.1))

    g = "cross_entropy_unbatched"
    x1 = randn((5,), seed=8)
    for dtype in DTYPES:
        for reduction in ["mean", "sum", "none"]:
            out.append(case(g, f"ce_unbatched_{dtype}_{reduction}", "cross_entropy", dtype, x1,
                            classes_target(3), reduction))
        out.append(case(g, f"ce_unbatched_smoothing_{dtype}", "cross_entropy", dtype, x1, classes_target(0),
                        label_smoothing=0.1))

    g = "cross_entropy_extremes"
    # Rows where the naive formula fails: e^1e8 overflows, 1e8 - (1e8 + log 2) rounds to 0 in
    # float32, -inf scores (fine at another class, an infinite loss at the target), a row of one
    # repeated huge value.
    hard = torch.tensor([[1e8, 0.0, -1e8], [1e8, 1e8, 1.0], [-1e8, -1e8, -1e8], [0.0, -INF, 1.0],
                         [-INF, 5.0, 2.0]], dtype=torch.float64)
    hard_target = classes_target([1, 0, 2, 2, 0])
    finite_target = classes_target([1, 0, 2, 2, 1])  # the -inf score is not a target
    for dtype in DTYPES:
        for reduction in ["mean", "none"]:
            out.append(case(g, f"ce_extremes_{dtype}_{reduction}", "cross_entropy", dtype, hard, hard_target,
                            reduction))
            out.append(case(g, f"ce_extremes_finite_{dtype}_{reduction}", "cross_entropy", dtype, hard,
                            finite_target, reduction))
            out.append(case(g, f"ce_extremes_smoothing_{dtype}_{reduction}", "cross_entropy", dtype, hard,
                            finite_target, reduction, label_smoothing=0.1))

    g = "cross_entropy_large_batch"
    n, c = 100000, 10
    x_big, t_big = pattern_values("grid", n * c).reshape(n, c), pattern_values(f"classes_{c}", n)
    sample = list(range(0, 30)) + [n * c // 2 + i for i in range(10)] + list(range(n * c - 20, n * c))
    for dtype, reduction, smoothing in [("float32", "mean", 0.0), ("float32", "sum", 0.0),
                                        ("float32", "mean", 0.1), ("float64", "mean", 0.0)]:
        out.append(case(g, f"ce_100000x10_{dtype}_{reduction}_smoothing_{smoothing}", "cross_entropy", dtype,
                        x_big, t_big, reduction, label_smoothing=smoothing, x_pattern="grid",
                        t_pattern=f"classes_{c}", sample=sample))

    g = "cross_entropy_class_weights"
    # Class weights w: each loss is scaled by w[target], Mean divides by the sum of w[target] over
    # the targets that count; the smoothing term is -sum_c w_c log p_c (PyTorch's
    # cross_entropy_loss_label_smoothing in aten/src/ATen/native/LossNLL.cpp).
    weight = torch.tensor([0.5, 2.0, 1.0, 0.25, 3.0], dtype=torch.float64)
    for dtype in DTYPES:
        for reduction in ["mean", "sum", "none"]:
            out.append(case(g, f"ce_weight_{dtype}_{reduction}", "cross_entropy", dtype, logits, target, reduction,
                            weight=weight))
            out.append(case(g, f"ce_weight_smoothing_{dtype}_{reduction}", "cross_entropy", dtype, logits, target,
                            reduction, label_smoothing=0.2, weight=weight))
            out.append(case(g, f"ce_weight_ignore_smoothing_{dtype}_{reduction}", "cross_entropy", dtype, logits,
                            ignored, reduction, label_smoothing=0.1, weight=weight))
        out.append(case(g, f"ce_weight_spatial_{dtype}", "cross_entropy", dtype, x4, t4, "mean",
                        label_smoothing=0.1, weight=weight[:3]))
        out.append(case(g, f"ce_weight_unbatched_{dtype}", "cross_entropy", dtype, x1, classes_target(3),
                        label_smoothing=0.1, weight=weight))

    g = "cross_entropy_course_views"
    # The course's call: logits [B, T, C] viewed as [B*T, C], targets [B, T] as [B*T].
    b, t_len, c = 2, 4, 65
    logits_btc = randn((b, t_len, c), seed=13, scale=1.5)
    targets_bt = torch.randint(0, c, (b, t_len), generator=torch.Generator().manual_seed(14))
    targets_bt[0, :2] = -100  # padding positions, ignored
    flat_logits, flat_targets = logits_btc.reshape(b * t_len, c), targets_bt.reshape(b * t_len)
    for dtype in DTYPES:
        for reduction in ["mean", "sum", "none"]:
            out.append(case(g, f"ce_bt_views_{dtype}_{reduction}", "cross_entropy", dtype, flat_logits, flat_targets,
                            reduction))
            out.append(case(g, f"ce_bt_views_smoothing_{dtype}_{reduction}", "cross_entropy", dtype, flat_logits,
                            flat_targets, reduction, label_smoothing=0.1))
    return out


def nll_cases():
    out = []
    g = "nll_loss"
    log_p = torch.log_softmax(randn((4, 5), seed=9, scale=2.0), dim=1)
    target = classes_target([3, 0, -100, 1])
    log_p3 = torch.log_softmax(randn((2, 3, 4), seed=10), dim=1)
    t3 = classes_target([[0, 2, 1, 1], [2, 2, 0, 1]])
    for dtype in DTYPES:
        for reduction in ["mean", "sum", "none"]:
            out.append(case(g, f"nll_{dtype}_{reduction}", "nll_loss", dtype, log_p, target, reduction))
            out.append(case(g, f"nll_2x3x4_{dtype}_{reduction}", "nll_loss", dtype, log_p3, t3, reduction))
        out.append(case(g, f"nll_ignore_1_{dtype}", "nll_loss", dtype, log_p, classes_target([3, 0, 1, 1]),
                        ignore_index=1))
        out.append(case(g, f"nll_unbatched_{dtype}", "nll_loss", dtype, log_p[0], classes_target(2), "none"))
        minus_inf = torch.tensor([[0.0, -INF, -1e8], [-0.5, -1.0, -INF]], dtype=torch.float64)
        out.append(case(g, f"nll_minus_inf_{dtype}", "nll_loss", dtype, minus_inf, classes_target([1, 0]), "none"))
        out.append(case(g, f"nll_all_ignored_{dtype}", "nll_loss", dtype, log_p,
                        classes_target([-100] * 4)))
        weight = torch.tensor([0.5, 2.0, 1.0, 0.25, 3.0], dtype=torch.float64)
        for reduction in ["mean", "sum", "none"]:
            out.append(case(g, f"nll_weight_{dtype}_{reduction}", "nll_loss", dtype, log_p, target, reduction,
                            weight=weight))
        out.append(case(g, f"nll_weight_2x3x4_{dtype}", "nll_loss", dtype, log_p3, t3, weight=weight[:3]))
    return out


def bce_cases():
    out = []
    g = "binary_cross_entropy_with_logits"
    x = randn((4, 3), seed=11, scale=3.0)
    soft = torch.rand((4, 3), generator=torch.Generator().manual_seed(12), dtype=torch.float64)
    hard = (soft > 0.5).to(torch.float64)
    pos_weight = torch.tensor([0.5, 2.0, 3.0], dtype=torch.float64)
    for dtype in DTYPES:
        for reduction in ["mean", "sum", "none"]:
            out.append(case(g, f"bce_{dtype}_{reduction}", "binary_cross_entropy_with_logits", dtype, x, hard,
                            reduction))
            out.append(case(g, f"bce_soft_targets_{dtype}_{reduction}", "binary_cross_entropy_with_logits",
                            dtype, x, soft, reduction))
            out.append(case(g, f"bce_pos_weight_{dtype}_{reduction}", "binary_cross_entropy_with_logits",
                            dtype, x, soft, reduction, pos_weight=pos_weight))
        out.append(case(g, f"bce_pos_weight_0d_{dtype}", "binary_cross_entropy_with_logits", dtype, x, hard,
                        pos_weight=torch.tensor(4.0, dtype=torch.float64)))

    g = "binary_cross_entropy_with_logits_extremes"
    # e^1e8 overflows a naive log(1 + e^x); large |x| with the "wrong" target gives a loss of |x|.
    xs = torch.tensor([1e8, -1e8, 1e8, -1e8, 30.0, -30.0, 30.0, -30.0, 0.0, 1e-8], dtype=torch.float64)
    ys = torch.tensor([1.0, 0.0, 0.0, 1.0, 1.0, 0.0, 0.0, 1.0, 0.5, 1.0], dtype=torch.float64)
    for dtype in DTYPES:
        out.append(case(g, f"bce_extremes_{dtype}", "binary_cross_entropy_with_logits", dtype, xs, ys, "none"))
        out.append(case(g, f"bce_extremes_pos_weight_{dtype}", "binary_cross_entropy_with_logits", dtype, xs,
                        ys, "none", pos_weight=torch.tensor(2.0, dtype=torch.float64)))
    n = 200000
    sample = list(range(0, 20)) + list(range(n - 20, n))
    out.append(case(g, "bce_200000_float32_mean", "binary_cross_entropy_with_logits", "float32",
                    pattern_values("grid", n), pattern_values("bits", n), x_pattern="grid", t_pattern="bits",
                    sample=sample))
    return out


def main():
    cases = regression_cases() + cross_entropy_cases() + nll_cases() + bce_cases()
    for c in cases:  # the large cases record only sampled gradients; drop their large target grads
        if "grad_input_at" in c and "grad_target" in c:
            del c["grad_target"]
    fixture = {
        "header": fixture_header("loss_reference.py", patterns=pattern_values.__doc__.strip()),
        "cases": cases,
    }
    names = [c["name"] for c in cases]
    assert len(names) == len(set(names)), "case names must be unique"
    path = write_json(OUT, fixture)
    print(f"wrote {len(cases)} cases to {path}")


if __name__ == "__main__":
    main()
