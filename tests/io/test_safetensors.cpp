// Tests for io/safetensors.hpp, checkpoints in the safetensors format. Round trips of every dtype
// (0-d and empty tensors, NaN, metadata); the bytes of tiny files, worked out by hand and from
// safetensors' own test vectors; the PyTorch-trained FeedForward of
// tools/reference/checkpoint_reference.py, loaded (outputs within 1e-5) and saved again byte for
// byte; loads that do not fit the model; every kind of damaged file; saves killed at random moments.
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <boost/test/unit_test.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <new>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "autograd/ops.hpp"
#include "autograd/random.hpp"
#include "io/safetensors.hpp"
#include "nn/feedforward.hpp"
#include "nn/fixture_support.hpp"
#include "nn/linear.hpp"
#include "optim/sgd.hpp"

// Every allocation through operator new in this test program, counted: a test below bounds what
// loading a hostile file allocates. Every plain, array and nothrow form is replaced, so that each
// delete meets its own new (AddressSanitizer checks the pairs); the aligned forms stay the
// library's, in pairs of their own. (Not inlined: GCC 12 then warns wrongly of mismatches.)
std::atomic<uint64_t> g_allocated_bytes{0};
[[gnu::noinline]] void* counted_malloc(std::size_t bytes) noexcept {
  g_allocated_bytes += bytes;
  return std::malloc(bytes == 0 ? 1 : bytes);
}
[[gnu::noinline]] void* operator new(std::size_t bytes) {
  if (void* p = counted_malloc(bytes)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new[](std::size_t bytes) {
  if (void* p = counted_malloc(bytes)) return p;
  throw std::bad_alloc();
}
[[gnu::noinline]] void* operator new(std::size_t bytes, const std::nothrow_t&) noexcept {
  return counted_malloc(bytes);
}
[[gnu::noinline]] void* operator new[](std::size_t bytes, const std::nothrow_t&) noexcept {
  return counted_malloc(bytes);
}
[[gnu::noinline]] void operator delete(void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, std::size_t) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete(void* p, const std::nothrow_t&) noexcept { std::free(p); }
[[gnu::noinline]] void operator delete[](void* p, const std::nothrow_t&) noexcept { std::free(p); }

namespace {

using namespace minigrad;
using nn_test::check_close;
using nn_test::check_throws;
using nn_test::fixture;
using nn_test::json;
namespace fs = std::filesystem;

/// A new empty folder under the system's temporary folder, deleted with its contents afterwards.
struct TempFolder {
  fs::path path;
  TempFolder() {
    std::string pattern = (fs::temp_directory_path() / "minigrad-serialize-XXXXXX").string();
    BOOST_TEST_REQUIRE(::mkdtemp(pattern.data()) != nullptr);
    path = pattern;
  }
  ~TempFolder() {
    std::error_code ignored;
    fs::remove_all(path, ignored);
  }
  std::string file(const std::string& name) const { return (path / name).string(); }
  std::vector<std::string> names() const {
    std::vector<std::string> out;
    for (const auto& entry : fs::directory_iterator(path)) out.push_back(entry.path().filename().string());
    return out;
  }
};

std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

/// n as 8 little-endian bytes, byte by byte (independent of the host's byte order).
std::string u64_bytes(uint64_t n) {
  std::string out;
  for (int i = 0; i < 8; ++i) out += static_cast<char>((n >> (8 * i)) & 0xff);
  return out;
}

/// A file with this header text (N = its length, unless `length` is given) and `data` zero bytes.
std::string file_with(const std::string& header, size_t data = 0,
                      std::optional<uint64_t> length = std::nullopt) {
  return u64_bytes(length.value_or(header.size())) + header + std::string(data, '\0');
}

/// "0,0,...,0": n zeros.
std::string list_of(size_t n) {
  std::string text = "0";
  for (size_t i = 1; i < n; ++i) text += ",0";
  return text;
}

/// "\"k0\":0,\"k1\":0,...": n keys.
std::string keys_of(size_t n) {
  std::string text;
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) text += ',';
    text += "\"k";
    text += std::to_string(i);
    text += "\":0";
  }
  return text;
}

/// A header of n one-byte BOOL tensors t0, t1, ... in order, without its closing brace.
std::string many_tensors(size_t n) {
  std::string text = "{";
  for (size_t k = 0; k < n; ++k) {
    // Appended piece by piece: GCC 12 warns falsely (-Wrestrict) about "literal" + std::string.
    if (k > 0) text += ',';
    text += R"("t)";
    text += std::to_string(k);
    text += R"(":{"dtype":"BOOL","shape":[1],"data_offsets":[)";
    text += std::to_string(k);
    text += ',';
    text += std::to_string(k + 1);
    text += "]}";
  }
  return text;
}

/// The raw bytes of a tensor's storage.
std::string storage_bytes(const Tensor& t) {
  return std::string(static_cast<const char*>(t.impl()->data()),
                     static_cast<size_t>(t.numel()) * element_size(t.dtype()));
}

/// Every parameter's values, to check that a failed load changed nothing.
std::vector<std::vector<double>> snapshot(const nn::Module& module) {
  std::vector<std::vector<double>> out;
  for (const Tensor& p : module.parameters()) out.push_back(p.to_vector<double>());
  return out;
}

BOOST_AUTO_TEST_SUITE(serialize)

// ---- round trips and layout -----------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(every_dtype_and_shape_round_trips_bit_for_bit_with_its_metadata) {
  const float nan = std::numeric_limits<float>::quiet_NaN(), inf = std::numeric_limits<float>::infinity();
  const nn::NamedTensors tensors = {
      {"float32 matrix", tensor(std::vector<float>{1.5f, -2.25f, 3e-8f, 0.0f, -0.0f, 1e30f}, {2, 3})},
      {"float32 NaN and infinities", tensor(std::vector<float>{nan, inf, -inf}, {3})},
      {"float64 beyond float32",
       tensor(std::vector<double>{0.1, 1e300, -1e-300}, {3, 1}, {.dtype = kFloat64})},
      {"int64 extremes", tensor(std::vector<int64_t>{std::numeric_limits<int64_t>::min(), -1, 0,
                                                     std::numeric_limits<int64_t>::max()},
                                {2, 2})},
      {"bool", tensor(std::vector<bool>{true, false, false, true, true}, {5})},
      {"0-d float32", scalar_tensor(2.5)},
      {"0-d int64", scalar_tensor(7, {.dtype = kInt64})},
      {"empty [0]", zeros({0})},
      {"empty [2, 0, 3] float64", zeros({2, 0, 3}, {.dtype = kFloat64})},
      {"", ones({1}, {.dtype = kBool})},  // the empty name is a name too
  };
  const Metadata metadata = {{"epoch", "12"}, {"note", "π ≈ 3.14, in UTF-8"}, {"", ""}};
  TempFolder folder;
  const std::string path = folder.file("all.safetensors");
  save_file(tensors, path, metadata);

  const nn::NamedTensors loaded = load_file(path);
  // The file's order: int64, float64, float32, bool (safetensors' widest first), by name within each.
  const std::vector<std::string> file_order = {"0-d int64",
                                               "int64 extremes",
                                               "empty [2, 0, 3] float64",
                                               "float64 beyond float32",
                                               "0-d float32",
                                               "empty [0]",
                                               "float32 NaN and infinities",
                                               "float32 matrix",
                                               "",
                                               "bool"};
  BOOST_TEST_REQUIRE(loaded.size() == file_order.size());
  for (size_t i = 0; i < loaded.size(); ++i) BOOST_TEST(loaded[i].first == file_order[i]);
  for (const auto& [name, original] : tensors) {
    BOOST_TEST_CONTEXT(name) {
      const auto found =
          std::find_if(loaded.begin(), loaded.end(), [&](const auto& item) { return item.first == name; });
      BOOST_TEST_REQUIRE((found != loaded.end()));
      const Tensor& copy = found->second;
      BOOST_TEST(copy.dtype() == original.dtype());
      BOOST_TEST(copy.shape() == original.shape());
      BOOST_TEST(storage_bytes(copy) == storage_bytes(original));  // bitwise, so NaN and -0.0 count too
      BOOST_TEST(!copy.requires_grad());
    }
  }
  BOOST_TEST((load_metadata(path) == metadata));
}

