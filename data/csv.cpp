// read_csv: lines from zlib (plain or gzip alike), split at the delimiter, parsed by from_chars.
//
// zlib's gzread reads an uncompressed file unchanged, so one reading loop serves both kinds of
// file. The values go into one flat row-major vector, which becomes the tensor at the
// end; every line is checked against the width of the first data line as it is read.
#include "data/csv.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "autograd/op_support.hpp"

namespace minigrad::data {

using minigrad::detail::check;
using minigrad::detail::concat;

namespace {

using GzFile = std::unique_ptr<gzFile_s, decltype(&gzclose)>;

/// The file opened for reading through zlib. It is opened without waiting (a named pipe with no
/// writer would block open() forever) and must be a regular file. Throws std::runtime_error.
GzFile open_file(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  check<std::runtime_error>(fd >= 0, "read_csv: cannot open ", path, " (", std::strerror(errno), ")");
  struct stat info {};
  const bool regular = ::fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
  if (!regular) ::close(fd);
  check<std::runtime_error>(regular, "read_csv: cannot open ", path, " (not a regular file)");
  GzFile file(gzdopen(fd, "rb"), &gzclose);
  if (file == nullptr) ::close(fd);
  check<std::runtime_error>(file != nullptr, "read_csv: cannot open ", path, " (out of memory)");
  return file;
}

/// The lines of a file, split at "\n" by length rather than as C strings, so a NUL byte is one
/// more byte of its line (which the checks below then refuse) instead of a silent end of string.
class LineReader {
 public:
  LineReader(gzFile file, const std::string& path) : file_(file), path_(path) {}

  /// The next line without its "\n" or "\r\n"; false at the end of the file. Throws
  /// std::runtime_error for corrupt gzip data.
  bool next(std::string& line, int64_t line_number) {
    line.clear();
    while (true) {
      const size_t newline = buffer_.find('\n', position_);
      if (newline != std::string::npos) {
        line.append(buffer_, position_, newline - position_);
        position_ = newline + 1;
        break;
      }
      line.append(buffer_, position_);
      if (!refill(line_number)) {
        if (line.empty()) return false;
        break;  // a last line without "\n"
      }
    }
    if (!line.empty() && line.back() == '\r') line.pop_back();
    return true;
  }

 private:
  bool refill(int64_t line_number) {
    buffer_.resize(65536);
    position_ = 0;
    const int got = gzread(file_, buffer_.data(), static_cast<unsigned>(buffer_.size()));
    int error = Z_OK;
    const char* message = gzerror(file_, &error);
    check<std::runtime_error>(got >= 0 && error == Z_OK, "read_csv: ", path_, ":", line_number,
                              ": cannot read (", message, "; is the gzip file truncated or corrupt?)");
    buffer_.resize(static_cast<size_t>(got));
    return got > 0;
  }

  gzFile file_;
  const std::string& path_;
  std::string buffer_;
  size_t position_ = 0;
};

/// Throws std::runtime_error naming the line, field and byte of the first byte a CSV file may not
/// hold: a control character other than tab (NUL, a lone "\r", ...). Bytes from 0x80 up are let
/// through for UTF-8 column names; in a value they fail as "not a number".
void check_bytes(std::string_view line, char delimiter, const std::string& path, int64_t line_number) {
  for (size_t i = 0; i < line.size(); ++i) {
    const auto byte = static_cast<unsigned char>(line[i]);
    if (byte >= 0x20 && byte != 0x7f) continue;
    if (byte == '\t' || line[i] == delimiter) continue;
    const int64_t field =
        1 + std::count(line.begin(), line.begin() + static_cast<std::ptrdiff_t>(i), delimiter);
    char hex[8];
    std::snprintf(hex, sizeof hex, "0x%02x", byte);
    throw std::runtime_error(concat("read_csv: ", path, ":", line_number, ": column ", field, ": byte ", hex,
                                    " at character ", i + 1, " is not allowed in a CSV file"));
  }
}

/// The field without spaces or tabs around it.
std::string_view trim(std::string_view field) {
  const size_t first = field.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const size_t last = field.find_last_not_of(" \t");
  return field.substr(first, last - first + 1);
}

/// The field as an error quotes it: whole up to 40 bytes, else its first 40 (not cutting a UTF-8
/// character) and its length, so that a megabyte-long field gives a message of one line.
std::string quoted(std::string_view field) {
  constexpr size_t kShown = 40;
  if (field.size() <= kShown) return concat("\"", field, "\"");
  size_t cut = kShown;
  // A UTF-8 character has at most 3 continuation bytes; more of them in a row are not UTF-8.
  while (cut > kShown - 3 && (static_cast<unsigned char>(field[cut]) & 0xC0) == 0x80) --cut;
  if ((static_cast<unsigned char>(field[cut]) & 0xC0) == 0x80) cut = kShown;
  return concat("\"", field.substr(0, cut), "...\" (", field.size(), " bytes)");
}

/// Appends the values of one line to `values`; returns how many there were.
int64_t parse_line(std::string_view line, char delimiter, const std::string& path, int64_t line_number,
                   std::vector<double>& values) {
  int64_t column = 0;
  size_t start = 0;
  while (true) {
    const size_t end = std::min(line.find(delimiter, start), line.size());
    std::string_view field = trim(line.substr(start, end - start));
    ++column;

    // from_chars refuses "+1"; dropping the '+' must not let "+-1" through as -1.
    if (field.size() >= 2 && field[0] == '+' && field[1] != '-' && field[1] != '+') field.remove_prefix(1);
    double value = 0.0;
    const auto [rest, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    check<std::runtime_error>(error == std::errc() && rest == field.data() + field.size() && !field.empty(),
                              "read_csv: ", path, ":", line_number, ": column ", column, ": ",
                              quoted(trim(line.substr(start, end - start))), " is not a number");
    values.push_back(value);

    if (end == line.size()) return column;
    start = end + 1;
  }
}

}  // namespace

Tensor read_csv(const std::string& path, CsvOptions options) {
  const GzFile file = open_file(path);
  LineReader lines(file.get(), path);

  std::vector<double> values;
  int64_t rows = 0;
  int64_t columns = 0;
  int64_t first_data_line = 0;
  int64_t line_number = 0;
  std::string line;
  while (lines.next(line, line_number + 1)) {
    ++line_number;
    if (line_number == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);  // a UTF-8 byte order mark
    check_bytes(line, options.delimiter, path, line_number);
    if (line_number == 1 && options.skip_header) continue;
    if (trim(line).empty()) continue;

    const int64_t count = parse_line(line, options.delimiter, path, line_number, values);
    if (rows == 0) {
      columns = count;
      first_data_line = line_number;
    }
    check<std::runtime_error>(count == columns, "read_csv: ", path, ":", line_number, ": ", count,
                              " values, but line ", first_data_line, " has ", columns,
                              " (every line needs the same number of values)");
    ++rows;
  }

  check<std::runtime_error>(rows > 0, "read_csv: ", path, " has no data lines");
  return tensor(values, {rows, columns}, {.dtype = kFloat64});
}

}  // namespace minigrad::data
