// Tests for nn::Module and nn::Sequential: the names, orders and printouts of a module tree,
// compared with PyTorch's (tests/fixtures/nn_modules.json from tools/reference/nn_reference.py,
// which builds the same Block / Net classes as below); training mode; zero_grad; state dicts;
// Sequential's indexing and iteration; and one table per kind of bad input.
#include <boost/test/unit_test.hpp>
#include <functional>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "fixture_support.hpp"
#include "nn/activation.hpp"
#include "nn/dropout.hpp"
#include "nn/feedforward.hpp"
#include "nn/flatten.hpp"
#include "nn/linear.hpp"
#include "nn/module.hpp"
#include "nn/sequential.hpp"

namespace {

using namespace minigrad;
using nn_test::check_close;
using nn_test::check_throws;
using nn_test::fixture;
using nn_test::json;

// The fixture's Block: a parameter, a buffer and two children.
struct Block : nn::Module {
  Tensor scale;
  nn::Linear& proj;
  nn::GELU& act;

  Block() : proj(register_module("proj", nn::Linear(4, 4))), act(register_module("act", nn::GELU())) {
    scale = register_parameter("scale", ones({4}));
    register_buffer("mask", zeros({4}));
  }
  Tensor forward(const Tensor& x) override { return act(proj(x * scale)); }
};

// The fixture's Net: a Sequential of two Blocks, and one Linear registered under two names.
struct Net : nn::Module {
  nn::Sequential& blocks;
  std::shared_ptr<nn::Linear> head;