BOOST_AUTO_TEST_CASE(a_tiny_file_has_the_bytes_worked_out_by_hand) {
  TempFolder folder;
  const std::string path = folder.file("tiny.safetensors");
  save_file({{"weight", tensor(std::vector<float>{1.0f, -2.0f}, {2})},
             {"mask", tensor(std::vector<bool>{true, false, true}, {3})},
             {"step", scalar_tensor(3, {.dtype = kInt64})},
             {"zz", tensor(std::vector<double>{0.5}, {1}, {.dtype = kFloat64})}},
            path, {{"epoch", "1"}});
  const std::string bytes = read_bytes(path);

  // Widest dtype first: step (I64) at [0, 8), zz (F64) at [8, 16), weight (F32) at [16, 24),
  // mask (BOOL) at [24, 27). The JSON is 259 characters, padded with 5 spaces to 264 = 33 * 8.
  const std::string json_text = R"({"__metadata__":{"epoch":"1"},)"
                                R"("step":{"dtype":"I64","shape":[],"data_offsets":[0,8]},)"
                                R"("zz":{"dtype":"F64","shape":[1],"data_offsets":[8,16]},)"
                                R"("weight":{"dtype":"F32","shape":[2],"data_offsets":[16,24]},)"
                                R"("mask":{"dtype":"BOOL","shape":[3],"data_offsets":[24,27]}})";
  BOOST_TEST(json_text.size() == 259u);
  const std::string data = std::string("\x03\0\0\0\0\0\0\0", 8)      // 3 as int64
                           + std::string("\0\0\0\0\0\0\xe0\x3f", 8)  // 0.5 = 0x3FE0000000000000
                           +
                           std::string("\0\0\x80\x3f\0\0\0\xc0", 8)  // 1.0f = 0x3F800000, -2.0f = 0xC0000000
                           + std::string("\x01\x00\x01", 3);         // true, false, true
  BOOST_TEST_REQUIRE(bytes.size() == 8u + 264u + 27u);
  BOOST_TEST(bytes.substr(0, 8) == u64_bytes(264));
  BOOST_TEST(bytes.substr(8, 264) == json_text + "     ");
  BOOST_TEST(bytes.substr(272) == data);
}

