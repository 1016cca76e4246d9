"""PyTorch twin of minigrad's parity trace: one training step of the lesson's FeedForward, tensor by tensor.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/parity_reference.py
        writes the fixtures of tests/parity/test_parity_trace.cpp into tests/fixtures/parity/:
          feedforward_step.safetensors                 the step as the lesson writes it
          feedforward_step_leaky_relu.safetensors      the same step with nn.LeakyReLU(0.01) where the
                                                       lesson has nn.ReLU (a learner's slip)
          feedforward_step_perturbed_grad.safetensors  the first trace with 1e-3 added to one element
                                                       of net.2.weight.grad
        Each perturbed file says in its metadata which tensor is the first to differ from the clean
        trace and by how much (max abs diff), both computed here from the two PyTorch traces.
    /usr/bin/python3 tools/reference/parity_reference.py --out trace.safetensors [--seed 0] [--n-embd 16]
                                                         [--rows 4] [--lr 0.1]
        writes one trace (what tools/parity/parity_trace.sh compares with examples/parity_trace).

The step (and examples/parity_trace.cpp, line for line): manual_seed(seed); model = FeedForward(n_embd);
x = randn(rows, n_embd); y = randn(rows, n_embd); SGD(lr); zero_grad; loss = mse_loss(model(x), y);
backward; step. The trace names, in order, as minigrad::parity::trace_training_step (parity/parity.hpp):
"input", "target", each parameter ("net.0.weight", ...), each module's output in the order forward
hooks fire ("net.0.output", "net.1.output", "net.2.output", "net.output", "output"), "loss", each
gradient ("net.0.weight.grad", ...), each parameter after the step ("net.0.weight.updated", ...).

The `safetensors` package is not in Debian, so the format is written below in a few lines: an 8-byte
little-endian header length, the JSON header ("__metadata__" with "trace_order", the names joined by
commas, then one entry per tensor in trace order), padded with spaces to a multiple of 8, then the data.
"""

import argparse
import json
import os
import struct

import torch
import torch.nn.functional as F
from torch import nn

FIXTURES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures", "parity")
CONFIG = {"seed": 0, "n_embd": 16, "widen": 4, "rows": 4, "lr": 0.1}
PERTURBED_GRAD = ("net.2.weight.grad", (1, 3), 1e-3)  # tensor, element, amount added


class FeedForward(nn.Module):
    """The lesson's class, with n_embd an argument and the activation a choice (for the slip)."""

    def __init__(self, n_embd, widen, activation):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_embd, widen * n_embd),
            activation,
            nn.Linear(widen * n_embd, n_embd),
        )

    def forward(self, x):
        return self.net(x)


def trace_step(config, activation):
    """[(name, tensor)] of one training step, in the order the step makes them."""
    torch.manual_seed(config["seed"])
    model = FeedForward(config["n_embd"], config["widen"], activation)
    x = torch.randn(config["rows"], config["n_embd"])
    y = torch.randn(config["rows"], config["n_embd"])
    optimizer = torch.optim.SGD(model.parameters(), lr=config["lr"])

    trace = [("input", x.clone()), ("target", y.clone())]
    trace += [(name, p.detach().clone()) for name, p in model.named_parameters()]
    def record_output(label):
        return lambda module, args, out: trace.append((label, out.detach().clone()))

    for name, module in model.named_modules():  # forward hooks fire as each call returns: inner first
        module.register_forward_hook(record_output(name + ".output" if name else "output"))

    optimizer.zero_grad()
    loss = F.mse_loss(model(x), y)
    trace.append(("loss", loss.detach().clone()))
    loss.backward()
    trace += [(name + ".grad", p.grad.clone()) for name, p in model.named_parameters() if p.grad is not None]
    optimizer.step()
    trace += [(name + ".updated", p.detach().clone()) for name, p in model.named_parameters()]
    return trace


def first_divergence(trace, reference):
    """(name, max abs diff) of the first tensor of `trace` that is not equal to the reference's."""
    theirs = dict(reference)
    for name, tensor in trace:
        diff = (tensor.double() - theirs[name].double()).abs().max().item()
        if diff > 0:
            return name, diff
    return None, 0.0


def save_trace(trace, path, metadata):
    header = {"__metadata__": {"trace_order": ",".join(name for name, _ in trace), **metadata}}
    blobs, offset = [], 0
    for name, tensor in trace:
        data = tensor.contiguous().numpy().tobytes()  # float32, row-major, little-endian on this host
        header[name] = {"dtype": "F32", "shape": list(tensor.shape),
                        "data_offsets": [offset, offset + len(data)]}
        blobs.append(data)
        offset += len(data)
    text = json.dumps(header, separators=(",", ":")).encode()
    text += b" " * (-len(text) % 8)
    with open(path, "wb") as f:
        f.write(struct.pack("<Q", len(text)) + text + b"".join(blobs))


def config_metadata(config, expected=None):
    """The configuration as strings, and for a perturbed trace the first divergence from the clean one."""
    metadata = {key: repr(value) for key, value in config.items()}
    if expected is not None:
        name, diff = expected
        metadata["expected_first_divergence"] = name
        metadata["expected_max_abs_diff"] = repr(diff)
    return metadata


def write_fixtures():
    os.makedirs(FIXTURES, exist_ok=True)
    clean = trace_step(CONFIG, nn.ReLU())
    save_trace(clean, os.path.join(FIXTURES, "feedforward_step.safetensors"), config_metadata(CONFIG))

    leaky = trace_step(CONFIG, nn.LeakyReLU(0.01))
    save_trace(leaky, os.path.join(FIXTURES, "feedforward_step_leaky_relu.safetensors"),
               config_metadata(CONFIG, first_divergence(leaky, clean)))

    target, element, amount = PERTURBED_GRAD
    perturbed = [(n, t.clone()) for n, t in clean]
    for n, t in perturbed:
        if n == target:
            t[element] += amount
    save_trace(perturbed, os.path.join(FIXTURES, "feedforward_step_perturbed_grad.safetensors"),
               config_metadata(CONFIG, first_divergence(perturbed, clean)))
    print("wrote", len(clean), "tensors per trace to", os.path.normpath(FIXTURES))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write one trace here instead of the test fixtures")
    parser.add_argument("--seed", type=int, default=CONFIG["seed"])
    parser.add_argument("--n-embd", type=int, default=CONFIG["n_embd"])
    parser.add_argument("--rows", type=int, default=CONFIG["rows"])
    parser.add_argument("--lr", type=float, default=CONFIG["lr"])
    args = parser.parse_args()
    if args.out is None:
        write_fixtures()
        return
    config = {**CONFIG, "seed": args.seed, "n_embd": args.n_embd, "rows": args.rows, "lr": args.lr}
    save_trace(trace_step(config, nn.ReLU()), args.out, config_metadata(config))


if __name__ == "__main__":
    main()
