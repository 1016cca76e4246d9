"""Golden values for minigrad's matmul (autograd/ops_matmul.cpp), taken from real PyTorch.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/matmul_reference.py

It writes tests/fixtures/matmul.json: one float32 product [2, 3, 4] @ [4, 5] (the [B, T, C] @
[C, D] of a Linear layer over a batch of sequences) and its gradients for the loss
sum(out * grad_out), with grad_out a fixed random cotangent. The inputs are stored too, so the
C++ test does not depend on minigrad's randn. Floats are written with repr (exact); nothing is
rounded.
"""

import os
import sys

import torch

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import FIXTURES, fixture_header, values, write_cases  # noqa: E402

OUT = os.path.join(FIXTURES, "matmul.json")


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
    header = fixture_header("matmul_reference.py", notes=[
        "out = torch.matmul(a, b); out.backward(grad_out), so grad_a = grad_out @ b^T and "
        "grad_b = sum over the batch of a^T @ grad_out",
        "a, b, then grad_out drawn by torch.randn after torch.manual_seed(seed)",
        "values are row-major, flattened",
    ])
    path = write_cases(OUT, header, cases)
    print(f"wrote {len(cases)} case(s) to {path} ({os.path.getsize(OUT)} bytes)", file=sys.stderr)


if __name__ == "__main__":
    main()
