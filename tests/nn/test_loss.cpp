// Tests for the losses of nn/loss.hpp: PyTorch's values, finite differences, hand values, errors.
// The fixture tests/fixtures/loss.json comes from tools/reference/loss_reference.py (PyTorch
// 1.13.1): each case is one torch.nn.functional call with its result and the gradients w.r.t. the
// input (and a float target). Each fixture test below replays one group of cases: float32 must
// agree within 1e-5 relative, float64 within 1e-10 (plus a tiny absolute floor near 0, see
// Tolerance), inf and nan exactly. Then gradcheck of every loss in float64 (one table), the loss
// modules, and one table with every kind of bad input.
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/gradcheck.hpp"
#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "fixture.hpp"
#include "nn/loss.hpp"

namespace {

using namespace minigrad;
namespace F = minigrad::nn::functional;
using nlohmann::json;
using nn::Reduction;

const json& fixture() { return minigrad_test::read_fixture("loss.json"); }

// ---- reading the fixture ------------------------------------------------------------------------

/// A JSON number, or one of the strings "inf", "-inf", "nan".
double decode(const json& value) {
  if (value.is_number()) return value.get<double>();
  const std::string text = value.get<std::string>();
  if (text == "nan") return std::numeric_limits<double>::quiet_NaN();
  return text == "inf" ? std::numeric_limits<double>::infinity() : -std::numeric_limits<double>::infinity();
}

std::vector<double> decode_all(const json& values) {
  std::vector<double> out;
  for (const json& value : values) out.push_back(decode(value));
  return out;
}

/// The values of the script's pattern_values, recomputed from the same integer formulas.
std::vector<double> pattern_values(const std::string& pattern, int64_t numel) {
  std::vector<double> out(static_cast<size_t>(numel));
  for (int64_t i = 0; i < numel; ++i) {
    if (pattern == "grid")
      out[i] = static_cast<double>((i * 7919) % 41 - 20) * 0.375;
    else if (pattern == "bits")
      out[i] = static_cast<double>((i * 5 % 7) % 2);
    else
      out[i] = static_cast<double>((i * 7) % std::stoll(pattern.substr(std::string("classes_").size())));
  }
  return out;
}

Tensor make_tensor(const json& record, Dtype dtype, bool requires_grad = false) {
  const Shape shape = record["shape"].get<std::vector<int64_t>>();
  const std::vector<double> values = record.contains("pattern")
                                         ? pattern_values(record["pattern"], shape_numel(shape))
                                         : decode_all(record["values"]);
  return tensor(values, shape, {.dtype = dtype, .requires_grad = requires_grad});
}

Reduction reduction_of(const std::string& name) {
  if (name == "sum") return Reduction::Sum;
  return name == "none" ? Reduction::None : Reduction::Mean;
}

bool is_class_loss(const std::string& op) { return op == "cross_entropy" || op == "nll_loss"; }

/// The minigrad call a fixture case recorded.
Tensor run(const json& c, const Tensor& input, const Tensor& target) {
  const std::string op = c["op"];
  const Reduction reduction = reduction_of(c["reduction"]);
  if (op == "mse_loss") return F::mse_loss(input, target, {.reduction = reduction});
  if (op == "l1_loss") return F::l1_loss(input, target, {.reduction = reduction});
  const Tensor weight = c.contains("weight") ? make_tensor(c["weight"], input.dtype()) : Tensor();
  if (op == "cross_entropy")
    return F::cross_entropy(input, target,
                            {.weight = weight,
                             .reduction = reduction,
                             .ignore_index = c["ignore_index"],
                             .label_smoothing = c["label_smoothing"]});
  if (op == "nll_loss")
    return F::nll_loss(input, target,
                       {.weight = weight, .reduction = reduction, .ignore_index = c["ignore_index"]});
  const Tensor pos_weight = c.contains("pos_weight") ? make_tensor(c["pos_weight"], input.dtype()) : Tensor();
  return F::binary_cross_entropy_with_logits(input, target,
                                             {.reduction = reduction, .pos_weight = pos_weight});
}

// ---- comparing ------------------------------------------------------------------------------------

/// |got - want| <= rtol |want| + atol. The absolute floor (float32: about one rounding step of 1;
/// float64: 1e-14) covers results that cancel to nearly 0, where either side keeps only a few
/// digits: softmax - one_hot of a confident row, and losses like log(1 + e^-30) = 9.4e-14, which
/// PyTorch computes as -30 + (30 + log(1 + e^-30)) (float32: 0) and we compute with log1p.
struct Tolerance {
  double rtol;
  double atol;
};
Tolerance tolerance_for(Dtype dtype) {
  return dtype == kFloat32 ? Tolerance{1e-5, 1e-7} : Tolerance{1e-10, 1e-14};
}

bool close(double got, double want, Tolerance tol) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::isinf(want)) return got == want;
  return std::abs(got - want) <= tol.rtol * std::abs(want) + tol.atol;
}

