// Feeding a training loop: a data set of tensors, served in (shuffled) mini-batches.
//
// TensorDataset holds tensors that share their first dimension (row i of each is example i);
// DataLoader walks it in batches of B rows, in a new random order each epoch when shuffle is on,
// as torch.utils.data.TensorDataset and DataLoader do. Python beside C++:
//   loader = DataLoader(TensorDataset(x, y), batch_size=32, shuffle=True)
//   data::DataLoader loader(data::TensorDataset(x, y), {.batch_size = 32, .shuffle = true});
//   for xb, yb in loader: ...            for (auto& batch : loader) { batch[0] ... batch[1] ... }
// For the same seed the batches come in PyTorch's order, draw for draw (see DataLoader).
//
// Shape letters: N examples, B batch size, "..." the sizes of one example.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <span>
#include <vector>

#include "autograd/random.hpp"
#include "autograd/tensor.hpp"

namespace minigrad::data {

/// Tensors [N, ...] whose rows belong together: example i is row i of each
/// (`torch.utils.data.TensorDataset`). Holds handles: the data is shared, not copied.
class TensorDataset {
 public:
  /// Throws std::invalid_argument for no tensors, an undefined or 0-d tensor, or tensors whose
  /// first sizes differ: `TensorDataset: tensor 1 has shape [9] but tensor 0 has shape [10, 4]
  /// (all tensors need the same size of dimension 0)`.
  explicit TensorDataset(std::vector<Tensor> tensors);

  /// The same, as Python's `TensorDataset(x, y)`.
  template <typename... More>
  requires(std::same_as<More, Tensor>&&...) explicit TensorDataset(const Tensor& first, const More&... more)
      : TensorDataset(std::vector<Tensor>{first, more...}) {}

  /// N, the number of examples (`len(dataset)`). Throws std::runtime_error for a dataset that was
  /// moved from (it holds no tensors).
  int64_t size() const;

  /// Example i: row i of each tensor, shape [...] (`dataset[i]`). A copy, not recorded.
  /// Throws std::out_of_range unless 0 <= i < N (negative indices are not accepted).
  std::vector<Tensor> get(int64_t index) const;

  /// The rows `indices` of each tensor, stacked into one new tensor [B, ...] per tensor, with
  /// the tensor's dtype (what DataLoader's default collate gives). Copies, not recorded.
  /// Throws std::out_of_range for an index outside 0..N-1.
  std::vector<Tensor> get_batch(std::span<const int64_t> indices) const;

  /// The tensors, as given (`dataset.tensors`).
  const std::vector<Tensor>& tensors() const { return tensors_; }

