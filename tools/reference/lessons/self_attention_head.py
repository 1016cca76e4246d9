"""A single head of self-attention, printed as examples/lessons/self_attention_head.cpp prints it.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/lessons/self_attention_head.py > tests/fixtures/lessons/self_attention_head.expected

The lecture's "version 4": every position emits a key and a query, their dot products are the
affinities, the future is masked out, softmax makes the weights, and the output aggregates the
values. A shape prints as its list, as the C++ program prints it.
"""

import torch
from torch import nn
from torch.nn import functional as F

torch.manual_seed(1337)
B, T, C = 4, 8, 32  # batch, time, channels
x = torch.randn(B, T, C)

# let's see a single Head perform self-attention
head_size = 16
key = nn.Linear(C, head_size, bias=False)
query = nn.Linear(C, head_size, bias=False)
value = nn.Linear(C, head_size, bias=False)
k = key(x)  # (B, T, 16)
q = query(x)  # (B, T, 16)
wei = q @ k.transpose(-2, -1)  # (B, T, 16) @ (B, 16, T) ---> (B, T, T)

tril = torch.tril(torch.ones(T, T))
wei = wei.masked_fill(tril == 0, float('-inf'))
wei = F.softmax(wei, dim=-1)

v = value(x)
out = wei @ v
print(list(out.shape))
print(wei[0])