/// One assertion per array, naming the first element that differs.
void check_close(const std::vector<double>& got, const std::vector<double>& want, Tolerance tol,
                 const char* what) {
  BOOST_TEST_REQUIRE(got.size() == want.size(),
                     what << ": " << got.size() << " values, PyTorch has " << want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    if (close(got[i], want[i], tol)) continue;
    BOOST_ERROR(what << "[" << i << "]: got " << got[i] << ", PyTorch " << want[i]);
    return;
  }
}

/// Runs one fixture case: the result, then backward and the gradients.
void replay(const json& c) {
  const Dtype dtype = c["dtype"] == "float32" ? kFloat32 : kFloat64;
  const Tolerance tol = tolerance_for(dtype);
  const bool class_loss = is_class_loss(c["op"]);
  Tensor input = make_tensor(c["input"], dtype, true);
  Tensor target = make_tensor(c["target"], class_loss ? kInt64 : dtype, !class_loss);

  const Tensor loss = run(c, input, target);
  BOOST_TEST(loss.dtype() == dtype);
  BOOST_TEST(loss.shape() == Shape(c["loss"]["shape"].get<std::vector<int64_t>>()));
  check_close(loss.to_vector<double>(), decode_all(c["loss"]["values"]), tol, "loss");

  if (c.contains("cotangent")) {
    loss.backward(tensor(decode_all(c["cotangent"]), loss.shape(), {.dtype = dtype}));
  } else {
    loss.backward();
  }
  BOOST_TEST_REQUIRE(input.grad().defined());
  const std::vector<double> grad_input = input.grad().to_vector<double>();
  if (c.contains("grad_input_at")) {  // large inputs: PyTorch's gradient at some elements
    std::vector<double> sampled;
    for (const json& index : c["grad_input_at"]["index"]) sampled.push_back(grad_input[index.get<size_t>()]);
    check_close(sampled, decode_all(c["grad_input_at"]["values"]), tol, "grad_input (sampled)");
  } else {
    check_close(grad_input, decode_all(c["grad_input"]), tol, "grad_input");
  }
  if (c.contains("grad_target")) {
    BOOST_TEST_REQUIRE(target.grad().defined());
    check_close(target.grad().to_vector<double>(), decode_all(c["grad_target"]), tol, "grad_target");
  }
}

/// The fixture's groups, each replayed by one test case below. A group the script gains without a
/// test case here fails every_fixture_group_has_a_test_case instead of going unchecked.
const std::set<std::string> kTestedGroups = {
    "mse_loss_reductions",
    "l1_loss_reductions",
    "cross_entropy_reductions",
    "cross_entropy_label_smoothing",
    "cross_entropy_ignore_index",
    "cross_entropy_spatial",
    "cross_entropy_unbatched",
    "cross_entropy_extremes",
    "cross_entropy_large_batch",
    "cross_entropy_class_weights",
    "cross_entropy_course_views",
    "nll_loss",
    "binary_cross_entropy_with_logits",
    "binary_cross_entropy_with_logits_extremes",
};

void replay_group(const std::string& group) {
  BOOST_TEST_REQUIRE(kTestedGroups.count(group) == 1u, "group " << group << " is not in kTestedGroups");
  int count = 0;
  for (const json& c : fixture()["cases"]) {
    if (c["group"] != group) continue;
    ++count;
    BOOST_TEST_CONTEXT("case " << c["name"].get<std::string>()) { replay(c); }
  }
  BOOST_TEST(count > 0, "no fixture case in group " << group);
}

}  // namespace

BOOST_AUTO_TEST_SUITE(loss)

// ---- against PyTorch ------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(mse_loss_matches_pytorch_for_each_reduction_and_dtype) {
  replay_group("mse_loss_reductions");
}

BOOST_AUTO_TEST_CASE(l1_loss_matches_pytorch_for_each_reduction_and_dtype) {
  replay_group("l1_loss_reductions");
}

BOOST_AUTO_TEST_CASE(cross_entropy_matches_pytorch_for_each_reduction_and_dtype) {
  replay_group("cross_entropy_reductions");
}

BOOST_AUTO_TEST_CASE(cross_entropy_with_label_smoothing_matches_pytorch) {
  replay_group("cross_entropy_label_smoothing");
}

BOOST_AUTO_TEST_CASE(cross_entropy_skips_ignored_targets_and_averages_over_the_rest_as_pytorch) {
  replay_group("cross_entropy_ignore_index");
}

BOOST_AUTO_TEST_CASE(cross_entropy_over_logits_with_extra_dims_matches_pytorch) {
  replay_group("cross_entropy_spatial");
}