 private:
  std::vector<Tensor> tensors_;
};

/// Splits `dataset` at random into datasets of the given lengths, which together hold every example
/// once (`torch.utils.data.random_split(dataset, lengths, generator)`):
///   auto parts = data::random_split(dataset, {0.8, 0.2});   // or whole lengths: {800, 200}
/// `lengths` are numbers of examples summing to N, or fractions summing to 1 (within 1e-9): part i
/// then gets floor(N * fraction_i) examples and the remainder goes one each to parts 0, 1, ...,
/// as PyTorch 1.13 does. The order is one randperm(N) from `generator`, so manual_seed(s) there
/// and here gives the same parts; part i is the next lengths[i] indices of that permutation.
/// Each part is a TensorDataset of its rows in that order: a copy (PyTorch's Subset keeps the
/// indices instead, and gives the same examples in the same order). Throws std::invalid_argument
/// for a fraction outside [0, 1], a length that is negative or not a whole number, or lengths
/// whose sum is not N, naming the value (PyTorch 1.13 takes negative lengths: {-1, 11} on 10
/// examples gives parts of 9 and 1).
std::vector<TensorDataset> random_split(const TensorDataset& dataset, const std::vector<double>& lengths,
                                        Generator& generator = default_generator());

/// Options of DataLoader, PyTorch's keyword arguments and defaults:
/// `{.batch_size = 32, .shuffle = true, .drop_last = true}`.
struct DataLoaderOptions {
  int64_t batch_size = 1;  ///< B, rows per batch
  bool shuffle = false;    ///< a new random order every epoch (else 0, 1, ..., N-1)
  bool drop_last = false;  ///< skip the last batch when it has fewer than B rows
};

/// Batches of a TensorDataset for a range-for loop (`torch.utils.data.DataLoader` with
/// num_workers=0). Each batch is a std::vector<Tensor> with one tensor [B, ...] per dataset
/// tensor (B is smaller for a last, incomplete batch). Every begin() (every range-for loop)
/// starts a new epoch, as every `iter(loader)` does in Python. Iterators refer to their loader:
/// keep it alive while using them.
///
/// Random draws per epoch, exactly as PyTorch 1.13.1 (torch/utils/data/dataloader.py and
/// sampler.py), so `torch.manual_seed(s)` there and `manual_seed(s)` here give the same batches:
///  1. one int64 "base seed" (generator.random_full), drawn even when shuffle is off: PyTorch
///     uses it to seed worker processes; we discard it but keep the generator in step;
///  2. with shuffle and an explicit generator (`generator=g`): the order is randperm(N) from it;
///  3. with shuffle and the default generator (PyTorch's generator=None): RandomSampler draws
///     another int64 seed from it and takes randperm(N) from a new Generator with that seed;
///  4. with shuffle and an explicit generator, a second randperm(N) from it, thrown away, when
///     the epoch's indices run out: while forming a last, incomplete batch, else when stepping
///     past the last batch. (1.13's RandomSampler.__iter__ ends with
///     `yield from torch.randperm(n, generator=generator).tolist()[:self.num_samples % n]`,
///     an empty slice of a fresh permutation.) With generator=None that permutation comes from
///     the sampler's own generator and leaves the default one alone.
/// The generator must outlive the loader.
class DataLoader {
 public:
  /// One tensor [B, ...] per dataset tensor, in the dataset's order.
  using Batch = std::vector<Tensor>;

  /// An input iterator over one epoch's batches; compares equal to end() after the last one.
  /// Advancing one whose loader was moved from, or a default-constructed one, throws
  /// std::runtime_error.
  class Iterator {
   public:
    ///@{
    /// The input-iterator interface a range-for loop uses: `*it` is the current batch, `++it` gathers
    /// the next one, `it == loader.end()` after the last.
    using value_type = Batch;
    using difference_type = std::ptrdiff_t;

    Iterator() = default;
    const Batch& operator*() const { return batch_; }
    const Batch* operator->() const { return &batch_; }
    Iterator& operator++();
    void operator++(int) { ++*this; }
    bool operator==(std::default_sentinel_t) const { return position_ >= order_.size(); }
    ///@}

   private:
    friend class DataLoader;
    Iterator(const DataLoader* loader, std::vector<std::vector<int64_t>> order, Generator* trailing);
    void load();  // gathers the batch at position_ into batch_

    const DataLoader* loader_ = nullptr;
    std::vector<std::vector<int64_t>> order_;  // this epoch's batches of row indices
    size_t position_ = 0;
    Batch batch_;
    Generator* trailing_ = nullptr;  // draws the permutation of step 4 when the indices run out
  };

  /// Throws std::invalid_argument for batch_size < 1, or for shuffle over an empty dataset
  /// (as PyTorch's RandomSampler).
  explicit DataLoader(TensorDataset dataset, DataLoaderOptions options = {},
                      Generator& generator = default_generator());

  /// Number of batches per epoch (`len(loader)`): ceil(N / B), or floor(N / B) with drop_last.
  int64_t size() const;

  /// Starts a new epoch: draws as described above and gathers the first batch.
  Iterator begin();
  /// Marks the end of an epoch (compare an Iterator with it).
  std::default_sentinel_t end() const { return {}; }

  /// The dataset the batches come from (`loader.dataset`).
  const TensorDataset& dataset() const { return dataset_; }
  /// batch_size, shuffle and drop_last, as given.
  const DataLoaderOptions& options() const { return options_; }

 private:
  std::vector<int64_t> epoch_order();  // the row order of a new epoch, drawing as PyTorch

  TensorDataset dataset_;
  DataLoaderOptions options_;
  Generator* generator_;
};

}  // namespace minigrad::data
