"""Golden values for the course's attention, built from minigrad's parts (tests/nn/test_attention.cpp).

Builds one self-attention head and a multi-head attention as the course's gpt.py does (key, query
and value Linear(C, head_size, bias=False), a registered `tril` buffer, the masked and scaled
softmax, heads in an nn.ModuleList concatenated on the last dim, then a Linear projection; dropout
left out, since p = 0 draws nothing), after torch.manual_seed(1337), and records for a seeded
[B, T, C] input: every initial parameter, the output, and the gradients of the input and of every
parameter for a random cotangent.

Run with Debian's python3-torch: /usr/bin/python3 tools/reference/attention_reference.py
Writes tests/fixtures/attention.json.
"""
import os
import sys

import torch
import torch.nn as nn
from torch.nn import functional as F

sys.dont_write_bytecode = True  # importing reference_common must leave no __pycache__ here
from reference_common import FIXTURES, fixture_header, flat, write_json  # noqa: E402

B, T, C, N_HEAD, BLOCK_SIZE = 2, 5, 8, 2, 6
HEAD_SIZE = C // N_HEAD


class Head(nn.Module):
    def __init__(self, head_size):
        super().__init__()
        self.key = nn.Linear(C, head_size, bias=False)
        self.query = nn.Linear(C, head_size, bias=False)
        self.value = nn.Linear(C, head_size, bias=False)
        self.register_buffer("tril", torch.tril(torch.ones(BLOCK_SIZE, BLOCK_SIZE)))

    def forward(self, x):
        _, t, _ = x.shape
        k = self.key(x)
        q = self.query(x)
        wei = q @ k.transpose(-2, -1) * k.shape[-1] ** -0.5
        wei = wei.masked_fill(self.tril[:t, :t] == 0, float("-inf"))
        wei = F.softmax(wei, dim=-1)
        return wei @ self.value(x)


class MultiHeadAttention(nn.Module):
    def __init__(self, num_heads, head_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
        self.proj = nn.Linear(C, C)

    def forward(self, x):
        return self.proj(torch.cat([h(x) for h in self.heads], dim=-1))


def record(module, x):
    """Parameters, output and gradients of `module` at x for a random cotangent (drawn after the output)."""
    params = {name: flat(p) for name, p in module.named_parameters()}
    x.grad = None
    out = module(x)
    cotangent = torch.randn(out.shape)
    (out * cotangent).sum().backward()
    return {
        "params": params,
        "buffers": sorted(name for name, _ in module.named_buffers()),
        "shape": list(out.shape),
        "output": flat(out),
        "cotangent": flat(cotangent),
        "x_grad": flat(x.grad),
        "param_grads": {name: flat(p.grad) for name, p in module.named_parameters()},
    }


def main():
    torch.manual_seed(1337)
    head = Head(HEAD_SIZE)
    mha = MultiHeadAttention(N_HEAD, HEAD_SIZE)
    x = torch.randn(B, T, C, requires_grad=True)
    data = {
        "header": fixture_header("attention_reference.py", B=B, T=T, C=C, n_head=N_HEAD,
                                 block_size=BLOCK_SIZE),
        "x": flat(x),
        "head": record(head, x),
        "multi_head": record(mha, x),
    }
    print(write_json(os.path.join(FIXTURES, "attention.json"), data))


if __name__ == "__main__":
    main()
