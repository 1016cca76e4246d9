// Data sets for the examples: two real ones read from data/, and toy ones drawn at random.
//
// Each returns its examples as inputs x and targets y, ready for data::TensorDataset(x, y); the
// real ones mirror sklearn.datasets.load_iris / load_digits (return_X_y=True). The toy
// generators state their formula and the exact order of their draws from the Generator, so a
// few lines of PyTorch (tools/reference/data_reference.py) reproduce them bit for bit. Their rows
// come ordered by class: let the DataLoader shuffle them.
//
// Shape letters: N examples, D features, K classes.
#pragma once

#include <cstdint>
#include <functional>
#include <string>

#include "autograd/random.hpp"
#include "autograd/tensor.hpp"

namespace minigrad::data {

/// Examples as two tensors with the same first size N: `auto [x, y] = data::make_moons(200, 0.1);`.
struct Examples {
  Tensor x;  ///< inputs [N, ...]
  Tensor y;  ///< targets [N] (class labels, int64) or [N, ...] (values to regress)
};

/// Fisher's iris flowers (assets/iris.csv, header line `150,4,setosa,versicolor,virginica`):
/// x [150, 4] float32 (sepal length, sepal width, petal length, petal width, in cm),
/// y [150] int64 (0 setosa, 1 versicolor, 2 virginica). Mirrors sklearn.datasets.load_iris.
/// Throws std::runtime_error as read_csv, and for a file without 5 columns or a class that is
/// not an integer 0..2 (naming the file and the data row).
Examples load_iris(const std::string& path);

/// Hand-written digits (assets/digits.csv.gz, no header): x [1797, 64] float32, the 8x8 image row
/// by row as pixel counts 0..16; y [1797] int64, the digit 0..9. Mirrors
/// sklearn.datasets.load_digits. Throws std::runtime_error as read_csv, and for a file without
/// 65 columns or a digit that is not an integer 0..9 (naming the file and the data row).
Examples load_digits(const std::string& path);

/// Two interleaving half circles (sklearn.datasets.make_moons, without its shuffle):
/// x [N, 2] float32, y [N] int64. The first N_out = N / 2 rows (class 0) are
/// (cos t, sin t), t = linspace(0, pi, N_out); the other N_in = N - N_out rows (class 1) are
/// (1 - cos t, 1 - sin t - 0.5), t = linspace(0, pi, N_in); computed in double, rounded to
/// float32. Then one draw, z = randn([N, 2], generator) in float32, and in float32
/// x = x + float(noise) * z (drawn even for noise 0). linspace(a, b, m) at i is
/// a + (b - a) * i / (m - 1), or a when m == 1.
/// Throws std::invalid_argument for n < 1 or noise < 0.
Examples make_moons(int64_t n, double noise, Generator& generator = default_generator());

/// The classic spiral of Stanford's cs231n (K arms, one class each): x [N_k * K, 2] float32,
/// y [N_k * K] int64, class j in rows j * N_k .. (j + 1) * N_k - 1. For each class j in order:
/// z = randn([N_k], generator) in float32; then for i < N_k, in double, r = linspace(0, 1, N_k)[i],
/// t = linspace(4 j, 4 j + 4, N_k)[i] + noise * z[i], and the row is (r sin t, r cos t) rounded to
/// float32 (linspace as in make_moons). cs231n uses noise 0.2.
/// Throws std::invalid_argument for n_per_class < 1, n_classes < 1 or noise < 0.
Examples make_spiral(int64_t n_per_class, int64_t n_classes, double noise,
                     Generator& generator = default_generator());

/// A 1-d regression task, y = sin(x) + noise: x [N, 1] float32, y [N, 1] float32 (the shape a
/// model with one output gives, so mse_loss compares them row by row). Draws, in order:
/// x = uniform_(-3, 3) into [N, 1] float32, then z = randn([N, 1]) in float32; then
/// y = float(sin(double(x))) + float(noise) * z, in float32.
/// Throws std::invalid_argument for n < 1 or noise < 0.
Examples make_regression(int64_t n, double noise, Generator& generator = default_generator());

/// A task whose answer is known: inputs x = randn(input_shape, generator) (float32) and targets
/// y = teacher(x), computed under NoGradGuard so y carries no graph even if the teacher has
/// parameters that require grad. A "student" network trained on (x, y) should recover the
/// teacher's function. In PyTorch: `x = torch.randn(shape, generator=g)`, then
/// `with torch.no_grad(): y = teacher(x)`.
/// Throws std::invalid_argument for a 0-d input_shape, or a teacher whose result is undefined or
/// has another first size than x.
Examples teacher_student(const std::function<Tensor(const Tensor&)>& teacher, const Shape& input_shape,
                         Generator& generator = default_generator());

}  // namespace minigrad::data
