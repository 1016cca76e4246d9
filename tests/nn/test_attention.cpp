// The course's attention built from minigrad's parts, against PyTorch: one self-attention head
// and a multi-head attention as gpt.py writes them (bias-free key/query/value Linears, a `tril`
// buffer, the scaled and masked softmax, heads in a ModuleList concatenated on the last dim, a
// projection), built after manual_seed(1337). Their initial parameters, their output for a seeded
// [B, T, C] input and the gradients of the input and of every parameter equal PyTorch's
// (tests/fixtures/attention.json, written by tools/reference/attention_reference.py).
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/ops_index.hpp"
#include "autograd/random.hpp"
#include "nn/fixture_support.hpp"
#include "nn/linear.hpp"
#include "nn/module.hpp"
#include "nn/module_list.hpp"

using namespace minigrad;
using indexing::None;
using indexing::Slice;
using nn_test::check_close;
using nn_test::json;

namespace {

// Shape letters: B batch, T positions, C channels; hs the head size.
constexpr int64_t B = 2, T = 5, C = 8, n_head = 2, block_size = 6, hs = C / n_head;

struct Head : nn::Module {
  nn::Linear& key;
  nn::Linear& query;
  nn::Linear& value;
  Tensor& tril;

  explicit Head(int64_t head_size)
      : key(register_module("key", nn::Linear(C, head_size, /*bias=*/false))),
        query(register_module("query", nn::Linear(C, head_size, /*bias=*/false))),
        value(register_module("value", nn::Linear(C, head_size, /*bias=*/false))),
        tril(register_buffer("tril", minigrad::tril(ones({block_size, block_size})))) {}

  Tensor forward(const Tensor& x) override {
    const int64_t t = x.size(1);
    const Tensor k = key(x);    // [B, T, hs]
    const Tensor q = query(x);  // [B, T, hs]
    Tensor wei =
        q.matmul(k.transpose(-2, -1)) * std::pow(static_cast<double>(k.size(-1)), -0.5);  // [B, T, T]
    wei = wei.masked_fill(tril.index({Slice(None, t), Slice(None, t)}) == 0, -INFINITY);
    wei = softmax(wei, -1);
    return wei.matmul(value(x));  // [B, T, hs]
  }
};

struct MultiHeadAttention : nn::Module {
  nn::ModuleList& heads;
  nn::Linear& proj;

  MultiHeadAttention(int64_t num_heads, int64_t head_size)
      : heads(register_module("heads", make_heads(num_heads, head_size))),
        proj(register_module("proj", nn::Linear(C, C))) {}

  static nn::ModuleList make_heads(int64_t num_heads, int64_t head_size) {
    nn::ModuleList list;
    for (int64_t h = 0; h < num_heads; ++h) list.append(Head(head_size));
    return list;
  }

  Tensor forward(const Tensor& x) override {
    std::vector<Tensor> outs;
    for (nn::Module& h : heads) outs.push_back(h(x));
    return proj(cat(outs, -1));  // [B, T, C]
  }
};

// The module's parameters equal the fixture's; its output at x and, for the fixture's cotangent,
// the gradients of x and of every parameter equal PyTorch's.
void check_against_pytorch(nn::Module& module, const Tensor& x, const json& expected) {
  for (const auto& [name, p] : module.named_parameters()) {
    BOOST_TEST_CONTEXT(name) {
      BOOST_TEST_REQUIRE(expected["params"].contains(name));
      check_close(p, expected["params"][name], 0.0, name + " initial value", 0.0);  // the same draws
    }
  }
  std::vector<std::string> buffers;
  for (const auto& [name, b] : module.named_buffers()) buffers.push_back(name);
  BOOST_TEST(buffers == expected["buffers"].get<std::vector<std::string>>(),
             boost::test_tools::per_element());

  const Tensor out = module(x);
  BOOST_TEST(out.shape() == Shape(expected["shape"].get<std::vector<int64_t>>()));
  check_close(out, expected["output"], 1e-6, "output", 1e-5);
  (out * nn_test::from_json(expected["cotangent"], out.shape(), kFloat32)).sum().backward();
  check_close(x.grad(), expected["x_grad"], 1e-5, "grad of x", 1e-4);
  for (const auto& [name, p] : module.named_parameters())
    check_close(p.grad(), expected["param_grads"][name], 1e-5, "grad of " + name, 1e-4);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(attention)

BOOST_AUTO_TEST_CASE(a_head_and_multi_head_attention_from_parts_match_pytorch_values_and_every_gradient) {
  const json& fixture = nn_test::fixture("attention.json");
  manual_seed(1337);  // the same order of draws as the twin: the head, the multi-head, then x
  Head head(hs);
  MultiHeadAttention mha(n_head, hs);
  Tensor x = randn({B, T, C});
  check_close(x, fixture["x"], 0.0, "x", 0.0);
  x.requires_grad_();

  BOOST_TEST_CONTEXT("head") { check_against_pytorch(head, x, fixture["head"]); }
  x.set_grad(Tensor());
  BOOST_TEST_CONTEXT("multi-head attention") { check_against_pytorch(mha, x, fixture["multi_head"]); }
}

BOOST_AUTO_TEST_SUITE_END()