  Net()
      : blocks(register_module("blocks", nn::Sequential{Block(), Block()})),
        head(std::make_shared<nn::Linear>(4, 2)) {
    register_module("head", head);
    register_module("tied", head);
    register_buffer("steps", zeros({}, {.dtype = kInt64}));
  }
  Tensor forward(const Tensor& x) override { return (*head)(blocks(x)); }
};

const json& tree() { return fixture("nn_modules.json")["tree"]; }

template <typename Named>
std::vector<std::string> names_of(const Named& named) {
  std::vector<std::string> names;
  for (const auto& [name, value] : named) names.push_back(name);
  return names;
}

BOOST_AUTO_TEST_SUITE(module)

BOOST_AUTO_TEST_CASE(named_parameters_of_a_nested_tree_follow_pytorch_order) {
  Net net;
  const auto expected = tree()["named_parameters"].get<std::vector<std::string>>();
  BOOST_TEST(names_of(net.named_parameters()) == expected, boost::test_tools::per_element());
  BOOST_TEST(net.parameters().size() == expected.size());  // the tied Linear counts once
}

BOOST_AUTO_TEST_CASE(buffers_modules_and_children_are_named_as_in_pytorch) {
  Net net;
  BOOST_TEST(names_of(net.named_buffers()) == tree()["named_buffers"].get<std::vector<std::string>>(),
             boost::test_tools::per_element());
  BOOST_TEST(names_of(net.named_modules()) == tree()["named_modules"].get<std::vector<std::string>>(),
             boost::test_tools::per_element());
  BOOST_TEST(names_of(net.named_children()) == tree()["named_children"].get<std::vector<std::string>>(),
             boost::test_tools::per_element());
  BOOST_TEST(net.modules().size() == tree()["named_modules"].size());
  BOOST_TEST(&net.modules()[0].get() == &net);
  BOOST_TEST(&net.children()[0].get() == &net.blocks);
}

BOOST_AUTO_TEST_CASE(state_dict_after_seed_0_equals_pytorch_names_and_values) {
  manual_seed(0);
  Net net;
  const nn::StateDict state = net.state_dict();
  BOOST_TEST(names_of(state) == tree()["state_dict_keys"].get<std::vector<std::string>>(),
             boost::test_tools::per_element());
  for (const auto& [name, tensor] : state) {
    check_close(tensor, tree()["state_dict"][name], 1e-6, name);
    BOOST_TEST(!tensor.requires_grad(), name << " should be detached");
  }
}

BOOST_AUTO_TEST_CASE(every_layer_prints_as_pytorch_repr) {
  std::map<std::string, std::function<std::string()>> build = {
      {"linear", [] { return to_string(nn::Linear(128, 512)); }},
      {"linear_no_bias", [] { return to_string(nn::Linear(3, 4, false)); }},
      {"relu", [] { return to_string(nn::ReLU()); }},
      {"tanh", [] { return to_string(nn::Tanh()); }},
      {"sigmoid", [] { return to_string(nn::Sigmoid()); }},
      {"gelu", [] { return to_string(nn::GELU()); }},
      {"gelu_tanh", [] { return to_string(nn::GELU("tanh")); }},
      {"dropout", [] { return to_string(nn::Dropout()); }},
      {"dropout_0.1", [] { return to_string(nn::Dropout(0.1)); }},
      {"flatten", [] { return to_string(nn::Flatten()); }},
      {"flatten_0_2", [] { return to_string(nn::Flatten(0, 2)); }},
      {"identity", [] { return to_string(nn::Identity()); }},
      {"sequential_empty", [] { return to_string(nn::Sequential()); }},
      {"nested",
       [] {
         return to_string(nn::Sequential{nn::Linear(2, 2), nn::Sequential{nn::ReLU(), nn::Linear(1, 1)},
                                         nn::Dropout(0.25)});
       }},
      {"feedforward", [] { return to_string(nn::FeedForward()); }},
  };
  const json& reprs = fixture("nn_modules.json")["reprs"];
  BOOST_TEST(build.size() == reprs.size());
  for (const auto& [key, expected] : reprs.items()) {
    BOOST_TEST_CONTEXT(key) {
      BOOST_TEST_REQUIRE(build.count(key) == 1);
      BOOST_TEST(build[key]() == expected.get<std::string>());
    }
  }
}

BOOST_AUTO_TEST_CASE(a_custom_module_tree_prints_as_pytorch_repr) {
  Net net;
  std::ostringstream os;
  os << net;
  BOOST_TEST(os.str() == tree()["repr"].get<std::string>());
}

BOOST_AUTO_TEST_CASE(train_and_eval_reach_every_descendant) {
  Net net;
  for (nn::Module& m : net.modules()) BOOST_TEST(m.is_training());
  net.eval();
  for (nn::Module& m : net.modules()) BOOST_TEST(!m.is_training());
  net.blocks.train();
  BOOST_TEST(!net.is_training());
  BOOST_TEST(net.blocks[1].is_training());
  BOOST_TEST(net.blocks.at<Block>(0).proj.is_training());
}

BOOST_AUTO_TEST_CASE(zero_grad_zeroes_gradients_in_place_or_resets_them) {
  nn::Linear layer(3, 2);
  layer(ones({4, 3})).sum().backward();
  const Tensor grad = layer.weight.grad();
  BOOST_TEST_REQUIRE(grad.defined());
  layer.zero_grad();
  BOOST_TEST(layer.weight.grad().impl() == grad.impl());  // the same tensor, now zero (PyTorch 1.13)
  BOOST_TEST(equal(layer.weight.grad(), zeros({2, 3})));
  BOOST_TEST(equal(layer.bias.grad(), zeros({2})));
  layer.zero_grad(/*set_to_none=*/true);
  BOOST_TEST(!layer.weight.grad().defined());
  BOOST_TEST(!layer.bias.grad().defined());
}

BOOST_AUTO_TEST_CASE(register_parameter_turns_on_requires_grad_and_shares_the_member) {
  nn::Linear layer(3, 2);
  BOOST_TEST(layer.weight.requires_grad());
  BOOST_TEST(layer.named_parameters()[0].second.impl() == layer.weight.impl());
  BOOST_TEST(layer.named_parameters()[1].second.impl() == layer.bias.impl());
  BOOST_TEST(nn::Linear(3, 2, false).named_parameters().size() == 1u);
}

BOOST_AUTO_TEST_CASE(load_state_dict_copies_values_into_the_same_parameters) {
  manual_seed(1);
  nn::FeedForward source(8, 2);
  manual_seed(2);
  nn::FeedForward target(8, 2);
  const Tensor weight_handle = target.net.at<nn::Linear>(0).weight;
  const Tensor x = randn({3, 8});
  BOOST_TEST_REQUIRE(!equal(source(x), target(x)));

  target.load_state_dict(source.state_dict());
  BOOST_TEST(equal(source(x), target(x)));
  BOOST_TEST(target.net.at<nn::Linear>(0).weight.impl() ==
             weight_handle.impl());  // copied into, not replaced
  BOOST_TEST(weight_handle.requires_grad());
}

BOOST_AUTO_TEST_CASE(load_state_dict_rejects_a_bad_state_before_changing_anything) {
  struct Case {
    std::string name;
    std::function<void(nn::StateDict&)> spoil;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"a missing key", [](nn::StateDict& s) { s.erase(s.begin() + 1); }, {"missing key \"net.0.bias\""}},
      {"an unexpected key",
       [](nn::StateDict& s) { s.emplace_back("net.3.weight", zeros({2})); },
       {"unexpected key \"net.3.weight\""}},
      {"a wrong shape",
       [](nn::StateDict& s) {
         s[2].second = zeros({8, 3});
       },
       {"size mismatch for \"net.2.weight\"", "[8, 3]", "[8, 16]"}},
      {"a wrong dtype",
       [](nn::StateDict& s) { s[3].second = zeros({8}, {.dtype = kFloat64}); },
       {"dtype mismatch for \"net.2.bias\"", "float64", "float32"}},
      {"an undefined tensor",
       [](nn::StateDict& s) { s[0].second = Tensor(); },
       {"\"net.0.weight\" is an undefined tensor"}},
      // Was loaded silently, the first value winning.
      {"a key given twice",
       [](nn::StateDict& s) { s.emplace_back("net.0.bias", zeros({16})); },
       {"the key \"net.0.bias\" is given twice"}},
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      manual_seed(0);
      nn::FeedForward ff(8, 2);
      const nn::StateDict before = ff.state_dict();
      nn::StateDict state = nn::FeedForward(8, 2).state_dict();  // other values, same names
      state[1].second = full({16}, 7.0);  // a valid entry that must not be written either
      c.spoil(state);
      check_throws<std::invalid_argument>([&] { ff.load_state_dict(state); },
                                          {"load_state_dict", "FeedForward", c.fragments[0]});
      for (size_t k = 1; k < c.fragments.size(); ++k)
        check_throws<std::invalid_argument>([&] { ff.load_state_dict(state); }, {c.fragments[k]});
      for (size_t i = 0; i < before.size(); ++i)
        BOOST_TEST(equal(ff.state_dict()[i].second, before[i].second));
    }
  }
}

