// Tests for data loading: TensorDataset and DataLoader (data/dataloader.hpp), read_csv (data/csv.hpp) and
// the data sets (data/datasets.hpp).
// The fixture tests/fixtures/data.json comes from tools/reference/data_reference.py (PyTorch
// 1.13.1): DataLoader's batch order over 3 epochs for many seeds, sizes and options, and the toy
// data sets rebuilt in PyTorch from the formulas of datasets.hpp; both must agree exactly. The
// other cases check hand values: rows gathered right, batch sizes, files with known contents,
// and one table per module with every kind of bad input.
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <boost/test/unit_test.hpp>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <nlohmann/json.hpp>
#include <numeric>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "data/csv.hpp"
#include "data/dataloader.hpp"
#include "data/datasets.hpp"
#include "fixture.hpp"

namespace {

using namespace minigrad;
using nlohmann::json;
namespace fs = std::filesystem;

const json& fixture() { return minigrad_test::read_fixture("data.json"); }

// The generator a fixture case names, seeded as the reference script seeds it: the default one
// after manual_seed(seed) ("default"), or a generator of its own made here ("explicit").
Generator& case_generator(const json& c, std::optional<Generator>& own) {
  const auto seed = c["seed"].get<uint64_t>();
  if (c["generator"] == "default") {
    manual_seed(seed);
    return default_generator();
  }
  return own.emplace(seed);
}

std::string repo_file(const std::string& relative) {
  return std::string(MINIGRAD_SOURCE_DIR) + "/" + relative;
}

/// Every batch of one epoch, as lists of the int64 values of the batch's first tensor.
std::vector<std::vector<int64_t>> one_epoch(data::DataLoader& loader) {
  std::vector<std::vector<int64_t>> batches;
  for (auto& batch : loader) batches.push_back(batch[0].to_vector<int64_t>());
  return batches;
}

/// A folder for temporary files, removed with everything in it at the end of the test.
struct TempDir {
  fs::path path = fs::temp_directory_path() / ("minigrad_test_data_" + std::to_string(::getpid()));
  TempDir() { fs::create_directories(path); }
  ~TempDir() { fs::remove_all(path); }
  std::string write(const std::string& name, const std::string& text) const {
    const fs::path file = path / name;
    std::ofstream(file, std::ios::binary) << text;
    return file.string();
  }
  std::string write_gzip(const std::string& name, const std::string& text) const {
    const fs::path file = path / name;
    gzFile out = gzopen(file.string().c_str(), "wb");
    gzwrite(out, text.data(), static_cast<unsigned>(text.size()));
    gzclose(out);
    return file.string();
  }
};

/// One row of a bad-input table: a call, the exception it must throw, a piece of its message.
enum class Throws { InvalidArgument, OutOfRange, RuntimeError };
struct BadInput {
  std::string what;
  std::function<void()> call;
  Throws kind;
  std::string message;
};

void expect_error(const BadInput& bad) {
  BOOST_TEST_CONTEXT(bad.what) {
    try {
      bad.call();
      BOOST_ERROR("no exception thrown");
    } catch (const std::exception& e) {
      bool right_kind = dynamic_cast<const std::runtime_error*>(&e) != nullptr;
      if (bad.kind == Throws::InvalidArgument)
        right_kind = dynamic_cast<const std::invalid_argument*>(&e) != nullptr;
      if (bad.kind == Throws::OutOfRange) right_kind = dynamic_cast<const std::out_of_range*>(&e) != nullptr;
      BOOST_TEST(right_kind, "wrong exception type for: " << e.what());
      BOOST_TEST(std::string(e.what()).find(bad.message) != std::string::npos,
                 "message \"" << e.what() << "\" lacks \"" << bad.message << "\"");
    }
  }
}

/// float32 data compared exactly with float32 values the fixture wrote as doubles.
void expect_floats(const Tensor& got, const json& expected) {
  const std::vector<float> values = got.to_vector<float>();
  BOOST_TEST_REQUIRE(values.size() == expected.size());
  for (size_t i = 0; i < values.size(); ++i) {
    BOOST_TEST(values[i] == static_cast<float>(expected[i].get<double>()), "element " << i);
  }
}

}  // namespace

BOOST_AUTO_TEST_SUITE(data_loading)

// ---- DataLoader and TensorDataset ----------------------------------------------------------------

