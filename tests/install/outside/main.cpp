// An outside program using an installed minigrad: d/dx sum(x * x) = 2x.
#include <iostream>
#include <minigrad/minigrad.hpp>

int main() {
  minigrad::Tensor x = minigrad::tensor({1.0, -2.0, 0.5}, {.requires_grad = true});
  (x * x).sum().backward();
  std::cout << x.grad() << "\n";
}