BOOST_AUTO_TEST_CASE(load_state_dict_without_strict_skips_missing_and_unexpected_keys) {
  manual_seed(0);
  nn::FeedForward ff(8, 2);
  nn::StateDict state = {{"net.0.bias", full({16}, 0.5)}, {"extra", zeros({1})}};
  ff.load_state_dict(state, /*strict=*/false);
  BOOST_TEST(equal(ff.net.at<nn::Linear>(0).bias, full({16}, 0.5)));
  check_throws<std::invalid_argument>([&] { ff.load_state_dict(state); },
                                      {"missing key", "unexpected key \"extra\""});
}

BOOST_AUTO_TEST_CASE(registration_rejects_bad_names_and_members) {
  struct Case {
    std::string name;
    std::function<void(nn::Module&)> act;
    std::vector<std::string> fragments;
  };
  const std::vector<Case> cases = {
      {"an empty name",
       [](nn::Module& m) { m.register_parameter("", zeros({1})); },
       {"register_parameter", "empty"}},
      {"a dotted name",
       [](nn::Module& m) { m.register_buffer("a.b", zeros({1})); },
       {"register_buffer", "\"a.b\"", "'.'"}},
      {"a parameter named like a buffer",
       [](nn::Module& m) {
         m.register_buffer("w", zeros({1}));
         m.register_parameter("w", zeros({1}));
       },
       {"register_parameter", "already has a member named \"w\""}},
      {"a child named like a parameter",
       [](nn::Module& m) {
         m.register_parameter("w", zeros({1}));
         m.register_module("w", nn::ReLU());
       },
       {"register_module", "already has a member named \"w\""}},
      {"an undefined parameter",
       [](nn::Module& m) { m.register_parameter("w", Tensor()); },
       {"\"w\" is an undefined tensor"}},
      {"an integer parameter",
       [](nn::Module& m) { m.register_parameter("w", zeros({1}, {.dtype = kInt64})); },
       {"\"w\" has dtype int64"}},
      {"a null child",
       [](nn::Module& m) { m.register_module("c", std::shared_ptr<nn::ReLU>()); },
       {"\"c\" is a null pointer"}},
  };
  // Regression: two Sequentials holding each other crashed every walk of the tree with a stack
  // overflow (PyTorch: RecursionError).
  auto a = std::make_shared<nn::Sequential>(), b = std::make_shared<nn::Sequential>();
  a->push_back(b);
  check_throws<std::invalid_argument>(
      [&] { b->push_back(a); }, {"register_module", "is already inside the module given as \"0\"", "cycle"});
  BOOST_TEST(b->children().empty());
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      nn::Module m;
      check_throws<std::invalid_argument>([&] { c.act(m); }, c.fragments);
    }
  }
}

