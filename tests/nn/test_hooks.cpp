// Tests for forward hooks (nn/hooks.hpp): when each kind runs, in which order, what it sees, and
// that a removed hook stops. The expected orders follow torch/nn/modules/module.py's _call_impl:
// global pre-hooks, the module's pre-hooks, forward, global hooks, the module's hooks.
#include <boost/test/unit_test.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/machinery/anomaly.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "nn/activation.hpp"
#include "nn/hooks.hpp"
#include "nn/linear.hpp"
#include "nn/module.hpp"
#include "nn/sequential.hpp"

namespace {

using namespace minigrad;

// Logs "<what> <module path>" for each call.
struct Log {
  std::vector<std::string> lines;
  nn::ForwardPreHook pre(const std::string& what) {
    return [this, what](nn::Module& m) { lines.push_back(what + " " + m.path()); };
  }
  nn::ForwardHook post(const std::string& what) {
    return [this, what](nn::Module& m, const Tensor&) { lines.push_back(what + " " + m.path()); };
  }
};

// A module whose forward logs itself, so the log shows where forward ran between the hooks.
struct Logged : nn::Module {
  Log& log;
  explicit Logged(Log& l) : log(l) {}
  Tensor forward(const Tensor& x) override {
    log.lines.push_back("forward " + path());
    return x * 2.0;
  }
};

struct Failing : nn::Module {
  Tensor forward(const Tensor&) override { throw std::invalid_argument("bad input"); }
};

}  // namespace

BOOST_AUTO_TEST_SUITE(hooks)

