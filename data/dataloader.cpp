// TensorDataset and DataLoader: rows gathered by memcpy, epochs ordered as PyTorch orders them.
//
// A batch is built without a tensor per row: for each dataset tensor, one new [B, ...] tensor is
// allocated and each chosen row (a contiguous block of bytes in row-major storage) is copied in.
// An epoch is a list of row indices (0..N-1, or a random permutation), cut into batches of B.
#include "data/dataloader.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <range/v3/range/conversion.hpp>
#include <range/v3/view/chunk.hpp>
#include <stdexcept>
#include <utility>

#include "autograd/op_support.hpp"

namespace minigrad::data {

using minigrad::detail::check;

// ---- TensorDataset ---------------------------------------------------------------------------

TensorDataset::TensorDataset(std::vector<Tensor> tensors) : tensors_(std::move(tensors)) {
  check(!tensors_.empty(), "TensorDataset: needs at least one tensor");
  for (size_t k = 0; k < tensors_.size(); ++k) {
    check(tensors_[k].defined(), "TensorDataset: tensor ", k, " is undefined");
    check(tensors_[k].dim() >= 1, "TensorDataset: tensor ", k,
          " is 0-d (shape []); each tensor needs a first dimension indexing the examples");
    check(tensors_[k].size(0) == tensors_[0].size(0), "TensorDataset: tensor ", k, " has shape ",
          tensors_[k].shape(), " but tensor 0 has shape ", tensors_[0].shape(),
          " (all tensors need the same size of dimension 0)");
  }
}

int64_t TensorDataset::size() const {
  check<std::runtime_error>(!tensors_.empty(),
                            "TensorDataset: this dataset was moved from and holds no tensors");
  return tensors_.front().size(0);
}

std::vector<Tensor> TensorDataset::get(int64_t index) const {
  check<std::out_of_range>(index >= 0 && index < size(), "TensorDataset::get: index ", index,
                           " is out of range for a dataset of ", size(), " examples");
  std::vector<Tensor> rows = get_batch(std::span<const int64_t>(&index, 1));
  for (Tensor& row : rows) {
    const Shape& batch_shape = row.shape();
    row = row.reshape(Shape(batch_shape.begin() + 1, batch_shape.end()));  // [1, ...] -> [...]
  }
  return rows;
}

std::vector<Tensor> TensorDataset::get_batch(std::span<const int64_t> indices) const {
  for (int64_t index : indices) {
    check<std::out_of_range>(index >= 0 && index < size(), "TensorDataset::get_batch: index ", index,
                             " is out of range for a dataset of ", size(), " examples");
  }
  const auto batch_size = static_cast<int64_t>(indices.size());

  std::vector<Tensor> batch;
  for (const Tensor& source : tensors_) {
    Shape shape = source.shape();
    shape[0] = batch_size;
    Tensor out = minigrad::detail::new_tensor(shape, source.dtype());

    // Row i of a row-major [N, ...] tensor is the bytes [i * row_bytes, (i + 1) * row_bytes).
    const size_t row_bytes = static_cast<size_t>(shape_numel(Shape(shape.begin() + 1, shape.end()))) *
                             element_size(source.dtype());
    const auto* from = static_cast<const std::byte*>(source.impl()->data());
    auto* to = static_cast<std::byte*>(out.impl()->data());
    for (int64_t b = 0; b < batch_size; ++b) {
      std::memcpy(to + b * row_bytes, from + indices[b] * row_bytes, row_bytes);
    }
    batch.push_back(out);
  }
  return batch;
}

// ---- random_split ----------------------------------------------------------------------------

std::vector<TensorDataset> random_split(const TensorDataset& dataset, const std::vector<double>& lengths,
                                        Generator& generator) {
  const int64_t n = dataset.size();
  double sum = 0;
  for (double length : lengths) sum += length;  // Python's sum(lengths), left to right
  std::vector<int64_t> counts;
  // Fractions when they sum to 1, as math.isclose(sum, 1) (relative 1e-9) and sum <= 1.
  if (std::abs(sum - 1) <= 1e-9 * std::max(std::abs(sum), 1.0) && sum <= 1) {
    for (size_t i = 0; i < lengths.size(); ++i) {
      check(lengths[i] >= 0 && lengths[i] <= 1, "random_split: fraction ", lengths[i], " at index ", i,
            " is not between 0 and 1");
      counts.push_back(static_cast<int64_t>(std::floor(static_cast<double>(n) * lengths[i])));
    }
    const int64_t remainder = n - std::accumulate(counts.begin(), counts.end(), int64_t{0});
    for (int64_t i = 0; i < remainder; ++i) ++counts[static_cast<size_t>(i) % counts.size()];  // round robin
  } else {
    for (size_t i = 0; i < lengths.size(); ++i) {
      check(lengths[i] >= 0 && lengths[i] == std::floor(lengths[i]) && lengths[i] <= static_cast<double>(n),
            "random_split: length ", lengths[i], " at index ", i,
            " is not a whole number of examples from 0 to ", n);
      counts.push_back(static_cast<int64_t>(lengths[i]));
    }
  }
  const int64_t total = std::accumulate(counts.begin(), counts.end(), int64_t{0});
  check(total == n, "random_split: the lengths sum to ", total, " but the dataset has ", n,
        " examples (sum of input lengths does not equal the length of the input dataset)");

  std::vector<int64_t> order(static_cast<size_t>(n));
  generator.randperm(order.data(), n);
  std::vector<TensorDataset> parts;
  int64_t offset = 0;
  for (int64_t count : counts) {
    parts.emplace_back(
        dataset.get_batch(std::span<const int64_t>(order.data() + offset, static_cast<size_t>(count))));
    offset += count;
  }
  return parts;
}

// ---- DataLoader ------------------------------------------------------------------------------

DataLoader::DataLoader(TensorDataset dataset, DataLoaderOptions options, Generator& generator)
    : dataset_(std::move(dataset)), options_(options), generator_(&generator) {
  check(options_.batch_size >= 1, "DataLoader: batch_size must be at least 1, got ", options_.batch_size);
  check(!(options_.shuffle && dataset_.size() == 0), "DataLoader: cannot shuffle an empty dataset (shape ",
        dataset_.tensors().front().shape(), ")");
}

int64_t DataLoader::size() const {
  const int64_t n = dataset_.size();
  const int64_t b = options_.batch_size;
  // Not (n + b - 1) / b: that overflows for a huge b.
  return options_.drop_last || n % b == 0 ? n / b : n / b + 1;
}

// The draws of _BaseDataLoaderIter.__init__ and then RandomSampler.__iter__ (see data.hpp).
std::vector<int64_t> DataLoader::epoch_order() {
  int64_t base_seed = 0;  // seeds worker processes in PyTorch; unused here
  generator_->random_full(&base_seed, 1);

  std::vector<int64_t> order(static_cast<size_t>(dataset_.size()));
  if (!options_.shuffle) {
    std::iota(order.begin(), order.end(), int64_t{0});  // SequentialSampler
    return order;
  }
  if (generator_ == &default_generator()) {
    // generator=None: RandomSampler seeds a fresh torch.Generator from the default one.
    int64_t seed = 0;
    generator_->random_full(&seed, 1);
    Generator sampler_generator(static_cast<uint64_t>(seed));
    sampler_generator.randperm(order.data(), dataset_.size());
  } else {
    generator_->randperm(order.data(), dataset_.size());
  }
  return order;
}

DataLoader::Iterator DataLoader::begin() {
  check<std::runtime_error>(!dataset_.tensors().empty(),
                            "DataLoader: this loader was moved from and holds no dataset");
  std::vector<int64_t> order = epoch_order();
  if (options_.drop_last) {
    order.resize(order.size() - order.size() % static_cast<size_t>(options_.batch_size));
  }

  // [i0, i1, ..., i9] with B = 3 -> [[i0, i1, i2], [i3, i4, i5], [i6, i7, i8], [i9]] (BatchSampler)
  std::vector<std::vector<int64_t>> batches;
  for (auto chunk : order | ranges::views::chunk(options_.batch_size)) {
    batches.push_back(chunk | ranges::to<std::vector<int64_t>>());
  }
  const bool trailing_draw = options_.shuffle && generator_ != &default_generator();
  return Iterator(this, std::move(batches), trailing_draw ? generator_ : nullptr);
}

DataLoader::Iterator::Iterator(const DataLoader* loader, std::vector<std::vector<int64_t>> order,
                               Generator* trailing)
    : loader_(loader), order_(std::move(order)), trailing_(trailing) {
  load();
}

DataLoader::Iterator& DataLoader::Iterator::operator++() {
  ++position_;
  load();
  return *this;
}

void DataLoader::Iterator::load() {
  check<std::runtime_error>(loader_ != nullptr,
                            "DataLoader: advancing an iterator that belongs to no loader");
  check<std::runtime_error>(!loader_->dataset_.tensors().empty(),
                            "DataLoader: advancing an iterator of a loader that was moved from (an iterator "
                            "refers to its loader: iterate the loader it was moved into)");
  // PyTorch's sampler runs out of indices when asked for more than N: for an incomplete last
  // batch, or for the batch after the last one. Only then does it draw its trailing permutation.
  const bool at_end = position_ >= order_.size();
  const bool runs_out =
      at_end || static_cast<int64_t>(order_[position_].size()) < loader_->options_.batch_size;
  if (runs_out && trailing_ != nullptr) {
    std::vector<int64_t> unused(static_cast<size_t>(loader_->dataset_.size()));
    trailing_->randperm(unused.data(), loader_->dataset_.size());
    trailing_ = nullptr;
  }

  if (at_end) {
    batch_.clear();  // past the end: free the last batch
  } else {
    batch_ = loader_->dataset_.get_batch(order_[position_]);
  }
}

}  // namespace minigrad::data
