"""Golden values for minigrad's optimizers, schedulers, clip_grad_norm_ and clip_grad_value_ (optim/),
from real PyTorch.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/optim_reference.py

It writes tests/fixtures/optim.json. Gradients are not computed by a model: each step sets p.grad to
recorded values (or None, which the optimizer skips), so the fixture tests the update rules alone.
Every optimizer runs its single-tensor code path (foreach=False), the one minigrad mirrors.
Floats are written with repr, exact for float32 and float64 alike; nothing is rounded.
"""

import math
import os
import platform
import sys

import torch

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import FIXTURES, write_json  # noqa: E402

OUT = os.path.join(FIXTURES, "optim.json")
DTYPES = {"float32": torch.float32, "float64": torch.float64}
OPTIMIZERS = {"SGD": torch.optim.SGD, "Adam": torch.optim.Adam, "AdamW": torch.optim.AdamW}
# The options minigrad's Options structs have, by PyTorch's names.
FIELDS = {"SGD": ["lr", "momentum", "dampening", "weight_decay", "nesterov"],
          "Adam": ["lr", "betas", "eps", "weight_decay", "amsgrad"],
          "AdamW": ["lr", "betas", "eps", "weight_decay", "amsgrad"]}


def flat(t):
    return [float(x) for x in t.detach().reshape(-1).tolist()]


def options_of(optimizer_name, optimizer):
    group = optimizer.param_groups[0]
    out = {}
    for field in FIELDS[optimizer_name]:
        value = group[field]
        out[field] = list(value) if isinstance(value, tuple) else value
    return out


# --- optimizers -------------------------------------------------------------------------------

def optimizer_case(name, optimizer_name, options, shapes, steps, dtype="float32", seed=0,
                   grad_scales=None, missing=()):
    """Runs `steps` steps of PyTorch's optimizer; grads are seeded N(0, 1) values times
    grad_scales[step]; (step, param) pairs in `missing` get no gradient (p.grad = None)."""
    torch.manual_seed(seed)
    params = [torch.randn(shape, dtype=DTYPES[dtype]).requires_grad_() for shape in shapes]
    initial = [flat(p) for p in params]
    optimizer = OPTIMIZERS[optimizer_name](params, foreach=False, **options)
    grads, expected = [], []
    for step in range(steps):
        scale = grad_scales[step] if grad_scales else 1.0
        step_grads = []
        for index, p in enumerate(params):
            g = torch.randn(p.shape, dtype=p.dtype) * scale
            if (step, index) in missing:
                p.grad = None
                step_grads.append(None)
            else:
                p.grad = g
                step_grads.append(flat(g))
        optimizer.step()
        grads.append(step_grads)
        expected.append([flat(p) for p in params])

    state = {}
    for index, p in enumerate(params):
        for key, value in optimizer.state[p].items():
            if value is not None:
                state["state.%d.%s" % (index, key)] = flat(value)
    return {"name": name, "optimizer": optimizer_name, "dtype": dtype,
            "options": options_of(optimizer_name, optimizer),
            "shapes": [list(s) for s in shapes], "initial": initial, "grads": grads,
            "expected": expected, "state": state}


