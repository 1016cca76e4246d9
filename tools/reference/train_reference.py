"""PyTorch twins of minigrad's training parity runs (tests/examples/test_training.cpp).

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/train_reference.py

Each run is a whole seeded training loop: a teacher FeedForward makes the targets, a student
FeedForward learns them with mse_loss, batches come from a shuffling DataLoader with its own
Generator, and the optimizer is SGD with momentum 0.9 or AdamW. The C++ test runs the same lines
and must give the same loss at every one of the 50 steps (within 1e-4 relative): that checks
initialisation, randn, the DataLoader's shuffling, forward, backward and the optimizer together.

It writes tests/fixtures/train_parity.json: the configuration and, per run, the optimizer, its
options and the 50 losses (float32 values written with repr, exact; nothing is rounded).
"""

import os
import platform
import sys

import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.data import DataLoader, TensorDataset

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import FIXTURES, write_json  # noqa: E402

OUT = os.path.join(FIXTURES, "train_parity.json")

# Small enough that 50 steps take well under a second in minigrad's release build, big enough to
# be a real run: 120 sequences of 32 tokens of width 64 are 8 batches per epoch (the last one
# holds 8 sequences, not 16), so the 50 steps cross six epoch boundaries and reshuffle each time.
CONFIG = {"seed": 0, "n_embd": 64, "widen": 4, "examples": 120, "block_size": 32, "batch_size": 16,
          "steps": 50}

# The two runs: optimizer name and options, by PyTorch's keyword names.
RUNS = [
    {"name": "sgd_momentum", "optimizer": "SGD", "options": {"lr": 0.1, "momentum": 0.9}},
    {"name": "adamw", "optimizer": "AdamW", "options": {"lr": 3e-3, "weight_decay": 0.01}},
]
OPTIMIZERS = {"SGD": torch.optim.SGD, "AdamW": torch.optim.AdamW}


def feed_forward(n_embd, widen):
    """The lesson's FeedForward: its net, which is what minigrad's nn::FeedForward(n_embd, widen) holds."""
    return nn.Sequential(nn.Linear(n_embd, widen * n_embd), nn.ReLU(), nn.Linear(widen * n_embd, n_embd))


def run(optimizer_name, options):
    c = CONFIG
    torch.manual_seed(c["seed"])
    teacher = feed_forward(c["n_embd"], c["widen"])  # draws first from the default generator ...
    student = feed_forward(c["n_embd"], c["widen"])  # ... so the student starts somewhere else

    generator = torch.Generator()
    generator.manual_seed(c["seed"])
    x = torch.randn(c["examples"], c["block_size"], c["n_embd"], generator=generator)
    with torch.no_grad():
        y = teacher(x)
    loader = DataLoader(TensorDataset(x, y), batch_size=c["batch_size"], shuffle=True, generator=generator)

    # foreach=False: the single-tensor code path, the one minigrad's optimizers mirror.
    optimizer = OPTIMIZERS[optimizer_name](student.parameters(), foreach=False, **options)
    losses = []
    while len(losses) < c["steps"]:
        for xb, yb in loader:
            loss = F.mse_loss(student(xb), yb)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
            if len(losses) == c["steps"]:
                break
    return losses


def main():
    torch.set_num_threads(1)  # one summation order for the matmuls, run to run
    runs = []
    for spec in RUNS:
        losses = run(spec["optimizer"], spec["options"])
        # A parity run is only worth comparing if the loss really moves.
        assert losses[-1] < 0.8 * losses[0], (spec["name"], losses[0], losses[-1])
        runs.append(dict(spec, losses=losses))
    data = {
        "generator": "tools/reference/train_reference.py, torch %s, python %s"
                     % (torch.__version__, platform.python_version()),
        "config": CONFIG,
        "runs": runs,
    }
    path = write_json(OUT, data)
    for r in runs:
        print("%-12s first loss %.6f, last loss %.6f" % (r["name"], r["losses"][0], r["losses"][-1]))
    print("wrote", path)


if __name__ == "__main__":
    main()
