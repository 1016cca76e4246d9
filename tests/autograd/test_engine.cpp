// The backward engine: topological order, accumulation, graph freeing, grad mode, and the
// errors PyTorch users know (non-scalar backward, second backward through a freed graph, a saved
// tensor changed in place before backward).
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "autograd/machinery/anomaly.hpp"
#include "autograd/machinery/graph.hpp"
#include "autograd/op_support.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "nn/functional.hpp"
#include "support.hpp"

using namespace minigrad;

namespace {
using minigrad_test::contains;
}  // namespace

BOOST_AUTO_TEST_SUITE(engine)

BOOST_AUTO_TEST_CASE(node_used_twice_runs_once_after_all_its_uses) {
  // b = a + a; c = b + b  =>  c = 4a, dc/da = 4 (a naive recursion gives the wrong answer).
  Tensor a = tensor({3.0}).requires_grad_();
  Tensor b = a + a;
  Tensor c = b + b;
  c.backward();
  BOOST_TEST(a.grad().item<float>() == 4.0f);
}

BOOST_AUTO_TEST_CASE(diamond_graph_gradient_matches_hand_derivation) {
  // y = x*x + exp(x)  =>  dy/dx = 2x + e^x.
  Tensor x = tensor({0.5}, {.dtype = kFloat64}).requires_grad_();
  Tensor y = x * x + exp(x);
  y.backward();
  BOOST_TEST(x.grad().item<double>() == 2 * 0.5 + std::exp(0.5), boost::test_tools::tolerance(1e-15));
}

BOOST_AUTO_TEST_CASE(gradients_accumulate_across_backward_calls_until_zeroed) {
  Tensor w = tensor({2.0}).requires_grad_();
  (w * 3.0).sum().backward();
  (w * 3.0).sum().backward();
  BOOST_TEST(w.grad().item<float>() == 6.0f);
  w.grad().zero_();
  (w * 5.0).sum().backward();
  BOOST_TEST(w.grad().item<float>() == 5.0f);
  w.set_grad(Tensor());
  BOOST_TEST(!w.grad().defined());
}

// The engine hands a leaf the gradient tensor itself when nothing else holds it, instead of a
// copy. These are the cases where something else does: each .grad must stay its own memory.
BOOST_AUTO_TEST_CASE(a_leafs_grad_never_shares_memory_with_another_tensor) {
  // add sends one gradient tensor to both of its inputs.
  Tensor a = tensor({1.0, 2.0}).requires_grad_(), b = tensor({3.0, 4.0}).requires_grad_();
  (a + b).backward(ones({2}));
  BOOST_TEST(a.grad().data_ptr<float>() != b.grad().data_ptr<float>());
  a.grad().add_(ones({2}));
  BOOST_TEST(b.grad().to_vector<float>() == (std::vector<float>{1.0f, 1.0f}),
             boost::test_tools::per_element());

  // The gradient passed to backward() stays the caller's: a later change to it leaves .grad alone.
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor seed = tensor({5.0, 6.0});
  x.backward(seed);
  seed.fill_(0.0);
  BOOST_TEST(x.grad().to_vector<float>() == (std::vector<float>{5.0f, 6.0f}),
             boost::test_tools::per_element());

  // A retained non-leaf's .grad and the gradient that flows on below it are different memory.
  Tensor w = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = w * 1.0;
  y.retain_grad();
  y.sum().backward();
  y.grad().fill_(7.0);
  BOOST_TEST(w.grad().to_vector<float>() == (std::vector<float>{1.0f, 1.0f}),
             boost::test_tools::per_element());
}

// A tensor read by several linear layers and a LayerNorm (as the keys, queries and values of all
// heads and the residual read one x): their backwards add their shares into the sum the walk
// holds, in place. The gradient is the sum of the shares, each computed by a backward of its own.
BOOST_AUTO_TEST_CASE(shares_added_in_place_sum_to_the_shares_of_separate_backwards) {
  namespace F = minigrad::nn::functional;
  Generator generator(3);
  const Tensor x0 = randn({4, 5, 8}, generator, {.dtype = kFloat64});
  std::vector<Tensor> weights;
  for (int i = 0; i < 3; ++i) weights.push_back(randn({6, 8}, generator, {.dtype = kFloat64}));
  const Tensor g = randn({4, 5, 6}, generator, {.dtype = kFloat64});
  const Tensor g_norm = randn({4, 5, 8}, generator, {.dtype = kFloat64});
  auto share = [&](int use) {  // one use's share of the gradient of h = 2 x, as dL/dx
    Tensor x = x0.clone().requires_grad_();
    const Tensor h = x * 2.0;
    if (use < 3) (F::linear(h, weights[use]) * g).sum().backward();
    if (use == 3) (F::layer_norm(h, {8}) * g_norm).sum().backward();
    if (use == 4) h.sum().backward();
    return x.grad();
  };
  Tensor expected = share(0);
  for (int use = 1; use < 5; ++use) expected = expected + share(use);

  Tensor x = x0.clone().requires_grad_();
  const Tensor h = x * 2.0;
  Tensor loss = h.sum() + (F::layer_norm(h, {8}) * g_norm).sum();
  for (const Tensor& w : weights) loss = loss + (F::linear(h, w) * g).sum();
  loss.backward();
  BOOST_TEST(x.grad().allclose(expected, 1e-12, 1e-12));
}

