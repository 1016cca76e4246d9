"""Golden text of results that carry a grad_fn, one per op, taken from real PyTorch.

Run with Debian's python3-torch 1.13.1 from the repository root:

    python3 tools/reference/grad_fn_reference.py

It writes tests/fixtures/grad_fn.json: for each case a name and "text", str() of the result of one
op on the fixed inputs below, so that the node name in the suffix (grad_fn=<AddmmBackward0>) and
the values printed before it can be compared with minigrad's to_string() character for
character. tests/autograd/test_grad_fn_names.cpp builds the same inputs and calls the same ops.
"""

import os
import sys

import torch
import torch.nn.functional as F

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import FIXTURES, write_rows  # noqa: E402

OUT = os.path.join(FIXTURES, "grad_fn.json")


def inputs():
    """x and y [2, 3], w [4, 3], b [4], m [2, 3] bool, t [2] int64, p [2, 3] in (0, 1); x, y, w, b
    require grad. Values are short binary fractions, written out again in the C++ test."""
    x = torch.tensor([[0.5, -1.25, 2.0], [1.5, 0.25, -0.75]], requires_grad=True)
    y = torch.tensor([[1.0, 0.5, -0.5], [2.0, -1.0, 0.25]], requires_grad=True)
    w = torch.tensor([[0.5, 0.25, -0.5], [1.0, -0.25, 0.75], [-1.0, 0.5, 0.125], [0.25, 0.0, -0.375]],
                     requires_grad=True)
    b = torch.tensor([0.125, -0.25, 0.5, 0.0], requires_grad=True)
    m = torch.tensor([[True, False, False], [False, True, False]])
    t = torch.tensor([2, 0])
    p = torch.tensor([[0.25, 0.5, 0.75], [1.0, 0.0, 0.5]])
    return x, y, w, b, m, t, p


def cases():
    x, y, w, b, m, t, p = inputs()
    return [
        ("add", x + y), ("sub", x - y), ("mul", x * y), ("div", x / (y * y + 1)), ("neg", -x),
        ("pow", x.pow(2)), ("exp", x.exp()), ("log", (x * x + 1).log()), ("sqrt", (x * x).sqrt()),
        ("abs", x.abs()), ("relu", x.relu()), ("tanh", x.tanh()), ("sigmoid", x.sigmoid()),
        ("clamp", x.clamp(-1.0, 1.0)), ("where", torch.where(m, x, y)),
        ("masked_fill", x.masked_fill(m, 0.0)),
        ("matmul 2-d", x @ w.t()), ("matmul 1-d", x[0] @ y[1]), ("matmul 3-d by 2-d", x.reshape(1, 2, 3) @ w.t()),
        ("sum", x.sum()), ("sum dim", x.sum(1)), ("mean", x.mean()), ("mean dim", x.mean(0)),
        ("max", x.max()), ("max dim", x.max(1).values), ("min", x.min()),
        ("softmax", x.softmax(1)), ("log_softmax", x.log_softmax(1)),
        ("reshape", x.reshape(3, 2)), ("view", x.view(6)), ("flatten", x.flatten()),
        ("unsqueeze", x.unsqueeze(0)), ("squeeze", x.unsqueeze(0).squeeze(0)),
        ("permute", x.permute(1, 0)), ("transpose", x.transpose(0, 1)), ("t", x.t()),
        ("cat", torch.cat([x, y])), ("stack", torch.stack([x, y])), ("select", x[1]),
        ("slice", x[:, 1:3]),
        ("linear", F.linear(x, w, b)), ("linear without bias", F.linear(x, w)),
        ("linear 3-d", F.linear(x.reshape(1, 2, 3), w, b)), ("linear 1-d", F.linear(x[0], w, b)),
        ("mse_loss sum", F.mse_loss(x, y, reduction="sum")),
        ("mse_loss none", F.mse_loss(x, y, reduction="none")),
        ("gelu", F.gelu(x)), ("gelu tanh", F.gelu(x, approximate="tanh")),
        ("mse_loss", F.mse_loss(x, y)), ("l1_loss", F.l1_loss(x, y)),
        ("cross_entropy", F.cross_entropy(x, t)), ("nll_loss", F.nll_loss(x.log_softmax(1), t)),
        ("binary_cross_entropy_with_logits", F.binary_cross_entropy_with_logits(x, p)),
        ("rsub", 1 - x), ("rdiv", 3 / (x * x + 1)), ("reciprocal", (x * x + 1).reciprocal()),
        ("split", x.split(2, 1)[0]), ("split with sizes", x.split([1, 2], 1)[1]), ("chunk", x.chunk(2, 1)[1]),
        ("slice with a step", x[:, ::2]), ("index a later dim", x[:, t]),
        ("matmul 2-d by 3-d", w @ y.reshape(1, 3, 2)),
        ("matmul 1-row 2-d by 3-d", x[:1] @ w.t().reshape(1, 3, 4)),
        ("index a later dim by a 0-d tensor", x[:, t[1]]), ("index by a 0-d tensor", x[t[1]]),
    ]


def main():
    rows = [{"name": name, "text": str(result)} for name, result in cases()]
    path = write_rows(OUT, rows)  # one case per line, so a regenerated fixture diffs case by case
    print(f"wrote {len(rows)} cases to {path} (torch {torch.__version__})")


if __name__ == "__main__":
    main()
