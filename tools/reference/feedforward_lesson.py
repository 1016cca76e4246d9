"""The lesson "The Feed-Forward Part" run in real PyTorch, printed as examples/feedforward_demo prints it.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/feedforward_lesson.py > tests/fixtures/feedforward_demo.expected

The Example and the three snippets are the lesson's code unchanged; only the printing differs
from the lesson in one way, to match what C++ prints: a shape shows as `[1, 128]` (its list)
instead of `torch.Size([1, 128])`. Booleans print as Python's True/False and the difference as
Python's 0.0, which the C++ demo reproduces, so `diff` of the two outputs is empty.
The last two lines add the parameter count of the Key points and the Exercise's answer.
"""

import torch
from torch import nn

batch_size = 32
block_size = 64
n_embd = 128
n_head = 4
n_layer = 4


class FeedForward(nn.Module):
    def __init__(self):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(n_embd, 4 * n_embd),
            nn.ReLU(),
            nn.Linear(4 * n_embd, n_embd),
        )

    def forward(self, x):
        return self.net(x)


def example():
    torch.manual_seed(0)
    ff = FeedForward()
    token = torch.randn(1, n_embd)
    hidden = ff.net[0](token)
    after_relu = ff.net[1](hidden)
    back = ff.net[2](after_relu)

    print("Token shape:", list(token.shape))
    print("After widening shape:", list(hidden.shape))
    print("After narrowing shape:", list(back.shape))
    print("Negative numbers before ReLU:", (hidden < 0).sum().item())
    print("Negative numbers after ReLU:", (after_relu < 0).sum().item())

    pair = torch.cat([token, token], dim=0)
    out = ff(pair)
    print("Same vector at two positions, outputs equal:", torch.equal(out[0], out[1]))
    print("Largest difference between the two rows:", (out[0] - out[1]).abs().max().item())


def snippets():
    # Widen, then narrow
    torch.manual_seed(0)
    ff = FeedForward()
    v = torch.randn(2, n_embd)
    print("Input shape:", list(v.shape))
    print("Hidden shape:", list(ff.net[0](v).shape))
    print("Output shape:", list(ff(v).shape))

    # ReLU clears the negatives
    hidden = ff.net[0](v)
    print("Negatives before ReLU:", (hidden < 0).sum().item())
    print("Negatives after ReLU:", (ff.net[1](hidden) < 0).sum().item())

    # One row alone gives the same row
    pair = torch.cat([v[0:1], v[0:1]], dim=0)
    out_pair = ff(pair)
    print("Two copies of one row, outputs equal:", torch.equal(out_pair[0], out_pair[1]))

    # Key points, and the Exercise
    print("Parameters:", sum(p.numel() for p in ff.parameters()))
    print("Exercise, output shape for an input of shape (2, 128):", list(ff(torch.zeros(2, n_embd)).shape))


if __name__ == "__main__":
    example()
    snippets()
