"""Why attention is scaled, printed as examples/lessons/scaled_attention.cpp prints it.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/lessons/scaled_attention.py > tests/fixtures/lessons/scaled_attention.expected

In the lecture this cell follows the single self-attention head and draws its keys and queries
from the generator where that cell left it; the first lines replay those draws (the input x and
the head's three layers), so the variances are the lecture's: 1.0449, 1.0700 and 1.0918. Scaling
q @ k^T by head_size**-0.5 keeps its variance near 1; without it the variance grows with
head_size and softmax turns towards one-hot, as the last line shows for a vector times 8.
"""

import torch
from torch import nn

# the draws of the self-attention head lesson, which this step continues
torch.manual_seed(1337)
B, T, C = 4, 8, 32
x = torch.randn(B, T, C)
head_size = 16
key = nn.Linear(C, head_size, bias=False)
query = nn.Linear(C, head_size, bias=False)
value = nn.Linear(C, head_size, bias=False)

k = torch.randn(B, T, head_size)
q = torch.randn(B, T, head_size)
wei = q @ k.transpose(-2, -1) * head_size**-0.5
print(k.var())
print(q.var())
print(wei.var())
unscaled = q @ k.transpose(-2, -1)
print(unscaled.var())

print(torch.softmax(torch.tensor([0.1, -0.2, 0.3, -0.2, 0.5]), dim=-1))
print(torch.softmax(torch.tensor([0.1, -0.2, 0.3, -0.2, 0.5]) * 8, dim=-1))  # gets too peaky, converges to one-hot
