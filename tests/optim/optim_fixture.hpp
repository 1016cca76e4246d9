// Helpers shared by the optim tests: reading tests/fixtures/optim.json (made by
// tools/reference/optim_reference.py from PyTorch 1.13), building parameters, gradients and
// optimizers from a fixture case, replaying its steps, and comparing with PyTorch's numbers.
#pragma once

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <fstream>
#include <functional>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "fixture.hpp"
#include "optim/adam.hpp"
#include "optim/sgd.hpp"

namespace optim_test {

using minigrad::Dtype;
using minigrad::Shape;
using minigrad::Tensor;
using nlohmann::json;
namespace optim = minigrad::optim;

// Tolerances, as torch.allclose: |got - expected| <= atol + rtol * |expected|.
// Results may differ from PyTorch's by a rounding here and there: PyTorch's kernels fuse
// `a + alpha * b` into one multiply-add (one rounding instead of two), and clip_grad_norm_ sums
// in another order, so a value can land one step of its dtype (6e-8 of it in float32) away.
// Over every fixture case the worst difference was 0.45 of the float32 tolerance below and 0.07
// of the float64 one; an error in a formula shows up thousands of times larger.
struct Tolerance {
  double rtol;
  double atol;
};
constexpr Tolerance kFloat32Tolerance = {.rtol = 3e-7, .atol = 3e-8};
constexpr Tolerance kFloat64Tolerance = {.rtol = 1e-14, .atol = 1e-16};

inline const json& fixture() { return minigrad_test::read_fixture("optim.json"); }

// The case called `name` in the fixture's list `section` ("optimizers", "schedulers", ...).
inline const json& find_case(const std::string& section, const std::string& name) {
  for (const json& c : fixture()[section]) {
    if (c["name"] == name) return c;
  }
  throw std::runtime_error("no case named " + name + " in optim.json's " + section);
}

inline Dtype dtype_named(const std::string& name) {
  return name == "float64" ? minigrad::kFloat64 : minigrad::kFloat32;
}

// Every element within the dtype's tolerance of PyTorch's; a failure names the worst element.
inline void check_close(const std::vector<double>& got, Dtype dtype, const json& expected,
                        const std::string& what) {
  const Tolerance tolerance = dtype == minigrad::kFloat64 ? kFloat64Tolerance : kFloat32Tolerance;
  BOOST_TEST_REQUIRE(got.size() == expected.size(),
                     what << ": " << got.size() << " values, PyTorch has " << expected.size());
  double worst = 0;
  size_t worst_index = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double want = expected[i].get<double>();
    const double ratio = std::abs(got[i] - want) / (tolerance.atol + tolerance.rtol * std::abs(want));
    if (!(ratio <= worst)) {  // also catches NaN
      worst = ratio;
      worst_index = i;
    }
  }
  BOOST_TEST(worst <= 1.0, what << " element " << worst_index << ": got " << got[worst_index] << ", PyTorch "
                                << expected[worst_index] << " (" << worst << " times the tolerance)");
}

inline void check_close(const Tensor& got, const json& expected, const std::string& what) {
  check_close(got.to_vector<double>(), got.dtype(), expected, what);
}

inline std::vector<Tensor> make_params(const json& c) {
  std::vector<Tensor> params;
  for (size_t i = 0; i < c["shapes"].size(); ++i) {
    params.push_back(minigrad::tensor(c["initial"][i].get<std::vector<double>>(), c["shapes"][i].get<Shape>(),
                                      {.dtype = dtype_named(c["dtype"]), .requires_grad = true}));
  }
  return params;
}

// Gives each parameter the recorded gradient of one step; null means no gradient that step.
inline void set_grads(const std::vector<Tensor>& params, const json& grads) {
  for (size_t i = 0; i < params.size(); ++i) {
    Tensor param = params[i];
    if (grads[i].is_null()) {
      param.set_grad(Tensor());
    } else {
      param.set_grad(
          minigrad::tensor(grads[i].get<std::vector<double>>(), param.shape(), {.dtype = param.dtype()}));
    }
  }
}

inline std::unique_ptr<optim::Optimizer> make_optimizer(const json& c, const std::vector<Tensor>& params) {
  const json& o = c["options"];
  const std::string kind = c["optimizer"];
  if (kind == "SGD") {
    return std::make_unique<optim::SGD>(params,
                                        optim::SGDOptions{.lr = o["lr"].get<double>(),
                                                          .momentum = o["momentum"].get<double>(),
                                                          .dampening = o["dampening"].get<double>(),
                                                          .weight_decay = o["weight_decay"].get<double>(),
                                                          .nesterov = o["nesterov"].get<bool>()});
  }
  const std::pair<double, double> betas = {o["betas"][0].get<double>(), o["betas"][1].get<double>()};
  if (kind == "Adam") {
    return std::make_unique<optim::Adam>(params,
                                         optim::AdamOptions{.lr = o["lr"].get<double>(),
                                                            .betas = betas,
                                                            .eps = o["eps"].get<double>(),
                                                            .weight_decay = o["weight_decay"].get<double>(),
                                                            .amsgrad = o["amsgrad"].get<bool>()});
  }
  if (kind != "AdamW") throw std::runtime_error("unknown optimizer " + kind + " in optim.json");
  return std::make_unique<optim::AdamW>(params,
                                        optim::AdamWOptions{.lr = o["lr"].get<double>(),
                                                            .betas = betas,
                                                            .eps = o["eps"].get<double>(),
                                                            .weight_decay = o["weight_decay"].get<double>(),
                                                            .amsgrad = o["amsgrad"].get<bool>()});
}

// Gives `params` the gradients of steps first..last-1 and steps `optimizer` after each.
inline void replay(const json& c, std::vector<Tensor>& params, optim::Optimizer& optimizer, size_t first,
                   size_t last) {
  for (size_t step = first; step < last; ++step) {
    set_grads(params, c["grads"][step]);
    optimizer.step();
  }
}

// Throws std::invalid_argument with exactly this message, or the test fails.
inline void check_throws(const std::function<void()>& f, const std::string& message) {
  try {
    f();
    BOOST_ERROR("no exception; expected: " << message);
  } catch (const std::invalid_argument& e) {
    BOOST_TEST(std::string(e.what()) == message);
  }
}

// A float32 leaf that requires grad, filled with `value`.
inline Tensor parameter(const Shape& shape, double value = 0.5) {
  return minigrad::full(shape, value, {.requires_grad = true});
}

}  // namespace optim_test
