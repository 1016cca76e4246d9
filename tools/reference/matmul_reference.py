"""Golden values for minigrad's matmul (autograd/ops_matmul.cpp), taken from real PyTorch.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/matmul_reference.py

It writes tests/fixtures/matmul.json: one float32 product [2, 3, 4] @ [4, 5] (the [B, T, C] @
[C, D] of a Linear layer over a batch of sequences) and its gradients for the loss
sum(out * grad_out), with grad_out a fixed random cotangent. The inputs are stored too, so the
C++ test does not depend on minigrad's randn. Floats are written with repr (exact); nothing is
rounded.
"""

import json
import os
import platform
import sys

import torch

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tests", "fixtures",
                   "matmul.json")


def values(t):
    return t.detach().reshape(-1).tolist()


def product_case(name, a_shape, b_shape, seed):
    torch.manual_seed(seed)
    a = torch.randn(*a_shape, dtype=torch.float32, requires_grad=True)
    b = torch.randn(*b_shape, dtype=torch.float32, requires_grad=True)
    out = torch.matmul(a, b)
    grad_out = torch.randn(out.shape, dtype=torch.float32)
    out.backward(grad_out)
    return {
        "name": name,
        "dtype": "float32",
        "a_shape": list(a.shape), "a": values(a),
        "b_shape": list(b.shape), "b": values(b),
        "out_shape": list(out.shape), "out": values(out),
        "grad_fn": out.grad_fn.name(),
        "grad_out": values(grad_out),
        "grad_a": values(a.grad),
        "grad_b": values(b.grad),
    }


def main():
    cases = [product_case("batched_BTC_at_CD_seed_0", (2, 3, 4), (4, 5), seed=0)]
    fixture = {
        "header": {
            "torch_version": torch.__version__,
            "torch_package": "Debian python3-torch 1.13.1+dfsg (reports 1.13.0a0)",
            "python": platform.python_version(),
            "command": "/usr/bin/python3 tools/reference/matmul_reference.py",
            "notes": [
                "out = torch.matmul(a, b); out.backward(grad_out), so grad_a = grad_out @ b^T and "
                "grad_b = sum over the batch of a^T @ grad_out",
                "a, b, then grad_out drawn by torch.randn after torch.manual_seed(seed)",
                "values are row-major, flattened",
            ],
        },
        "cases": cases,
    }
    os.makedirs(os.path.dirname(OUT), exist_ok=True)
    with open(OUT, "w") as f:
        f.write('{"header": ' + json.dumps(fixture["header"], indent=2) + ',\n"cases": [\n')
        f.write(",\n".join(json.dumps(c, separators=(",", ":")) for c in cases))
        f.write("\n]}\n")
    print(f"wrote {len(cases)} case(s) to {os.path.normpath(OUT)} ({os.path.getsize(OUT)} bytes)",
          file=sys.stderr)


if __name__ == "__main__":
    main()