BOOST_AUTO_TEST_CASE(cross_entropy_of_one_unbatched_sample_matches_pytorch) {
  replay_group("cross_entropy_unbatched");
}

BOOST_AUTO_TEST_CASE(cross_entropy_of_huge_and_infinite_logits_matches_pytorch) {
  replay_group("cross_entropy_extremes");
}

BOOST_AUTO_TEST_CASE(cross_entropy_over_100000_rows_matches_pytorch) {
  replay_group("cross_entropy_large_batch");
}

BOOST_AUTO_TEST_CASE(cross_entropy_with_class_weights_smoothing_and_ignore_index_matches_pytorch) {
  replay_group("cross_entropy_class_weights");
}

BOOST_AUTO_TEST_CASE(cross_entropy_of_course_logits_viewed_as_b_times_t_rows_matches_pytorch) {
  replay_group("cross_entropy_course_views");
}

BOOST_AUTO_TEST_CASE(nll_loss_matches_pytorch) { replay_group("nll_loss"); }

BOOST_AUTO_TEST_CASE(binary_cross_entropy_with_logits_matches_pytorch) {
  replay_group("binary_cross_entropy_with_logits");
}

BOOST_AUTO_TEST_CASE(binary_cross_entropy_with_logits_of_huge_logits_matches_pytorch) {
  replay_group("binary_cross_entropy_with_logits_extremes");
}

BOOST_AUTO_TEST_CASE(every_fixture_group_has_a_test_case) {
  std::set<std::string> groups;
  for (const json& c : fixture()["cases"]) groups.insert(c["group"].get<std::string>());
  BOOST_TEST(groups == kTestedGroups, boost::test_tools::per_element());
}

// ---- by hand ------------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(cross_entropy_of_equal_logits_is_log_of_the_class_count) {
  // softmax of equal scores is 1/C everywhere: loss log C, gradient (1/C - one_hot) / N.
  Tensor logits = zeros({2, 4}, {.requires_grad = true});
  const Tensor loss = F::cross_entropy(logits, tensor(std::vector<int64_t>{3, 0}, {2}));
  BOOST_TEST(loss.item<double>() == std::log(4.0), boost::test_tools::tolerance(1e-6));
  loss.backward();
  const std::vector<double> want = {0.125, 0.125, 0.125, -0.375, -0.375, 0.125, 0.125, 0.125};
  const std::vector<double> got = logits.grad().to_vector<double>();
  for (size_t i = 0; i < want.size(); ++i) BOOST_TEST(got[i] == want[i], boost::test_tools::tolerance(1e-6));
}

BOOST_AUTO_TEST_CASE(cross_entropy_equals_nll_loss_of_log_softmax) {
  Generator generator(3);
  const Tensor logits = randn({6, 5}, generator, {.dtype = kFloat64});
  const Tensor target = tensor(std::vector<int64_t>{4, 0, 2, -100, 1, 3}, {6});
  const double direct = F::cross_entropy(logits, target).item<double>();
  const double composed = F::nll_loss(log_softmax(logits, 1), target).item<double>();
  BOOST_TEST(direct == composed, boost::test_tools::tolerance(1e-12));
}

BOOST_AUTO_TEST_CASE(binary_cross_entropy_with_logits_of_zero_logits_is_log_2) {
  const Tensor x = zeros({3});
  BOOST_TEST(F::binary_cross_entropy_with_logits(x, tensor({0.0, 1.0, 0.5})).item<double>() == std::log(2.0),
             boost::test_tools::tolerance(1e-6));
}

BOOST_AUTO_TEST_CASE(binary_cross_entropy_with_logits_of_an_infinite_target_gives_pytorchs_infinities) {
  // torch 1.13: x = tensor([2., -2., 0., 3.]), y = tensor([inf, inf, inf, -inf]),
  // F.binary_cross_entropy_with_logits(x, y, reduction='none') == tensor([-inf, inf, nan, inf]),
  // and x.grad after .sum().backward() == tensor([-inf, -inf, -inf, inf]); we gave nan for all.
  // With pos_weight=tensor([1.]) PyTorch gives nan everywhere ((1 - 1) * inf), and so do we.
  const double inf = std::numeric_limits<double>::infinity();
  Tensor x = tensor({2.0, -2.0, 0.0, 3.0}, {.requires_grad = true});
  const Tensor y = tensor({inf, inf, inf, -inf});
  const Tensor loss = F::binary_cross_entropy_with_logits(x, y, {.reduction = Reduction::None});
  const std::vector<float> values = loss.to_vector<float>();
  BOOST_TEST(values[0] == -INFINITY);
  BOOST_TEST(values[1] == INFINITY);
  BOOST_TEST(std::isnan(values[2]));
  BOOST_TEST(values[3] == INFINITY);
  loss.sum().backward();
  BOOST_TEST(x.grad().to_vector<float>() == (std::vector<float>{-INFINITY, -INFINITY, -INFINITY, INFINITY}),
             boost::test_tools::per_element());

  const Tensor weighted =
      F::binary_cross_entropy_with_logits(x, y, {.reduction = Reduction::None, .pos_weight = ones({1})});
  for (float value : weighted.to_vector<float>()) BOOST_TEST(std::isnan(value));
}