BOOST_AUTO_TEST_CASE(global_hooks_run_before_the_modules_own_around_forward) {
  Log log;
  Logged m(log);
  nn::RemovableHandle a = nn::register_module_forward_pre_hook(log.pre("global-pre"));
  nn::RemovableHandle b = m.register_forward_pre_hook(log.pre("pre"));
  nn::RemovableHandle c = m.register_forward_hook(log.post("post"));
  nn::RemovableHandle d = nn::register_module_forward_hook(log.post("global-post"));
  m(tensor({1.0f}));
  a.remove(), b.remove(), c.remove(), d.remove();
  const std::vector<std::string> expected = {"global-pre ", "pre ", "forward ", "global-post ", "post "};
  BOOST_TEST(log.lines == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(forward_hook_sees_the_output_forward_returned) {
  manual_seed(0);
  nn::Linear layer(3, 2);
  Tensor seen;
  nn::RemovableHandle h = layer.register_forward_hook([&](nn::Module&, const Tensor& out) { seen = out; });
  const Tensor x = tensor({1.0f, -2.0f, 0.5f});
  const Tensor out = layer(x);
  // Computed independently: W x + b from the layer's own parameters.
  const Tensor expected = matmul(layer.weight, x) + layer.bias;
  BOOST_TEST(seen.defined());
  BOOST_TEST(allclose(seen, expected));
  BOOST_TEST(allclose(out, expected));
}

BOOST_AUTO_TEST_CASE(hooks_of_children_run_inner_first_in_call_order) {
  Log log;
  nn::Sequential net{nn::Linear(2, 2), nn::ReLU()};
  std::vector<nn::RemovableHandle> handles;
  for (auto& [name, child] : net.named_children())
    handles.push_back(child.get().register_forward_hook(log.post("post")));
  handles.push_back(net.register_forward_hook(log.post("post")));
  net(tensor({1.0f, 2.0f}));
  const std::vector<std::string> expected = {"post 0", "post 1", "post "};
  BOOST_TEST(log.lines == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(removed_hook_is_not_called_and_removing_twice_does_nothing) {
  Log log;
  Logged m(log);
  nn::RemovableHandle h = m.register_forward_hook(log.post("post"));
  m(tensor({1.0f}));
  h.remove();
  h.remove();
  m(tensor({1.0f}));
  const std::vector<std::string> expected = {"forward ", "post ", "forward "};
  BOOST_TEST(log.lines == expected, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(only_always_call_hooks_run_when_forward_throws) {
  Log log;
  Failing m;
  nn::RemovableHandle a = m.register_forward_hook(log.post("post"));
  nn::RemovableHandle b = m.register_forward_hook(log.post("always"), /*always_call=*/true);
  BOOST_CHECK_THROW(m(tensor({1.0f})), std::invalid_argument);
  const std::vector<std::string> expected = {"always "};
  BOOST_TEST(log.lines == expected, boost::test_tools::per_element());
}

// Regression: a pre-hook that threw skipped the always_call hooks, so anomaly mode's module scope,
// opened by its global pre-hook, stayed open: later ops were noted as in that module's forward,
// and the program crashed at exit destroying the scope. As PyTorch 2's _call_impl, pre-hooks,
// forward and hooks now share one try, and the always_call hooks not yet run run after a throw.
BOOST_AUTO_TEST_CASE(a_throwing_pre_hook_still_runs_the_always_call_hooks_once) {
  Log log;
  nn::Linear layer(2, 1);
  DetectAnomalyGuard anomaly;
  nn::RemovableHandle always = layer.register_forward_hook(log.post("always"), /*always_call=*/true);
  nn::RemovableHandle pre =
      layer.register_forward_pre_hook([](nn::Module&) { throw std::runtime_error("no"); });
  BOOST_CHECK_THROW(layer(ones({1, 2})), std::runtime_error);
  BOOST_TEST(log.lines == std::vector<std::string>{"always "}, boost::test_tools::per_element());
  pre.remove();
  always.remove();
  Tensor w = tensor({1.0f}).requires_grad_();
  const Tensor y = w * 2.0;
  BOOST_TEST(y.grad_fn()->forward_trace.find("in the forward of") == std::string::npos);

  // A forward hook that throws after an always_call one ran: that one is not called again, and the
  // always_call one after it gets forward's output, as PyTorch 2's _call_impl passes `result`.
  Log again;
  bool saw_output = false;
  nn::RemovableHandle first = layer.register_forward_hook(again.post("always"), /*always_call=*/true);
  nn::RemovableHandle second =
      layer.register_forward_hook([](nn::Module&, const Tensor&) { throw std::runtime_error("late"); });
  nn::RemovableHandle third = layer.register_forward_hook(
      [&](nn::Module&, const Tensor& out) {
        saw_output = out.defined() && out.shape() == Shape{1, 1};
      },
      /*always_call=*/true);
  BOOST_CHECK_THROW(layer(ones({1, 2})), std::runtime_error);
  BOOST_TEST(again.lines == std::vector<std::string>{"always "}, boost::test_tools::per_element());
  BOOST_TEST(saw_output);
}

// Regression: a child's forward hook that threw was reported as its parent's ("(Sequential): hook
// boom", module_path ""), since the hooks ran outside the child's try.
BOOST_AUTO_TEST_CASE(an_error_in_a_childs_forward_hook_names_the_child) {
  nn::Sequential net{nn::Linear(2, 2), nn::ReLU()};
  nn::RemovableHandle h =
      net[0].register_forward_hook([](nn::Module&, const Tensor&) { throw std::runtime_error("hook boom"); });
  try {
    net(ones({1, 2}));
    BOOST_FAIL("the hook's error did not come through");
  } catch (const std::runtime_error& e) {
    BOOST_TEST(std::string(e.what()) == "0 (Linear in_features=2, out_features=2, bias=True): hook boom");
    const auto* in_module = dynamic_cast<const nn::ModuleError*>(&e);
    BOOST_TEST_REQUIRE(in_module != nullptr);
    BOOST_TEST(in_module->module_path() == "0");
  }
}

BOOST_AUTO_TEST_CASE(a_hook_moves_with_its_module_into_a_parent) {
  Log log;
  nn::Linear layer(2, 2);
  nn::RemovableHandle h = layer.register_forward_hook(log.post("post"));
  nn::Sequential net{std::move(layer)};
  net(tensor({1.0f, 2.0f}));
  const std::vector<std::string> expected = {"post 0"};
  BOOST_TEST(log.lines == expected, boost::test_tools::per_element());
  h.remove();
  net(tensor({1.0f, 2.0f}));
  BOOST_TEST(log.lines.size() == 1u);
}

BOOST_AUTO_TEST_CASE(a_handle_outliving_its_module_removes_nothing_and_does_not_crash) {
  nn::RemovableHandle h;
  {
    nn::Linear layer(2, 2);
    h = layer.register_forward_hook([](nn::Module&, const Tensor&) {});
  }
  BOOST_CHECK_NO_THROW(
      h.remove());  // the module's hook list is gone: nothing to do (ASan sees any stale access)
}

BOOST_AUTO_TEST_SUITE_END()
