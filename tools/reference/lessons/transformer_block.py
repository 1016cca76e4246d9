"""Multi-head attention, the feed-forward network and the residual block with LayerNorm, built as
the lecture builds them and printed as examples/lessons/transformer_block.cpp prints them.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/lessons/transformer_block.py > tests/fixtures/lessons/transformer_block.expected

The classes are the lecture's (without dropout, which it adds last), on the [4, 8, 32] batch of
the self-attention lesson: one head, four heads of 8 side by side and their projection, the
feed-forward network, then the block that puts each behind a LayerNorm and adds its result to
its input (the residual connection). Each prints its output's shape and parameter count; the
block also prints what it makes of the first token. A shape prints as its list, as the C++
program prints it.
"""

import torch
import torch.nn as nn
from torch.nn import functional as F

torch.manual_seed(1337)
B, T, C = 4, 8, 32  # batch, time, channels
n_embd = C
n_head = 4
block_size = T
x = torch.randn(B, T, C)


class Head(nn.Module):
    """ one head of self-attention """

    def __init__(self, head_size):
        super().__init__()
        self.key = nn.Linear(n_embd, head_size, bias=False)
        self.query = nn.Linear(n_embd, head_size, bias=False)
        self.value = nn.Linear(n_embd, head_size, bias=False)
        self.register_buffer('tril', torch.tril(torch.ones(block_size, block_size)))

    def forward(self, x):
        B, T, C = x.shape
        k = self.key(x)  # (B,T,hs)
        q = self.query(x)  # (B,T,hs)
        # compute attention scores ("affinities"), scaled by C**-0.5 as in the lecture
        wei = q @ k.transpose(-2, -1) * C**-0.5  # (B, T, hs) @ (B, hs, T) -> (B, T, T)
        wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))  # (B, T, T)
        wei = F.softmax(wei, dim=-1)  # (B, T, T)
        # perform the weighted aggregation of the values
        v = self.value(x)  # (B,T,hs)
        out = wei @ v  # (B, T, T) @ (B, T, hs) -> (B, T, hs)
        return out


class MultiHeadAttention(nn.Module):
    """ multiple heads of self-attention in parallel """

    def __init__(self, num_heads, head_size):
        super().__init__()
        self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
        self.proj = nn.Linear(n_embd, n_embd)

    def forward(self, x):
        out = torch.cat([h(x) for h in self.heads], dim=-1)
        out = self.proj(out)
        return out


class FeedFoward(nn.Module):
    """ a simple linear layer followed by a non-linearity """

    def __init__(self, n_embd):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd),
            nn.ReLU(),
            nn.Linear(4 * n_embd, n_embd),
        )

    def forward(self, x):
        return self.net(x)


class Block(nn.Module):
    """ Transformer block: communication followed by computation """

    def __init__(self, n_embd, n_head):
        # n_embd: embedding dimension, n_head: the number of heads we'd like
        super().__init__()
        head_size = n_embd // n_head
        self.sa = MultiHeadAttention(n_head, head_size)
        self.ffwd = FeedFoward(n_embd)
        self.ln1 = nn.LayerNorm(n_embd)
        self.ln2 = nn.LayerNorm(n_embd)

    def forward(self, x):
        x = x + self.sa(self.ln1(x))
        x = x + self.ffwd(self.ln2(x))
        return x


def count(module):
    return sum(p.numel() for p in module.parameters())


head = Head(16)
print('one head:', list(head(x).shape), count(head))
sa = MultiHeadAttention(n_head, n_embd // n_head)
print('four heads of 8:', list(sa(x).shape), count(sa))
ffwd = FeedFoward(n_embd)
print('feed-forward:', list(ffwd(x).shape), count(ffwd))
block = Block(n_embd, n_head)
y = block(x)
print('block:', list(y.shape), count(block))
print(x[0, 0])
print(y[0, 0])
print(y[0, 0] - x[0, 0])  # what the block added to the first token
