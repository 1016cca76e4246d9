// Saving and loading safetensors files: the header is JSON (built and parsed by nlohmann::json),
// the data is each tensor's storage copied byte for byte. Two halves: saving (sort, header, write a
// temporary file, rename it over the old one) and loading (check every number of the header
// against the file, then allocate and read). The loader treats the file as hostile: it trusts no
// size it has not compared with the file's own size first.
#include "io/safetensors.hpp"

#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <limits>
#include <new>
#include <nlohmann/json.hpp>
#include <optional>
#include <random>
#include <set>
#include <stdexcept>
#include <tuple>
#include <utility>
#include <vector>

#include "autograd/op_support.hpp"

// The format stores numbers little-endian and we copy storage as it is, so the host must be too.
static_assert(std::endian::native == std::endian::little, "safetensors data is little-endian");
static_assert(sizeof(bool) == 1, "a BOOL element is one byte");

namespace minigrad {

using detail::check;
using detail::concat;

namespace {

using nlohmann::json;

constexpr uint64_t kMaxHeaderBytes = 100'000'000;  // safetensors' own limit (MAX_HEADER_SIZE)
// PyTorch's reductions refuse more than 64 dims ("only tensors with up to 64 dims are supported",
// ATen/WrapDimUtilsMulti.h); a file with more is an attack: 50,000 dims of size 1 fit in 100 KB.
constexpr size_t kMaxDims = 64;
const std::string kMetadataKey = "__metadata__";

// Every problem with a file is a std::runtime_error (a bad argument is a std::invalid_argument).
template <typename... Parts>
void check_file(bool ok, const Parts&... parts) {
  check<std::runtime_error>(ok, parts...);
}

// ---- dtypes: ours and the file's names ----------------------------------------------------------

const char* file_dtype(Dtype dtype) {
  switch (dtype) {
    case kBool:
      return "BOOL";
    case kInt64:
      return "I64";
    case kFloat32:
      return "F32";
    case kFloat64:
      break;
  }
  return "F64";
}

std::optional<Dtype> parse_dtype(const std::string& name) {
  for (Dtype dtype : {kBool, kInt64, kFloat32, kFloat64})
    if (name == file_dtype(dtype)) return dtype;
  return std::nullopt;
}

// safetensors sorts tensors by its Dtype enum, largest first (its order has BOOL < F32 < F64 < I64),
// then by name: wide elements come first, so each one starts at an offset its size divides.
int sort_rank(Dtype dtype) {
  switch (dtype) {
    case kInt64:
      return 0;
    case kFloat64:
      return 1;
    case kFloat32:
      return 2;
    case kBool:
      break;
  }
  return 3;
}

uint64_t byte_size(const Tensor& t) { return static_cast<uint64_t>(t.numel()) * element_size(t.dtype()); }

// Text from a file goes into messages cut to 200 characters: a hostile name may be 100 MB long.
std::string shorten(const std::string& text) {
  return text.size() <= 200 ? text : text.substr(0, 200) + "...";
}
std::string quoted(const std::string& text) {
  std::string out = "\"";  // built by appending: GCC 12 warns falsely (-Wrestrict) about "\"" + text
  out += shorten(text);
  out += '"';
  return out;
}
std::string excerpt(const json& value) {
  // A long string is cut before dump() copies it (with its quotes and escapes) whole.
  if (value.is_string() && value.get_ref<const std::string&>().size() > 200)
    return shorten(json(value.get_ref<const std::string&>().substr(0, 201)).dump());
  return shorten(value.dump());
}

// ---- saving -------------------------------------------------------------------------------------

// The tensors in the order the file holds them, after checking what the caller gave.
nn::NamedTensors checked_and_sorted(const nn::NamedTensors& tensors) {
  std::set<std::string> seen;
  for (const auto& [name, tensor] : tensors) {
    check(tensor.defined(), "save_file: tensor ", quoted(name), " is undefined");
    check(name != kMetadataKey, "save_file: ", quoted(kMetadataKey),
          " is reserved for the metadata, not a tensor name");
    check(seen.insert(name).second, "save_file: the name ", quoted(name), " is given twice");
  }
  nn::NamedTensors sorted = tensors;
  std::stable_sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) {
    const int rank_a = sort_rank(a.second.dtype()), rank_b = sort_rank(b.second.dtype());
    return rank_a != rank_b ? rank_a < rank_b : a.first < b.first;
  });
  return sorted;
}