// The byte-exact expectations of safetensors' own Rust tests (test_serialization, test_empty,
// test_serialization_forced_alignement in safetensors/src/tensor.rs).
BOOST_AUTO_TEST_CASE(files_match_safetensors_own_test_vectors_byte_for_byte) {
  const Tensor counting = tensor(std::vector<float>{0, 1, 2, 3, 4, 5}, {1, 2, 3});
  const std::string counting_bytes =
      std::string("\0\0\0\0\0\0\x80\x3f\0\0\0\x40\0\0\x40\x40\0\0\x80\x40\0\0\xa0\x40", 24);
  struct Case {
    const char* what;
    nn::NamedTensors tensors;
    Metadata metadata;
    std::string expected;
  };
  const std::vector<Case> cases = {
      {"one tensor, JSON already a multiple of 8",
       {{"attn.0", counting}},
       {},
       u64_bytes(64) + R"({"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}})" +
           counting_bytes},
      {"one tensor, JSON padded with 7 spaces",
       {{"attn0", counting.reshape({1, 1, 2, 3})}},
       {},
       u64_bytes(72) + R"({"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}})" + "       " +
           counting_bytes},
      {"no tensors", {}, {}, u64_bytes(8) + "{}      "},
      {"no tensors, with metadata",
       {},
       {{"framework", "pt"}},
       u64_bytes(40) + R"({"__metadata__":{"framework":"pt"}})" + "     "},
  };
  TempFolder folder;
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      const std::string path = folder.file("vector.safetensors");
      save_file(c.tensors, path, c.metadata);
      BOOST_TEST(read_bytes(path) == c.expected);
    }
  }
}

BOOST_AUTO_TEST_CASE(optimizer_state_round_trips_through_the_map_overload) {
  manual_seed(0);
  nn::Linear layer(3, 2);
  optim::SGD optimizer(layer.parameters(), {.lr = 0.1, .momentum = 0.9});
  layer(randn({4, 3})).pow(2).sum().backward();
  optimizer.step();

  TempFolder folder;
  const std::string path = folder.file("optimizer.safetensors");
  const std::map<std::string, Tensor> state = optimizer.state_dict();
  save_file(state, path);
  const nn::NamedTensors loaded = load_file(path);
  const std::map<std::string, Tensor> back(loaded.begin(), loaded.end());
  BOOST_TEST_REQUIRE(back.size() == state.size());
  for (const auto& [key, value] : state) {
    BOOST_TEST_CONTEXT(key) {
      BOOST_TEST_REQUIRE(back.count(key) == 1u);
      BOOST_TEST(storage_bytes(back.at(key)) == storage_bytes(value));
      BOOST_TEST(back.at(key).shape() == value.shape());
    }
  }
  nn::Linear other_layer(3, 2);
  optim::SGD other(other_layer.parameters(), {.lr = 0.5, .momentum = 0.9});
  BOOST_CHECK_NO_THROW(other.load_state_dict(back));
  BOOST_TEST(other.lr() == 0.1);
}

// ---- interop with PyTorch ---------------------------------------------------------------------------

const json& pytorch() { return fixture("feedforward_pytorch.json"); }
const std::string pytorch_file = std::string(MINIGRAD_FIXTURES_DIR) + "/feedforward_pytorch.safetensors";

/// The script's fixed input: element i = ((7 i) mod 17 - 8) / 8, shape [2, 128].
Tensor fixed_input() {
  std::vector<float> values;
  for (int i = 0; i < 2 * 128; ++i) values.push_back(static_cast<float>((7 * i) % 17 - 8) / 8.0f);
  return tensor(values, {2, 128});
}

BOOST_AUTO_TEST_CASE(a_feedforward_trained_in_pytorch_loads_and_gives_pytorchs_outputs) {
  nn::FeedForward ff;
  load(ff, pytorch_file);
  check_close(fixed_input(), pytorch()["input"], 0.0, "input");
  check_close(ff(fixed_input()), pytorch()["output"], 1e-5, "output");

  std::vector<std::string> names;
  for (const auto& [name, t] : load_file(pytorch_file)) names.push_back(name);
  std::vector<std::string> expected = pytorch()["names"].get<std::vector<std::string>>();
  std::sort(expected.begin(), expected.end());  // all F32, so the file holds them by name
  BOOST_TEST(names == expected, boost::test_tools::per_element());
  BOOST_TEST((load_metadata(pytorch_file) == pytorch()["metadata"].get<Metadata>()));
}

BOOST_AUTO_TEST_CASE(saving_the_pytorch_model_again_gives_the_same_bytes) {
  TempFolder folder;
  const std::string path = folder.file("again.safetensors");
  nn::FeedForward ff;
  load(ff, pytorch_file);
  save(ff, path, load_metadata(pytorch_file));
  const std::string ours = read_bytes(path), theirs = read_bytes(pytorch_file);
  BOOST_TEST(ours.size() == pytorch()["file_bytes"].get<size_t>());
  BOOST_TEST(ours.substr(0, 8) == u64_bytes(pytorch()["header_length"].get<uint64_t>()));
  BOOST_TEST((ours == theirs), "the re-saved file differs from PyTorch's");
}

// ---- loading into a model that does not fit ----------------------------------------------------------

