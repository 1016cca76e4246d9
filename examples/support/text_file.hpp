// Writing a file as a whole or not at all, for the examples' text outputs: the loss CSV, the SVG
// pictures and the generated text.
//
// Not part of minigrad. The text goes to a temporary file in the same folder first and is renamed
// over the target once complete, so a full disk, a file-size limit or a crash mid-write leaves the
// previous file as it was (checkpoints are written the same way by io/safetensors.hpp).
#pragma once

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <system_error>

namespace support {

/// Writes `text` to `path` as a whole or not at all: into `.<name>.tmp-<pid>` beside it first (the
/// name cut to fit the file system's 255 bytes), renamed over `path` once complete. Throws
/// std::runtime_error "<what>: cannot write <path> (...)" when it cannot be written; the
/// temporary file is then removed and `path` is untouched.
inline void write_text_file(const std::string& path, const std::string& text, const std::string& what) {
  const std::filesystem::path target(path);
  const std::string name = target.filename().string().substr(0, 200);
  const std::filesystem::path temporary =
      target.parent_path() / ("." + name + ".tmp-" + std::to_string(::getpid()));
  const auto fail = [&](const std::string& why) {
    std::error_code ignored;
    std::filesystem::remove(temporary, ignored);  // never throws: the error to report is `why`
    throw std::runtime_error(what + ": cannot write " + path + " (" + why + ")");
  };
  {
    std::ofstream file(temporary, std::ios::binary);
    file << text;
    file.flush();
    if (!file) fail("the folder is missing or not writable, or the disk is full");
  }
  std::error_code error;
  std::filesystem::rename(temporary, target, error);
  if (error) fail(error.message());
}

}  // namespace support