// The JSON header, as safetensors writes it: no spaces, "__metadata__" first, then one entry per
// tensor in file order with its fields in the order dtype, shape, data_offsets; then padded with
// spaces to a multiple of 8 bytes, so the data starts 8-aligned.
std::string make_header(const nn::NamedTensors& sorted, const Metadata& metadata) {
  nlohmann::ordered_json header = nlohmann::ordered_json::object();
  if (!metadata.empty()) header[kMetadataKey] = metadata;
  uint64_t offset = 0;
  for (const auto& [name, tensor] : sorted) {
    const uint64_t end = offset + byte_size(tensor);
    header[name] = {{"dtype", file_dtype(tensor.dtype())},
                    {"shape", std::vector<int64_t>(tensor.shape())},
                    {"data_offsets", {offset, end}}};
    offset = end;
  }
  std::string text;
  try {
    text = header.dump();
  } catch (const json::type_error&) {
    throw std::invalid_argument("save_file: a tensor name or metadata string is not valid UTF-8");
  }
  text.append((8 - text.size() % 8) % 8, ' ');
  return text;
}

// ---- saving: the temporary file ------------------------------------------------------------------

// A save writes `.<name>.tmp-<pid>-<count>-<random>` in the target's folder (a rename is atomic
// only within one file system), where <name> is the target's file name cut so that the whole stays
// within the 255-byte limit of a file name. The name is unique per process (pid), per save in it
// (count) and across hosts and containers sharing the folder (random), and the file is created
// exclusively: an existing file or symlink of that name is never opened, another name is tried.
constexpr size_t kMaxNameBytes = 255;    // NAME_MAX on Linux and macOS file systems
constexpr size_t kTempSuffixBytes = 64;  // ".tmp-" + pid + count + random, with room to spare
constexpr auto kStaleAge = std::chrono::minutes(10);

std::atomic<uint64_t> save_count{0};

// ".<name>.tmp-": what every temporary file of a save to `name` starts with.
std::string temp_prefix(const std::string& name) {
  std::string prefix = ".";
  prefix.append(name, 0, kMaxNameBytes - 1 - kTempSuffixBytes);
  prefix.append(".tmp-");
  return prefix;
}

std::string folder_of(const std::string& path) {
  const std::string folder = std::filesystem::path(path).parent_path().string();
  return folder.empty() ? "." : folder;
}

// Removes the temporary files a killed save of this name left behind. A save holds an exclusive
// flock on its temporary file from creation to rename, and the system drops it when the process
// dies; so a file of our naming that we can lock and that has not been written to for 10 minutes
// belongs to no running save. Best effort: any error leaves the file where it is.
void remove_stale_temp_files(const std::string& folder, const std::string& prefix) {
  std::error_code error;
  std::filesystem::directory_iterator it(folder, error), end;
  for (; !error && it != end; it.increment(error)) {
    const std::filesystem::path& file = it->path();
    if (file.filename().string().compare(0, prefix.size(), prefix) != 0) continue;
    const int fd = ::open(file.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) continue;
    struct stat info {};
    const bool stale =
        ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode) &&
        std::chrono::system_clock::now() - std::chrono::system_clock::from_time_t(info.st_mtime) >
            kStaleAge &&
        ::flock(fd, LOCK_EX | LOCK_NB) == 0;
    if (stale) ::unlink(file.c_str());
    ::close(fd);
  }
}