// Adding in place must never write into a tensor anyone but the walk holds: here the seed the
// caller passed, which add's backward hands on unchanged as the first share of h's gradient.
BOOST_AUTO_TEST_CASE(a_share_is_never_added_into_the_callers_gradient) {
  namespace F = minigrad::nn::functional;
  Tensor x = tensor({{1.0, 2.0}, {3.0, 4.0}}).requires_grad_();
  const Tensor w = tensor({{1.0, 0.0}, {0.0, 1.0}});
  const Tensor h = x * 1.0;
  const Tensor out = h + F::linear(h, w);  // h's gradient: seed (from add), then seed @ w
  const Tensor seed = tensor({{1.0, 1.0}, {1.0, 1.0}});
  out.backward(seed);
  BOOST_TEST(seed.to_vector<float>() == (std::vector<float>{1, 1, 1, 1}), boost::test_tools::per_element());
  BOOST_TEST(x.grad().to_vector<float>() == (std::vector<float>{2, 2, 2, 2}),
             boost::test_tools::per_element());
  BOOST_TEST(detail::gradient_to_add_into(0) == nullptr);  // only offered while a backward runs
}

// An elementwise backward writes its result over the incoming gradient when only the walk holds
// it (detail::gradient_output): relu, Dropout, masked_fill and softmax all do here. The gradients
// must still be the hand-derived ones, a retained gradient must keep its value, and the seed the
// caller passed must never be written into.
BOOST_AUTO_TEST_CASE(gradients_written_over_the_incoming_ones_are_the_hand_derived_ones) {
  namespace F = minigrad::nn::functional;
  const double inf = std::numeric_limits<double>::infinity();
  const std::vector<double> xs = {0.5, -1.0, 2.0, 0.25, 1.5, 0.75, -0.5, 1.25};  // [2, 4]
  const std::vector<double> ws = {1.0, -2.0, 0.5, 3.0, -1.0, 0.25, 2.0, 1.0};    // the seed
  Tensor x = tensor(xs, {2, 4}, {.dtype = kFloat64}).requires_grad_();
  const Tensor mask = tensor(std::vector<bool>{false, false, false, true}, {4});
  Generator generator(11);
  Tensor dropped = F::dropout(x.relu(), 0.5, true, generator);
  dropped.retain_grad();
  const Tensor s = (dropped * 3.0).masked_fill(mask, -inf).softmax(-1);
  const Tensor seed = tensor(ws, {2, 4}, {.dtype = kFloat64});
  s.backward(seed);
  BOOST_TEST(seed.to_vector<double>() == ws, boost::test_tools::per_element());

  // By hand: g_s = s * (w - sum(w * s)) per row, 0 where masked, times 3 into dropped; times
  // keep * 2 (kept where dropped != 0, as every kept x here is nonzero) and relu'(x) into x.
  const std::vector<double> sv = s.to_vector<double>(), dv = dropped.to_vector<double>();
  std::vector<double> grad_dropped(8), grad_x(8);
  for (int row = 0; row < 2; ++row) {
    double total = 0;
    for (int j = 0; j < 4; ++j) total += ws[row * 4 + j] * sv[row * 4 + j];
    for (int j = 0; j < 4; ++j) {
      const int e = row * 4 + j;
      const double g_s = j == 3 ? 0.0 : sv[e] * (ws[e] - total);
      grad_dropped[e] = 3 * g_s;
      grad_x[e] = xs[e] > 0 && dv[e] != 0 ? 2 * grad_dropped[e] : 0.0;
    }
  }
  BOOST_TEST(dropped.grad().to_vector<double>() == grad_dropped, boost::test_tools::tolerance(1e-12)
                                                                     << boost::test_tools::per_element());
  BOOST_TEST(x.grad().to_vector<double>() == grad_x, boost::test_tools::tolerance(1e-12)
                                                         << boost::test_tools::per_element());
  int kept = 0;  // the draw kept some and dropped some, so both cases were checked
  for (int e = 0; e < 8; ++e) kept += xs[e] > 0 && dv[e] != 0;
  BOOST_TEST(kept > 0);
  BOOST_TEST(kept < 6);

  const Tensor outside = ones({3});  // outside a backward: always a new tensor
  BOOST_TEST(detail::gradient_output(outside).impl() != outside.impl());
}

BOOST_AUTO_TEST_CASE(chain_of_100000_ops_does_not_overflow_the_stack) {
  Tensor x = tensor({1.0}, {.dtype = kFloat64}).requires_grad_();
  Tensor y = x;
  for (int i = 0; i < 100000; ++i) y = y + 1e-5;
  y.backward();
  BOOST_TEST(x.grad().item<double>() == 1.0);
  BOOST_TEST(y.item<double>() == 2.0, boost::test_tools::tolerance(1e-9));
}

BOOST_AUTO_TEST_CASE(second_backward_through_a_freed_graph_throws) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = (x * x).sum();
  y.backward();
  try {
    y.backward();
    BOOST_FAIL("second backward should throw");
  } catch (const std::runtime_error& e) {
    BOOST_TEST(contains(e.what(), "second time"));
    BOOST_TEST(contains(e.what(), "retain_graph"));
  }
}

