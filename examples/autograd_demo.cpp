// The ten-line tour: make tensors, compute an expression, call backward(), read the gradients.
// Each line has its PyTorch twin in the README; the printed numbers are the same.
#include <iostream>

#include "minigrad.hpp"

using namespace minigrad;

int main() {
  manual_seed(0);
  Tensor x = randn({2, 3}, {.requires_grad = true});
  Tensor w = tensor({0.5, -1.0, 2.0}, {.requires_grad = true});
  Tensor y = (x * w).relu().sum();
  y.backward();
  std::cout << "x = " << x << "\n";
  std::cout << "y = " << y << "\n";
  std::cout << "dy/dx = " << x.grad() << "\n";
  std::cout << "dy/dw = " << w.grad() << "\n";
}
