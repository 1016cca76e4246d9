// The data sets of datasets.hpp. The real ones are a CSV table split into features and class;
// the toy ones are a formula evaluated in double and rounded to float32, plus noise drawn from
// the Generator in the order the header states (a PyTorch script replays the same draws).
#include "data/datasets.hpp"

#include <cmath>
#include <numbers>
#include <stdexcept>
#include <vector>

#include "autograd/op_support.hpp"
#include "data/csv.hpp"

namespace minigrad::data {

using minigrad::detail::check;

namespace {

/// numpy.linspace(start, end, count)[i]: count evenly spaced values from start to end inclusive.
double linspace(double start, double end, int64_t count, int64_t i) {
  if (count == 1) return start;
  return start + (end - start) * static_cast<double>(i) / static_cast<double>(count - 1);
}

/// Splits a table [N, D + 1] (D features, then the class) into x [N, D] float32 and y [N] int64,
/// checking that every class is an integer 0..classes-1.
Examples split_features_and_class(const Tensor& table, int64_t features, int64_t classes,
                                  const std::string& path, const char* op) {
  const int64_t columns = table.size(1);
  check<std::runtime_error>(columns == features + 1, op, ": ", path, " has ", columns, " columns, expected ",
                            features + 1, " (", features, " features, then the class)");
  const int64_t n = table.size(0);
  Tensor x = minigrad::detail::new_tensor({n, features}, kFloat32);
  Tensor y = minigrad::detail::new_tensor({n}, kInt64);

  const double* values = table.data_ptr<double>();
  float* xs = x.data_ptr<float>();
  int64_t* ys = y.data_ptr<int64_t>();
  for (int64_t row = 0; row < n; ++row) {
    for (int64_t d = 0; d < features; ++d) {
      xs[row * features + d] = static_cast<float>(values[row * columns + d]);
    }
    const double label = values[row * columns + features];
    check<std::runtime_error>(
        label >= 0 && label < static_cast<double>(classes) && label == std::floor(label), op, ": ", path,
        ": data row ", row + 1, " has class ", label, ", expected an integer 0..", classes - 1);
    ys[row] = static_cast<int64_t>(label);
  }
  return {x, y};
}

/// values[k] += float(noise) * z[k] for k < count, z = randn([count]) in float32 from the generator.
void add_noise(float* values, int64_t count, double noise, Generator& generator) {
  std::vector<float> z(static_cast<size_t>(count));
  generator.normal(z.data(), count, 0.0, 1.0);
  const auto scale = static_cast<float>(noise);
  for (int64_t k = 0; k < count; ++k) {
    values[k] = values[k] + scale * z[k];
  }
}

}  // namespace

// ---- real data sets ----------------------------------------------------------------------------

Examples load_iris(const std::string& path) {
  const Tensor table = read_csv(path, {.skip_header = true});  // header: 150,4,setosa,versicolor,virginica
  return split_features_and_class(table, 4, 3, path, "load_iris");
}

Examples load_digits(const std::string& path) {
  const Tensor table = read_csv(path);
  return split_features_and_class(table, 64, 10, path, "load_digits");
}

// ---- toy data sets -----------------------------------------------------------------------------

Examples make_moons(int64_t n, double noise, Generator& generator) {
  check(n >= 1, "make_moons: n must be at least 1, got ", n);
  check(noise >= 0.0, "make_moons: noise must be non-negative, got ", noise);
  const int64_t n_out = n / 2;
  const int64_t n_in = n - n_out;
  Tensor x = minigrad::detail::new_tensor({n, 2}, kFloat32);
  Tensor y = minigrad::detail::new_tensor({n}, kInt64);
  float* xs = x.data_ptr<float>();
  int64_t* ys = y.data_ptr<int64_t>();

  for (int64_t i = 0; i < n_out; ++i) {  // upper moon, class 0
    const double t = linspace(0.0, std::numbers::pi, n_out, i);
    xs[2 * i] = static_cast<float>(std::cos(t));
    xs[2 * i + 1] = static_cast<float>(std::sin(t));
    ys[i] = 0;
  }
  for (int64_t i = 0; i < n_in; ++i) {  // lower moon, class 1, shifted right and down
    const int64_t row = n_out + i;
    const double t = linspace(0.0, std::numbers::pi, n_in, i);
    xs[2 * row] = static_cast<float>(1.0 - std::cos(t));
    xs[2 * row + 1] = static_cast<float>(1.0 - std::sin(t) - 0.5);
    ys[row] = 1;
  }

  add_noise(xs, 2 * n, noise, generator);
  return {x, y};
}

Examples make_spiral(int64_t n_per_class, int64_t n_classes, double noise, Generator& generator) {
  check(n_per_class >= 1, "make_spiral: n_per_class must be at least 1, got ", n_per_class);
  check(n_classes >= 1, "make_spiral: n_classes must be at least 1, got ", n_classes);
  check(noise >= 0.0, "make_spiral: noise must be non-negative, got ", noise);
  const int64_t n = n_per_class * n_classes;
  Tensor x = minigrad::detail::new_tensor({n, 2}, kFloat32);
  Tensor y = minigrad::detail::new_tensor({n}, kInt64);
  float* xs = x.data_ptr<float>();
  int64_t* ys = y.data_ptr<int64_t>();

  std::vector<float> z(static_cast<size_t>(n_per_class));
  for (int64_t j = 0; j < n_classes; ++j) {
    generator.normal(z.data(), n_per_class, 0.0, 1.0);  // jitter of the angle, one draw per class
    for (int64_t i = 0; i < n_per_class; ++i) {
      const int64_t row = j * n_per_class + i;
      const double r = linspace(0.0, 1.0, n_per_class, i);  // from the centre outwards
      const double t =
          linspace(4.0 * static_cast<double>(j), 4.0 * static_cast<double>(j) + 4.0, n_per_class, i) +
          noise * static_cast<double>(z[i]);
      xs[2 * row] = static_cast<float>(r * std::sin(t));
      xs[2 * row + 1] = static_cast<float>(r * std::cos(t));
      ys[row] = j;
    }
  }
  return {x, y};
}

Examples make_regression(int64_t n, double noise, Generator& generator) {
  check(n >= 1, "make_regression: n must be at least 1, got ", n);
  check(noise >= 0.0, "make_regression: noise must be non-negative, got ", noise);
  Tensor x = minigrad::detail::new_tensor({n, 1}, kFloat32);
  Tensor y = minigrad::detail::new_tensor({n, 1}, kFloat32);
  float* xs = x.data_ptr<float>();
  float* ys = y.data_ptr<float>();

  generator.uniform(xs, n, -3.0, 3.0);
  for (int64_t i = 0; i < n; ++i) {
    ys[i] = static_cast<float>(std::sin(static_cast<double>(xs[i])));
  }
  add_noise(ys, n, noise, generator);
  return {x, y};
}

Examples teacher_student(const std::function<Tensor(const Tensor&)>& teacher, const Shape& input_shape,
                         Generator& generator) {
  check(!input_shape.empty(), "teacher_student: input_shape must have a first dimension (the examples), got ",
        input_shape);
  Tensor x = randn(input_shape, generator);
  Tensor y;
  {
    NoGradGuard no_grad;  // the targets are data: no graph back into the teacher
    y = teacher(x);
  }
  check(y.defined(), "teacher_student: the teacher returned an undefined tensor for inputs ", input_shape);
  check(y.dim() >= 1 && y.size(0) == x.size(0), "teacher_student: the teacher mapped inputs ", input_shape,
        " to ", y.shape(), "; targets need the same first size as the inputs");
  return {x, y.detach()};
}

}  // namespace minigrad::data
