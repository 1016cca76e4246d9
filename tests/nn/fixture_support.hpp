// Shared by the nn tests: reading the PyTorch fixtures of tools/reference/nn_reference.py and
// comparing tensors with them element by element, naming the worst element on failure.
// Tolerances are chosen per call: float32 values within 1e-5 or 1e-6, float64 within 1e-10.
#pragma once

#include <boost/test/unit_test.hpp>
#include <cmath>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/tensor.hpp"
#include "fixture.hpp"

namespace nn_test {

using nlohmann::json;

/// tests/fixtures/<name>, parsed once per test executable.
inline const json& fixture(const std::string& name) { return minigrad_test::read_fixture(name); }

/// The fixture's flat list of numbers ("nan", "inf" and "-inf" included, see fixture_number).
inline std::vector<double> numbers(const json& values) {
  std::vector<double> out;
  for (const json& value : values) out.push_back(minigrad_test::fixture_number(value));
  return out;
}

/// A tensor of `shape` holding the fixture's flat list of numbers.
inline minigrad::Tensor from_json(const json& values, const minigrad::Shape& shape,
                                  minigrad::Dtype dtype = minigrad::kFloat32) {
  return minigrad::tensor(numbers(values), shape, {.dtype = dtype});
}

/// |got[i] - expected[i]| <= atol + rtol * |expected[i]| for every i; one assertion per call,
/// naming the worst element. `what` says which tensor is compared.
inline void check_close(const std::vector<double>& got, const json& expected, double atol,
                        const std::string& what, double rtol = 0.0) {
  BOOST_TEST_REQUIRE(got.size() == expected.size(),
                     what << ": " << got.size() << " values, PyTorch has " << expected.size());
  if (got.empty()) return;
  double worst = 0.0;
  size_t worst_index = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    const double want = minigrad_test::fixture_number(expected[i]);
    if (std::isnan(want) && std::isnan(got[i])) continue;  // nan where PyTorch has nan
    const double excess =
        std::isinf(want) && got[i] == want ? 0.0 : std::abs(got[i] - want) - (atol + rtol * std::abs(want));
    if (!(excess <= worst)) {  // also catches NaN
      worst = excess;
      worst_index = i;
    }
  }
  BOOST_TEST(worst <= 0.0, what << ": element " << worst_index << " is " << got[worst_index]
                                << ", PyTorch has " << expected[worst_index]);
}

inline void check_close(const minigrad::Tensor& got, const json& expected, double atol,
                        const std::string& what, double rtol = 0.0) {
  BOOST_TEST_REQUIRE(got.defined(), what << " is undefined");
  check_close(got.to_vector<double>(), expected, atol, what, rtol);
}

/// Runs f, which must throw Exception, and checks that the message contains every fragment.
template <typename Exception, typename F>
void check_throws(F&& f, const std::vector<std::string>& fragments) {
  try {
    f();
  } catch (const Exception& error) {
    const std::string message = error.what();
    for (const std::string& fragment : fragments)
      BOOST_TEST(message.find(fragment) != std::string::npos, "\"" << fragment << "\" not in: " << message);
    return;
  } catch (const std::exception& error) {
    BOOST_ERROR("threw the wrong exception type: " << error.what());
    return;
  }
  BOOST_ERROR("did not throw; expected a message with \"" << (fragments.empty() ? "" : fragments[0]) << "\"");
}

}  // namespace nn_test