// Regression: a second backward threw through every node, even through ops whose backward reads
// no tensor (add, sum, reshape, ...), where PyTorch saves nothing and allows it. Values by hand:
// d/dx sum(x + 1) = 1 per backward; a = x + 1 used by two losses, sum(a) and sum(3a): 1 + 3.
BOOST_AUTO_TEST_CASE(a_second_backward_runs_again_through_ops_that_save_no_tensor) {
  Tensor x = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor y = (x + 1.0).reshape({3, 1}).sum();
  y.backward();
  y.backward();
  BOOST_TEST(x.grad().to_vector<float>() == std::vector<float>({2.0f, 2.0f, 2.0f}),
             boost::test_tools::per_element());

  Tensor z = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor a = z + 1.0;
  a.sum().backward();
  (a * 3.0).sum().backward();  // through AddBackward0 again
  BOOST_TEST(z.grad().to_vector<float>() == std::vector<float>({4.0f, 4.0f, 4.0f}),
             boost::test_tools::per_element());

  // A node that saved tensors still refuses, and it is the one named (PyTorch names MulBackward0).
  Tensor w = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor product = (w * w).sum();
  product.backward();
  BOOST_CHECK_EXCEPTION(product.backward(), std::runtime_error, [](const std::runtime_error& e) {
    return contains(e.what(), "(through MulBackward0)");
  });
}