BOOST_AUTO_TEST_CASE(a_checkpoint_that_does_not_fit_throws_and_leaves_the_model_unchanged) {
  manual_seed(0);
  const nn::FeedForward narrow(4, 2);  // net.0.weight [8, 4]
  struct Case {
    const char* what;
    nn::NamedTensors state;  // what the file holds
    bool damaged;            // true: a bad file (runtime_error); false: tensors that do not fit
    std::vector<std::string> fragments;
  };
  const nn::FeedForward same(8, 2);
  nn::NamedTensors missing = same.state_dict(), unexpected = same.state_dict(), float64 = same.state_dict();
  missing.pop_back();
  unexpected.emplace_back("net.3.weight", zeros({2}));
  float64[0].second = float64[0].second.to(kFloat64);
  const std::vector<Case> cases = {
      {"another width",
       narrow.state_dict(),
       false,
       {R"(size mismatch for "net.0.weight": [8, 4])", "[16, 8]"}},
      {"a missing name", missing, false, {R"(missing key "net.2.bias")"}},
      {"an unexpected name", unexpected, false, {R"(unexpected key "net.3.weight")"}},
      {"float64 weights", float64, false, {R"(dtype mismatch for "net.0.weight": float64)"}},
      {"a truncated file", same.state_dict(), true, {"run past the end of the file"}},
  };
  TempFolder folder;
  const std::string path = folder.file("model.safetensors");
  nn::FeedForward ff(8, 2);
  const auto before = snapshot(ff);
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      save_file(c.state, path);
      std::vector<std::string> fragments = c.fragments;
      if (c.damaged) {
        const std::string bytes = read_bytes(path);
        write_bytes(path, bytes.substr(0, bytes.size() - 4));
        fragments.push_back("load_file: " + path + ": ");
        check_throws<std::runtime_error>([&] { load(ff, path); }, fragments);
      } else {
        fragments.push_back("load: " + path + ": ");
        check_throws<std::invalid_argument>([&] { load(ff, path); }, fragments);
      }
      BOOST_TEST((snapshot(ff) == before), "the model changed");
    }
  }
}

