// read_csv: lines from zlib (plain or gzip alike), split at the delimiter, parsed by from_chars.
//
// zlib's gzopen/gzgets read an uncompressed file unchanged, so one reading loop serves both
// kinds of file. The values go into one flat row-major vector, which becomes the tensor at the
// end; every line is checked against the width of the first data line as it is read.
#include "data/csv.hpp"

#include <zlib.h>

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "autograd/op_support.hpp"

namespace minigrad::data {

using minigrad::detail::check;

namespace {

using GzFile = std::unique_ptr<gzFile_s, decltype(&gzclose)>;

/// The next line without its "\n" or "\r\n"; false at the end of the file. Lines longer than the
/// buffer arrive in pieces and are joined. Throws std::runtime_error for corrupt gzip data.
bool read_line(gzFile file, const std::string& path, int64_t line_number, std::string& line) {
  line.clear();
  char buffer[4096];
  while (true) {
    if (gzgets(file, buffer, sizeof buffer) == nullptr) {
      int error = Z_OK;
      const char* message = gzerror(file, &error);
      check<std::runtime_error>(error == Z_OK, "read_csv: ", path, ":", line_number, ": cannot read (",
                                message, "; is the gzip file truncated or corrupt?)");
      break;  // end of the file
    }
    line += buffer;
    if (line.back() == '\n') break;
  }
  if (line.empty()) return false;

  if (line.back() == '\n') line.pop_back();
  if (!line.empty() && line.back() == '\r') line.pop_back();
  return true;
}

/// The field without spaces or tabs around it.
std::string_view trim(std::string_view field) {
  const size_t first = field.find_first_not_of(" \t");
  if (first == std::string_view::npos) return {};
  const size_t last = field.find_last_not_of(" \t");
  return field.substr(first, last - first + 1);
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

    if (!field.empty() && field.front() == '+') field.remove_prefix(1);  // from_chars refuses "+1"
    double value = 0.0;
    const auto [rest, error] = std::from_chars(field.data(), field.data() + field.size(), value);
    check<std::runtime_error>(error == std::errc() && rest == field.data() + field.size() && !field.empty(),
                              "read_csv: ", path, ":", line_number, ": column ", column, ": \"",
                              trim(line.substr(start, end - start)), "\" is not a number");
    values.push_back(value);

    if (end == line.size()) return column;
    start = end + 1;
  }
}

}  // namespace

Tensor read_csv(const std::string& path, CsvOptions options) {
  GzFile file(gzopen(path.c_str(), "rb"), &gzclose);
  check<std::runtime_error>(file != nullptr, "read_csv: cannot open ", path,
                            " (no such file, or not readable)");

  std::vector<double> values;
  int64_t rows = 0;
  int64_t columns = 0;
  int64_t first_data_line = 0;
  int64_t line_number = 0;
  std::string line;
  while (read_line(file.get(), path, line_number + 1, line)) {
    ++line_number;
    if (line_number == 1 && line.starts_with("\xEF\xBB\xBF")) line.erase(0, 3);  // a UTF-8 byte order mark
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