// The temporary file of one save. It is removed on any error, and renamed over `path` by commit().
class PendingFile {
 public:
  explicit PendingFile(const std::string& path) : path_(path), folder_(folder_of(path)) {
    // A file we may not write to is not replaced (open() in torch.save fails on it), and one we
    // may keeps its permission bits: the new file takes them before it takes the old one's place.
    // (A symbolic link at `path` is replaced itself, never written through: see the header.)
    struct stat old_file {};
    const bool replacing = ::lstat(path.c_str(), &old_file) == 0 && S_ISREG(old_file.st_mode);
    if (replacing && ::access(path.c_str(), W_OK) != 0) fail("writing over the file", path_);
    const std::string prefix = temp_prefix(std::filesystem::path(path).filename().string());
    remove_stale_temp_files(folder_, prefix);
    std::random_device device;
    for (int attempt = 0; fd_ < 0; ++attempt) {
      temp_ = (std::filesystem::path(folder_) / prefix).string() +
              concat(::getpid(), "-", save_count++, "-", std::hex, device());
      fd_ = ::open(temp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
      if (fd_ < 0 && (errno != EEXIST || attempt == 100)) fail("creating the temporary file", temp_);
    }
    if (replacing && ::fchmod(fd_, old_file.st_mode & 07777) != 0) {
      const int error = errno;  // no destructor runs for a constructor that throws: clean up here
      ::unlink(temp_.c_str());
      ::close(fd_);
      errno = error;
      fail("giving the temporary file the permissions of", path_);
    }
    // Held until the rename, so that no save removes this file as stale (remove_stale_temp_files).
    // A file system without locks (flock fails) is left unlocked: its files are then never removed.
    (void)::flock(fd_, LOCK_EX);
  }
  ~PendingFile() {
    if (!renamed_) ::unlink(temp_.c_str());
    if (fd_ >= 0) ::close(fd_);
  }
  PendingFile(const PendingFile&) = delete;
  PendingFile& operator=(const PendingFile&) = delete;

  void write(const void* data, size_t size) {
    const auto* bytes = static_cast<const char*>(data);
    while (size > 0) {
      const ssize_t written = ::write(fd_, bytes, size);
      if (written < 0 && errno == EINTR) continue;
      if (written <= 0) fail("writing the temporary file", temp_);
      bytes += written;
      size -= static_cast<size_t>(written);
    }
  }

  // Data on the disk first, then the rename, then the folder's entry on the disk too: after a
  // crash at any point, `path` is the old or the new file. The lock is held until after the rename.
  void commit() {
    if (::fsync(fd_) != 0) fail("flushing the temporary file to disk", temp_);
    if (std::rename(temp_.c_str(), path_.c_str()) != 0) fail("moving into place the temporary file", temp_);
    renamed_ = true;
    const int fd = std::exchange(fd_, -1);
    if (::close(fd) != 0) fail("closing the file", path_);
    sync_folder();
  }

 private:
  void sync_folder() const {
    const int fd = ::open(folder_.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) fail("opening its folder", folder_);
    const int result = ::fsync(fd);
    const int error = errno;
    ::close(fd);
    errno = error;
    if (result != 0) fail("flushing its folder to disk", folder_);
  }

  // `save_file: cannot save "m.safetensors" (creating the temporary file ".m.safetensors.tmp-42-0-9f3a"):
  // No such file or directory`. errno is read first, before anything else can change it.
  [[noreturn]] void fail(const char* step, const std::string& file) const {
    const std::string reason = std::strerror(errno);
    throw std::runtime_error(
        concat("save_file: cannot save ", quoted(path_), " (", step, " ", quoted(file), "): ", reason));
  }

  std::string path_, folder_, temp_;
  int fd_ = -1;
  bool renamed_ = false;
};

// ---- loading: the file ----------------------------------------------------------------------------

// A file opened for reading, with its size; reads whole ranges or throws (`where` starts messages).
class InputFile {
 public:
  InputFile(const std::string& path, std::string where) : where_(std::move(where)) {
    // Without waiting: open() of a named pipe that nobody writes to would block forever, before
    // the regular-file check below could refuse it.
    fd_ = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
    check_file(fd_ >= 0, where_, "cannot open the file: ", std::strerror(errno));
    struct stat info {};
    const bool stat_ok = ::fstat(fd_, &info) == 0;
    const std::string reason = std::strerror(errno);
    if (!stat_ok || !S_ISREG(info.st_mode)) ::close(fd_);  // no destructor runs if the constructor throws
    check_file(stat_ok, where_, "cannot read the file's size: ", reason);
    check_file(S_ISREG(info.st_mode), where_, "not a regular file");
    size_ = static_cast<uint64_t>(info.st_size);
  }
  ~InputFile() { ::close(fd_); }
  InputFile(const InputFile&) = delete;
  InputFile& operator=(const InputFile&) = delete;