BOOST_AUTO_TEST_CASE(loss_nodes_carry_pytorchs_names) {
  Tensor logits = zeros({2, 3}, {.requires_grad = true});
  const Tensor target = tensor(std::vector<int64_t>{0, 1}, {2});
  BOOST_TEST(F::cross_entropy(logits, target).grad_fn()->name() == "NllLossBackward0");
  BOOST_TEST(F::cross_entropy(logits, target, {.label_smoothing = 0.1}).grad_fn()->name() == "AddBackward0");
  BOOST_TEST(F::nll_loss(logits, target).grad_fn()->name() == "NllLossBackward0");
  BOOST_TEST(F::binary_cross_entropy_with_logits(logits, zeros({2, 3})).grad_fn()->name() ==
             "BinaryCrossEntropyWithLogitsBackward0");
}

// ---- finite differences (float64) --------------------------------------------------------------------

namespace {

struct GradcheckRow {
  std::string name;
  std::vector<Tensor> inputs;  // those with requires_grad are checked
  std::function<Tensor(const std::vector<Tensor>&)> f;
};

std::vector<GradcheckRow> gradcheck_rows() {
  Generator generator(11);
  auto leaf = [&](const Shape& shape) {
    return randn(shape, generator, {.dtype = kFloat64, .requires_grad = true});
  };
  auto probabilities = [&](const Shape& shape) {
    return rand(shape, generator, {.dtype = kFloat64, .requires_grad = true});
  };
  const Tensor x = leaf({4, 3}), y = leaf({4, 3}), logits = leaf({4, 5}), logits_3d = leaf({2, 3, 4});
  const Tensor probs = probabilities({4, 3});
  // l1 has a kink at input == target: keep them at least 0.5 apart.
  const Tensor away =
      tensor({{0.5, -0.5, 0.75}, {-1.0, 0.5, 0.6}, {-0.5, 0.9, -0.7}, {0.5, -0.5, 1.0}}, {.dtype = kFloat64});
  Tensor y_away = add(x.detach(), away);
  y_away.requires_grad_();
  const Tensor classes = tensor(std::vector<int64_t>{4, 0, 2, 1}, {4});
  const Tensor classes_ignored = tensor(std::vector<int64_t>{4, -100, 2, 1}, {4});
  const Tensor classes_3d = tensor(std::vector<int64_t>{0, 2, 1, 1, 2, 2, 0, 1}, {2, 4});
  const Tensor pos_weight = tensor({0.5, 2.0, 3.0}, {.dtype = kFloat64});
  const Tensor class_weight = tensor({0.5, 2.0, 1.0, 0.25, 3.0}, {.dtype = kFloat64});

  std::vector<GradcheckRow> rows;
  for (Reduction r : {Reduction::Mean, Reduction::Sum, Reduction::None}) {
    const std::string suffix = r == Reduction::Mean ? "mean" : (r == Reduction::Sum ? "sum" : "none");
    rows.push_back({"mse_loss_" + suffix, {x, y}, [r](auto& in) {
                      return F::mse_loss(in[0], in[1], {.reduction = r});
                    }});
    rows.push_back({"l1_loss_" + suffix, {x, y_away}, [r](auto& in) {
                      return F::l1_loss(in[0], in[1], {.reduction = r});
                    }});
    rows.push_back({"cross_entropy_" + suffix, {logits}, [=](auto& in) {
                      return F::cross_entropy(in[0], classes, {.reduction = r});
                    }});
    rows.push_back({"cross_entropy_smoothing_ignore_" + suffix, {logits}, [=](auto& in) {
                      return F::cross_entropy(in[0], classes_ignored,
                                              {.reduction = r, .label_smoothing = 0.2});
                    }});
    rows.push_back({"cross_entropy_3d_" + suffix, {logits_3d}, [=](auto& in) {
                      return F::cross_entropy(in[0], classes_3d, {.reduction = r});
                    }});
    rows.push_back({"nll_loss_ignore_" + suffix, {logits}, [=](auto& in) {
                      return F::nll_loss(in[0], classes_ignored, {.reduction = r});
                    }});
    rows.push_back({"cross_entropy_weight_smoothing_ignore_" + suffix, {logits}, [=](auto& in) {
                      return F::cross_entropy(
                          in[0], classes_ignored,
                          {.weight = class_weight, .reduction = r, .label_smoothing = 0.2});
                    }});
    rows.push_back({"nll_loss_weight_" + suffix, {logits}, [=](auto& in) {
                      return F::nll_loss(in[0], classes_ignored, {.weight = class_weight, .reduction = r});
                    }});
    rows.push_back({"binary_cross_entropy_with_logits_" + suffix, {x, probs}, [r](auto& in) {
                      return F::binary_cross_entropy_with_logits(in[0], in[1], {.reduction = r});
                    }});
    rows.push_back({"binary_cross_entropy_with_logits_pos_weight_" + suffix, {x, probs}, [=](auto& in) {
                      return F::binary_cross_entropy_with_logits(in[0], in[1],
                                                                 {.reduction = r, .pos_weight = pos_weight});
                    }});
  }
  rows.push_back({"cross_entropy_unbatched", {leaf({5})}, [](auto& in) {
                    return F::cross_entropy(in[0], scalar_tensor(3, {.dtype = kInt64}));
                  }});
  return rows;
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_loss_backward_matches_finite_differences) {
  for (const GradcheckRow& row : gradcheck_rows()) {
    BOOST_TEST_CONTEXT("row " << row.name) { BOOST_CHECK_NO_THROW(gradcheck(row.f, row.inputs)); }
  }
}

// ---- loss modules -------------------------------------------------------------------------------------

namespace {

/// The fixture case of this name, run through a module instead of the function.
void check_module_against_case(nn::Loss& module, const std::string& name) {
  for (const json& c : fixture()["cases"]) {
    if (c["name"] != name) continue;
    const Dtype dtype = c["dtype"] == "float32" ? kFloat32 : kFloat64;
    const Tensor input = make_tensor(c["input"], dtype);
    const Tensor target = make_tensor(c["target"], is_class_loss(c["op"]) ? kInt64 : dtype);
    check_close(module(input, target).to_vector<double>(), decode_all(c["loss"]["values"]),
                tolerance_for(dtype), name.c_str());
    return;
  }
  BOOST_ERROR("no fixture case " << name);
}

}  // namespace

BOOST_AUTO_TEST_CASE(loss_modules_apply_their_options_as_pytorchs_modules) {
  nn::MSELoss mse({.reduction = Reduction::Sum});
  nn::L1Loss l1({.reduction = Reduction::None});
  nn::CrossEntropyLoss ce({.reduction = Reduction::Sum, .ignore_index = 2, .label_smoothing = 0.1});
  nn::NLLLoss nll({.reduction = Reduction::None});
  nn::BCEWithLogitsLoss bce({.pos_weight = tensor({0.5, 2.0, 3.0})});
  check_module_against_case(mse, "mse_loss_float32_sum");
  check_module_against_case(l1, "l1_loss_float64_none");
  check_module_against_case(ce, "ce_ignore_2_smoothing_float32_sum");
  check_module_against_case(nll, "nll_float32_none");
  check_module_against_case(bce, "bce_pos_weight_float32_mean");
}

BOOST_AUTO_TEST_CASE(loss_modules_print_as_pytorch) {
  const std::vector<std::pair<std::string, std::string>> rows = {
      {to_string(nn::MSELoss()), "MSELoss()"},
      {to_string(nn::L1Loss()), "L1Loss()"},
      {to_string(nn::CrossEntropyLoss({.label_smoothing = 0.1})), "CrossEntropyLoss()"},
      {to_string(nn::NLLLoss()), "NLLLoss()"},
      {to_string(nn::BCEWithLogitsLoss({.pos_weight = ones({3})})), "BCEWithLogitsLoss()"},
  };
  for (const auto& [got, want] : rows) BOOST_TEST(got == want);
}

BOOST_AUTO_TEST_CASE(cross_entropy_and_nll_loss_modules_keep_a_class_weight_as_a_buffer) {
  const Tensor weight = tensor({0.5, 2.0, 1.0, 0.25, 3.0});
  nn::CrossEntropyLoss ce({.weight = weight, .reduction = Reduction::Sum, .label_smoothing = 0.2});
  check_module_against_case(ce, "ce_weight_smoothing_float32_sum");
  nn::NLLLoss nll({.weight = weight, .reduction = Reduction::None});
  check_module_against_case(nll, "nll_weight_float32_none");
  for (nn::Loss* module : std::vector<nn::Loss*>{&ce, &nll}) {
    const nn::StateDict state = module->state_dict();
    BOOST_TEST_REQUIRE(state.size() == 1u);
    BOOST_TEST(state[0].first == "weight");  // as PyTorch's _WeightedLoss registers it
    BOOST_TEST(state[0].second.equal(weight));
  }
  BOOST_TEST(nn::CrossEntropyLoss().state_dict().empty());
}

BOOST_AUTO_TEST_CASE(cross_entropy_of_b_t_c_logits_viewed_as_rows_equals_the_spatial_form) {
  // [B, T, C] logits as [B*T, C] rows (the course's view) against the same numbers as [B, C, T]
  // (classes on dim 1, positions on dim 2), which goes through the other layout of the lanes.
  Generator generator(5);
  Tensor logits = randn({2, 3, 4}, generator, {.dtype = kFloat64}).requires_grad_();
  const Tensor targets = tensor(std::vector<int64_t>{1, 3, -100, 0, 2, 2}, {2, 3});
  const F::Reduction none = Reduction::None;
  for (double eps : {0.0, 0.1}) {
    const Tensor rows =
        F::cross_entropy(logits.view({6, 4}), targets.view({6}), {.reduction = none, .label_smoothing = eps});
    const Tensor spatial =
        F::cross_entropy(logits.permute({0, 2, 1}), targets, {.reduction = none, .label_smoothing = eps});
    BOOST_TEST(rows.view({2, 3}).allclose(spatial, 1e-12, 1e-12));
    rows.sum().backward();
    const Tensor grad_rows = logits.grad().clone();
    logits.set_grad(Tensor());
    spatial.sum().backward();
    BOOST_TEST(grad_rows.allclose(logits.grad(), 1e-12, 1e-12));
    BOOST_TEST(logits.grad().select(0, 0).select(0, 2).abs().sum().item<double>() ==
               0.0);  // ignored position
    logits.set_grad(Tensor());
  }
}

BOOST_AUTO_TEST_CASE(bce_with_logits_loss_keeps_pos_weight_as_a_buffer) {
  const Tensor pos_weight = tensor({2.0, 3.0});
  nn::BCEWithLogitsLoss bce({.pos_weight = pos_weight});
  const nn::StateDict state = bce.state_dict();
  BOOST_TEST_REQUIRE(state.size() == 1u);
  BOOST_TEST(state[0].first == "pos_weight");
  BOOST_TEST(state[0].second.to_vector<double>() == pos_weight.to_vector<double>(),
             boost::test_tools::per_element());
  BOOST_TEST(bce.parameters().empty());
}

// ---- bad input: one row per kind of mistake -----------------------------------------------------------

namespace {

struct ErrorRow {
  std::string name;
  std::function<void()> call;
  bool out_of_range;    // std::out_of_range, else std::invalid_argument
  std::string message;  // how what() starts
};

Tensor labels(std::vector<int64_t> values) {
  const auto n = static_cast<int64_t>(values.size());
  return tensor(values, {n});
}

std::vector<ErrorRow> error_rows() {
  const Tensor x = zeros({32, 10}), x64 = zeros({32, 10}, {.dtype = kFloat64}), logits = zeros({4, 5});
  const Tensor ints = zeros({32, 10}, {.dtype = kInt64});
  return {
      {"mse_loss_refuses_a_target_of_another_shape",
       [=] {
         F::mse_loss(x, zeros({32, 1}));
       },
       false, "mse_loss: input [32, 10] and target [32, 1] have different shapes"},
      {"l1_loss_refuses_a_target_of_another_shape",
       [=] {
         F::l1_loss(zeros({4}), zeros({4, 1}));
       },
       false, "l1_loss: input [4] and target [4, 1] have different shapes"},
      {"bce_refuses_a_target_of_another_shape", [=] { F::binary_cross_entropy_with_logits(x, zeros({10})); },
       false, "binary_cross_entropy_with_logits: input [32, 10] and target [10] have different shapes"},
      {"mse_loss_refuses_an_int64_target", [=] { F::mse_loss(x, ints); }, false,
       "mse_loss: input is float32 but target is int64"},
      {"bce_refuses_a_target_of_another_float_dtype", [=] { F::binary_cross_entropy_with_logits(x, x64); },
       false, "binary_cross_entropy_with_logits: input is float32 but target is float64"},
      {"l1_loss_refuses_an_int64_input", [=] { F::l1_loss(ints, ints); }, false,
       "l1_loss: input must be float32 or float64, got int64"},
      {"mse_loss_refuses_an_undefined_input", [=] { F::mse_loss(Tensor(), x); }, false,
       "mse_loss: got an undefined tensor"},
      {"cross_entropy_refuses_a_class_index_above_the_classes",
       [=] {
         F::cross_entropy(logits, labels({0, 7, 1, 2}));
       },
       true, "cross_entropy: target 7 is out of range for 5 classes"},
      {"cross_entropy_refuses_a_negative_class_index",
       [=] {
         F::cross_entropy(logits, labels({0, -1, 1, 2}));
       },
       true, "cross_entropy: target -1 is out of range for 5 classes"},
      {"cross_entropy_refuses_minus_100_when_another_index_is_ignored",
       [=] {
         F::cross_entropy(logits, labels({0, -100, 1, 2}), {.ignore_index = 0});
       },
       true, "cross_entropy: target -100 is out of range for 5 classes"},
      {"cross_entropy_refuses_float_targets", [=] { F::cross_entropy(logits, zeros({4})); }, false,
       "cross_entropy: target must hold int64 class indices, got float32"},
      {"cross_entropy_refuses_int64_logits",
       [=] {
         F::cross_entropy(zeros({4, 5}, {.dtype = kInt64}), labels({0, 1, 2, 3}));
       },
       false, "cross_entropy: input must be float32 or float64 scores, got int64"},
      {"cross_entropy_refuses_a_column_of_targets",
       [=] {
         F::cross_entropy(logits, tensor(std::vector<int64_t>{0, 1, 2, 3}, {4, 1}));
       },
       false,
       "cross_entropy: input [4, 5] needs a target of shape [4] (one class index per position), got [4, 1]"},
      {"cross_entropy_refuses_a_batch_of_targets_for_one_sample",
       [=] { F::cross_entropy(zeros({5}), labels({1})); }, false,
       "cross_entropy: input [5] needs a target of shape []"},
      {"cross_entropy_refuses_targets_of_the_wrong_extra_dims",
       [=] {
         F::cross_entropy(zeros({2, 3, 4}), tensor(std::vector<int64_t>(6, 0), {2, 3}));
       },
       false, "cross_entropy: input [2, 3, 4] needs a target of shape [2, 4]"},
      {"cross_entropy_refuses_a_0d_input", [=] { F::cross_entropy(zeros({}), labels({0})); }, false,
       "cross_entropy: input of shape [] has no class dim"},
      {"cross_entropy_refuses_label_smoothing_above_1",
       [=] {
         F::cross_entropy(logits, labels({0, 1, 2, 3}), {.label_smoothing = 1.5});
       },
       false, "cross_entropy: label_smoothing must be in [0, 1], got 1.5"},
      {"cross_entropy_refuses_negative_label_smoothing",
       [=] {
         F::cross_entropy(logits, labels({0, 1, 2, 3}), {.label_smoothing = -0.1});
       },
       false, "cross_entropy: label_smoothing must be in [0, 1], got -0.1"},
      {"cross_entropy_refuses_a_class_weight_of_the_wrong_size",
       [=] {
         F::cross_entropy(logits, labels({0, 1, 2, 3}), {.weight = ones({3})});
       },
       false, "cross_entropy: weight must hold one number per class, shape [5], got [3]"},
      {"cross_entropy_refuses_a_class_weight_of_another_dtype",
       [=] {
         F::cross_entropy(logits, labels({0, 1, 2, 3}), {.weight = ones({5}, {.dtype = kFloat64})});
       },
       false, "cross_entropy: weight is float64 but input is float32"},
      {"nll_loss_refuses_a_class_weight_that_requires_grad",
       [=] {
         F::nll_loss(logits, labels({0, 1, 2, 3}), {.weight = ones({5}, {.requires_grad = true})});
       },
       false, "nll_loss: weight cannot require grad"},
      {"nll_loss_refuses_a_class_index_out_of_range",
       [=] {
         F::nll_loss(logits, labels({0, 1, 5, 2}));
       },
       true, "nll_loss: target 5 is out of range for 5 classes"},
      {"nll_loss_refuses_a_target_of_the_wrong_rank", [=] { F::nll_loss(logits, labels({0})); }, false,
       "nll_loss: input [4, 5] needs a target of shape [4]"},
      {"nll_loss_refuses_float_targets", [=] { F::nll_loss(logits, zeros({4}, {.dtype = kFloat64})); }, false,
       "nll_loss: target must hold int64 class indices, got float64"},
      {"bce_refuses_a_pos_weight_that_does_not_broadcast",
       [=] { F::binary_cross_entropy_with_logits(x, x, {.pos_weight = ones({32})}); }, false,
       "binary_cross_entropy_with_logits: pos_weight [32] does not broadcast to the input's shape [32, 10]"},
      {"bce_refuses_a_pos_weight_that_requires_grad",
       [=] {
         F::binary_cross_entropy_with_logits(x, x, {.pos_weight = ones({10}, {.requires_grad = true})});
       },
       false, "binary_cross_entropy_with_logits: pos_weight cannot require grad"},
      {"bce_refuses_a_pos_weight_of_another_dtype",
       [=] { F::binary_cross_entropy_with_logits(x, x, {.pos_weight = ones({10}, {.dtype = kFloat64})}); },
       false, "binary_cross_entropy_with_logits: pos_weight is float64 but input is float32"},
      {"cross_entropy_loss_module_refuses_label_smoothing_above_1",
       [=] { nn::CrossEntropyLoss({.label_smoothing = 2.0}); }, false,
       "CrossEntropyLoss: label_smoothing must be in [0, 1], got 2"},
  };
}

}  // namespace

BOOST_AUTO_TEST_CASE(every_kind_of_bad_input_throws_a_message_naming_the_op_and_shapes) {
  for (const ErrorRow& row : error_rows()) {
    BOOST_TEST_CONTEXT("row " << row.name) {
      try {
        row.call();
        BOOST_ERROR("no exception");
      } catch (const std::out_of_range& e) {
        BOOST_TEST(row.out_of_range, "std::out_of_range: " << e.what());
        BOOST_TEST(std::string(e.what()).starts_with(row.message), e.what());
      } catch (const std::invalid_argument& e) {
        BOOST_TEST(!row.out_of_range, "std::invalid_argument: " << e.what());
        BOOST_TEST(std::string(e.what()).starts_with(row.message), e.what());
      }
    }
  }
}

// Regression: the backward read the caller's pos_weight, so changing it between forward and
// backward changed the gradient. By hand, x = 0, y = 1, p = 2: grad_x = sigmoid(x) (p y + 1 - y) - p y
// = 0.5 * 2 - 2 = -1, whatever pos_weight holds afterwards.
BOOST_AUTO_TEST_CASE(bce_with_logits_backward_uses_the_pos_weight_of_its_forward) {
  Tensor x = zeros({1}).requires_grad_();
  Tensor pos_weight = full({1}, 2.0);
  Tensor loss = F::binary_cross_entropy_with_logits(x, ones({1}), {.pos_weight = pos_weight});
  pos_weight.fill_(100.0);
  loss.backward();
  BOOST_TEST(x.grad().item<double>() == -1.0, boost::test_tools::tolerance(1e-6));
}

// Regression: x = inf with y = 0 gave nan (inf - inf * 0) where PyTorch gives inf; x = -inf with y = 1
// gave inf where PyTorch gives nan (its (1 - y) x is 0 * -inf). Values from PyTorch 1.13.
BOOST_AUTO_TEST_CASE(bce_with_logits_at_infinite_logits_matches_pytorch) {
  const std::vector<float> loss =
      F::binary_cross_entropy_with_logits(tensor({INFINITY, -INFINITY}), tensor({0.0, 1.0}),
                                          {.reduction = nn::Reduction::None})
          .to_vector<float>();
  BOOST_TEST(loss[0] == INFINITY);
  BOOST_TEST(std::isnan(loss[1]));
}

// Regression: a summed loss beyond float32's range threw "fill_: value 4e+38 cannot be converted"
// (its total went through scalar_tensor); PyTorch 1.13 gives tensor(inf) for each of these.
BOOST_AUTO_TEST_CASE(a_summed_loss_beyond_float32s_range_is_inf_as_pytorchs) {
  const Tensor targets = tensor(std::vector<int64_t>{1, 1}, {2});
  const nn::Reduction sum = nn::Reduction::Sum;
  BOOST_TEST(
      F::cross_entropy(tensor({{0.0, -2e38}, {0.0, -2e38}}), targets, {.reduction = sum}).item<double>() ==
      INFINITY);
  BOOST_TEST(
      F::nll_loss(tensor({{-3e38, -3e38}, {-3e38, -3e38}}), targets, {.reduction = sum}).item<double>() ==
      INFINITY);
  BOOST_TEST(
      F::binary_cross_entropy_with_logits(tensor({-3e38, -3e38}), tensor({1.0, 1.0}), {.reduction = sum})
          .item<double>() == INFINITY);
}

BOOST_AUTO_TEST_CASE(a_loss_module_called_with_one_tensor_throws_logic_error) {
  nn::MSELoss mse;
  nn::Module& module = mse;
  BOOST_CHECK_EXCEPTION(module.forward(zeros({2})), std::logic_error, [](const std::logic_error& e) {
    return std::string(e.what()) == "a loss compares two tensors; call it as loss(input, target)";
  });
}

// Regression: through Module::operator() the message named the module twice,
// "(MSELoss): MSELoss: a loss compares two tensors; ...".
BOOST_AUTO_TEST_CASE(a_loss_module_called_with_one_tensor_names_itself_once) {
  nn::MSELoss mse;
  nn::Module& module = mse;
  BOOST_CHECK_EXCEPTION(module(zeros({2})), std::logic_error, [](const std::logic_error& e) {
    return std::string(e.what()) == "(MSELoss): a loss compares two tensors; call it as loss(input, target)";
  });
}

BOOST_AUTO_TEST_SUITE_END()