BOOST_AUTO_TEST_CASE(a_module_without_forward_throws_naming_its_class) {
  Net net;
  nn::Module& plain = net;
  BOOST_TEST(plain(ones({1, 4})).shape() == Shape({1, 2}));
  struct NoForward : nn::Module {};
  NoForward m;
  check_throws<std::logic_error>([&] { m(ones({1})); },
                                 {"Module [NoForward] is missing the required \"forward\" function"});
}

BOOST_AUTO_TEST_CASE(a_moved_module_keeps_its_children_and_parameters) {
  manual_seed(0);
  nn::FeedForward original(8, 2);
  const Tensor weight = original.net.at<nn::Linear>(0).weight;
  nn::FeedForward moved(std::move(original));
  BOOST_TEST(moved.net.size() == 3);
  BOOST_TEST(moved.named_parameters()[0].second.impl() == weight.impl());
  BOOST_TEST(&moved.named_children()[0].second.get() == &moved.net);
  BOOST_TEST(moved(ones({2, 8})).shape() == Shape({2, 8}));
}

BOOST_AUTO_TEST_SUITE_END()

BOOST_AUTO_TEST_SUITE(sequential)

BOOST_AUTO_TEST_CASE(layers_are_named_by_position_and_indexed_as_in_python) {
  nn::Sequential net{nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2)};
  net.push_back(nn::Tanh());
  BOOST_TEST(net.size() == 4);
  BOOST_TEST(names_of(net.named_children()) == std::vector<std::string>({"0", "1", "2", "3"}),
             boost::test_tools::per_element());
  BOOST_TEST(&net[-1] == &net[3]);
  BOOST_TEST(&net[-4] == &net[0]);
  BOOST_TEST(net[1].name() == "ReLU");
  BOOST_TEST(net.at<nn::Linear>(2).out_features == 2);

  std::vector<std::string> visited;
  for (nn::Module& layer : net) visited.push_back(layer.name());
  BOOST_TEST(visited == std::vector<std::string>({"Linear", "ReLU", "Linear", "Tanh"}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(forward_feeds_each_layer_the_previous_output) {
  manual_seed(0);
  nn::Sequential net{nn::Linear(4, 3), nn::ReLU(), nn::Linear(3, 2)};
  const Tensor x = randn({5, 4});
  const Tensor by_hand = net[2](net[1](net[0](x)));
  BOOST_TEST(equal(net(x), by_hand));
  BOOST_TEST(equal(nn::Sequential()(x), x));  // no layers: the input itself
}

BOOST_AUTO_TEST_CASE(a_shared_layer_is_one_set_of_parameters) {
  auto shared = std::make_shared<nn::Linear>(2, 2);
  nn::Sequential net{shared, nn::ReLU(), shared};
  BOOST_TEST(net.parameters().size() == 2u);
  BOOST_TEST(net.state_dict().size() == 4u);  // listed under both names, as PyTorch's state_dict
  BOOST_TEST(&net[0] == &net[2]);
}

BOOST_AUTO_TEST_CASE(braces_build_layers_left_to_right_so_draws_follow_pytorch) {
  manual_seed(3);
  nn::Sequential net{nn::Linear(5, 3), nn::Linear(4, 2, false)};
  const json& layers = fixture("nn_init.json")["linear"]["layers"];
  check_close(net.at<nn::Linear>(0).weight, layers[0]["weight"], 1e-7, "first weight");
  check_close(net.at<nn::Linear>(1).weight, layers[1]["weight"], 1e-7, "second weight");
}

BOOST_AUTO_TEST_CASE(bad_indices_and_types_throw_naming_them) {
  nn::Sequential net{nn::Linear(4, 3), nn::ReLU()};
  check_throws<std::out_of_range>([&] { (void)net[2]; },
                                  {"Sequential: index 2 is out of range for 2 layers"});
  check_throws<std::out_of_range>([&] { (void)net[-3]; }, {"index -3"});
  check_throws<std::out_of_range>([&] { (void)nn::Sequential()[0]; },
                                  {"index 0 is out of range for 0 layers"});
  check_throws<std::invalid_argument>([&] { (void)net.at<nn::Linear>(1); },
                                      {"Sequential::at: layer 1 is a ReLU, not a Linear"});
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