  uint64_t size() const { return size_; }

  // Bytes [offset, offset + count) into `out`; the caller has checked the range against size().
  void read(uint64_t offset, void* out, uint64_t count) const {
    auto* bytes = static_cast<char*>(out);
    while (count > 0) {
      const ssize_t got = ::pread(fd_, bytes, static_cast<size_t>(count), static_cast<off_t>(offset));
      if (got < 0 && errno == EINTR) continue;
      check_file(got >= 0, where_, "cannot read: ", std::strerror(errno));
      check_file(got > 0, where_, "the file ended early (was it changed while being read?)");
      bytes += got;
      offset += static_cast<uint64_t>(got);
      count -= static_cast<uint64_t>(got);
    }
  }

 private:
  std::string where_;
  int fd_ = -1;
  uint64_t size_ = 0;
};

// ---- loading: the header -------------------------------------------------------------------------

// One tensor as the header describes it; begin and end are relative to the start of the data.
struct Entry {
  std::string name;
  Dtype dtype = kFloat32;
  Shape shape;
  uint64_t begin = 0, end = 0;
};

struct Header {
  std::vector<Entry> entries;  // sorted by data_offsets
  Metadata metadata;
  uint64_t data_start = 0;  // 8 + N
};

// A JSON number that is a non-negative integer fitting int64 (a size or an offset), or throws.
int64_t parse_count(const json& value, const std::string& where, const char* what) {
  check_file(value.is_number(), where, what, " ", excerpt(value), " is not a number");
  check_file(!value.is_number_float(), where, what, " ", excerpt(value), " is not an integer");
  check_file(value.is_number_unsigned(), where, what, " ", excerpt(value), " is negative");
  const auto number = value.get<uint64_t>();
  check_file(number <= static_cast<uint64_t>(std::numeric_limits<int64_t>::max()), where, what, " ",
             excerpt(value), " does not fit in int64");
  return static_cast<int64_t>(number);
}

// Shape, dtype and data_offsets of one entry, each checked; `where` names the file and the tensor.
Entry parse_entry(const std::string& name, const json& value, const std::string& where) {
  check_file(value.is_object(), where, "expected an object with dtype, shape and data_offsets, got ",
             value.type_name());
  for (const auto& [key, field] : value.items())
    check_file(key == "dtype" || key == "shape" || key == "data_offsets", where, "unknown field ",
               quoted(key));
  for (const char* key : {"dtype", "shape", "data_offsets"})
    check_file(value.contains(key), where, "missing field ", quoted(key));

  Entry entry;
  entry.name = name;
  const json& dtype = value["dtype"];
  const std::optional<Dtype> parsed =
      dtype.is_string() ? parse_dtype(dtype.get_ref<const std::string&>()) : std::nullopt;
  check_file(parsed.has_value(), where, "unknown dtype ", excerpt(dtype),
             " (minigrad reads F32, F64, I64 and BOOL)");
  entry.dtype = *parsed;

  const json& shape = value["shape"];
  check_file(shape.is_array(), where, "shape ", excerpt(shape), " is not a list");
  check_file(shape.size() <= kMaxDims, where, "shape has ", shape.size(),
             " dims; only tensors with up to 64 dims are supported");
  for (const json& size : shape) entry.shape.push_back(parse_count(size, where, "shape entry"));

  const json& offsets = value["data_offsets"];
  check_file(offsets.is_array() && offsets.size() == 2, where, "data_offsets ", excerpt(offsets),
             " is not a pair [begin, end]");
  entry.begin = static_cast<uint64_t>(parse_count(offsets[0], where, "offset"));
  entry.end = static_cast<uint64_t>(parse_count(offsets[1], where, "offset"));
  check_file(entry.begin <= entry.end, where, "data_offsets [", entry.begin, ", ", entry.end,
             "] end before they begin");
  return entry;
}

// A first pass over the header that reads only the JSON grammar and builds nothing, so that a
// header that is not JSON to its last byte is refused before any of it is built (8 million pairs
// of metadata and a stray byte at the end took 1 GB before the refusal). 0.1 s per 100 MB.
class JsonGrammar : public nlohmann::json_sax<json> {
 public:
  explicit JsonGrammar(const std::string& where) : where_(where) {}
  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) override {
    throw std::runtime_error(concat(where_, "the header is not valid JSON (", shorten(error.what()), ")"));
  }

