"""Golden values for minigrad's nn/ (modules, layers, init, F.linear/gelu/dropout) from real PyTorch.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/nn_reference.py

It writes four fixtures under tests/fixtures/, read by the tests in tests/nn/:
  nn_feedforward.json  the lesson's FeedForward after manual_seed(0): names, repr, parameters
                       (sums, and every 97th value), the token, hidden and output; and a narrow
                       FeedForward(8) whose every value and gradient is listed
  nn_init.json         torch.nn.init: gains, fans, and the numbers each function draws; Linear
  nn_functional.json   F.linear on 1-d, 2-d, 3-d inputs with gradients; F.gelu; F.dropout
  nn_modules.json      reprs of every layer, and the names a nested module tree lists
Floats are written with repr (exact for float32 and float64 alike); nothing is rounded.
"""

import math
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import FIXTURES, values, write_json  # noqa: E402


def write(name, data):
    data["torch_version"] = torch.__version__
    print("wrote", write_json(os.path.join(FIXTURES, name), data))


class FeedForward(nn.Module):
    """The lesson's class, with the width as arguments (the lesson fixes n_embd = 128, widen = 4)."""

    def __init__(self, n_embd=128, widen=4):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_embd, widen * n_embd),
            nn.ReLU(),
            nn.Linear(widen * n_embd, n_embd),
        )

    def forward(self, x):
        return self.net(x)


# --- nn_feedforward.json ---------------------------------------------------------------------------
STRIDE = 97  # every 97th element of each course-width parameter (97 is prime: no alignment with rows)


def course_feedforward():
    torch.manual_seed(0)
    ff = FeedForward()
    token = torch.randn(1, 128)
    hidden = ff.net[0](token)
    out = ff(token)
    parameters = {}
    for name, p in ff.named_parameters():
        flat = p.detach().reshape(-1).double()
        parameters[name] = {"shape": list(p.shape), "sum": flat.sum().item(), "abs_sum": flat.abs().sum().item(),
                            "first": flat[:16].tolist(), "strided": flat[::STRIDE].tolist()}
    return {"seed": 0, "n_embd": 128, "widen": 4, "repr": repr(ff),
            "names": [name for name, _ in ff.named_parameters()],
            "parameter_count": sum(p.numel() for p in ff.parameters()),
            "stride": STRIDE, "parameters": parameters,
            "token": values(token), "hidden": values(hidden), "out": values(out),
            "negatives_before_relu": (hidden < 0).sum().item()}


def small_feedforward():
    """Every value and gradient of FeedForward(8, 4) on a 3-d input, loss = sum(out^2)."""
    torch.manual_seed(1)
    ff = FeedForward(n_embd=8, widen=4)
    x = torch.randn(2, 3, 8, requires_grad=True)
    out = ff(x)
    (out * out).sum().backward()
    return {"seed": 1, "n_embd": 8, "widen": 4,
            "parameters": {name: values(p) for name, p in ff.named_parameters()},
            "x_shape": list(x.shape), "x": values(x), "out": values(out), "grad_x": values(x.grad),
            "grads": {name: values(p.grad) for name, p in ff.named_parameters()}}


# --- nn_init.json --------------------------------------------------------------------------------------
def gains():
    cases = [("linear", None), ("conv2d", None), ("conv_transpose3d", None), ("sigmoid", None), ("tanh", None),
             ("relu", None), ("leaky_relu", None), ("leaky_relu", 0.2), ("leaky_relu", math.sqrt(5)),
             ("selu", None)]
    return [{"nonlinearity": n, "param": p, "gain": nn.init.calculate_gain(n, p)} for n, p in cases]


def fans():
    out = []
    for shape in ([3, 5], [4, 3, 2, 2], [6, 2, 5]):
        fan_in, fan_out = nn.init._calculate_fan_in_and_fan_out(torch.empty(shape))
        out.append({"shape": shape, "fan_in": fan_in, "fan_out": fan_out})
    return out


# Each case: seed, then the init function on a fresh tensor, then randn(3) to show where the
# generator was left (a function that draws too many or too few numbers shifts these).
INIT_CASES = [
    ("uniform_", [3, 4], "float32", {"a": -2.0, "b": 3.0}),
    ("normal_", [20], "float32", {"mean": 1.0, "std": 0.5}),
    ("normal_", [5], "float32", {"mean": -1.0, "std": 2.0}),
    ("constant_", [2, 3], "float32", {"val": 0.25}),
    ("zeros_", [2, 2], "float32", {}),
    ("ones_", [3], "float32", {}),
    ("xavier_uniform_", [5, 7], "float32", {"gain": 2.0}),
    ("xavier_normal_", [4, 6], "float32", {}),
    ("xavier_uniform_", [3, 3], "float64", {}),
    ("kaiming_uniform_", [6, 5], "float32", {}),
    ("kaiming_uniform_", [3, 8], "float32", {"a": math.sqrt(5), "mode": "fan_out"}),
    ("kaiming_normal_", [5, 4], "float32", {"nonlinearity": "relu"}),
    ("kaiming_normal_", [3, 4, 2], "float32", {"mode": "fan_out"}),
    ("kaiming_uniform_", [0, 4], "float32", {}),
]


def init_cases():
    out = []
    for seed, (fn, shape, dtype, kwargs) in enumerate(INIT_CASES):
        torch.manual_seed(seed)
        t = torch.zeros(shape, dtype=getattr(torch, dtype))
        getattr(nn.init, fn)(t, **kwargs)
        after = torch.randn(3)
        out.append({"function": fn, "shape": shape, "dtype": dtype, "kwargs": kwargs, "seed": seed,
                    "values": values(t), "randn_after": values(after)})
    return out