def optimizer_cases():
    two = [(2, 3), (4,)]
    cases = [
        optimizer_case("sgd_plain_steps_against_the_gradient", "SGD", {"lr": 0.1}, two, 2),
        optimizer_case("sgd_momentum_first_step_uses_the_gradient_as_buffer", "SGD",
                       {"lr": 0.1, "momentum": 0.9}, two, 1),
        optimizer_case("sgd_momentum_with_dampening_over_three_steps", "SGD",
                       {"lr": 0.05, "momentum": 0.9, "dampening": 0.5}, two, 3),
        optimizer_case("sgd_nesterov_over_three_steps", "SGD",
                       {"lr": 0.05, "momentum": 0.9, "nesterov": True}, two, 3),
        optimizer_case("sgd_weight_decay_with_momentum", "SGD",
                       {"lr": 0.1, "momentum": 0.5, "weight_decay": 0.1}, two, 3),
        optimizer_case("sgd_nesterov_in_float64", "SGD",
                       {"lr": 0.05, "momentum": 0.9, "nesterov": True, "weight_decay": 0.01}, two, 3,
                       dtype="float64"),
        optimizer_case("adam_bias_correction_over_three_steps_with_two_parameters", "Adam",
                       {"lr": 0.01}, two, 3),
        optimizer_case("adam_on_a_larger_tensor", "Adam", {"lr": 0.01}, [(3, 7), (5, 5)], 3, seed=3),
        optimizer_case("adam_in_float64", "Adam", {"lr": 0.01, "betas": (0.8, 0.95)}, two, 3, dtype="float64"),
        optimizer_case("adam_amsgrad_keeps_the_largest_second_moment", "Adam",
                       {"lr": 0.1, "betas": (0.9, 0.99), "amsgrad": True}, two, 3, seed=1,
                       grad_scales=[3.0, 0.1, 0.1]),
        optimizer_case("adam_amsgrad_in_float64", "Adam",
                       {"lr": 0.1, "betas": (0.9, 0.99), "amsgrad": True}, two, 3, seed=1,
                       grad_scales=[3.0, 0.1, 0.1], dtype="float64"),
        optimizer_case("adam_l2_weight_decay", "Adam", {"lr": 0.1, "weight_decay": 0.1}, two, 3, seed=2),
        optimizer_case("adamw_decoupled_weight_decay", "AdamW", {"lr": 0.1, "weight_decay": 0.1}, two, 3, seed=2),
        optimizer_case("adamw_decoupled_weight_decay_in_float64", "AdamW", {"lr": 0.1, "weight_decay": 0.1},
                       two, 3, seed=2, dtype="float64"),
        optimizer_case("adamw_amsgrad", "AdamW", {"lr": 0.1, "amsgrad": True}, two, 3, seed=1,
                       grad_scales=[3.0, 0.1, 0.1]),
        optimizer_case("adam_counts_steps_per_parameter_and_skips_missing_grads", "Adam",
                       {"lr": 0.01}, two, 3, seed=4, missing={(0, 1)}),
        optimizer_case("sgd_momentum_skips_missing_grads", "SGD", {"lr": 0.1, "momentum": 0.9}, two, 3, seed=4,
                       missing={(0, 1), (2, 0)}),
    ]
    by_name = {c["name"]: c for c in cases}
    # The cases are only worth having if the feature they name changes the numbers (by far more
    # than float32 rounding, ~1e-7).
    l2 = by_name["adam_l2_weight_decay"]["expected"][-1]
    decoupled = by_name["adamw_decoupled_weight_decay"]["expected"][-1]
    assert max(abs(a - b) for pa, pb in zip(l2, decoupled) for a, b in zip(pa, pb)) > 1e-4
    plain = optimizer_case("x", "Adam", {"lr": 0.1, "betas": (0.9, 0.99)}, two, 3, seed=1,
                           grad_scales=[3.0, 0.1, 0.1])["expected"][-1]
    amsgrad = by_name["adam_amsgrad_keeps_the_largest_second_moment"]["expected"][-1]
    assert max(abs(a - b) for pa, pb in zip(plain, amsgrad) for a, b in zip(pa, pb)) > 1e-4
    return cases


def defaults():
    p = torch.zeros(1, requires_grad=True)
    out = {}
    for name, cls in OPTIMIZERS.items():
        kwargs = {"lr": 0.1} if name == "SGD" else {}  # SGD's lr has no default in PyTorch
        optimizer = cls([p], **kwargs)
        out[name] = {k: v for k, v in options_of(name, optimizer).items() if not (name == "SGD" and k == "lr")}
    return out


# --- schedulers -------------------------------------------------------------------------------

def scheduler_case(name, scheduler_name, args, base_lr=0.1, steps=12):
    p = torch.zeros(1, requires_grad=True)
    optimizer = torch.optim.SGD([p], lr=base_lr)
    scheduler = getattr(torch.optim.lr_scheduler, scheduler_name)(optimizer, **args)
    lrs = [scheduler.get_last_lr()[0]]
    for _ in range(steps):
        optimizer.step()  # no grads: changes nothing, but keeps PyTorch's call order
        scheduler.step()
        lrs.append(scheduler.get_last_lr()[0])
        assert lrs[-1] == optimizer.param_groups[0]["lr"]
    return {"name": name, "scheduler": scheduler_name, "args": args, "base_lr": base_lr, "lrs": lrs}


def chained_scheduler_case(name, schedulers, base_lr=0.1, steps=25):
    """Several schedulers on one optimizer, each stepped in the order built (PyTorch's chaining);
    every scheduler after the first starts from the group's initial_lr, not from the lr the ones
    before it have already changed."""
    p = torch.zeros(1, requires_grad=True)
    optimizer = torch.optim.SGD([p], lr=base_lr)
    built = [getattr(torch.optim.lr_scheduler, kind)(optimizer, **args) for kind, args in schedulers]
    lrs = [optimizer.param_groups[0]["lr"]]
    for _ in range(steps):
        optimizer.step()
        for scheduler in built:
            scheduler.step()
        lrs.append(optimizer.param_groups[0]["lr"])
    return {"name": name, "schedulers": [{"scheduler": kind, "args": args} for kind, args in schedulers],
            "base_lr": base_lr, "lrs": lrs}


def chained_scheduler_cases():
    return [
        chained_scheduler_case("linear_warmup_then_cosine_annealing",
                               [("LinearLR", {"start_factor": 0.5, "end_factor": 1.0, "total_iters": 3}),
                                ("CosineAnnealingLR", {"T_max": 4, "eta_min": 0.01})]),
    ]