 private:
  const std::string& where_;
};

// Reads the header's JSON text event by event (nlohmann's SAX interface) into a Header, checking
// each part as it arrives: the top level an object, each value in it a tensor's object of dtype,
// shape and data_offsets or the metadata's object of strings, no key twice in one object (JSON
// readers keep the last), no nesting deeper than that, no list longer than a shape can be. It is
// built only as far as its first wrong value: read whole first (nlohmann::json::parse), 8 million
// empty lists in 100 MB of text took 1.3 GB, and under a memory limit nlohmann's destructor aborted.
// Only one tensor's fields are held as JSON at a time, for parse_entry; the time is linear in the
// text (a parse callback rescans the enclosing object at each closing brace: 40,000 tensors took 16 s).
class HeaderReader : public nlohmann::json_sax<json> {
 public:
  HeaderReader(const std::string& where, Header& header) : where_(where), header_(header) {}

  bool start_object(std::size_t) override {
    open(json::object());
    return true;
  }
  bool start_array(std::size_t) override {
    open(json::array());
    return true;
  }
  bool key(string_t& key) override {
    const size_t depth = open_.size();
    if (depth == 1) {  // a tensor's name, or the metadata's: held once, in names_
      const auto [name, inserted] = names_.insert(std::move(key));
      check_file(inserted, where_, *name == kMetadataKey ? "" : "tensor ", quoted(*name), " appears twice");
      name_ = &*name;
    } else if (depth == 2 && in_metadata()) {
      check_file(!header_.metadata.contains(key), where_, quoted(kMetadataKey), ": key ", quoted(key),
                 " appears twice");
      field_ = key;
    } else if (depth == 2) {  // a field of a tensor
      check_file(!entry_.contains(key), tensor_where(), "key ", quoted(key), " appears twice");
      check_file(key == "dtype" || key == "shape" || key == "data_offsets", tensor_where(), "unknown field ",
                 quoted(key));
      field_ = key;
    } else {  // a key of an object given as a field's value, which parse_entry refuses
      check_file(!entry_[field_].contains(key), tensor_where(), "key ", quoted(key), " appears twice in ",
                 field_);
      item_ = key;
    }
    return true;
  }
  bool end_object() override { return close(); }
  bool end_array() override { return close(); }
  bool null() override { return value(nullptr); }
  bool boolean(bool v) override { return value(v); }
  bool number_integer(number_integer_t v) override { return value(v); }
  bool number_unsigned(number_unsigned_t v) override { return value(v); }
  bool number_float(number_float_t v, const string_t&) override { return value(v); }
  bool string(string_t& v) override { return value(std::move(v)); }
  bool binary(binary_t&) override { return value(nullptr); }  // not in JSON text
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& error) override {
    throw std::runtime_error(concat(where_, "the header is not valid JSON (", shorten(error.what()), ")"));
  }

 private:
  struct Open {
    bool object;
    size_t length = 0;  // its entries so far
  };

  bool in_metadata() const { return name_ != nullptr && *name_ == kMetadataKey; }
  std::string tensor_where() const { return concat(where_, "tensor ", quoted(*name_), ": "); }

  // A value of any kind where it stands: an entry of the container around it, checked for its kind.
  void check_place(const json& v) {
    const size_t depth = open_.size();
    check_file(depth > 0 || v.is_object(), where_, "the header is a JSON ", v.type_name(), ", not an object");
    if (depth == 1 && in_metadata())  // null: no metadata, as safetensors reads it
      check_file(v.is_object() || v.is_null(), where_, quoted(kMetadataKey), " is not an object");
    if (depth == 1 && !in_metadata())
      check_file(v.is_object(), tensor_where(), "expected an object with dtype, shape and data_offsets, got ",
                 v.type_name());
    if (depth == 2 && in_metadata())
      check_file(v.is_string(), where_, quoted(kMetadataKey), ": the value of ", quoted(field_),
                 " is not a string");
    check_file(depth < 3 || v.is_primitive(), where_,
               "the header nests deeper than a safetensors header can");
    if (depth > 0) ++open_.back().length;
  }

  void open(json container) {
    check_place(container);
    const size_t depth = open_.size();
    const bool object = container.is_object();
    if (depth == 1 && !in_metadata()) entry_ = json::object();
    if (depth == 2 && !in_metadata()) entry_[field_] = std::move(container);
    open_.push_back({object});
  }

  bool value(json v) {
    check_place(v);
    const size_t depth = open_.size();
    if (depth == 2 && in_metadata()) header_.metadata[field_] = v.get<std::string>();
    if (depth == 2 && !in_metadata()) entry_[field_] = std::move(v);
    if (depth == 3 && open_.back().length <= kMaxDims) {  // a longer list is refused as it closes
      json& list = entry_[field_];
      if (open_.back().object)
        list[item_] = std::move(v);
      else
        list.push_back(std::move(v));
    }
    return true;
  }

  bool close() {
    const Open closing = open_.back();
    open_.pop_back();
    const size_t depth = open_.size();
    if (depth == 2) {  // a field's list (or object) ends: the same words as parse_entry's check
      if (field_ == "shape" && !closing.object)
        check_file(closing.length <= kMaxDims, tensor_where(), "shape has ", closing.length,
                   " dims; only tensors with up to 64 dims are supported");
      check_file(closing.length <= kMaxDims, tensor_where(), field_, " has ", closing.length, " entries");
    }
    if (depth == 1 && !in_metadata()) header_.entries.push_back(parse_entry(*name_, entry_, tensor_where()));
    return true;
  }

  const std::string& where_;
  Header& header_;
  std::vector<Open> open_;             // the objects and lists open around the next event, outermost first
  std::set<std::string> names_;        // the top level's keys so far
  const std::string* name_ = nullptr;  // the one being read (in names_): a tensor's or "__metadata__"
  json entry_;                         // that tensor's fields so far
  std::string field_, item_;           // the keys being read at depth 2 and 3
};