// ---- damaged and hostile files ----------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(every_kind_of_damaged_file_is_refused_with_a_message_naming_the_problem) {
  const std::string w = R"({"w":{"dtype":"F32","shape":[2],"data_offsets":[0,8]}})";
  auto one = [](const std::string& fields) { return R"({"w":{)" + fields + "}}"; };
  struct Case {
    const char* what;
    std::string bytes;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"an empty file", "", "the file is 0 bytes long, too short for the 8-byte header length"},
      {"a file shorter than 8 bytes", std::string("\x08\0\0", 3), "the file is 3 bytes long"},
      {"a header length past the end", file_with("{}", 0, 1000),
       "header length 1000 runs past the end of the file (10 bytes)"},
      {"a header length over 100 MB", file_with("{}", 0, 100'000'001),
       "header length 100000001 is over the limit of 100000000"},
      {"a header length of 2^64 - 1", file_with("{}", 0, UINT64_MAX),
       "header length 18446744073709551615 is over the limit"},
      {"a header that is not JSON", file_with(R"({"w":{"dtype":"F32",)"), "the header is not valid JSON"},
      {"a name that is not UTF-8", file_with("{\"w\xff\":{}}"), "the header is not valid JSON"},
      {"a header that is a list", file_with("[1,2]"), "the header is a JSON array, not an object"},
      {"an entry that is not an object", file_with(R"({"w":5})"),
       R"(tensor "w": expected an object with dtype, shape and data_offsets, got number)"},
      {"a missing field", file_with(one(R"("dtype":"F32","data_offsets":[0,4])"), 4),
       R"(tensor "w": missing field "shape")"},
      {"an unknown field",
       file_with(one(R"("dtype":"F32","shape":[1],"data_offsets":[0,4],"offsets":[0,4])"), 4),
       R"(tensor "w": unknown field "offsets")"},
      {"an unknown dtype", file_with(one(R"("dtype":"F16","shape":[2],"data_offsets":[0,4])"), 4),
       R"(tensor "w": unknown dtype "F16")"},
      {"a dtype that is not a string", file_with(one(R"("dtype":32,"shape":[1],"data_offsets":[0,4])"), 4),
       "unknown dtype 32"},
      {"a shape that is not a list", file_with(one(R"("dtype":"F32","shape":1,"data_offsets":[0,4])"), 4),
       "shape 1 is not a list"},
      {"a negative size", file_with(one(R"("dtype":"F32","shape":[-2],"data_offsets":[0,8])"), 8),
       "shape entry -2 is negative"},
      {"a fractional size", file_with(one(R"("dtype":"F32","shape":[1.5],"data_offsets":[0,8])"), 8),
       "shape entry 1.5 is not an integer"},
      {"a size written as a float", file_with(one(R"("dtype":"F32","shape":[2.0],"data_offsets":[0,8])"), 8),
       "shape entry 2.0 is not an integer"},
      {"a size written as a string", file_with(one(R"("dtype":"F32","shape":["2"],"data_offsets":[0,8])"), 8),
       R"(shape entry "2" is not a number)"},
      {"a size beyond int64",
       file_with(one(R"("dtype":"F32","shape":[9223372036854775808],"data_offsets":[0,8])"), 8),
       "shape entry 9223372036854775808 does not fit in int64"},
      {"an element count beyond int64",
       file_with(one(R"("dtype":"F32","shape":[4611686018427387904,4],"data_offsets":[0,8])"), 8),
       "shape [4611686018427387904, 4] has more elements than int64 can count"},
      {"a byte count beyond int64",
       file_with(one(R"("dtype":"F64","shape":[2305843009213693952],"data_offsets":[0,8])"), 8),
       "shape [2305843009213693952] of F64 needs more bytes than int64 can count"},
      {"offsets that do not match the shape",
       file_with(R"({"net.0.weight":{"dtype":"F32","shape":[512,128],"data_offsets":[0,100]}})", 100),
       R"(model.safetensors: tensor "net.0.weight": data_offsets [0, 100] hold 100 bytes but shape [512, 128] of F32 needs 262144)"},
      {"offsets that are not a pair", file_with(one(R"("dtype":"F32","shape":[1],"data_offsets":[0])"), 4),
       "data_offsets [0] is not a pair [begin, end]"},
      {"a negative offset", file_with(one(R"("dtype":"F32","shape":[1],"data_offsets":[-4,0])"), 4),
       "offset -4 is negative"},
      {"offsets that end before they begin",
       file_with(one(R"("dtype":"F32","shape":[1],"data_offsets":[8,4])"), 8),
       "data_offsets [8, 4] end before they begin"},
      {"offsets past the end of the file", file_with(w, 4),
       R"(tensor "w": data_offsets [0, 8] run past the end of the file (4 bytes of data after the header))"},
      {"offsets near 2^63",
       file_with(one(R"("dtype":"F32","shape":[2],"data_offsets":[9223372036854775799,9223372036854775807])"),
                 8),
       "run past the end of the file"},
      {"overlapping tensors",
       file_with(
           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[4,12]}})",
           12),
       R"(tensor "b": data_offsets [4, 12] overlap tensor "a" (which ends at 8))"},
      {"a gap between tensors",
       file_with(
           R"({"a":{"dtype":"F32","shape":[2],"data_offsets":[0,8]},"b":{"dtype":"F32","shape":[2],"data_offsets":[12,20]}})",
           20),
       R"(tensor "b": data_offsets [12, 20] leave a gap of 4 bytes after tensor "a" (which ends at 8))"},
      {"a gap at the start", file_with(one(R"("dtype":"F32","shape":[2],"data_offsets":[4,12])"), 12),
       "leave a gap of 4 bytes after the start of the data"},
      {"bytes after the last tensor", file_with(w, 12),
       "the tensors cover 8 bytes but the file holds 12 bytes of data after the header"},
      {"data but no tensors", file_with("{}", 8), "the tensors cover 0 bytes but the file holds 8 bytes"},
      {"a name given twice",
       file_with(
           R"({"w":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},"w":{"dtype":"F32","shape":[1],"data_offsets":[4,8]}})",
           8),
       R"(tensor "w" appears twice)"},
      {"a field given twice",
       file_with(one(R"("dtype":"F64","dtype":"F32","shape":[1],"data_offsets":[0,4])"), 4),
       R"(key "dtype" appears twice)"},
      {"metadata that is not a string", file_with(R"({"__metadata__":{"epoch":1}})"),
       R"("__metadata__": the value of "epoch" is not a string)"},
      {"metadata that is not an object", file_with(R"({"__metadata__":"epoch 1"})"),
       R"("__metadata__" is not an object)"},
      {"nesting deeper than a header",
       file_with(one(R"("dtype":"F32","shape":[[1]],"data_offsets":[0,4])"), 4),
       "the header nests deeper than a safetensors header can"},
      {"100,000 nested lists",
       file_with(R"({"w":{"shape":)" + std::string(100'000, '[') + std::string(100'000, ']') + "}}"),
       "the header nests deeper"},
      // Refused while the text is read, before it is built (40 million shape entries took 1.8 GB).
      {"a list of 70 offsets",
       file_with(one(R"("dtype":"F32","shape":[1],"data_offsets":[)" + list_of(70) + "]")),
       R"(tensor "w": data_offsets has 70 entries)"},
      {"a name given twice after many others", file_with(many_tensors(5000) + R"(,"t7":{}})"),
       R"(tensor "t7" appears twice)"},
      // Review: a long list outside a tensor's fields was named as a tensor's or a shape's.
      {"a header that is a long list", file_with(std::string("[").append(list_of(70)).append("]")),
       "the header is a JSON array, not an object"},
      {"metadata given a long list", file_with(R"({"__metadata__":{"shape":[)" + list_of(70) + "]}}"),
       R"("__metadata__": the value of "shape" is not a string)"},
      {"metadata given twice", file_with(R"({"__metadata__":{},"__metadata__":{}})"),
       R"(: "__metadata__" appears twice)"},
      {"a top level that is a number", file_with("7"), "the header is a JSON number, not an object"},
      // Review: a byte-order mark was skipped; safetensors refuses any first byte but '{'.
      {"a byte-order mark before the header", file_with("\xEF\xBB\xBF{}"),
       "the header does not start with '{'"},
      {"a space before the header", file_with(" {}"), "the header does not start with '{'"},
      {"an object inside a shape", file_with(one(R"("dtype":"F32","shape":[{}],"data_offsets":[0,4])"), 4),
       "the header nests deeper"},
      {"a shape given as an object",
       file_with(one(R"("dtype":"F32","shape":{"a":1},"data_offsets":[0,4])"), 4),
       R"(tensor "w": shape {"a":1} is not a list)"},
      {"a key twice in a shape given as an object",
       file_with(one(R"("dtype":"F32","shape":{"dtype":1,"dtype":2},"data_offsets":[0,4])"), 4),
       R"(tensor "w": key "dtype" appears twice in shape)"},
      // Review: nlohmann's reader took a NUL byte for the end of the text and read no further.
      {"a NUL byte in the header", file_with(std::string("{}\0{\"a\":[[[ }}}", 15)),
       "the header holds a NUL byte at offset 2, which JSON text cannot"},
      {"a shape given as an object of 65 keys",
       file_with(one(R"("dtype":"F32","data_offsets":[0,4],"shape":{)" + keys_of(65) + "}"), 4),
       R"(tensor "w": shape has 65 entries)"},
  };
  TempFolder folder;
  const std::string path = folder.file("model.safetensors");
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      write_bytes(path, c.bytes);
      check_throws<std::runtime_error>([&] { load_file(path); }, {"load_file: " + path + ": ", c.fragment});
    }
  }
  check_throws<std::runtime_error>([&] { load_metadata(path); }, {"load_metadata: " + path + ": "});
  check_throws<std::runtime_error>(
      [&] { load_file(folder.file("missing.safetensors")); },
      {folder.file("missing.safetensors"), "cannot open the file: No such file or directory"});
  check_throws<std::runtime_error>([&] { load_file(folder.path.string()); },
                                   {folder.path.string(), "not a regular file"});
}

