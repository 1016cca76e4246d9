// feedforward_demo: the lesson "The Feed-Forward Part", line for line, in C++.
//
// The FeedForward class below is the lesson's class (the library has the same one as
// nn::FeedForward); example() is the lesson's Example and snippets() its three short snippets,
// each after manual_seed(0). Our random numbers and initialisation follow PyTorch's, so this
// prints exactly what PyTorch prints: tools/reference/feedforward_lesson.py is the same program
// in Python, and `diff` of the two outputs is empty (tests/nn/test_feedforward_demo.cpp checks).
//
// Printing, the one place C++ and Python differ: a shape prints as `[1, 128]` where Python
// shows `torch.Size([1, 128])` (the Python script prints list(shape) to match); booleans and
// floats go through py() below so they read `True` and `0.0`, as Python prints them.
#include <charconv>
#include <cstdint>
#include <iostream>
#include <string>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "nn/activation.hpp"
#include "nn/linear.hpp"
#include "nn/sequential.hpp"

using namespace minigrad;

// batch_size = 32, block_size = 64, n_head = 4 and n_layer = 4 set the rest of the course's GPT;
// this lesson only needs the embedding width.
const int64_t n_embd = 128;

// The lesson's class. `net` is the registered child itself, so ff.net[0](token) reads as in
// Python. Braces around the layers: C++ then builds them, and draws their weights, left to
// right, as Python does (with parentheses, GCC would build the last layer first).
struct FeedForward : nn::Module {
  nn::Sequential& net;

  FeedForward()
      : net(register_module("net", nn::Sequential{
                                       nn::Linear(n_embd, 4 * n_embd),
                                       nn::ReLU(),
                                       nn::Linear(4 * n_embd, n_embd),
                                   })) {}

  Tensor forward(const Tensor& x) override { return net(x); }
};

// Python's spelling of a bool, and of a float (shortest digits that read back the same, with
// ".0" on whole numbers: 0.0 where C++'s << would print 0).
std::string py(bool value) { return value ? "True" : "False"; }
std::string py(double value) {
  char buffer[32];
  std::string text(buffer, std::to_chars(buffer, buffer + sizeof buffer, value).ptr);
  return text.find_first_of(".en") == std::string::npos ? text + ".0" : text;
}

void example() {
  manual_seed(0);
  FeedForward ff;
  Tensor token = randn({1, n_embd});
  Tensor hidden = ff.net[0](token);
  Tensor after_relu = ff.net[1](hidden);
  Tensor back = ff.net[2](after_relu);

  std::cout << "Token shape: " << token.shape() << "\n";
  std::cout << "After widening shape: " << hidden.shape() << "\n";
  std::cout << "After narrowing shape: " << back.shape() << "\n";
  std::cout << "Negative numbers before ReLU: " << (hidden < 0).sum().item<int64_t>() << "\n";
  std::cout << "Negative numbers after ReLU: " << (after_relu < 0).sum().item<int64_t>() << "\n";

  Tensor pair = cat({token, token}, /*dim=*/0);
  Tensor out = ff(pair);
  std::cout << "Same vector at two positions, outputs equal: " << py(equal(out[0], out[1])) << "\n";
  std::cout << "Largest difference between the two rows: " << py((out[0] - out[1]).abs().max().item<double>())
            << "\n";
}

void snippets() {
  // Widen, then narrow
  manual_seed(0);
  FeedForward ff;
  Tensor v = randn({2, n_embd});
  std::cout << "Input shape: " << v.shape() << "\n";
  std::cout << "Hidden shape: " << ff.net[0](v).shape() << "\n";
  std::cout << "Output shape: " << ff(v).shape() << "\n";

  // ReLU clears the negatives
  Tensor hidden = ff.net[0](v);
  std::cout << "Negatives before ReLU: " << (hidden < 0).sum().item<int64_t>() << "\n";
  std::cout << "Negatives after ReLU: " << (ff.net[1](hidden) < 0).sum().item<int64_t>() << "\n";

  // One row alone gives the same row
  Tensor pair = cat({v.slice(0, 0, 1), v.slice(0, 0, 1)}, /*dim=*/0);  // v[0:1] twice
  Tensor out_pair = ff(pair);
  std::cout << "Two copies of one row, outputs equal: " << py(equal(out_pair[0], out_pair[1])) << "\n";

  // Key points, and the Exercise
  int64_t count = 0;
  for (const Tensor& p : ff.parameters()) count += p.numel();
  std::cout << "Parameters: " << count << "\n";
  std::cout << "Exercise, output shape for an input of shape (2, 128): " << ff(zeros({2, n_embd})).shape()
            << "\n";
}

int main() {
  example();
  snippets();
}
