// libFuzzer target for the checkpoint loader: whatever bytes a file holds, load_file returns its
// tensors or throws a std::runtime_error naming the problem. Never a crash, a sanitizer report,
// another exception type, or an allocation the file's size does not cover (tools/fuzz.sh caps
// single allocations far below what a lying header could ask for).
//
// load_file reads a path, so each input is first written to a scratch file (in /dev/shm when there
// is one: memory, not disk). A file that loads must also survive a round trip: save_file then
// load_file give back the same names, dtypes, shapes, bytes and metadata.
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>

#include "io/safetensors.hpp"

namespace {

using namespace minigrad;

/// A file of this process's own, removed when the fuzzer exits.
struct ScratchFile {
  std::string path;

  explicit ScratchFile(const std::string& suffix) {
    const std::filesystem::path folder = std::filesystem::is_directory("/dev/shm")
                                             ? std::filesystem::path("/dev/shm")
                                             : std::filesystem::temp_directory_path();
    path = (folder / ("minigrad-fuzz-" + std::to_string(getpid()) + suffix)).string();
  }
  ~ScratchFile() { std::remove(path.c_str()); }
};

/// Stops the run: libFuzzer saves the input that got here as a crash, with this message.
[[noreturn]] void fail(const std::string& why) {
  std::fprintf(stderr, "fuzz_load_file: %s\n", why.c_str());
  std::abort();
}

void write_file(const std::string& path, const uint8_t* data, size_t size) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) fail("cannot write the scratch file " + path);
  if (size > 0 && std::fwrite(data, 1, size, file) != size) fail("cannot write the scratch file " + path);
  std::fclose(file);
}

std::map<std::string, Tensor> by_name(const nn::NamedTensors& tensors) {
  return {tensors.begin(), tensors.end()};
}

/// Same dtype, shape and bytes (bit for bit, so a nan equals itself).
bool same_tensor(const Tensor& a, const Tensor& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const size_t bytes = static_cast<size_t>(a.numel()) * element_size(a.dtype());
  return bytes == 0 || std::memcmp(a.impl()->data(), b.impl()->data(), bytes) == 0;
}

/// A file that loaded: saving its tensors and metadata and loading them again gives them back.
/// (The order may change: save_file writes safetensors' order, by dtype and then by name.)
void check_round_trip(const nn::NamedTensors& tensors, const Metadata& metadata, const std::string& path) {
  save_file(tensors, path, metadata);
  const std::map<std::string, Tensor> before = by_name(tensors), after = by_name(load_file(path));
  if (before.size() != after.size()) fail("the round trip changed the number of tensors");
  for (const auto& [name, tensor] : before) {
    const auto found = after.find(name);
    if (found == after.end() || !same_tensor(tensor, found->second))
      fail("the round trip changed tensor " + name);
  }
  if (load_metadata(path) != metadata) fail("the round trip changed the metadata");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const ScratchFile input(".safetensors"), copy(".copy.safetensors");
  write_file(input.path, data, size);
  nn::NamedTensors tensors;
  Metadata metadata;
  try {
    tensors = load_file(input.path);
    metadata = load_metadata(input.path);
  } catch (const std::runtime_error&) {
    return 0;  // rejected with a message: what most inputs should get
  }
  check_round_trip(tensors, metadata, copy.path);
  return 0;
}