// A header of many tensors is read in time linear in its length: nlohmann's parse callback, which
// checked it, rescanned the header's object at each tensor's closing brace (40,000 tensors took
// 16 s, 200,000 more than ten minutes; now 0.2 and 1.2 s in a Release build).
BOOST_AUTO_TEST_CASE(a_header_of_twenty_thousand_tensors_loads_each_in_its_place) {
  TempFolder folder;
  const std::string path = folder.file("many.safetensors");
  constexpr size_t n = 20'000;
  std::string data(n, '\0');
  for (size_t k = 0; k < n; k += 7) data[k] = 1;
  write_bytes(path, file_with(many_tensors(n) + "}") + data);
  const nn::NamedTensors loaded = load_file(path);
  BOOST_TEST_REQUIRE(loaded.size() == n);
  for (size_t k = 0; k < n; k += 997) {
    BOOST_TEST(loaded[k].first == std::string("t").append(std::to_string(k)));  // not "t" + ...: -Wrestrict
    BOOST_TEST(loaded[k].second.item<bool>() == (k % 7 == 0));
  }
}

// Review: a header of valid JSON but no safetensors header (a million empty lists, zeros or
// unknown fields) was built whole by nlohmann::json::parse before it was refused: 1.3 GB for 100 MB
// of text, and under a memory limit an abort in nlohmann's destructor. Now each value is checked
// as it is read, and the first wrong one ends the load.
BOOST_AUTO_TEST_CASE(a_junk_header_is_refused_at_its_first_wrong_value_without_being_built) {
  constexpr size_t n = 500'000;
  std::string lists = "{", zeros = "{", fields = R"({"w":{"dtype":"F32")", metadata = R"({"__metadata__":{)";
  for (size_t k = 0; k < n; ++k) {
    const std::string key = (k > 0 ? ",\"" : "\"") + std::to_string(k) + "\":";
    lists += key + "[]";
    zeros += key + "0";
    fields += ",\"f" + std::to_string(k) + "\":0";
    metadata += key + "\"\"";
  }
  struct Case {
    const char* what;
    std::string header;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"empty lists", lists + "}",
       R"(tensor "0": expected an object with dtype, shape and data_offsets, got array)"},
      {"zeros", zeros + "}",
       R"(tensor "0": expected an object with dtype, shape and data_offsets, got number)"},
      {"unknown fields", fields + "}}", R"(tensor "w": unknown field "f0")"},
      // Review: valid to its last byte, which is not: a first pass reads the grammar alone.
      {"metadata, then a stray byte", metadata + "}x", "the header is not valid JSON"},
  };
  TempFolder folder;
  const std::string path = folder.file("junk.safetensors");
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      write_bytes(path, file_with(c.header));
      const uint64_t before = g_allocated_bytes;
      check_throws<std::runtime_error>([&] { load_file(path); }, {c.fragment});
      // The text itself, read once, and little besides (the whole JSON built took over 10 times it).
      BOOST_TEST(g_allocated_bytes - before < 2 * c.header.size() + (1u << 20),
                 (g_allocated_bytes - before) << " bytes allocated for a header of " << c.header.size());
    }
  }
}

