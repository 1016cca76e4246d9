// The step a checkpoint was saved at, read back from its metadata.
//
// Not part of minigrad: the examples save their checkpoints with {"step", "<n>"} as safetensors
// metadata (text, as the format keeps it), and a resumed run goes on from that step.
#pragma once

#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <system_error>

#include "io/safetensors.hpp"

namespace support {

/// The "step" of a checkpoint's metadata, a whole number >= 0 written in digits. Throws
/// std::runtime_error naming the file when there is none (a file of weights alone, as PyTorch's
/// save_file writes without metadata, cannot be resumed) or when it is anything else ("-5",
/// "2.5", " 2", "abc", beyond int64).
inline int64_t checkpoint_step(const minigrad::Metadata& metadata, const std::string& path) {
  const auto found = metadata.find("step");
  if (found == metadata.end()) {
    throw std::runtime_error(path +
                             " has no 'step' in its metadata, so it is not a checkpoint of this program "
                             "(weights alone cannot be resumed: train without --resume)");
  }
  const std::string& text = found->second;
  int64_t step = -1;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), step);
  if (error != std::errc() || end != text.data() + text.size() || step < 0) {
    throw std::runtime_error(path + ": its 'step' metadata is '" + text + "', not a whole number of steps");
  }
  return step;
}

}  // namespace support