// Bytes the entry's shape and dtype need, counted without overflow (before anything is allocated).
uint64_t needed_bytes(const Entry& entry, const std::string& where) {
  int64_t count = 1;
  for (int64_t size : entry.shape)
    check_file(!__builtin_mul_overflow(count, size, &count), where, "shape ", entry.shape,
               " has more elements than int64 can count");
  int64_t bytes = 0;
  check_file(!__builtin_mul_overflow(count, static_cast<int64_t>(element_size(entry.dtype)), &bytes), where,
             "shape ", entry.shape, " of ", file_dtype(entry.dtype),
             " needs more bytes than int64 can count");
  return static_cast<uint64_t>(bytes);
}

// The tensors' byte ranges must tile the data exactly, as safetensors requires: sorted by offset,
// each begins where the previous one ended, and the last ends at the end of the file.
void check_layout(std::vector<Entry>& entries, uint64_t data_bytes, const std::string& where) {
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end, a.name) < std::tie(b.begin, b.end, b.name);  // empty ones by name
  });
  uint64_t expected = 0;
  const Entry* previous = nullptr;
  for (const Entry& entry : entries) {
    const std::string tensor =
        concat(where, "tensor ", quoted(entry.name), ": data_offsets [", entry.begin, ", ", entry.end, "] ");
    const std::string after =
        previous ? concat("tensor ", quoted(previous->name), " (which ends at ", expected, ")")
                 : std::string("the start of the data");
    check_file(entry.begin >= expected, tensor, "overlap ", after);
    check_file(entry.begin == expected, tensor, "leave a gap of ", entry.begin - expected, " bytes after ",
               after);
    expected = entry.end;
    previous = &entry;
  }
  check_file(expected == data_bytes, where, "the tensors cover ", expected, " bytes but the file holds ",
             data_bytes, " bytes of data after the header");
}

