"""The lecture's averaging trick, printed as examples/lessons/averaging_trick.cpp prints it.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/lessons/averaging_trick.py > tests/fixtures/lessons/averaging_trick.expected

A lower-triangular matrix whose rows are normalised to sum to 1 turns a matrix product into a
running average: first on a 3x3 example, then three ways of averaging each position with the
positions before it in a [B, T, C] batch (explicit loops, the normalised tril matrix, softmax of
a masked zero matrix), and torch.allclose between them. A shape prints as its list, [4, 8, 2],
as the C++ program prints it.
"""

import torch
from torch.nn import functional as F

# the toy example: a @ b averages the rows of b up to each row
torch.manual_seed(42)
a = torch.tril(torch.ones(3, 3))
a = a / torch.sum(a, 1, keepdim=True)
b = torch.randint(0, 10, (3, 2)).float()
c = a @ b
print('a=')
print(a)
print('--')
print('b=')
print(b)
print('--')
print('c=')
print(c)

# a batch of B sequences of T positions with C channels each
torch.manual_seed(1337)
B, T, C = 4, 8, 2
x = torch.randn(B, T, C)
print(list(x.shape))

# version 1: for every position, the mean of the positions up to it
xbow = torch.zeros((B, T, C))
for b in range(B):
    for t in range(T):
        xprev = x[b, :t + 1]  # (t+1, C)
        xbow[b, t] = torch.mean(xprev, 0)
print(x[0])
print(xbow[0])

# version 2: the same averages as one matrix product
wei = torch.tril(torch.ones(T, T))
wei = wei / wei.sum(1, keepdim=True)
xbow2 = wei @ x  # (T, T) @ (B, T, C) -> (B, T, C)
print(wei)
print(torch.allclose(xbow, xbow2))

# version 3: the weights as a softmax over a mask of -inf
tril = torch.tril(torch.ones(T, T))
wei = torch.zeros((T, T))
wei = wei.masked_fill(tril == 0, float('-inf'))
print(wei)
wei = F.softmax(wei, dim=-1)
xbow3 = wei @ x
print(torch.allclose(xbow, xbow3))
print(xbow3[0])
