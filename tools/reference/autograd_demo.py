# The PyTorch twin of examples/autograd_demo.cpp; its output is tests/fixtures/autograd_demo.expected.
# Run: /usr/bin/python3 tools/reference/autograd_demo.py > tests/fixtures/autograd_demo.expected
import torch
torch.manual_seed(0)
x = torch.randn(2, 3, requires_grad=True)
w = torch.tensor([0.5, -1.0, 2.0], requires_grad=True)
y = (x * w).relu().sum()
y.backward()
print("x =", x)
print("y =", y)
print("dy/dx =", x.grad)
print("dy/dw =", w.grad)
