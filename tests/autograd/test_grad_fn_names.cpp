// Results that carry a grad_fn print as PyTorch prints them, node name included, for every op:
// a learner can diff a C++ run against a notebook. The fixture tests/fixtures/grad_fn.json is
// str(result) from real PyTorch (tools/reference/grad_fn_reference.py), on the same inputs as
// below and the same op per case name.
#include <boost/test/unit_test.hpp>
#include <cstdint>
#include <fstream>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/tensor.hpp"
#include "fixture.hpp"
#include "nn/functional.hpp"
#include "nn/loss.hpp"

using namespace minigrad;
namespace F = minigrad::nn::functional;

namespace {

const nlohmann::json& fixture() { return minigrad_test::read_fixture("grad_fn.json"); }

// The inputs of grad_fn_reference.py's inputs(), written out again.
struct Inputs {
  Tensor x = tensor({{0.5, -1.25, 2.0}, {1.5, 0.25, -0.75}}, {.requires_grad = true});
  Tensor y = tensor({{1.0, 0.5, -0.5}, {2.0, -1.0, 0.25}}, {.requires_grad = true});
  Tensor w = tensor({{0.5, 0.25, -0.5}, {1.0, -0.25, 0.75}, {-1.0, 0.5, 0.125}, {0.25, 0.0, -0.375}},
                    {.requires_grad = true});
  Tensor b = tensor({0.125, -0.25, 0.5, 0.0}, {.requires_grad = true});
  Tensor m = tensor(std::vector<bool>{true, false, false, false, true, false}, {2, 3});
  Tensor t = tensor(std::vector<int64_t>{2, 0}, {2});
  Tensor p = tensor({{0.25, 0.5, 0.75}, {1.0, 0.0, 0.5}});
};

std::map<std::string, std::function<Tensor(const Inputs&)>> ops() {
  return {
      {"add", [](const Inputs& in) { return in.x + in.y; }},
      {"sub", [](const Inputs& in) { return in.x - in.y; }},
      {"mul", [](const Inputs& in) { return in.x * in.y; }},
      {"div", [](const Inputs& in) { return in.x / (in.y * in.y + 1); }},
      {"neg", [](const Inputs& in) { return -in.x; }},
      {"pow", [](const Inputs& in) { return in.x.pow(2); }},
      {"exp", [](const Inputs& in) { return in.x.exp(); }},
      {"log", [](const Inputs& in) { return (in.x * in.x + 1).log(); }},
      {"sqrt", [](const Inputs& in) { return (in.x * in.x).sqrt(); }},
      {"abs", [](const Inputs& in) { return in.x.abs(); }},
      {"relu", [](const Inputs& in) { return in.x.relu(); }},
      {"tanh", [](const Inputs& in) { return in.x.tanh(); }},
      {"sigmoid", [](const Inputs& in) { return in.x.sigmoid(); }},
      {"clamp", [](const Inputs& in) { return in.x.clamp(-1.0, 1.0); }},
      {"where", [](const Inputs& in) { return where(in.m, in.x, in.y); }},
      {"masked_fill", [](const Inputs& in) { return in.x.masked_fill(in.m, 0.0); }},
      {"matmul 2-d", [](const Inputs& in) { return matmul(in.x, in.w.t()); }},
      {"matmul 1-d", [](const Inputs& in) { return matmul(in.x[0], in.y[1]); }},
      {"matmul 3-d by 2-d",
       [](const Inputs& in) {
         return matmul(in.x.reshape({1, 2, 3}), in.w.t());
       }},
      {"sum", [](const Inputs& in) { return in.x.sum(); }},
      {"sum dim", [](const Inputs& in) { return in.x.sum(1); }},
      {"mean", [](const Inputs& in) { return in.x.mean(); }},
      {"mean dim", [](const Inputs& in) { return in.x.mean(0); }},
      {"max", [](const Inputs& in) { return in.x.max(); }},
      {"max dim", [](const Inputs& in) { return std::get<0>(in.x.max(1)); }},
      {"min", [](const Inputs& in) { return in.x.min(); }},
      {"softmax", [](const Inputs& in) { return in.x.softmax(1); }},
      {"log_softmax", [](const Inputs& in) { return in.x.log_softmax(1); }},
      {"reshape",
       [](const Inputs& in) {
         return in.x.reshape({3, 2});
       }},
      {"view", [](const Inputs& in) { return in.x.view({6}); }},
      {"flatten", [](const Inputs& in) { return in.x.flatten(); }},
      {"unsqueeze", [](const Inputs& in) { return in.x.unsqueeze(0); }},
      {"squeeze", [](const Inputs& in) { return in.x.unsqueeze(0).squeeze(0); }},
      {"permute",
       [](const Inputs& in) {
         return in.x.permute({1, 0});
       }},
      {"transpose", [](const Inputs& in) { return in.x.transpose(0, 1); }},
      {"t", [](const Inputs& in) { return in.x.t(); }},
      {"cat",
       [](const Inputs& in) {
         return cat({in.x, in.y});
       }},
      {"stack",
       [](const Inputs& in) {
         return stack({in.x, in.y});
       }},
      {"select", [](const Inputs& in) { return in.x[1]; }},
      {"slice", [](const Inputs& in) { return in.x.slice(1, 1, 3); }},
      {"linear", [](const Inputs& in) { return F::linear(in.x, in.w, in.b); }},
      {"linear without bias", [](const Inputs& in) { return F::linear(in.x, in.w); }},
      {"linear 3-d",
       [](const Inputs& in) {
         return F::linear(in.x.reshape({1, 2, 3}), in.w, in.b);
       }},
      {"linear 1-d", [](const Inputs& in) { return F::linear(in.x[0], in.w, in.b); }},
      {"mse_loss sum",
       [](const Inputs& in) { return F::mse_loss(in.x, in.y, {.reduction = nn::Reduction::Sum}); }},
      {"mse_loss none",
       [](const Inputs& in) { return F::mse_loss(in.x, in.y, {.reduction = nn::Reduction::None}); }},
      {"gelu", [](const Inputs& in) { return F::gelu(in.x); }},
      {"gelu tanh", [](const Inputs& in) { return F::gelu(in.x, "tanh"); }},
      {"mse_loss", [](const Inputs& in) { return F::mse_loss(in.x, in.y); }},
      {"l1_loss", [](const Inputs& in) { return F::l1_loss(in.x, in.y); }},
      {"cross_entropy", [](const Inputs& in) { return F::cross_entropy(in.x, in.t); }},
      {"nll_loss", [](const Inputs& in) { return F::nll_loss(in.x.log_softmax(1), in.t); }},
      {"binary_cross_entropy_with_logits",
       [](const Inputs& in) { return F::binary_cross_entropy_with_logits(in.x, in.p); }},
      {"rsub", [](const Inputs& in) { return 1 - in.x; }},
      {"rdiv", [](const Inputs& in) { return 3 / (in.x * in.x + 1); }},
      {"reciprocal", [](const Inputs& in) { return reciprocal(in.x * in.x + 1); }},
      {"split", [](const Inputs& in) { return in.x.split(2, 1)[0]; }},
      {"split with sizes",
       [](const Inputs& in) {
         return split(in.x, std::vector<int64_t>{1, 2}, 1)[1];
       }},
      {"chunk", [](const Inputs& in) { return in.x.chunk(2, 1)[1]; }},
      {"slice with a step", [](const Inputs& in) { return in.x.slice(1, std::nullopt, std::nullopt, 2); }},
      {"index a later dim",
       [](const Inputs& in) {
         return in.x.index({indexing::Slice(), in.t});
       }},
      {"matmul 2-d by 3-d",
       [](const Inputs& in) {
         return in.w.matmul(in.y.reshape({1, 3, 2}));
       }},
      {"matmul 1-row 2-d by 3-d",
       [](const Inputs& in) {
         return in.x.slice(0, 0, 1).matmul(in.w.t().reshape({1, 3, 4}));
       }},
      {"index a later dim by a 0-d tensor",
       [](const Inputs& in) {
         return in.x.index({indexing::Slice(), in.t.select(0, 1)});
       }},
      {"index by a 0-d tensor", [](const Inputs& in) { return in.x.index({in.t.select(0, 1)}); }},
  };
}

}  // namespace

BOOST_AUTO_TEST_SUITE(grad_fn_names)

BOOST_AUTO_TEST_CASE(every_op_prints_its_result_and_node_name_as_pytorch) {
  const auto table = ops();
  const nlohmann::json& cases = fixture();
  BOOST_TEST(cases.size() == table.size());  // every case of the script has its op here, and back
  for (const auto& c : cases) {
    const std::string name = c.at("name");
    BOOST_TEST_CONTEXT(name) {
      const auto op = table.find(name);
      BOOST_TEST_REQUIRE((op != table.end()));
      const Inputs in;
      BOOST_TEST(to_string(op->second(in)) == c.at("text").get<std::string>());
    }
  }
}

BOOST_AUTO_TEST_SUITE_END()