BOOST_AUTO_TEST_CASE(loader_batch_order_matches_pytorch_for_every_seed_size_and_option) {
  for (const json& c : fixture()["loader"]) {
    BOOST_TEST_CONTEXT("seed " << c["seed"] << ", n " << c["n"] << ", batch " << c["batch_size"]
                               << ", drop_last " << c["drop_last"] << ", shuffle " << c["shuffle"] << ", "
                               << c["generator"]) {
      std::optional<Generator> own;
      Generator& generator = case_generator(c, own);

      data::DataLoader loader(data::TensorDataset(arange(c["n"].get<int64_t>())),
                              {.batch_size = c["batch_size"].get<int64_t>(),
                               .shuffle = c["shuffle"].get<bool>(),
                               .drop_last = c["drop_last"].get<bool>()},
                              generator);
      BOOST_TEST(loader.size() == c["batches"].get<int64_t>());
      for (const json& epoch : c["epochs"]) {
        BOOST_TEST((one_epoch(loader) == epoch.get<std::vector<std::vector<int64_t>>>()));
      }
      int64_t next = 0;
      generator.random_full(&next, 1);  // the same number of draws as PyTorch, not just the same order
      BOOST_TEST(next == c["next_int64"].get<int64_t>());
    }
  }
}

// random_split was named in the README and data/'s headers but did not exist. The parts of
// torch.utils.data.random_split for whole lengths and fractions (one each of the remainder to the
// first parts), explicit and default generators, and the draws it takes (the next int64 after).
BOOST_AUTO_TEST_CASE(random_split_gives_pytorchs_parts_for_lengths_and_fractions) {
  for (const json& c : fixture()["random_split"]) {
    BOOST_TEST_CONTEXT("n " << c["n"] << ", lengths " << c["lengths"] << ", seed " << c["seed"] << ", "
                            << c["generator"]) {
      std::optional<Generator> own;
      Generator& generator = case_generator(c, own);
      const int64_t n = c["n"].get<int64_t>();
      // a second tensor, so that each part's rows are checked to stay together
      const data::TensorDataset dataset(arange(n), arange(n) * 10);
      const std::vector<data::TensorDataset> parts =
          data::random_split(dataset, c["lengths"].get<std::vector<double>>(), generator);
      const auto expected = c["parts"].get<std::vector<std::vector<int64_t>>>();
      BOOST_TEST_REQUIRE(parts.size() == expected.size());
      for (size_t i = 0; i < parts.size(); ++i) {
        BOOST_TEST(parts[i].size() == static_cast<int64_t>(expected[i].size()));
        BOOST_TEST(parts[i].tensors()[0].to_vector<int64_t>() == expected[i],
                   boost::test_tools::per_element());
        BOOST_TEST((parts[i].tensors()[1] / 10).to_vector<int64_t>() == expected[i],
                   boost::test_tools::per_element());
      }
      int64_t next = 0;
      generator.random_full(&next, 1);
      BOOST_TEST(next == c["next_int64"].get<int64_t>());
    }
  }
}