// Regression: every input counted as read by its op's backward, so changing an input of add in
// place before backward threw; AddBackward0 reads no input, and PyTorch goes ahead: gradients 1.
BOOST_AUTO_TEST_CASE(an_input_of_an_op_that_saves_nothing_may_change_before_backward) {
  Tensor x = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor w = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor y = (x + w).sum();
  {
    NoGradGuard no_grad;
    w.mul_(2.0);
  }
  y.backward();
  BOOST_TEST(x.grad().to_vector<float>() == std::vector<float>({1.0f, 1.0f, 1.0f}),
             boost::test_tools::per_element());
  BOOST_TEST(w.grad().to_vector<float>() == std::vector<float>({1.0f, 1.0f, 1.0f}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(retain_graph_allows_a_second_backward) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = (x * x).sum();
  y.backward(Tensor(), /*retain_graph=*/true);
  y.backward();
  BOOST_TEST(x.grad().to_vector<float>() == std::vector<float>({4.0f, 8.0f}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(backward_of_a_non_scalar_needs_a_gradient) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = x * 2.0;
  try {
    y.backward();
    BOOST_FAIL("backward of a [2] tensor without gradient should throw");
  } catch (const std::runtime_error& e) {
    BOOST_TEST(contains(e.what(), "[2]"));
  }
  y.backward(tensor({1.0, 10.0}));
  BOOST_TEST(x.grad().to_vector<float>() == std::vector<float>({2.0f, 20.0f}),
             boost::test_tools::per_element());
  BOOST_CHECK_THROW(y.backward(tensor({1.0, 2.0, 3.0})), std::invalid_argument);
}

BOOST_AUTO_TEST_CASE(backward_on_a_tensor_without_grad_throws) {
  const Tensor x = tensor({1.0});
  BOOST_CHECK_THROW(x.backward(), std::runtime_error);
  Tensor w = tensor({1.0}).requires_grad_();
  Tensor y;
  {
    NoGradGuard no_grad;
    y = w * 2.0;
  }
  BOOST_TEST(!y.requires_grad());
  BOOST_CHECK_THROW(y.backward(), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(no_grad_guard_restores_the_previous_mode) {
  BOOST_TEST(is_grad_enabled());
  {
    NoGradGuard outer;
    {
      NoGradGuard inner;
      BOOST_TEST(!is_grad_enabled());
    }
    BOOST_TEST(!is_grad_enabled());
  }
  BOOST_TEST(is_grad_enabled());
}

BOOST_AUTO_TEST_CASE(leaves_and_results_report_is_leaf_and_grad_fn) {
  Tensor x = tensor({1.0}).requires_grad_();
  Tensor y = x * 2.0;
  BOOST_TEST(x.is_leaf());
  BOOST_TEST(!y.is_leaf());
  BOOST_TEST(y.grad_fn()->name() == "MulBackward0");
  BOOST_TEST(x.grad_fn() == nullptr);
  BOOST_TEST(!y.detach().requires_grad());
  BOOST_CHECK_THROW(y.requires_grad_(false), std::invalid_argument);
  BOOST_CHECK_THROW(zeros({2}, {.dtype = kInt64}).requires_grad_(), std::invalid_argument);
}

// Recording an op copies no name: every node of an op views the same characters, the literal the
// op passed (a std::string per node had a buffer of its own, on the heap past 15 characters).
BOOST_AUTO_TEST_CASE(nodes_of_one_op_share_their_name_rather_than_copy_it) {
  const Tensor x = randn({4, 8}).requires_grad_();
  const Tensor a = x.softmax(-1), b = (x * 2.0).softmax(-1);
  BOOST_TEST(a.grad_fn()->name() == "SoftmaxBackward0");
  BOOST_TEST(a.grad_fn() != b.grad_fn());
  BOOST_TEST(static_cast<const void*>(a.grad_fn()->name().data()) ==
             static_cast<const void*>(b.grad_fn()->name().data()));
}

// Since a node keeps a view of its name, a name that could die before the node must not get in:
// the name is read through name() and set only from a detail::OpName, which only a literal makes
// (its constructor is consteval), not from a std::string or a string_view.
static_assert(!std::is_invocable_v<decltype(&Node::set_name), Node&, std::string>);
static_assert(!std::is_invocable_v<decltype(&Node::set_name), Node&, std::string_view>);

BOOST_AUTO_TEST_CASE(non_leaf_gradient_is_kept_only_with_retain_grad) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor h = x * 3.0;
  Tensor k = x * 4.0;
  h.retain_grad();
  (h * k).sum().backward();
  BOOST_TEST(h.grad().to_vector<float>() == std::vector<float>({4.0f, 8.0f}),
             boost::test_tools::per_element());
  BOOST_TEST(!k.grad().defined());
}

BOOST_AUTO_TEST_CASE(inputs_that_do_not_require_grad_get_no_gradient) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor c = tensor({5.0, 6.0});
  (x * c).sum().backward();
  BOOST_TEST(!c.grad().defined());
  BOOST_TEST(x.grad().to_vector<float>() == std::vector<float>({5.0f, 6.0f}),
             boost::test_tools::per_element());
}

// Regression: a retained non-leaf's .grad was added into in place, so a handle taken after the
// first backward changed with the second. PyTorch 1.13's retain_grad makes a new tensor each time:
// y = 2x, z = sum(y^2), dz/dy = 2y = [4, 8, 12] per backward.
BOOST_AUTO_TEST_CASE(a_retained_grad_taken_after_one_backward_keeps_its_values) {
  Tensor x = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor y = x * 2.0;
  y.retain_grad();
  Tensor z = (y * y).sum();
  z.backward(Tensor(), /*retain_graph=*/true);
  const Tensor first = y.grad();
  z.backward();
  BOOST_TEST(first.to_vector<float>() == std::vector<float>({4.0f, 8.0f, 12.0f}),
             boost::test_tools::per_element());
  BOOST_TEST(y.grad().to_vector<float>() == std::vector<float>({8.0f, 16.0f, 24.0f}),
             boost::test_tools::per_element());
  // A leaf's .grad is still accumulated in place (AccumulateGrad): a handle sees the sum.
  BOOST_TEST(x.grad().to_vector<float>() == std::vector<float>({16.0f, 32.0f, 48.0f}),
             boost::test_tools::per_element());
}

// Regression: whether an input gets a gradient was read when backward ran, so an input given
// requires_grad_() after the op got one. PyTorch decides when the op runs: x.grad stays None.
// The other way round, a leaf that stops requiring grad before backward gets none, as in PyTorch.
BOOST_AUTO_TEST_CASE(requires_grad_counts_as_it_was_when_the_op_ran) {
  Tensor x = tensor({1.0, 2.0, 3.0});
  Tensor w = tensor({1.0, 2.0, 3.0}).requires_grad_();
  Tensor y = (x * w).sum();
  x.requires_grad_();
  y.backward();
  BOOST_TEST(!x.grad().defined());
  BOOST_TEST(w.grad().to_vector<float>() == std::vector<float>({1.0f, 2.0f, 3.0f}),
             boost::test_tools::per_element());

  Tensor a = tensor({1.0, 2.0}).requires_grad_();
  Tensor b = tensor({3.0, 4.0}).requires_grad_();
  Tensor c = (a * b).sum();
  a.requires_grad_(false);
  c.backward();
  BOOST_TEST(!a.grad().defined());
  BOOST_TEST(b.grad().to_vector<float>() == std::vector<float>({1.0f, 2.0f}),
             boost::test_tools::per_element());
}

// Regression (found in review of the test above's change): linear's backward added its share of
// grad_x into the sum the walk held for x, although x had no edge from linear (requires_grad_()
// came after it): x.grad came out [[6, -2]]. Only the mul, recorded after, reaches x: h = [[3, -1]].
// And anomaly mode checked the gradient of an input the walk drops: a nan there threw, where
// PyTorch never computes it.
BOOST_AUTO_TEST_CASE(an_input_without_an_edge_gets_no_share_and_no_anomaly_check) {
  Tensor x = tensor({1.0, 2.0}).reshape({1, 2});
  Tensor w = tensor({1.0, 1.0, 1.0, -1.0}).reshape({2, 2}).requires_grad_();
  Tensor h = nn::functional::linear(x, w);
  x.requires_grad_();
  (x * h).sum().backward();
  BOOST_TEST(x.grad().to_vector<float>() == std::vector<float>({3.0f, -1.0f}),
             boost::test_tools::per_element());

  Tensor v = tensor({std::nan("")}).requires_grad_();
  Tensor c = tensor({1.0});
  Tensor y = (v * c).sum();
  c.requires_grad_();
  {
    DetectAnomalyGuard anomaly;
    y.backward();  // c's gradient would be v = nan; c has no edge, so nothing is checked or given
  }
  BOOST_TEST(v.grad().to_vector<float>() == std::vector<float>({1.0f}), boost::test_tools::per_element());
  BOOST_TEST(!c.grad().defined());
}

BOOST_AUTO_TEST_CASE(in_place_change_of_a_leaf_that_requires_grad_throws_outside_no_grad) {
  Tensor w = tensor({1.0}).requires_grad_();
  BOOST_CHECK_THROW(w.fill_(2.0), std::runtime_error);
  NoGradGuard no_grad;
  w.fill_(2.0);
  BOOST_TEST(w.item<float>() == 2.0f);
}

BOOST_AUTO_TEST_CASE(mixed_dtype_gradients_arrive_in_each_inputs_dtype) {
  Tensor f = tensor({1.0, 2.0}).requires_grad_();
  Tensor d = tensor({3.0, 4.0}, {.dtype = kFloat64}).requires_grad_();
  (f * d).sum().backward();
  BOOST_TEST(dtype_name(f.grad().dtype()) == "float32");
  BOOST_TEST(dtype_name(d.grad().dtype()) == "float64");
  BOOST_TEST(f.grad().to_vector<float>() == std::vector<float>({3.0f, 4.0f}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(op_that_saves_its_output_frees_its_graph) {
  // exp saves its own output for backward; if the node kept the output alive through a
  // shared_ptr cycle, the sanitizer build's leak check would report it at exit.
  std::weak_ptr<TensorImpl> watch;
  {
    Tensor x = tensor({1.0}).requires_grad_();
    Tensor y = exp(x);
    watch = y.impl_ptr();
    y.backward();
  }
  BOOST_TEST(watch.expired());
}

// ---- in-place changes and the version counter ---------------------------------------------------
// PyTorch 1.13 refuses each backward below ("one of the variables needed for gradient computation
// has been modified by an inplace operation"). Before the version counter, minigrad computed with
// the changed values and returned a wrong gradient without a word.

BOOST_AUTO_TEST_CASE(in_place_changes_count_in_a_version_shared_with_aliases) {
  // torch: w._version is 0, then 2 after w.mul_(2) and w.view(2).add_(1), and w.detach()'s is 2 too
  Tensor w = ones({2}).requires_grad_();
  BOOST_TEST(w.version() == 0);
  BOOST_TEST(randn({2}).version() == 0);  // a factory's fill does not count, as torch.randn(2)._version
  {
    NoGradGuard no_grad;
    w.mul_(2.0);
    w.view({2}).add_(ones({2}));
  }
  BOOST_TEST(w.version() == 2);
  BOOST_TEST(w.detach().version() == 2);
  BOOST_TEST(w.to_vector<float>() == std::vector<float>({3.0f, 3.0f}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(backward_after_a_saved_input_changed_in_place_throws) {
  // Regression: x.grad came out [[5, 5]] instead of [[1, 1]], as after an optimizer step run
  // before backward.
  Tensor w = ones({2, 1}).requires_grad_();
  Tensor x = ones({1, 2}).requires_grad_();
  Tensor y = matmul(x, w).sum();
  {
    NoGradGuard no_grad;
    w.mul_(5.0);
  }
  BOOST_CHECK_EXCEPTION(y.backward(), std::runtime_error, [](const std::runtime_error& e) {
    return contains(e.what(),
                    "modified by an inplace operation: input 1 of MmBackward0 [float32 [2, 1]] is at "
                    "version 1; expected version 0 instead");
  });
}

BOOST_AUTO_TEST_CASE(changing_a_detached_alias_in_place_counts_as_changing_the_tensor) {
  Tensor w = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = (w * w).sum();
  w.detach().mul_(10.0);  // allowed in grad mode: the alias does not require grad
  BOOST_CHECK_THROW(y.backward(), std::runtime_error);
}

BOOST_AUTO_TEST_CASE(backward_after_a_saved_output_changed_in_place_throws) {
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor y = exp(x);  // its backward reads y
  {
    NoGradGuard no_grad;
    y.mul_(2.0);
  }
  BOOST_CHECK_EXCEPTION(y.sum().backward(), std::runtime_error, [](const std::runtime_error& e) {
    return contains(e.what(), "the output of ExpBackward0 [shape [2]] is at version 1; expected version 0");
  });
}

BOOST_AUTO_TEST_CASE(in_place_change_of_an_op_result_that_requires_grad_throws_in_grad_mode) {
  // Regression: b.mul_(0) changed b without being recorded, so c = (b * b).sum() gave a.grad = 0.
  // PyTorch records the in-place op; minigrad's in-place ops are not recorded, so it refuses.
  Tensor a = tensor({1.0, 2.0}).requires_grad_();
  Tensor b = a * 1.0;
  BOOST_CHECK_EXCEPTION(b.mul_(0.0), std::runtime_error, [](const std::runtime_error& e) {
    return contains(e.what(),
                    "mul_: the result of MulBackward0 (shape [2]) requires grad and cannot be changed in "
                    "place");
  });
  (b * b).sum().backward();  // d/da (a * 1)^2 = 2a
  BOOST_TEST(a.grad().to_vector<float>() == std::vector<float>({2.0f, 4.0f}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(in_place_change_through_a_view_of_a_leaf_throws_in_grad_mode) {
  // Regression: w.view({2}).fill_(2) changed the leaf w. PyTorch: "a view of a leaf Variable that
  // requires grad is being used in an in-place operation."
  Tensor w = ones({2}).requires_grad_();
  BOOST_CHECK_THROW(w.view({2}).fill_(2.0), std::runtime_error);
  BOOST_TEST(w.to_vector<float>() == std::vector<float>({1.0f, 1.0f}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(changing_an_output_the_backward_does_not_read_is_allowed) {
  // The loss's sum node does not keep its output, so scaling a detached copy for display before
  // backward is fine, as in PyTorch; exp's output above is kept, and there it throws.
  Tensor x = tensor({1.0, 2.0}).requires_grad_();
  Tensor loss = (x * x).sum();
  loss.detach().mul_(100.0);
  loss.backward();  // d/dx sum(x^2) = 2x
  BOOST_TEST(x.grad().to_vector<float>() == std::vector<float>({2.0f, 4.0f}),
             boost::test_tools::per_element());
}

// Regressions: these backwards read a mask or indices that aliased a tensor the caller still held,
// so changing it in place after the forward changed the gradient (for max, into a write out of
// bounds). Each op now keeps its own copy, and the gradient is the one of the forward that ran.
BOOST_AUTO_TEST_CASE(where_masked_fill_and_max_keep_their_own_masks_and_indices) {
  Tensor a = tensor({1.0, 2.0, 3.0}).requires_grad_(), b = zeros({3});
  Tensor condition = tensor({1.0, 0.0, 1.0}) > 0.5;  // [true, false, true]
  Tensor picked = where(condition, a, b).sum();
  Tensor mask = tensor({0.0, 1.0, 1.0}) > 0.5;  // [false, true, true]
  Tensor filled = masked_fill(a, mask, 0.0).sum();
  condition.fill_(false);
  mask.fill_(true);
  picked.backward();
  BOOST_TEST(a.grad().to_vector<float>() == std::vector<float>({1, 0, 1}), boost::test_tools::per_element());
  a.set_grad(Tensor());
  filled.backward();
  BOOST_TEST(a.grad().to_vector<float>() == std::vector<float>({1, 0, 0}), boost::test_tools::per_element());

  Tensor m = tensor({{1.0, 5.0}, {7.0, 2.0}}).requires_grad_();
  auto [values, indices] = max(m, 1);  // values [5, 7] at columns [1, 0]
  indices.add_(full({2}, 1000, {.dtype = kInt64}));
  values.sum().backward();
  BOOST_TEST(m.grad().to_vector<float>() == std::vector<float>({0, 1, 1, 0}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(an_in_place_step_after_backward_leaves_the_next_backward_free) {
  // The training loop's order: forward, backward, in-place step, a new forward and backward.
  Tensor w = tensor({1.0, 2.0}).requires_grad_();
  (w * w).sum().backward();
  {
    NoGradGuard no_grad;
    w.add_(w.grad(), -0.25);  // w - 0.25 * 2w = w / 2 = [0.5, 1]
  }
  w.set_grad(Tensor());
  (w * w).sum().backward();
  BOOST_TEST(w.grad().to_vector<float>() == std::vector<float>({1.0f, 2.0f}),
             boost::test_tools::per_element());
}

// ---- post-accumulate-grad hooks (what DistributedDataParallel starts its all-reduces from) ------

BOOST_AUTO_TEST_CASE(post_accumulate_grad_hook_sees_the_whole_gradient_once_per_backward) {
  // y = a * 3 + a * 4: two uses of a, so the hook must run after both have added their share.
  // By hand: dy/da = 7 in the first backward; the second adds 7 more, so grad() reads 14.
  Tensor a = tensor({2.0}).requires_grad_();
  std::vector<float> seen;
  a.register_post_accumulate_grad_hook([&](Tensor& leaf) { seen.push_back(leaf.grad().item<float>()); });
  (a * 3.0 + a * 4.0).backward();
  (a * 3.0 + a * 4.0).backward();
  BOOST_TEST(seen == std::vector<float>({7.0f, 14.0f}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(the_last_layers_hook_runs_before_the_first_layer_has_a_gradient) {
  // loss = sum(relu(x * w1) * w2), each layer's output the first operand of the next layer, as
  // x @ W in a network. The engine finishes w2 before it walks down to w1, so w2's hook runs while
  // w1 has no gradient yet: the overlap DistributedDataParallel relies on.
  Tensor x = tensor({1.0, -1.0});
  Tensor w1 = tensor({2.0, 3.0}).requires_grad_(), w2 = tensor({5.0, 7.0}).requires_grad_();
  std::vector<std::string> events;
  w2.register_post_accumulate_grad_hook(
      [&](Tensor&) { events.push_back(w1.grad().defined() ? "w2 late" : "w2"); });
  w1.register_post_accumulate_grad_hook([&](Tensor&) { events.push_back("w1"); });
  (relu(x * w1) * w2).sum().backward();
  BOOST_TEST(events == std::vector<std::string>({"w2", "w1"}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(post_accumulate_grad_hook_may_change_the_gradient_in_place) {
  // Dividing by 2 in the hook is what averaging over two ranks does: d(sum(4w))/dw = 4 -> 2.
  Tensor w = tensor({1.0, 1.0}).requires_grad_();
  w.register_post_accumulate_grad_hook([](Tensor& leaf) { leaf.grad().mul_(0.5); });
  (w * 4.0).sum().backward();
  BOOST_TEST(w.grad().to_vector<float>() == std::vector<float>({2.0f, 2.0f}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_removed_post_accumulate_grad_hook_is_not_called_again) {
  Tensor w = tensor({1.0}).requires_grad_();
  int first = 0, second = 0;
  RemovableHandle handle = w.register_post_accumulate_grad_hook([&](Tensor&) { ++first; });
  w.register_post_accumulate_grad_hook([&](Tensor&) { ++second; });
  (w * 2.0).backward();
  handle.remove();
  handle.remove();  // a second remove does nothing
  (w * 2.0).backward();
  BOOST_TEST(first == 1);
  BOOST_TEST(second == 2);
}

BOOST_AUTO_TEST_CASE(post_accumulate_grad_hook_is_refused_on_a_non_leaf_or_a_tensor_without_grad) {
  Tensor w = tensor({1.0}).requires_grad_();
  Tensor y = w * 2.0;
  BOOST_CHECK_EXCEPTION(y.register_post_accumulate_grad_hook([](Tensor&) {}), std::runtime_error,
                        [](const std::exception& e) {
                          return contains(e.what(), "non-leaf tensors (this one was made by MulBackward0)");
                        });
  BOOST_CHECK_EXCEPTION(tensor({1.0}).register_post_accumulate_grad_hook([](Tensor&) {}), std::runtime_error,
                        [](const std::exception& e) { return contains(e.what(), "does not require grad"); });
}

BOOST_AUTO_TEST_CASE(an_exception_from_a_post_accumulate_grad_hook_leaves_backward) {
  Tensor w = tensor({1.0}).requires_grad_();
  w.register_post_accumulate_grad_hook([](Tensor&) { throw std::runtime_error("hook failed"); });
  BOOST_CHECK_EXCEPTION((w * 2.0).backward(), std::runtime_error,
                        [](const std::exception& e) { return contains(e.what(), "hook failed"); });
}

// An intermediate that only the graph holds and that no backward reads has its data freed as soon
// as the last other handle goes, as PyTorch frees an intermediate Python no longer names; the
// gradients are the hand-derived ones all the same. x is [128, 256] float32 (128 KiB, a block the
// cache takes back); loss = sum(relu(2 x)^2), so d loss / dx = 8 x where x > 0, else 0.
BOOST_AUTO_TEST_CASE(an_intermediate_no_backward_reads_is_freed_once_only_the_graph_holds_it) {
  manual_seed(3);
  Tensor x = randn({128, 256}).requires_grad_();
  Tensor loss;
  std::weak_ptr<std::byte[]> h_bytes;  // to see the bytes themselves go, not just the pointer
  {
    Tensor h = x * 2.0;  // MulBackward0 reads the scalar 2, not x; ReluBackward0 reads its output
    h_bytes = h.impl()->storage;
    Tensor r = relu(h);
    loss = (r * r).sum();  // MulBackward0 reads r on both sides
    // the user still holds h: its data stays
    BOOST_TEST(loss.grad_fn()->inputs[0].grad_fn()->inputs[0].grad_fn()->inputs[0].impl()->storage !=
               nullptr);
  }
  const Tensor& r_in_graph = loss.grad_fn()->inputs[0].grad_fn()->inputs[0];
  const Tensor& h_in_graph = r_in_graph.grad_fn()->inputs[0];
  BOOST_TEST(h_in_graph.impl()->storage == nullptr);  // freed: only ReluBackward0 holds it
  BOOST_TEST(r_in_graph.impl()->storage != nullptr);  // kept: the product's backward reads it
  BOOST_TEST(h_bytes.expired());                      // no alias kept them
  BOOST_CHECK_EXCEPTION(h_in_graph.data_ptr<float>(), std::runtime_error, [](const std::runtime_error& e) {
    return contains(e.what(), "was freed") && contains(e.what(), "[128, 256]") &&
           contains(e.what(), "MulBackward0");
  });
  BOOST_TEST(contains(to_dot(loss, {}, {.show_data = true}), "data freed (no backward reads it)"));

  loss.backward();
  const std::vector<float> xs = x.to_vector<float>(), grads = x.grad().to_vector<float>();
  for (size_t i = 0; i < xs.size(); ++i) BOOST_TEST(grads[i] == (xs[i] > 0 ? 8 * xs[i] : 0.0f));
}

// What a backward reads stays: x + 1 feeding a product with a tensor that requires grad (read for
// the other side's gradient), a tensor the user still holds, and a small one (under 64 KiB, so a
// drawing of a small graph still shows every value).
BOOST_AUTO_TEST_CASE(data_a_backward_reads_or_a_user_holds_is_kept) {
  Tensor x = ones({128, 256}).requires_grad_(), w = full({128, 256}, 3.0).requires_grad_();
  Tensor y = ((x + 1.0) * w).sum();  // MulBackward0 reads x + 1 for w's gradient
  BOOST_TEST(y.grad_fn()->inputs[0].grad_fn()->inputs[0].impl()->storage != nullptr);
  Tensor small = ones({4, 4}).requires_grad_();
  Tensor z = ((small + 1.0) * 0.5).sum();
  BOOST_TEST(z.grad_fn()->inputs[0].grad_fn()->inputs[0].impl()->storage != nullptr);
  Tensor y2 = (w * (x + 1.0)).sum();  // and read for the left side's gradient
  BOOST_TEST(y2.grad_fn()->inputs[0].grad_fn()->inputs[1].impl()->storage != nullptr);
  Tensor kept = x + 1.0;
  Tensor v = (kept * 0.5).sum();
  BOOST_TEST(kept.impl()->storage != nullptr);
  BOOST_TEST(kept.sum().item<float>() == 2.0f * 128 * 256);
  y.backward();
  BOOST_TEST(x.grad().sum().item<float>() == 3.0f * 128 * 256);  // d/dx sum((x + 1) w) = w
  BOOST_TEST(w.grad().sum().item<float>() == 2.0f * 128 * 256);  // = x + 1
}

// Regression for the freeing above: MulBackward0 decides what it reads when the op runs. b = x + 1
// (no backward reads it: a does not require grad) is freed; a.requires_grad_() afterwards must not
// make the backward read b, and a gets no gradient (its edge was not made, as in PyTorch).
BOOST_AUTO_TEST_CASE(a_product_reads_what_it_decided_to_when_it_ran) {
  Tensor x = ones({128, 256}).requires_grad_();
  Tensor a = full({128, 256}, 3.0);
  Tensor y = (a * (x + 1.0)).sum();
  BOOST_TEST(y.grad_fn()->inputs[0].grad_fn()->inputs[1].impl()->storage == nullptr);
  a.requires_grad_();
  y.backward();
  BOOST_TEST(!a.grad().defined());
  BOOST_TEST(x.grad().sum().item<float>() == 3.0f * 128 * 256);
}

// Freed data read by any op throws, naming the tensor, instead of crashing: the copies of select,
// slice, cat, index_select and copy_ read it without data_ptr (a review found them segfaulting).
BOOST_AUTO_TEST_CASE(every_op_that_reads_freed_data_throws) {
  Tensor x = randn({128, 256}).requires_grad_();
  Tensor y;
  {
    Tensor h = x * 2.0;
    y = relu(h).sum();
  }
  const Tensor& h = y.grad_fn()->inputs[0].grad_fn()->inputs[0];
  BOOST_REQUIRE(h.impl()->storage == nullptr);
  auto names_it = [](const std::runtime_error& e) {
    return contains(e.what(), "[128, 256] tensor was freed") && contains(e.what(), "MulBackward0");
  };
  BOOST_CHECK_EXCEPTION(h.select(0, 1), std::runtime_error, names_it);
  BOOST_CHECK_EXCEPTION(h.slice(0, 0, 4), std::runtime_error, names_it);
  BOOST_CHECK_EXCEPTION(cat({h, h}, 0), std::runtime_error, names_it);
  BOOST_CHECK_EXCEPTION(h.index_select(0, arange(0, 4)), std::runtime_error, names_it);
  BOOST_CHECK_EXCEPTION(zeros({128, 256}).copy_(h), std::runtime_error, names_it);
  BOOST_CHECK_EXCEPTION(h.clone(), std::runtime_error, names_it);
  BOOST_CHECK_EXCEPTION(h.sum(), std::runtime_error, names_it);
}

// Only an op's result is freed: a leaf that only the graph holds keeps its data, as PyTorch's
// AccumulateGrad holds it, so a post-accumulate-grad hook reads it (a review found it freed).
BOOST_AUTO_TEST_CASE(a_leaf_only_the_graph_holds_keeps_its_data) {
  Tensor y;
  float seen = 0;
  {
    Tensor x = full({128, 256}, 0.5).requires_grad_();
    x.register_post_accumulate_grad_hook([&seen](Tensor& leaf) { seen = leaf.sum().item<float>(); });
    y = relu(x).sum();
  }
  y.backward();
  BOOST_TEST(seen == 0.5f * 128 * 256);
}

// The count of nodes holding a tensor goes back to 0 when the graph dies, however deep it is, so a
// user's handle of it is never taken for the graph's: a second handle coming and going leaves the
// data alone (with the count left too high, it freed the data the user still held).
BOOST_AUTO_TEST_CASE(the_graphs_count_of_a_tensor_returns_to_zero_when_the_graph_dies) {
  Tensor x = randn({128, 256}).requires_grad_();
  Tensor h = x * 2.0;
  {
    Tensor y = ((relu(h) + 1.0) * 3.0 + h).sum();  // h held by ReluBackward0 and by AddBackward0
    BOOST_TEST(h.impl()->graph_refs.load() == 2);
  }  // the graph dies through Node::~Node's loop
  BOOST_TEST(h.impl()->graph_refs.load() == 0);
  { Tensor second = h; }
  BOOST_TEST(h.impl()->storage != nullptr);
  BOOST_TEST(h.sum().item<float>() == (x * 2.0).sum().item<float>());
}

// relu, like PyTorch's, reads only its output: changing its input in place before backward is
// allowed, and the gradient is the one of the output as it was (d/dx sum(relu(2x)) = 2 where x > 0).
BOOST_AUTO_TEST_CASE(an_input_relu_does_not_read_may_change_before_backward) {
  Tensor x = tensor({-1.0, 0.5, 2.0}).requires_grad_();
  Tensor h = x * 2.0;
  Tensor y = relu(h).sum();
  {
    NoGradGuard no_grad;
    h.mul_(-1.0);
  }
  y.backward();
  BOOST_TEST(x.grad().to_vector<float>() == std::vector<float>({0.0f, 2.0f, 2.0f}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_SUITE_END()