def linear_cases():
    """Linear layers built in a row after one seed: bias=False must draw only the weight."""
    torch.manual_seed(3)
    layers = [(5, 3, True), (4, 2, False), (2, 2, True), (0, 3, True)]
    built = [nn.Linear(i, o, bias=b) for i, o, b in layers]
    after = torch.randn(3)
    return {"seed": 3, "layers": [{"in_features": i, "out_features": o, "bias": b,
                                   "weight": values(m.weight), "bias_values": values(m.bias) if b else None}
                                  for (i, o, b), m in zip(layers, built)],
            "randn_after": values(after)}


# --- nn_functional.json --------------------------------------------------------------------------------
def linear_functional():
    """F.linear in float64 on inputs of 1 to 3 dims, with and without bias; loss = sum(out^2)."""
    torch.manual_seed(5)
    weight = torch.randn(3, 4, dtype=torch.float64)
    bias = torch.randn(3, dtype=torch.float64)
    cases = []
    for shape, with_bias in (([4], True), ([2, 4], True), ([2, 3, 4], True), ([2, 4], False), ([0, 4], True)):
        x = torch.randn(shape, dtype=torch.float64, requires_grad=True)
        w = weight.clone().requires_grad_()
        b = bias.clone().requires_grad_() if with_bias else None
        out = F.linear(x, w, b)
        (out * out).sum().backward()
        cases.append({"x_shape": shape, "bias": with_bias, "x": values(x), "out_shape": list(out.shape),
                      "out": values(out), "grad_x": values(x.grad), "grad_weight": values(w.grad),
                      "grad_bias": values(b.grad) if with_bias else None})
    return {"weight": values(weight), "bias_values": values(bias), "cases": cases}


def gelu_functional():
    x = torch.tensor([-6.0, -3.5, -2.0, -1.0, -0.5, -1e-3, 0.0, 1e-3, 0.3, 0.5, 1.0, 1.7, 2.0, 3.5, 6.0],
                     dtype=torch.float64)
    out = {"x": values(x)}
    for approximate in ("none", "tanh"):
        leaf = x.clone().requires_grad_()
        y = F.gelu(leaf, approximate=approximate)
        y.sum().backward()
        out[approximate] = {"out": values(y), "grad": values(leaf.grad)}
    return out


def dropout_functional():
    x = (torch.arange(12, dtype=torch.float32) + 1).reshape(3, 4)
    cases = []
    for seed, p in ((7, 0.4), (0, 0.3), (1, 0.9)):
        torch.manual_seed(seed)
        leaf = x.clone().requires_grad_()
        y = F.dropout(leaf, p=p, training=True)
        y.sum().backward()
        after = torch.randn(3)
        cases.append({"seed": seed, "p": p, "out": values(y), "grad": values(leaf.grad), "randn_after": values(after)})
    return {"x": values(x), "shape": list(x.shape), "cases": cases}


# --- nn_modules.json -------------------------------------------------------------------------------------
class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.scale = nn.Parameter(torch.ones(4))
        self.register_buffer("mask", torch.zeros(4))
        self.proj = nn.Linear(4, 4)
        self.act = nn.GELU()

    def forward(self, x):
        return self.act(self.proj(x * self.scale))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.blocks = nn.Sequential(Block(), Block())
        self.head = nn.Linear(4, 2)
        self.tied = self.head  # one module under two names
        self.register_buffer("steps", torch.zeros((), dtype=torch.long))

    def forward(self, x):
        return self.head(self.blocks(x))


def reprs():
    modules = {
        "linear": nn.Linear(128, 512),
        "linear_no_bias": nn.Linear(3, 4, bias=False),
        "relu": nn.ReLU(), "tanh": nn.Tanh(), "sigmoid": nn.Sigmoid(),
        "gelu": nn.GELU(), "gelu_tanh": nn.GELU(approximate="tanh"),
        "dropout": nn.Dropout(), "dropout_0.1": nn.Dropout(0.1),
        "flatten": nn.Flatten(), "flatten_0_2": nn.Flatten(0, 2),
        "identity": nn.Identity(), "sequential_empty": nn.Sequential(),
        "nested": nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.ReLU(), nn.Linear(1, 1)), nn.Dropout(0.25)),
        "feedforward": FeedForward(),
    }
    return {key: repr(m) for key, m in modules.items()}


def tree():
    torch.manual_seed(0)
    net = Net()
    return {"seed": 0, "repr": repr(net),
            "named_parameters": [n for n, _ in net.named_parameters()],
            "named_buffers": [n for n, _ in net.named_buffers()],
            "named_modules": [n for n, _ in net.named_modules()],
            "named_children": [n for n, _ in net.named_children()],
            "state_dict": {k: values(v) for k, v in net.state_dict().items()},
            "state_dict_keys": list(net.state_dict().keys())}


if __name__ == "__main__":
    write("nn_feedforward.json", {"course": course_feedforward(), "small": small_feedforward()})
    write("nn_init.json", {"gains": gains(), "fans": fans(), "cases": init_cases(), "linear": linear_cases()})
    write("nn_functional.json", {"linear": linear_functional(), "gelu": gelu_functional(),
                                 "dropout": dropout_functional()})
    write("nn_modules.json", {"reprs": reprs(), "tree": tree()})
