// Errors inside a module's forward name the module: its dotted path in the tree and its
// configuration go in front of the message, once, at the innermost module, and the exception
// keeps its standard type. The expected messages are written out by hand from the layer sizes.
#include <boost/test/unit_test.hpp>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "autograd/ops.hpp"
#include "nn/activation.hpp"
#include "nn/feedforward.hpp"
#include "nn/flatten.hpp"
#include "nn/linear.hpp"
#include "nn/loss.hpp"
#include "nn/module.hpp"
#include "nn/sequential.hpp"

using namespace minigrad;

namespace {

// A custom module holding a Sequential whose last layer expects 5 features but gets 4.
struct Block : nn::Module {
  nn::Sequential& body;
  Block() : body(register_module("body", nn::Sequential{nn::Linear(8, 4), nn::ReLU(), nn::Linear(5, 2)})) {}
  Tensor forward(const Tensor& x) override { return body(x); }
};

// A module whose own op fails (no child involved): [N, 3] @ [4, 4].
struct Projection : nn::Module {
  Tensor forward(const Tensor& x) override { return matmul(x, ones({4, 4})); }
  std::string extra_repr() const override { return "size=4"; }
};

struct Failing : nn::Module {
  std::function<void()> fail;
  explicit Failing(std::function<void()> fail) : fail(std::move(fail)) {}
  Tensor forward(const Tensor& x) override {
    fail();
    return x;
  }
};

struct NoForward : nn::Module {};

struct LearnersOwnError : std::exception {
  const char* what() const noexcept override { return "my own error"; }
};

// The most specific of the standard types the exception is, as a word.
std::string kind_of(const std::exception& e) {
  if (dynamic_cast<const std::invalid_argument*>(&e)) return "invalid_argument";
  if (dynamic_cast<const std::out_of_range*>(&e)) return "out_of_range";
  if (dynamic_cast<const std::logic_error*>(&e)) return "logic_error";
  if (dynamic_cast<const std::overflow_error*>(&e)) return "overflow_error";
  if (dynamic_cast<const std::runtime_error*>(&e)) return "runtime_error";
  return "other";
}

struct Thrown {
  std::string kind;
  std::string message;
  std::string module_path;  // from nn::ModuleError; "-" when the exception is not one
};

Thrown call(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    const auto* in_module = dynamic_cast<const nn::ModuleError*>(&e);
    return {kind_of(e), e.what(), in_module ? in_module->module_path() : "-"};
  }
  BOOST_FAIL("nothing was thrown");
  return {};
}

struct ErrorCase {
  const char* name;
  std::function<void()> run;
  Thrown expected;
};

