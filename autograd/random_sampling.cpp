// multinomial: drawing category indices from rows of probabilities, as torch.multinomial 1.13
// draws them (native/Distributions.cpp, multinomial_out; the with-replacement kernel is
// native/cpu/MultinomialKernel.cpp). R rows of C categories; the rows need not sum to 1.
//
// Without replacement (the default, and what the course's generate() calls): the Gumbel-max
// trick. With q ~ Exponential(1) per entry, category c wins a row with probability p_c / sum(p),
// because p_c / q_c is the largest of the row exactly that often; the k largest, largest first,
// are k draws without replacement. So: fill q like probs with exponential_, take probs / q, and
// pick the argmax (k = 1) or the top k.
// With replacement: per sample one double uniform u, and the sample is the first category whose
// normalised cumulative probability is not below u (a binary search).
#include <algorithm>
#include <cmath>
#include <utility>
#include <vector>

#include "autograd/op_support.hpp"
#include "autograd/random.hpp"

namespace minigrad {

namespace {

using detail::check;

// Every probability must be finite and >= 0, and no row may be all zeros. Checked before any
// draw, so a bad input leaves the generator as it was.
template <typename T>
void check_probabilities(const T* p, int64_t rows, int64_t cols, bool two_d) {
  for (int64_t r = 0; r < rows; ++r) {
    bool any_positive = false;
    for (int64_t c = 0; c < cols; ++c) {
      const T v = p[r * cols + c];
      if (!(std::isfinite(v) && v >= 0)) {
        const std::string where =
            two_d ? detail::concat("probs[", r, ", ", c, "]") : detail::concat("probs[", c, "]");
        check(false, "multinomial: probability tensor contains either inf, nan or element < 0: ", where,
              " = ", v);
      }
      any_positive = any_positive || v > 0;
    }
    check(any_positive, "multinomial: invalid multinomial distribution (sum of probabilities <= 0): ",
          two_d ? detail::concat("row ", r, " is all zeros") : std::string("probs is all zeros"));
  }
}

// The k largest of row[0, n) by index, largest first, as torch's topk (native/cpu/TopKImpl.h,
// topk_impl_loop) finds them, ties included: (value, index) pairs in double, partial_sort when
// k * 64 <= n, otherwise nth_element and then a sort of the first k - 1. nan counts as largest.
template <typename T>
void top_k(const T* row, int64_t n, int64_t k, int64_t* out) {
  using Entry = std::pair<double, int64_t>;
  std::vector<Entry> queue(n);
  for (int64_t j = 0; j < n; ++j) queue[j] = {static_cast<double>(row[j]), j};
  const auto larger = [](const Entry& x, const Entry& y) {
    return (std::isnan(x.first) && !std::isnan(y.first)) || x.first > y.first;
  };
  if (k * 64 <= n) {
    std::partial_sort(queue.begin(), queue.begin() + k, queue.end(), larger);
  } else {
    std::nth_element(queue.begin(), queue.begin() + k - 1, queue.end(), larger);
    std::sort(queue.begin(), queue.begin() + k - 1, larger);
  }
  for (int64_t j = 0; j < k; ++j) out[j] = queue[j].second;
}

// The first index of the largest of row[0, n) (argmax; nan counts as largest).
template <typename T>
int64_t first_argmax(const T* row, int64_t n) {
  int64_t best = 0;
  for (int64_t j = 1; j < n; ++j) {
    const bool nan_beats = std::isnan(row[j]) && !std::isnan(row[best]);
    if (nan_beats || row[j] > row[best]) best = j;
  }
  return best;
}

template <typename T>
void without_replacement(const T* p, int64_t rows, int64_t cols, int64_t k, Generator& gen, int64_t* out) {
  std::vector<T> ratio(static_cast<size_t>(rows * cols));
  gen.exponential(ratio.data(), rows * cols, 1.0);  // q, filled in memory order as a tensor like probs
  for (size_t i = 0; i < ratio.size(); ++i) ratio[i] = p[i] / ratio[i];

  for (int64_t r = 0; r < rows; ++r) {
    const T* row = ratio.data() + r * cols;
    if (k == 1) {
      out[r] = first_argmax(row, cols);
    } else {
      top_k(row, cols, k, out + r * k);
    }
  }
}

// The cumulative sum is kept in T, normalised by its last value, and its last entry set to 1
// exactly; a uniform u picks the first category c with cum[c] >= u.
template <typename T>
void with_replacement(const T* p, int64_t rows, int64_t cols, int64_t k, Generator& gen, int64_t* out) {
  std::vector<T> cum(static_cast<size_t>(cols));
  std::vector<double> uniforms(static_cast<size_t>(k));
  for (int64_t r = 0; r < rows; ++r) {
    T total = 0;
    for (int64_t c = 0; c < cols; ++c) {
      total += p[r * cols + c];
      cum[c] = total;
    }
    for (T& value : cum) value /= total;
    cum[cols - 1] = 1;

    gen.uniform(uniforms.data(), k, 0.0, 1.0);
    for (int64_t j = 0; j < k; ++j) {
      int64_t left = 0;
      int64_t right = cols;
      while (right > left) {
        const int64_t mid = left + (right - left) / 2;
        if (static_cast<double>(cum[mid]) < uniforms[j]) {
          left = mid + 1;
        } else {
          right = mid;
        }
      }
      out[r * k + j] = left;
    }
  }
}

}  // namespace

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement) {
  return multinomial(probs, num_samples, replacement, default_generator());
}

Tensor multinomial(const Tensor& probs, int64_t num_samples, bool replacement, Generator& generator) {
  detail::check_defined(probs, "multinomial");
  check(probs.dim() == 1 || probs.dim() == 2, "multinomial: probs must be 1-d [C] or 2-d [R, C], got shape ",
        probs.shape());
  check(probs.is_floating_point(), "multinomial: probs must be float32 or float64, got ",
        dtype_name(probs.dtype()));
  check(num_samples > 0, "multinomial: cannot sample num_samples = ", num_samples, " <= 0 samples");
  const int64_t cols = probs.size(-1);
  check(replacement || num_samples <= cols, "multinomial: cannot sample num_samples = ", num_samples, " > ",
        cols, " categories without replacement");
  check(cols <= (int64_t{1} << 24), "multinomial: number of categories (", cols, ") cannot exceed 2^24");

  const bool two_d = probs.dim() == 2;
  const int64_t rows = two_d ? probs.size(0) : 1;
  Tensor out = zeros(two_d ? Shape{rows, num_samples} : Shape{num_samples}, {.dtype = kInt64});
  if (out.numel() == 0) return out;  // no rows: nothing to draw

  dispatch_floating(probs.dtype(), "multinomial", [&]<typename T>() {
    const T* p = probs.data_ptr<T>();
    check_probabilities(p, rows, cols, two_d);
    int64_t* samples = out.data_ptr<int64_t>();
    if (replacement) {
      with_replacement(p, rows, cols, num_samples, generator, samples);
    } else {
      without_replacement(p, rows, cols, num_samples, generator, samples);
    }
  });
  return out;
}

Tensor Tensor::multinomial(int64_t num_samples, bool replacement) const {
  return minigrad::multinomial(*this, num_samples, replacement);
}

Tensor Tensor::multinomial(int64_t num_samples, bool replacement, Generator& generator) const {
  return minigrad::multinomial(*this, num_samples, replacement, generator);
}

}  // namespace minigrad
