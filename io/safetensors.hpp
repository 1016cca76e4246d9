// Checkpoints: named tensors saved to and loaded from a .safetensors file, as safetensors.torch.
//
// The format (https://github.com/huggingface/safetensors) is 8 bytes holding N, a little-endian
// u64, then N bytes of JSON giving each tensor's dtype, shape and byte range, then the raw row-major
// data. Unlike Python's pickle, nothing in it can run code, and every number in the header is checked
// against the file before it is used: a damaged or hostile file gives an error naming the problem,
// never a crash. Saving writes a temporary file and renames it over the old one, so a crash mid-save
// leaves the last good checkpoint as it was. PyTorch reads our files and we read its files.
#pragma once

#include <concepts>
#include <map>
#include <string>

#include "autograd/tensor.hpp"
#include "nn/module.hpp"

namespace minigrad {

/// Free-form strings stored with the tensors (the header's "__metadata__"): {"epoch", "12"}.
using Metadata = std::map<std::string, std::string>;

/// Writes `tensors` to `path` (`safetensors.torch.save_file(tensors, path, metadata)`): float32,
/// float64, int64 and bool as F32, F64, I64 and BOOL, any shape, 0-d and empty ones included.
/// The file holds them in safetensors' order (int64, float64, float32, bool; by name within a dtype).
/// Atomic: creates a new temporary file `.<name>.tmp-<pid>-<count>-<random>` in the folder of
/// `path` (exclusively: never through an existing file or symlink; the name is cut so the whole stays
/// within 255 bytes), flushes it and the folder to disk and renames it over `path`, so `path`
/// always holds either the previous file or one complete new one, even while several threads or
/// processes save to it at once (the last rename wins). A save killed midway leaves its temporary
/// file; the next save to the same name removes such files once nobody holds them locked and they
/// are 10 minutes old. A file replaced keeps its permission bits, and one this process may not
/// write to is not replaced, as with torch.save. Unlike torch.save, a symbolic link at `path` is
/// replaced by the new file, not written through (so a link planted there cannot aim the save at
/// another file): the file it led to keeps its old contents.
/// Throws std::invalid_argument, before touching the disk, for an undefined tensor, a name given
/// twice or the reserved name "__metadata__"; std::runtime_error naming `path` and the system's
/// reason when the file cannot be written (missing folder, no permission, a read-only file, disk
/// full), after removing the temporary file.
void save_file(const nn::NamedTensors& tensors, const std::string& path, const Metadata& metadata = {});
/// The same for tensors held in a map, as an optimizer's state_dict(). (A template only so that a
/// braced list, `save_file({{"w", w}}, path)`, picks the overload above instead of being ambiguous.)
template <typename Map>
requires std::same_as<Map, std::map<std::string, Tensor>>
void save_file(const Map& tensors, const std::string& path, const Metadata& metadata = {}) {
  save_file(nn::NamedTensors(tensors.begin(), tensors.end()), path, metadata);
}

/// The tensors of a safetensors file (`safetensors.torch.load_file(path)`), in the order of their
/// data in the file (empty ones at one offset by name), as new tensors that do not require grad. Reads any
/// file of the format whose tensors are F32, F64, I64 or BOOL, whatever their order (a BOOL byte other than 0
/// reads as true). Throws std::runtime_error naming the file and the problem, and allocates nothing the
/// file's size does not cover: the file cannot be opened or is shorter than 8 bytes; the header length runs
/// past the file or exceeds 100 MB; the header is not JSON (or holds a NUL byte, or starts with any byte but
/// '{'), or not an object of entries
/// {"dtype", "shape", "data_offsets"}; a field is missing or unknown; a dtype is not one of the four;
/// a size is negative, not an integer or makes the element count overflow int64; data_offsets do
/// not hold dtype size * element count bytes, run past the file, overlap, or leave a gap; a name
/// appears twice; a shape has more than 64 dims; the path is not a regular file (a named pipe is
/// refused without waiting for a writer).
nn::NamedTensors load_file(const std::string& path);

/// The "__metadata__" strings of a safetensors file, empty if it has none
/// (`safe_open(path, "pt").metadata()`). Checks the header as load_file does, without reading the
/// tensors; throws std::runtime_error as load_file.
Metadata load_metadata(const std::string& path);

/// Saves the module's state_dict() (`save_file(model.state_dict(), path)`): parameters and buffers
/// by their dotted names (`net.0.weight`). Throws as save_file.
void save(const nn::Module& module, const std::string& path, const Metadata& metadata = {});

/// Loads a file written by save() (or by PyTorch) into the module
/// (`model.load_state_dict(load_file(path))`). The module is unchanged on any error: std::runtime_error
/// for a bad file (see load_file), std::invalid_argument naming the file when its tensors do not fit
/// the module (a missing or unexpected name, another shape or dtype).
void load(nn::Module& module, const std::string& path);

}  // namespace minigrad