def scheduler_cases():
    return [
        scheduler_case("step_lr_halves_every_three_steps", "StepLR", {"step_size": 3, "gamma": 0.5}),
        scheduler_case("step_lr_default_gamma", "StepLR", {"step_size": 4}),
        scheduler_case("cosine_annealing_past_t_max", "CosineAnnealingLR", {"T_max": 5, "eta_min": 0.01}),
        scheduler_case("cosine_annealing_default_eta_min", "CosineAnnealingLR", {"T_max": 10}, base_lr=3e-4),
        scheduler_case("linear_lr_defaults", "LinearLR", {}),
        scheduler_case("linear_lr_decay", "LinearLR", {"start_factor": 1.0, "end_factor": 0.25, "total_iters": 8}),
        # down to 0: the chainable formula rounds to -1.9e-18 at epoch 4, and PyTorch keeps it
        scheduler_case("linear_lr_to_zero_rounds_below_zero", "LinearLR",
                       {"start_factor": 1.0 / 3, "end_factor": 0.0, "total_iters": 4}),
    ]


# --- clip_grad_norm_ ---------------------------------------------------------------------------

def params_with_grads(seed, shapes, dtype, scale, missing):
    """Zero parameters of `shapes`, each given a gradient of randn * scale drawn after
    manual_seed(seed), except those in `missing`; the gradients as written to the fixture."""
    torch.manual_seed(seed)
    params = [torch.zeros(shape, dtype=DTYPES[dtype], requires_grad=True) for shape in shapes]
    grads = []
    for index, p in enumerate(params):
        g = torch.randn(p.shape, dtype=p.dtype) * scale
        if index in missing:
            grads.append(None)
        else:
            p.grad = g
            grads.append(flat(g))
    return params, grads


def clip_case(name, max_norm, norm_type, scale, dtype="float32", missing=()):
    params, grads = params_with_grads(5, [(2, 3), (4,), (3,)], dtype, scale, missing)
    total = torch.nn.utils.clip_grad_norm_(params, max_norm, norm_type)
    clipped = [None if p.grad is None else flat(p.grad) for p in params]
    return {"name": name, "dtype": dtype, "max_norm": max_norm,
            "norm_type": "inf" if math.isinf(norm_type) else norm_type,
            "shapes": [list(p.shape) for p in params], "grads": grads,
            "total_norm": "inf" if math.isinf(float(total)) else float(total), "clipped": clipped}


def clip_cases():
    return [
        clip_case("clip_scales_gradients_whose_norm_exceeds_max_norm", 1.0, 2.0, 1.0),
        clip_case("clip_leaves_gradients_below_max_norm", 100.0, 2.0, 1.0),
        clip_case("clip_with_the_one_norm_in_float64", 0.5, 1.0, 2.0, dtype="float64"),
        clip_case("clip_with_the_infinity_norm", 0.3, math.inf, 1.0),
        clip_case("clip_with_the_three_norm_skips_a_missing_grad", 0.5, 3.0, 1.0, missing={1}),
        # float32 norms are summed in float32: past sqrt(FLT_MAX) = 1.8e19 the norm is inf and
        # every gradient is multiplied by max_norm / inf = 0
        clip_case("clip_in_float32_a_gradient_norm_past_the_float_range_is_inf", 1.0, 2.0, 1e20),
        clip_case("clip_in_float32_finite_gradient_norms_whose_norm_overflows", 1.0, 2.0, 6e18),
        clip_case("clip_in_float64_the_same_gradients_keep_a_finite_norm", 1.0, 2.0, 1e20, dtype="float64"),
    ]


# --- clip_grad_value_ --------------------------------------------------------------------------

def clip_value_case(name, clip_value, scale, dtype="float32", missing=()):
    params, grads = params_with_grads(6, [(2, 3), (5,)], dtype, scale, missing)
    returned = torch.nn.utils.clip_grad_value_(params, clip_value)
    assert returned is None
    clipped = [None if p.grad is None else flat(p.grad) for p in params]
    return {"name": name, "dtype": dtype, "clip_value": clip_value,
            "shapes": [list(p.shape) for p in params], "grads": grads, "clipped": clipped}


def clip_value_cases():
    return [
        clip_value_case("clip_value_caps_both_signs", 0.5, 1.0),
        # 0.1 is rounded to float32 for float32 gradients, kept as a double for float64 ones
        clip_value_case("clip_value_rounds_the_bound_to_float32", 0.1, 1.0),
        clip_value_case("clip_value_in_float64", 0.1, 1.0, dtype="float64"),
        clip_value_case("clip_value_above_every_gradient_changes_nothing", 10.0, 1.0),
        clip_value_case("clip_value_skips_a_missing_grad", 0.3, 2.0, missing={0}),
        # clamp(min=0.5, max=-0.5): where min > max every element becomes max
        clip_value_case("clip_value_negative_sets_every_element_to_it", -0.5, 1.0),
    ]


def main():
    data = {
        "generator": "tools/reference/optim_reference.py, torch %s, python %s"
                     % (torch.__version__, platform.python_version()),
        "defaults": defaults(),
        "optimizers": optimizer_cases(),
        "schedulers": scheduler_cases(),
        "chained_schedulers": chained_scheduler_cases(),
        "clip_grad_norm": clip_cases(),
        "clip_grad_value": clip_value_cases(),
    }
    print("wrote", write_json(OUT, data))


if __name__ == "__main__":
    main()