BOOST_AUTO_TEST_CASE(random_split_rejects_lengths_that_do_not_fit_the_dataset) {
  const data::TensorDataset dataset(arange(10));
  auto message_of = [&](const std::vector<double>& lengths) {
    try {
      data::random_split(dataset, lengths);
    } catch (const std::invalid_argument& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  BOOST_TEST(
      message_of({3, 6}) ==
      "random_split: the lengths sum to 9 but the dataset has 10 examples (sum of input lengths does not "
      "equal the length of the input dataset)");
  BOOST_TEST(message_of({2.5, 7.5}) ==
             "random_split: length 2.5 at index 0 is not a whole number of examples "
             "from 0 to 10");
  BOOST_TEST(message_of({-1, 11}) ==
             "random_split: length -1 at index 0 is not a whole number of examples from 0 "
             "to 10");
  BOOST_TEST(message_of({1.5, -0.5}) == "random_split: fraction 1.5 at index 0 is not between 0 and 1");
}

BOOST_AUTO_TEST_CASE(loader_draws_at_the_same_moments_as_pytorch_when_the_loop_draws_too) {
  for (const json& c : fixture()["loader_interleaved"]) {
    BOOST_TEST_CONTEXT("n " << c["n"] << ", batch " << c["batch_size"] << ", drop_last " << c["drop_last"]) {
      Generator generator(c["seed"].get<uint64_t>());
      data::DataLoader loader(data::TensorDataset(arange(c["n"].get<int64_t>())),
                              {.batch_size = c["batch_size"].get<int64_t>(),
                               .shuffle = true,
                               .drop_last = c["drop_last"].get<bool>()},
                              generator);
      for (const json& epoch : c["epochs"]) {
        size_t step = 0;
        for (auto& batch : loader) {
          BOOST_TEST_REQUIRE(step < epoch.size());
          BOOST_TEST(batch[0].to_vector<int64_t>() == epoch[step]["batch"].get<std::vector<int64_t>>(),
                     boost::test_tools::per_element());
          int64_t draw = 0;
          generator.random_full(&draw, 1);  // the loop body's own use of the generator
          BOOST_TEST(draw == epoch[step]["draw_after"].get<int64_t>());
          ++step;
        }
        BOOST_TEST(step == epoch.size());
      }
      int64_t next = 0;
      generator.random_full(&next, 1);
      BOOST_TEST(next == c["next_int64"].get<int64_t>());
    }
  }
}

BOOST_AUTO_TEST_CASE(batches_hold_the_rows_their_indices_name) {
  // x[i, j, k] = 100 i + 10 j + k, y[i] = 7 i, index[i] = i: each batch row must match its index.
  std::vector<double> values;
  for (int i = 0; i < 10; ++i)
    for (int j = 0; j < 2; ++j)
      for (int k = 0; k < 3; ++k) values.push_back(100 * i + 10 * j + k);
  std::vector<int64_t> labels;
  for (int64_t i = 0; i < 10; ++i) labels.push_back(7 * i);
  const Tensor x = tensor(values, {10, 2, 3});
  const Tensor y = tensor(labels, {10});

  Generator generator(3);
  data::DataLoader loader(data::TensorDataset(x, y, arange(10)), {.batch_size = 4, .shuffle = true},
                          generator);
  std::vector<int64_t> seen;
  for (auto& batch : loader) {
    const int64_t b = batch[2].size(0);
    BOOST_TEST(batch[0].shape() == Shape({b, 2, 3}));
    BOOST_TEST(batch[0].dtype() == kFloat32);
    BOOST_TEST(batch[1].shape() == Shape({b}));
    BOOST_TEST(batch[1].dtype() == kInt64);
    for (int64_t r = 0; r < b; ++r) {
      const auto i = static_cast<int64_t>(batch[2].at({r}));
      seen.push_back(i);
      BOOST_TEST(batch[1].at({r}) == 7.0 * i);
      for (int64_t j = 0; j < 2; ++j)
        for (int64_t k = 0; k < 3; ++k) BOOST_TEST(batch[0].at({r, j, k}) == 100.0 * i + 10.0 * j + k);
    }
  }
  std::vector<int64_t> sorted = seen;
  std::sort(sorted.begin(), sorted.end());
  std::vector<int64_t> all(10);
  std::iota(all.begin(), all.end(), 0);
  BOOST_TEST(sorted == all, boost::test_tools::per_element());  // every row once
  BOOST_TEST((seen != all));                                    // and shuffled
}

BOOST_AUTO_TEST_CASE(last_batch_is_smaller_or_dropped) {
  struct Case {
    int64_t n, batch_size;
    bool drop_last;
    std::vector<int64_t> sizes;
  };
  const std::vector<Case> cases = {
      {10, 3, false, {3, 3, 3, 1}},
      {10, 3, true, {3, 3, 3}},
      {9, 3, false, {3, 3, 3}},
      {9, 3, true, {3, 3, 3}},
      {10, 32, false, {10}},
      {10, 32, true, {}},
      {1, 1, true, {1}},
      {3, std::numeric_limits<int64_t>::max(), false, {3}},  // regression: size() overflowed to -1
  };
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT("n " << c.n << ", batch " << c.batch_size << ", drop_last " << c.drop_last) {
      data::DataLoader loader(data::TensorDataset(arange(c.n)),
                              {.batch_size = c.batch_size, .drop_last = c.drop_last});
      std::vector<int64_t> sizes;
      int64_t next_row = 0;
      for (auto& batch : loader) {
        sizes.push_back(batch[0].size(0));
        BOOST_TEST(batch[0].at({0}) == static_cast<double>(next_row));  // no shuffle: rows in order
        next_row += batch[0].size(0);
      }
      BOOST_TEST(sizes == c.sizes, boost::test_tools::per_element());
      BOOST_TEST(loader.size() == static_cast<int64_t>(c.sizes.size()));
    }
  }
}

BOOST_AUTO_TEST_CASE(each_epoch_draws_a_new_order_and_equal_seeds_give_equal_orders) {
  Generator first(7), second(7);
  data::DataLoader loader(data::TensorDataset(arange(100)), {.batch_size = 100, .shuffle = true}, first);
  data::DataLoader twin(data::TensorDataset(arange(100)), {.batch_size = 100, .shuffle = true}, second);
  const auto epoch1 = one_epoch(loader), epoch2 = one_epoch(loader);
  BOOST_TEST(epoch1.size() == 1u);
  BOOST_TEST(epoch1 != epoch2);
  BOOST_TEST(one_epoch(twin) == epoch1);
  BOOST_TEST(one_epoch(twin) == epoch2);

  std::vector<int64_t> sorted = epoch2[0];
  std::sort(sorted.begin(), sorted.end());
  BOOST_TEST(sorted == arange(100).to_vector<int64_t>(), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(dataset_get_returns_row_i_of_each_tensor) {
  const Tensor x = tensor({{1, 2}, {3, 4}, {5, 6}});
  const Tensor flags = tensor(std::vector<bool>{true, false, true}, {3});
  data::TensorDataset dataset(x, flags);
  BOOST_TEST(dataset.size() == 3);

  const std::vector<Tensor> row = dataset.get(1);
  BOOST_TEST(row.size() == 2u);
  BOOST_TEST(row[0].shape() == Shape({2}));
  BOOST_TEST(row[0].to_vector<double>() == std::vector<double>({3, 4}), boost::test_tools::per_element());
  BOOST_TEST(row[1].shape() == Shape({}));
  BOOST_TEST(row[1].dtype() == kBool);
  BOOST_TEST(row[1].item<bool>() == false);

  const std::vector<int64_t> picks = {2, 0, 2};  // any order, repeats allowed
  const std::vector<Tensor> batch = dataset.get_batch(picks);
  BOOST_TEST(batch[0].to_vector<double>() == std::vector<double>({5, 6, 1, 2, 5, 6}),
             boost::test_tools::per_element());
  BOOST_TEST(batch[1].to_vector<int64_t>() == std::vector<int64_t>({1, 1, 1}),
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(dataset_and_loader_reject_bad_input) {
  const Tensor x = zeros({10, 4});
  const std::vector<BadInput> table = {
      {"no tensors", [] { data::TensorDataset(std::vector<Tensor>{}); }, Throws::InvalidArgument,
       "TensorDataset: needs at least one tensor"},
      {"an undefined tensor", [&] { data::TensorDataset(x, Tensor()); }, Throws::InvalidArgument,
       "TensorDataset: tensor 1 is undefined"},
      {"a 0-d tensor", [] { data::TensorDataset(scalar_tensor(1.0)); }, Throws::InvalidArgument,
       "TensorDataset: tensor 0 is 0-d"},
      {"first sizes differ", [&] { data::TensorDataset(x, zeros({9})); }, Throws::InvalidArgument,
       "TensorDataset: tensor 1 has shape [9] but tensor 0 has shape [10, 4]"},
      {"get past the end", [&] { data::TensorDataset(x).get(10); }, Throws::OutOfRange,
       "TensorDataset::get: index 10 is out of range for a dataset of 10 examples"},
      {"get a negative index", [&] { data::TensorDataset(x).get(-1); }, Throws::OutOfRange, "index -1"},
      {"get_batch past the end",
       [&] {
         data::TensorDataset(x).get_batch(std::vector<int64_t>{0, 12});
       },
       Throws::OutOfRange, "TensorDataset::get_batch: index 12 is out of range"},
      {"batch size 0", [&] { data::DataLoader(data::TensorDataset(x), {.batch_size = 0}); },
       Throws::InvalidArgument, "DataLoader: batch_size must be at least 1, got 0"},
      {"shuffle an empty dataset",
       [] {
         data::DataLoader(data::TensorDataset(zeros({0, 3})), {.shuffle = true});
       },
       Throws::InvalidArgument, "DataLoader: cannot shuffle an empty dataset (shape [0, 3])"},
  };
  for (const BadInput& bad : table) expect_error(bad);
}

// Advancing an iterator of a moved-from loader read the moved-from dataset's missing tensors.
BOOST_AUTO_TEST_CASE(advancing_an_iterator_of_a_moved_from_loader_throws_instead_of_crashing) {
  data::DataLoader loader(data::TensorDataset(arange(int64_t{6})), {.batch_size = 2});
  data::DataLoader::Iterator it = loader.begin();
  BOOST_TEST((*it)[0].to_vector<int64_t>() == (std::vector<int64_t>{0, 1}), boost::test_tools::per_element());
  data::DataLoader moved = std::move(loader);
  expect_error({"++ on the old loader's iterator", [&] { ++it; }, Throws::RuntimeError,
                "DataLoader: advancing an iterator of a loader that was moved from"});
  expect_error({"begin() of the moved-from loader", [&] { loader.begin(); }, Throws::RuntimeError,
                "DataLoader: this loader was moved from"});
  expect_error({"++ on a default-constructed iterator",
                [] {
                  data::DataLoader::Iterator none;
                  ++none;
                },
                Throws::RuntimeError, "DataLoader: advancing an iterator that belongs to no loader"});
  BOOST_TEST(one_epoch(moved) == (std::vector<std::vector<int64_t>>{{0, 1}, {2, 3}, {4, 5}}));
}

// ---- read_csv ------------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(read_csv_reads_the_numbers_of_a_plain_or_gzip_file) {
  TempDir dir;
  // A header, spaces, "\r\n", a blank line, signs, exponents; 3 data rows of 3 values.
  const std::string text = "a,b,c\r\n1, 2.5 ,-3\r\n\r\n+4,1e-3,6\n  7,8,9.25";
  const std::vector<double> expected = {1, 2.5, -3, 4, 1e-3, 6, 7, 8, 9.25};
  for (const std::string& path : {dir.write("table.csv", text), dir.write_gzip("table.csv.gz", text)}) {
    BOOST_TEST_CONTEXT(path) {
      const Tensor table = data::read_csv(path, {.skip_header = true});
      BOOST_TEST(table.shape() == Shape({3, 3}));
      BOOST_TEST(table.dtype() == kFloat64);
      BOOST_TEST(table.to_vector<double>() == expected, boost::test_tools::per_element());
    }
  }
  const Tensor semicolons = data::read_csv(dir.write("semi.csv",
                                                     "\xEF\xBB\xBF"
                                                     "1;2\n3;4\n"),
                                           {.delimiter = ';'});
  BOOST_TEST(semicolons.to_vector<double>() == std::vector<double>({1, 2, 3, 4}),  // also: a byte order mark
             boost::test_tools::per_element());
  // A line longer than read_csv's 4096-byte read buffer.
  std::string long_line = "0";
  for (int i = 1; i < 2000; ++i) long_line += std::string(",") += std::to_string(i);
  const Tensor wide = data::read_csv(dir.write("wide.csv", long_line + "\n" + long_line + "\n"));
  BOOST_TEST(wide.shape() == Shape({2, 2000}));
  BOOST_TEST(wide.at({1, 1999}) == 1999.0);
}

BOOST_AUTO_TEST_CASE(read_csv_names_the_file_line_and_column_of_bad_input) {
  TempDir dir;
  std::string lines = "150,4,setosa,versicolor,virginica\n";
  for (int i = 2; i < 17; ++i) lines += "5.1,3.5,1.4,0.2,0\n";
  const std::string bad_value = dir.write("iris.csv", lines + "5.1,3.5,abc,0.2,0\n");
  const std::string ragged = dir.write("ragged.csv", "1,2,3\n4,5,6\n7,8\n");
  const std::string empty_field = dir.write("empty_field.csv", "1,,3\n");
  const std::string trailing = dir.write("trailing.csv", "1,2.5x,3\n");
  const std::string header_only = dir.write("header.csv", "a,b\n\n");
  const std::string huge_field = dir.write("huge.csv", "1," + std::string(100000, 'x') + "\n");
  const std::string not_utf8 = dir.write("not_utf8.csv", "1,a" + std::string(100, '\x80') + "\n");
  const std::string accent =
      dir.write("accent.csv", "1," + std::string(39, 'x') + "\xC3\xA9xx\n");  // é at 40-41
  // The first 2000 bytes of a gzip file: decompression runs out of data in the middle.
  std::string digits;
  {
    std::ifstream in(repo_file("assets/digits.csv.gz"), std::ios::binary);
    digits.assign(2000, '\0');
    in.read(digits.data(), 2000);
  }
  const std::string truncated = dir.write("truncated.csv.gz", digits);
  const std::string missing = (dir.path / "missing.csv").string();

  const std::vector<BadInput> table = {
      {"a missing file", [&] { data::read_csv(missing); }, Throws::RuntimeError,
       "read_csv: cannot open " + missing},
      {"a word among numbers", [&] { data::read_csv(bad_value, {.skip_header = true}); },
       Throws::RuntimeError, "read_csv: " + bad_value + ":17: column 3: \"abc\" is not a number"},
      {"a header not skipped", [&] { data::read_csv(bad_value); }, Throws::RuntimeError,
       bad_value + ":1: column 3: \"setosa\" is not a number"},
      {"a short row", [&] { data::read_csv(ragged); }, Throws::RuntimeError,
       ragged + ":3: 2 values, but line 1 has 3"},
      {"an empty field", [&] { data::read_csv(empty_field); }, Throws::RuntimeError,
       ":1: column 2: \"\" is not a number"},
      {"a number followed by text", [&] { data::read_csv(trailing); }, Throws::RuntimeError,
       ":1: column 2: \"2.5x\" is not a number"},
      {"no data lines", [&] { data::read_csv(header_only, {.skip_header = true}); }, Throws::RuntimeError,
       header_only + " has no data lines"},
      // Regression: the message quoted the whole field, 100,000 bytes of it.
      {"a huge field is quoted by its start", [&] { data::read_csv(huge_field); }, Throws::RuntimeError,
       huge_field + ":1: column 2: \"" + std::string(40, 'x') + "...\" (100000 bytes) is not a number"},
      {"a quoted start ends before a UTF-8 character it would cut", [&] { data::read_csv(accent); },
       Throws::RuntimeError, ": column 2: \"" + std::string(39, 'x') + "...\" (43 bytes)"},
      // Review: a run of continuation bytes (not UTF-8) was backed over whole, and nothing shown.
      {"bytes that are not UTF-8 are cut at 40", [&] { data::read_csv(not_utf8); }, Throws::RuntimeError,
       ": column 2: \"a" + std::string(39, '\x80') + "...\" (101 bytes)"},
      {"a truncated gzip file", [&] { data::read_csv(truncated); }, Throws::RuntimeError, "cannot read"},
  };
  for (const BadInput& bad : table) expect_error(bad);
}

BOOST_AUTO_TEST_CASE(read_csv_refuses_a_nul_byte_instead_of_merging_lines_and_names_its_line_and_column) {
  TempDir dir;
  using namespace std::string_literals;
  const std::string nul = dir.write("nul.csv", "1,2\0,3\n4,5,6\n"s);  // once read as [1, 24, 5, 6]
  const std::string nul_gzip = dir.write_gzip("nul.csv.gz", "1,2,3\n4,5,6\n\0\n"s);  // a line that is one NUL
  const std::string nul_header = dir.write("nul_header.csv", "a,b\0c\n1,2\n"s);
  const std::string control = dir.write("control.csv", "1,2\n3,\x1b[1m4\n");
  const std::string lone_cr = dir.write("cr.csv", "1,2\r3,4\n");
  const std::string plus_minus = dir.write("plus_minus.csv", "1,+-1\n");
  const std::string plus_plus = dir.write("plus_plus.csv", "1,++1\n");
  const std::vector<BadInput> table = {
      {"a NUL inside a line", [&] { data::read_csv(nul); }, Throws::RuntimeError,
       nul + ":1: column 2: byte 0x00 at character 4 is not allowed in a CSV file"},
      {"a line of one NUL in a gzip file", [&] { data::read_csv(nul_gzip); }, Throws::RuntimeError,
       nul_gzip + ":3: column 1: byte 0x00 at character 1 is not allowed"},
      {"a NUL in a skipped header", [&] { data::read_csv(nul_header, {.skip_header = true}); },
       Throws::RuntimeError, nul_header + ":1: column 2: byte 0x00 at character 4"},
      {"an escape sequence", [&] { data::read_csv(control); }, Throws::RuntimeError,
       control + ":2: column 2: byte 0x1b at character 3"},
      {"a carriage return inside a line", [&] { data::read_csv(lone_cr); }, Throws::RuntimeError,
       lone_cr + ":1: column 2: byte 0x0d at character 4"},
      {"a plus before a minus", [&] { data::read_csv(plus_minus); }, Throws::RuntimeError,
       plus_minus + ":1: column 2: \"+-1\" is not a number"},
      {"two plus signs", [&] { data::read_csv(plus_plus); }, Throws::RuntimeError,
       plus_plus + ":1: column 2: \"++1\" is not a number"},
  };
  for (const BadInput& bad : table) expect_error(bad);

  // Empty lines anywhere, a file of one empty line, and a last line without "\n" stay fine.
  const Tensor table_with_gaps = data::read_csv(dir.write("gaps.csv", "\n\n1,2\n\n\r\n3,4"));
  BOOST_TEST(table_with_gaps.to_vector<double>() == std::vector<double>({1, 2, 3, 4}),
             boost::test_tools::per_element());
  expect_error({"a file of one empty line", [&] { data::read_csv(dir.write("blank.csv", "\n")); },
                Throws::RuntimeError, "has no data lines"});
}

BOOST_AUTO_TEST_CASE(read_csv_of_a_named_pipe_throws_instead_of_blocking) {
  TempDir dir;
  const std::string fifo = (dir.path / "pipe.csv").string();
  BOOST_TEST_REQUIRE(::mkfifo(fifo.c_str(), 0600) == 0);
  expect_error({"a named pipe with no writer", [&] { data::read_csv(fifo); }, Throws::RuntimeError,
                "read_csv: cannot open " + fifo + " (not a regular file)"});
  expect_error(
      {"a folder", [&] { data::read_csv(dir.path.string()); }, Throws::RuntimeError, "(not a regular file)"});
}

// ---- real data sets ------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(load_iris_gives_150_flowers_of_3_classes) {
  const auto [x, y] = data::load_iris(repo_file("assets/iris.csv"));
  BOOST_TEST(x.shape() == Shape({150, 4}));
  BOOST_TEST(x.dtype() == kFloat32);
  BOOST_TEST(y.shape() == Shape({150}));
  BOOST_TEST(y.dtype() == kInt64);
  // First and last lines of the file: 5.1,3.5,1.4,0.2,0 and 5.9,3.0,5.1,1.8,2.
  BOOST_TEST(x[0].to_vector<float>() == std::vector<float>({5.1f, 3.5f, 1.4f, 0.2f}),
             boost::test_tools::per_element());
  BOOST_TEST(x[149].to_vector<float>() == std::vector<float>({5.9f, 3.0f, 5.1f, 1.8f}),
             boost::test_tools::per_element());
  BOOST_TEST(y.at({0}) == 0.0);
  BOOST_TEST(y.at({149}) == 2.0);
  for (int64_t c = 0; c < 3; ++c) BOOST_TEST((y == scalar_tensor(c)).sum().item<int64_t>() == 50);
}

BOOST_AUTO_TEST_CASE(load_digits_gives_1797_images_with_known_class_counts) {
  const auto [x, y] = data::load_digits(repo_file("assets/digits.csv.gz"));
  BOOST_TEST(x.shape() == Shape({1797, 64}));
  BOOST_TEST(x.dtype() == kFloat32);
  BOOST_TEST(y.shape() == Shape({1797}));
  BOOST_TEST(y.dtype() == kInt64);
  // The file's first line starts 0,0,5,13,9,1,0,0 and ends with the digit 0; the last ends with 8.
  BOOST_TEST(x[0].slice(0, 0, 8).to_vector<float>() == std::vector<float>({0, 0, 5, 13, 9, 1, 0, 0}),
             boost::test_tools::per_element());
  BOOST_TEST(y.at({0}) == 0.0);
  BOOST_TEST(y.at({1796}) == 8.0);
  BOOST_TEST(x.min().item<float>() == 0.0f);
  BOOST_TEST(x.max().item<float>() == 16.0f);
  // sklearn's documented counts, also recounted by the reference script.
  const std::vector<int64_t> counts = {178, 182, 177, 183, 181, 182, 181, 179, 174, 180};
  BOOST_TEST(fixture()["digits_class_counts"].get<std::vector<int64_t>>() == counts,
             boost::test_tools::per_element());
  for (int64_t c = 0; c < 10; ++c) BOOST_TEST((y == scalar_tensor(c)).sum().item<int64_t>() == counts[c]);
}

BOOST_AUTO_TEST_CASE(loading_a_wrong_file_names_the_file_and_row) {
  TempDir dir;
  const std::string three_columns = dir.write("iris3.csv", "150,4,a,b,c\n1,2,3\n");
  const std::string class_3 = dir.write("iris_c3.csv", "150,4,a,b,c\n1,2,3,4,0\n1,2,3,4,3\n");
  const std::string class_half = dir.write("iris_half.csv", "150,4,a,b,c\n1,2,3,4,1.5\n");
  const std::string digits_5 = dir.write("digits.csv", "1,2,3,4,5\n");
  const std::vector<BadInput> table = {
      {"iris with 3 columns", [&] { data::load_iris(three_columns); }, Throws::RuntimeError,
       "load_iris: " + three_columns + " has 3 columns, expected 5 (4 features, then the class)"},
      {"iris class 3", [&] { data::load_iris(class_3); }, Throws::RuntimeError,
       "load_iris: " + class_3 + ": data row 2 has class 3, expected an integer 0..2"},
      {"iris class 1.5", [&] { data::load_iris(class_half); }, Throws::RuntimeError,
       "data row 1 has class 1.5"},
      {"digits with 5 columns", [&] { data::load_digits(digits_5); }, Throws::RuntimeError,
       "load_digits: " + digits_5 + " has 5 columns, expected 65"},
      {"a missing file", [&] { data::load_iris((dir.path / "none.csv").string()); }, Throws::RuntimeError,
       "read_csv: cannot open"},
  };
  for (const BadInput& bad : table) expect_error(bad);
}

// ---- toy data sets -------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(toy_data_sets_match_their_pytorch_twins_exactly) {
  for (const json& c : fixture()["moons"]) {
    BOOST_TEST_CONTEXT("make_moons n " << c["n"] << ", noise " << c["noise"] << ", seed " << c["seed"]) {
      Generator generator(c["seed"].get<uint64_t>());
      const auto [x, y] = data::make_moons(c["n"].get<int64_t>(), c["noise"].get<double>(), generator);
      expect_floats(x, c["x"]);
      BOOST_TEST(y.to_vector<int64_t>() == c["y"].get<std::vector<int64_t>>(),
                 boost::test_tools::per_element());
    }
  }
  for (const json& c : fixture()["spiral"]) {
    BOOST_TEST_CONTEXT("make_spiral " << c["n_per_class"] << " x " << c["n_classes"] << ", seed "
                                      << c["seed"]) {
      Generator generator(c["seed"].get<uint64_t>());
      const auto [x, y] = data::make_spiral(c["n_per_class"].get<int64_t>(), c["n_classes"].get<int64_t>(),
                                            c["noise"].get<double>(), generator);
      expect_floats(x, c["x"]);
      BOOST_TEST(y.to_vector<int64_t>() == c["y"].get<std::vector<int64_t>>(),
                 boost::test_tools::per_element());
    }
  }
  for (const json& c : fixture()["regression"]) {
    BOOST_TEST_CONTEXT("make_regression n " << c["n"] << ", noise " << c["noise"] << ", seed " << c["seed"]) {
      Generator generator(c["seed"].get<uint64_t>());
      const auto [x, y] = data::make_regression(c["n"].get<int64_t>(), c["noise"].get<double>(), generator);
      expect_floats(x, c["x"]);
      expect_floats(y, c["y"]);
    }
  }
}

BOOST_AUTO_TEST_CASE(toy_data_sets_without_noise_lie_on_their_curves) {
  const auto [moons, moon_labels] = data::make_moons(11, 0.0);
  BOOST_TEST(moons.shape() == Shape({11, 2}));
  BOOST_TEST(moon_labels.to_vector<int64_t>() == std::vector<int64_t>({0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1}),
             boost::test_tools::per_element());
  for (int64_t i = 0; i < 11; ++i) {  // unit circles around (0, 0) and (1, 0.5)
    const double cx = i < 5 ? 0.0 : 1.0, cy = i < 5 ? 0.0 : 0.5;
    BOOST_TEST(std::hypot(moons.at({i, 0}) - cx, moons.at({i, 1}) - cy) == 1.0,
               boost::test_tools::tolerance(1e-6));
  }

  const auto [spiral, arms] = data::make_spiral(5, 3, 0.0);
  BOOST_TEST(spiral.shape() == Shape({15, 2}));
  BOOST_TEST(arms.at({14}) == 2.0);
  BOOST_TEST(std::hypot(spiral.at({7, 0}), spiral.at({7, 1})) == 0.5, boost::test_tools::tolerance(1e-6));
  BOOST_TEST(spiral.at({4, 0}) == static_cast<float>(std::sin(4.0)));  // arm 0 ends at r = 1, t = 4

  const auto [x, y] = data::make_regression(50, 0.0);
  BOOST_TEST(y.shape() == Shape({50, 1}));
  for (int64_t i = 0; i < 50; ++i) {
    BOOST_TEST((x.at({i, 0}) >= -3.0 && x.at({i, 0}) < 3.0));
    BOOST_TEST(y.at({i, 0}) == std::sin(x.at({i, 0})), boost::test_tools::tolerance(1e-6));
  }
}

BOOST_AUTO_TEST_CASE(teacher_student_draws_inputs_with_randn_and_keeps_no_graph) {
  const Tensor weight = tensor({{1, -2}, {0.5, 3}, {2, 1}}).requires_grad_();
  const auto teacher = [&](const Tensor& x) { return matmul(x, weight) + 1.0; };
  Generator generator(5), replay(5);
  const auto [x, y] = data::teacher_student(teacher, {8, 3}, generator);

  BOOST_TEST(x.equal(randn({8, 3}, replay)));
  BOOST_TEST(y.shape() == Shape({8, 2}));
  BOOST_TEST(!y.requires_grad());
  BOOST_TEST(y.grad_fn() == nullptr);
  for (int64_t n = 0; n < 8; ++n) {
    const double expected = x.at({n, 0}) * 1 + x.at({n, 1}) * 0.5 + x.at({n, 2}) * 2 + 1;
    BOOST_TEST(y.at({n, 0}) == expected, boost::test_tools::tolerance(1e-5));
  }
}

BOOST_AUTO_TEST_CASE(toy_generators_reject_bad_arguments) {
  const std::vector<BadInput> table = {
      {"moons n 0", [] { data::make_moons(0, 0.1); }, Throws::InvalidArgument,
       "make_moons: n must be at least 1, got 0"},
      {"moons negative noise", [] { data::make_moons(10, -1.0); }, Throws::InvalidArgument,
       "make_moons: noise must be non-negative, got -1"},
      {"spiral 0 per class", [] { data::make_spiral(0, 3, 0.2); }, Throws::InvalidArgument,
       "make_spiral: n_per_class must be at least 1, got 0"},
      {"spiral 0 classes", [] { data::make_spiral(5, 0, 0.2); }, Throws::InvalidArgument,
       "make_spiral: n_classes must be at least 1, got 0"},
      {"spiral negative noise", [] { data::make_spiral(5, 3, -0.2); }, Throws::InvalidArgument,
       "make_spiral: noise must be non-negative"},
      // 2^62 * 4 wrapped to 0 rows, which the loops then wrote past.
      {"spiral whose row count overflows", [] { data::make_spiral(int64_t{1} << 62, 4, 0.2); },
       Throws::InvalidArgument,
       "make_spiral: n_per_class * n_classes (4611686018427387904 * 4) overflows int64"},
      {"regression n -1", [] { data::make_regression(-1, 0.1); }, Throws::InvalidArgument,
       "make_regression: n must be at least 1, got -1"},
      {"regression negative noise", [] { data::make_regression(5, -0.1); }, Throws::InvalidArgument,
       "make_regression: noise must be non-negative"},
      {"teacher on a 0-d shape", [] { data::teacher_student([](const Tensor& x) { return x; }, {}); },
       Throws::InvalidArgument, "teacher_student: input_shape must have a first dimension"},
      {"teacher returning nothing",
       [] {
         data::teacher_student([](const Tensor&) { return Tensor(); }, {4, 2});
       },
       Throws::InvalidArgument,
       "teacher_student: the teacher returned an undefined tensor for inputs [4, 2]"},
      {"teacher changing the first size",
       [] {
         data::teacher_student([](const Tensor& x) { return x.t(); }, {4, 2});
       },
       Throws::InvalidArgument, "teacher_student: the teacher mapped inputs [4, 2] to [2, 4]"},
  };
  for (const BadInput& bad : table) expect_error(bad);
}

BOOST_AUTO_TEST_SUITE_END()
