"""LayerNorm written out as the lecture writes it, printed as
examples/lessons/layer_norm_from_scratch.cpp prints it.

Run with Debian's python3-torch 1.13.1 from the repository root:

    /usr/bin/python3 tools/reference/lessons/layer_norm_from_scratch.py > tests/fixtures/lessons/layer_norm_from_scratch.expected

The lecture's LayerNorm1d: the makemore BatchNorm1d with the statistics taken over each row (its
features) instead of each column (the batch), so every row comes out with mean 0 and standard
deviation 1 while the columns do not. A shape prints as its list, and a Python tuple of two
tensors as `(a, b)`, as the C++ program prints them.

The last mean is 0 but for rounding, and PyTorch's rounding depends on the CPU's vector width
(ATEN_CPU_CAPABILITY=default, avx2, avx512 print -3.5763e-09, -9.5367e-09, 7.1526e-09): the
fixture was made with avx2, and tests/examples/test_lessons.cpp compares that one number within
1e-7.
"""

import torch


class LayerNorm1d:  # (used to be BatchNorm1d)

    def __init__(self, dim, eps=1e-5):
        self.eps = eps
        self.gamma = torch.ones(dim)
        self.beta = torch.zeros(dim)

    def __call__(self, x):
        # calculate the forward pass
        xmean = x.mean(1, keepdim=True)  # batch mean
        xvar = x.var(1, keepdim=True)  # batch variance
        xhat = (x - xmean) / torch.sqrt(xvar + self.eps)  # normalize to unit variance
        self.out = self.gamma * xhat + self.beta
        return self.out

    def parameters(self):
        return [self.gamma, self.beta]


torch.manual_seed(1337)
module = LayerNorm1d(100)
x = torch.randn(32, 100)  # batch size 32 of 100-dimensional vectors
x = module(x)
print(list(x.shape))
print((x[:, 0].mean(), x[:, 0].std()))  # mean,std of one feature across all batch inputs
print((x[0, :].mean(), x[0, :].std()))  # mean,std of a single input from the batch, of its features