// Reads and checks the whole header: after this, every entry's range lies inside the file and its
// size is exactly what its shape and dtype need.
Header read_header(const InputFile& file, const std::string& where) {
  check_file(file.size() >= 8, where, "the file is ", file.size(),
             " bytes long, too short for the 8-byte header length");
  uint64_t length = 0;
  file.read(0, &length, 8);
  check_file(length <= kMaxHeaderBytes, where, "header length ", length, " is over the limit of ",
             kMaxHeaderBytes, " bytes");
  check_file(length <= file.size() - 8, where, "header length ", length, " runs past the end of the file (",
             file.size(), " bytes)");
  std::string text(length, '\0');
  file.read(8, text.data(), length);

  // nlohmann's reader stops at a NUL byte as at the end of the text: what follows would go unread.
  const size_t nul = text.find('\0');
  check_file(nul == std::string::npos, where, "the header holds a NUL byte at offset ", nul,
             ", which JSON text cannot");
  JsonGrammar grammar(where);
  json::sax_parse(text, &grammar);

  Header header;
  try {
    Header read;  // gone, with the reader, before the handler runs: its message needs memory
    HeaderReader reader(where, read);
    json::sax_parse(text, &reader);
    header = std::move(read);
  } catch (const std::bad_alloc&) {
    std::string().swap(text);
    throw std::runtime_error(
        concat(where, "the header's ", length, " bytes describe more than memory holds"));
  }
  // As safetensors (InvalidHeaderStart): not a byte-order mark or a space before it.
  check_file(text.starts_with('{'), where, "the header does not start with '{'");
  header.data_start = 8 + length;
  const uint64_t data_bytes = file.size() - header.data_start;
  for (const Entry& entry : header.entries) {
    const std::string tensor_where = concat(where, "tensor ", quoted(entry.name), ": ");
    const uint64_t needed = needed_bytes(entry, tensor_where);
    check_file(entry.end - entry.begin == needed, tensor_where, "data_offsets [", entry.begin, ", ",
               entry.end, "] hold ", entry.end - entry.begin, " bytes but shape ", entry.shape, " of ",
               file_dtype(entry.dtype), " needs ", needed);
    check_file(entry.end <= data_bytes, tensor_where, "data_offsets [", entry.begin, ", ", entry.end,
               "] run past the end of the file (", data_bytes, " bytes of data after the header)");
  }
  check_layout(header.entries, data_bytes, where);
  return header;
}

// One tensor's data, read straight into a new tensor's storage.
Tensor read_tensor(const InputFile& file, const Header& header, const Entry& entry) {
  Tensor out = detail::new_tensor(entry.shape, entry.dtype);
  auto* bytes = static_cast<unsigned char*>(out.impl()->data());
  file.read(header.data_start + entry.begin, bytes, entry.end - entry.begin);
  // A bool may only hold 0 or 1: any other byte reads as true, as numpy's astype(bool).
  if (entry.dtype == kBool)
    for (uint64_t i = 0; i < entry.end - entry.begin; ++i) bytes[i] = bytes[i] != 0 ? 1 : 0;
  return out;
}

}  // namespace

// ---- the public functions -----------------------------------------------------------------------

void save_file(const nn::NamedTensors& tensors, const std::string& path, const Metadata& metadata) {
  const nn::NamedTensors sorted = checked_and_sorted(tensors);
  const std::string header = make_header(sorted, metadata);

  PendingFile file(path);
  const uint64_t length = header.size();
  file.write(&length, 8);
  file.write(header.data(), header.size());
  for (const auto& [name, tensor] : sorted) file.write(tensor.impl()->data(), byte_size(tensor));
  file.commit();
}

nn::NamedTensors load_file(const std::string& path) {
  const std::string where = "load_file: " + path + ": ";
  const InputFile file(path, where);
  const Header header = read_header(file, where);
  nn::NamedTensors tensors;
  for (const Entry& entry : header.entries)
    tensors.emplace_back(entry.name, read_tensor(file, header, entry));
  return tensors;
}

Metadata load_metadata(const std::string& path) {
  const std::string where = "load_metadata: " + path + ": ";
  const InputFile file(path, where);
  return read_header(file, where).metadata;
}

void save(const nn::Module& module, const std::string& path, const Metadata& metadata) {
  save_file(module.state_dict(), path, metadata);
}

void load(nn::Module& module, const std::string& path) {
  const nn::NamedTensors state = load_file(path);  // a bad file throws here, before the module is touched
  try {
    module.load_state_dict(state);  // checks every name, shape and dtype before copying any
  } catch (const std::invalid_argument& error) {
    throw std::invalid_argument(concat("load: ", path, ": ", error.what()));
  }
}

}  // namespace minigrad