// Runs each case and compares what it throws with what it expects.
void check_cases(const std::vector<ErrorCase>& cases) {
  for (const ErrorCase& c : cases) {
    BOOST_TEST_CONTEXT(c.name) {
      const Thrown thrown = call(c.run);
      BOOST_TEST(thrown.kind == c.expected.kind);
      BOOST_TEST(thrown.message == c.expected.message);
      BOOST_TEST(thrown.module_path == c.expected.module_path);
    }
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(module_errors)

BOOST_AUTO_TEST_CASE(error_names_the_innermost_module_path_and_configuration_once) {
  nn::FeedForward ff;  // n_embd 128
  nn::Sequential stack{nn::Linear(8, 8), Block()};
  nn::Sequential with_projection{nn::Identity(), Projection()};
  const std::vector<ErrorCase> cases = {
      {"FeedForward fed width 64",
       [&] {
         ff(zeros({1, 64}));
       },
       {"invalid_argument",
        "net.0 (Linear in_features=128, out_features=512, bias=True): linear: input has 64 features but the "
        "weight expects 128 (input [1, 64], weight [512, 128])",
        "net.0"}},
      {"the lesson's ff.net[0](token) with a token of width 64",
       [&] { ff.net[0](zeros({64})); },
       {"invalid_argument",
        "net.0 (Linear in_features=128, out_features=512, bias=True): linear: input has 64 features but the "
        "weight expects 128 (input [64], weight [512, 128])",
        "net.0"}},
      {"a Sequential inside a custom module inside a Sequential",
       [&] {
         stack(zeros({3, 8}));
       },
       {"invalid_argument",
        "1.body.2 (Linear in_features=5, out_features=2, bias=True): linear: input has 4 features but the "
        "weight expects 5 (input [3, 4], weight [2, 5])",
        "1.body.2"}},
      {"an op of the module's own forward",
       [&] {
         with_projection(zeros({2, 3}));
       },
       {"invalid_argument",
        "1 (Projection size=4): matmul: cannot multiply [2, 3] by [4, 4] (inner dimensions 3 and 4 differ)",
        "1"}},
      {"a module called on its own is a root, with no path",
       [] {
         nn::Linear(8, 4)(zeros({2, 3}));
       },
       {"invalid_argument",
        "(Linear in_features=8, out_features=4, bias=True): linear: input has 3 features but the weight "
        "expects 8 (input [2, 3], weight [4, 8])",
        ""}},
  };
  check_cases(cases);
}

BOOST_AUTO_TEST_CASE(exception_keeps_its_standard_type) {
  nn::Sequential net{nn::Identity(), nn::Flatten(1, 3)};
  nn::Sequential runtime{Failing([] { throw std::runtime_error("disk on fire"); })};
  nn::Sequential overflow{Failing([] { throw std::overflow_error("too big"); })};
  nn::Sequential missing{NoForward()};
  const std::vector<ErrorCase> cases = {
      {"out_of_range from a dim the input lacks",
       [&] {
         net(zeros({2, 8}));
       },
       {"out_of_range",
        "1 (Flatten start_dim=1, end_dim=3): flatten: dim 3 is out of range for a tensor of shape [2, 8] "
        "(expected a dim in -2..1)",
        "1"}},
      {"runtime_error", [&] { runtime(zeros({1})); }, {"runtime_error", "0 (Failing): disk on fire", "0"}},
      {"overflow_error, a runtime_error subtype",
       [&] { overflow(zeros({1})); },
       {"overflow_error", "0 (Failing): too big", "0"}},
      {"logic_error of a module without forward",
       [&] { missing(zeros({1})); },
       {"logic_error", "0 (NoForward): Module [NoForward] is missing the required \"forward\" function",
        "0"}},
  };
  check_cases(cases);
  BOOST_CHECK_THROW(net(zeros({2, 8})), std::out_of_range);  // caught by its own type, as before
}

BOOST_AUTO_TEST_CASE(other_exception_types_pass_through_untouched) {
  nn::Sequential net{Failing([] { throw LearnersOwnError(); })};
  try {
    net(zeros({1}));
    BOOST_FAIL("nothing was thrown");
  } catch (const LearnersOwnError& e) {
    BOOST_TEST(std::string(e.what()) == "my own error");
  }
}

BOOST_AUTO_TEST_CASE(path_equals_the_name_in_named_modules_for_every_module) {
  nn::Sequential root{nn::Linear(8, 8), Block(), nn::FeedForward(4)};
  for (const auto& [name, module] : root.named_modules()) BOOST_TEST(module.get().path() == name);
}

BOOST_AUTO_TEST_CASE(moving_a_module_hands_its_children_over) {
  // Move-construct, then destroy the old module: the children must point at the new one.
  auto original = std::make_unique<Block>();
  Block moved = std::move(*original);
  original.reset();
  BOOST_TEST(moved.body.path() == "body");
  BOOST_TEST(moved.body[2].path() == "body.2");
  BOOST_TEST(call([&] { moved(zeros({3, 8})); }).module_path == "body.2");

  // Move-assign: the target keeps its own place and takes the children.
  nn::Sequential outer;
  outer.push_back(nn::Sequential{nn::Linear(3, 3)});
  auto& inner = outer.at<nn::Sequential>(0);
  inner = nn::Sequential{nn::Linear(8, 4)};
  BOOST_TEST(inner[0].path() == "0.0");
  BOOST_TEST(
      call([&] {
        outer(zeros({2, 3}));
      }).message ==
      "0.0 (Linear in_features=8, out_features=4, bias=True): linear: input has 3 features but the weight "
      "expects 8 (input [2, 3], weight [4, 8])");
}

BOOST_AUTO_TEST_CASE(shared_child_forgets_a_parent_that_is_gone) {
  auto shared = std::make_shared<nn::Linear>(8, 4);
  {
    nn::Sequential first;
    first.push_back(shared);
    nn::Sequential second;
    second.push_back(nn::Identity());
    second.push_back(shared);
    BOOST_TEST(shared->path() == "0");  // the first parent's name
  }
  BOOST_TEST(shared->path() == "");
  BOOST_TEST(call([&] { (*shared)(zeros({1, 3})); }).module_path == "");
}

// A model that holds its loss, as some training scripts do: the loss is the child "criterion".
struct WithCriterion : nn::Module {
  nn::MSELoss& criterion;
  WithCriterion() : criterion(register_module("criterion", nn::MSELoss())) {}
};

BOOST_AUTO_TEST_CASE(loss_modules_name_themselves_as_other_modules_do) {
  WithCriterion model;
  const std::vector<ErrorCase> cases = {
      {"MSELoss on its own, shapes that differ",
       [] {
         nn::MSELoss()(zeros({2, 3}), zeros({2, 4}));
       },
       {"invalid_argument",
        "(MSELoss): mse_loss: input [2, 3] and target [2, 4] have different shapes (reshape one of them; "
        "broadcasting, as PyTorch does with a warning, would compare every input with every target)",
        ""}},
      {"CrossEntropyLoss with a class index out of range",
       [] {
         nn::CrossEntropyLoss()(zeros({2, 3}), tensor(std::vector<int64_t>{0, 7}, {2}));
       },
       {"out_of_range",
        "(CrossEntropyLoss): cross_entropy: target 7 is out of range for 3 classes (expected 0..2 or "
        "ignore_index -100)",
        ""}},
      {"a loss held as a child",
       [&] { model.criterion(zeros({2}), zeros({3})); },
       {"invalid_argument",
        "criterion (MSELoss): mse_loss: input [2] and target [3] have different shapes (reshape one of them; "
        "broadcasting, as PyTorch does with a warning, would compare every input with every target)",
        "criterion"}},
  };
  check_cases(cases);
}

BOOST_AUTO_TEST_SUITE_END()