// Review: "__metadata__": null was refused where safetensors reads it as no metadata, and empty
// tensors that share an offset came back in an order std::sort left to chance.
BOOST_AUTO_TEST_CASE(null_metadata_reads_as_none_and_empty_tensors_at_one_offset_come_back_by_name) {
  TempFolder folder;
  const std::string path = folder.file("empty.safetensors");
  std::string header = R"({"__metadata__":null)";
  std::vector<std::string> want;
  for (int k = 0; k < 40; ++k) {  // e00 to e39 in a scrambled order (std::sort sorts 16 or fewer stably)
    const int i = k * 17 % 40;
    header += std::string(R"(,"e)").append(i < 10 ? "0" : "").append(std::to_string(i));
    header += R"(":{"dtype":"F32","shape":[0],"data_offsets":[0,0]})";
    want.push_back(std::string(k < 10 ? "e0" : "e").append(std::to_string(k)));
  }
  write_bytes(path, file_with(header + "}"));
  BOOST_TEST(load_metadata(path).empty());
  std::vector<std::string> names;
  for (const auto& [name, t] : load_file(path)) names.push_back(name);
  BOOST_TEST(names == want, boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_bool_byte_other_than_0_or_1_reads_as_true) {
  TempFolder folder;
  const std::string path = folder.file("bool.safetensors");
  write_bytes(path, file_with(R"({"b":{"dtype":"BOOL","shape":[3],"data_offsets":[0,3]}})"
                              "     ") +
                        std::string("\x00\x02\xff", 3));
  const std::vector<int64_t> values = load_file(path)[0].second.to_vector<int64_t>();
  BOOST_TEST(values == (std::vector<int64_t>{0, 1, 1}), boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(a_message_quotes_at_most_200_characters_of_a_megabyte_long_name) {
  TempFolder folder;
  const std::string path = folder.file("long.safetensors");
  const std::string name(1'000'000, 'x');
  write_bytes(path, file_with(R"({")" + name + R"(":{"dtype":"F16","shape":[1],"data_offsets":[0,2]}})", 2));
  try {
    load_file(path);
    BOOST_ERROR("did not throw");
  } catch (const std::runtime_error& error) {
    const std::string message = error.what();
    BOOST_TEST(message.find("tensor \"" + std::string(200, 'x') + "...\": unknown dtype \"F16\"") !=
               std::string::npos);
    BOOST_TEST(message.size() < path.size() + 400);
  }
}

// The seed corpus of tools/reference/checkpoint_reference.py: valid_* files load, the others not.
BOOST_AUTO_TEST_CASE(the_seed_corpus_loads_only_its_valid_files) {
  const fs::path corpus = fs::path(MINIGRAD_FIXTURES_DIR) / "safetensors_corpus";
  int valid = 0, refused = 0;
  for (const auto& entry : fs::directory_iterator(corpus)) {
    const std::string name = entry.path().filename().string();
    BOOST_TEST_CONTEXT(name) {
      if (name.rfind("valid_", 0) == 0) {
        BOOST_CHECK_NO_THROW(load_file(entry.path().string()));
        ++valid;
      } else {
        BOOST_CHECK_THROW(load_file(entry.path().string()), std::runtime_error);
        ++refused;
      }
    }
  }
  BOOST_TEST(valid >= 2);
  BOOST_TEST(refused >= 10);
}

// ---- saving safely --------------------------------------------------------------------------------

BOOST_AUTO_TEST_CASE(bad_arguments_to_save_file_throw_before_writing_anything) {
  struct Case {
    const char* what;
    nn::NamedTensors tensors;
    std::string fragment;
  };
  const std::vector<Case> cases = {
      {"an undefined tensor", {{"w", Tensor()}}, R"(save_file: tensor "w" is undefined)"},
      {"a name given twice",
       {{"w", zeros({1})}, {"w", ones({1})}},
       R"(save_file: the name "w" is given twice)"},
      {"the reserved name", {{"__metadata__", zeros({1})}}, R"("__metadata__" is reserved)"},
  };
  TempFolder folder;
  for (const Case& c : cases) {
    BOOST_TEST_CONTEXT(c.what) {
      check_throws<std::invalid_argument>([&] { save_file(c.tensors, folder.file("model.safetensors")); },
                                          {c.fragment});
      BOOST_TEST(folder.names().empty());
    }
  }
  check_throws<std::invalid_argument>(
      [&] {
        save_file(nn::NamedTensors{}, folder.file("m.safetensors"), {{"bad \xff", "x"}});
      },
      {"not valid UTF-8"});
}

BOOST_AUTO_TEST_CASE(saving_into_a_missing_folder_throws_naming_the_path) {
  TempFolder folder;
  const std::string path = folder.file("missing/model.safetensors");
  check_throws<std::runtime_error>(
      [&] {
        save_file({{"w", zeros({2})}}, path);
      },
      {"save_file: cannot save \"" + path + "\"", "No such file or directory"});
  BOOST_TEST(folder.names().empty());
}

BOOST_AUTO_TEST_CASE(a_save_that_fails_late_removes_its_temporary_file) {
  TempFolder folder;
  const std::string path = folder.file("model.safetensors");
  fs::create_directory(path);  // renaming a file over a folder fails, after all the data is written
  check_throws<std::runtime_error>(
      [&] {
        save_file({{"w", zeros({2})}}, path);
      },
      {"cannot save \"" + path + "\"", "moving into place", "Is a directory"});
  BOOST_TEST(folder.names() == std::vector<std::string>{"model.safetensors"},
             boost::test_tools::per_element());
}

BOOST_AUTO_TEST_CASE(saving_over_a_checkpoint_replaces_it_and_leaves_no_temporary_file) {
  TempFolder folder;
  const std::string path = folder.file("model.safetensors");
  save_file({{"w", zeros({1000})}}, path);
  save_file({{"w", ones({3})}}, path, {{"version", "2"}});
  BOOST_TEST(folder.names() == std::vector<std::string>{"model.safetensors"},
             boost::test_tools::per_element());
  BOOST_TEST(load_file(path)[0].second.to_vector<double>() == (std::vector<double>{1, 1, 1}),
             boost::test_tools::per_element());
}

// Regression: the new file had the default mode (0644 under the usual umask), so saving over a
// 0600 checkpoint made it readable by everyone; torch.save keeps the file's mode. A read-only
// file is not replaced (open() fails on it in torch.save): checked only when not running as root,
// whom the system lets write anything.
BOOST_AUTO_TEST_CASE(saving_over_a_file_keeps_its_permissions_and_leaves_a_read_only_one) {
  TempFolder folder;
  const std::string path = folder.file("model.safetensors");
  save_file({{"w", ones({2})}}, path);
  fs::permissions(path, fs::perms::owner_read | fs::perms::owner_write);
  save_file({{"w", ones({3})}}, path);
  struct stat info {};
  BOOST_TEST_REQUIRE(::stat(path.c_str(), &info) == 0);
  BOOST_TEST((info.st_mode & 0777) == 0600u);
  BOOST_TEST(load_file(path)[0].second.numel() == 3);

  if (::geteuid() == 0) return;
  fs::permissions(path, fs::perms::owner_read);
  check_throws<std::runtime_error>(
      [&] {
        save_file({{"w", ones({4})}}, path);
      },
      {"writing over the file", "Permission denied"});
  BOOST_TEST(load_file(path)[0].second.numel() == 3);
  BOOST_TEST(folder.names() == std::vector<std::string>{"model.safetensors"},
             boost::test_tools::per_element());
}

// A child process saves version `attempt` over version `good` and is killed with SIGKILL after a
// random delay, 50 times. Every time, the checkpoint must load whole as one of the two versions (a
// torn file would mix values or fail to load), and a leftover temporary file must have its own name.
BOOST_AUTO_TEST_CASE(a_save_killed_at_a_random_moment_leaves_the_old_or_the_new_checkpoint) {
  constexpr int64_t kElements = 2 << 20;  // 8 MB of float32: long enough to be killed mid-write
  auto version = [](int v) {
    return nn::NamedTensors{{"weight", full({kElements}, v)},
                            {"version", scalar_tensor(v, {.dtype = kInt64})}};
  };
  TempFolder folder;
  const std::string path = folder.file("model.safetensors");
  const auto start = std::chrono::steady_clock::now();
  save_file(version(0), path, {{"version", "0"}});
  const auto save_time =
      std::chrono::duration_cast<std::chrono::microseconds>(std::chrono::steady_clock::now() - start);

  std::mt19937 rng(12345);
  std::uniform_int_distribution<int64_t> delay_us(0, 3 * save_time.count() / 2 + 100);
  int good = 0, kept_old = 0, got_new = 0, interrupted = 0;
  for (int attempt = 1; attempt <= 50; ++attempt) {
    const nn::NamedTensors next = version(attempt);  // built before fork: the child only saves
    const pid_t child = ::fork();
    BOOST_TEST_REQUIRE(child >= 0);
    if (child == 0) {
      try {
        save_file(next, path, {{"version", std::to_string(attempt)}});
      } catch (...) {
        ::_exit(1);
      }
      ::_exit(0);
    }
    std::this_thread::sleep_for(std::chrono::microseconds(delay_us(rng)));
    ::kill(child, SIGKILL);
    int status = 0;
    ::waitpid(child, &status, 0);
    const bool finished = WIFEXITED(status) && WEXITSTATUS(status) == 0;

    BOOST_TEST_CONTEXT("attempt " << attempt << (finished ? ", save finished" : ", save killed")) {
      nn::NamedTensors loaded;
      BOOST_REQUIRE_NO_THROW(loaded = load_file(path));
      const int v = std::stoi(load_metadata(path).at("version"));
      BOOST_TEST((v == good || v == attempt));
      if (finished) BOOST_TEST(v == attempt);
      BOOST_TEST(loaded[0].second.item<int64_t>() == v);  // "version" (I64) comes first in the file
      const std::vector<float> weight = loaded[1].second.to_vector<float>();
      BOOST_TEST(
          std::all_of(weight.begin(), weight.end(), [&](float x) { return x == static_cast<float>(v); }));
      if (v == attempt) {
        ++got_new;
      } else {
        ++kept_old;
      }
      good = v;

      // A leftover is the child's own temporary file; it loads only if it was complete.
      for (const std::string& name : folder.names()) {
        if (name == "model.safetensors") continue;
        const std::string prefix = ".model.safetensors.tmp-" + std::to_string(child) + "-";
        BOOST_TEST(name.compare(0, prefix.size(), prefix) == 0, name << " is not the child's temporary file");
        try {
          const nn::NamedTensors partial = load_file(folder.file(name));
          BOOST_TEST(partial[0].second.item<int64_t>() == attempt);
        } catch (const std::runtime_error&) {
        }
        fs::remove(folder.file(name));
        ++interrupted;
      }
    }
  }
  BOOST_TEST_MESSAGE("killed saves: " << kept_old << " kept the old checkpoint, " << got_new
                                      << " left the new one; " << interrupted
                                      << " left a temporary file (one save takes " << save_time.count()
                                      << " us)");
  BOOST_TEST(kept_old + got_new == 50);
}

BOOST_AUTO_TEST_SUITE_END()

}  // namespace
