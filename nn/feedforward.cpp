// nn::FeedForward: the lesson's __init__, line for line.
//
// self.net = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(), nn.Linear(4 * n_embd, n_embd))
// becomes one register_module call whose result `net` refers to; forward (in the header) is
// net(x), as the lesson's `return self.net(x)`.
#include "nn/feedforward.hpp"

#include "nn/activation.hpp"
#include "nn/linear.hpp"

namespace minigrad::nn {

// Braces, not parentheses: the layers are built, and draw their weights, left to right.
FeedForward::FeedForward(int64_t n_embd, int64_t widen)
    : net(register_module("net", Sequential{
                                     Linear(n_embd, widen * n_embd),
                                     ReLU(),
                                     Linear(widen * n_embd, n_embd),
                                 })) {}

}  // namespace minigrad::nn
