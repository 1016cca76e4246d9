// Reading a table of numbers from a text file: one example per line, values separated by commas.
//
// read_csv turns such a file into a 2-d tensor [N rows, D columns], the job numpy.loadtxt or
// pandas.read_csv does in a Python course. Gzip-compressed files (digits.csv.gz) are read the
// same way: zlib recognises compressed data by its first bytes and decompresses as it reads.
// A bad file stops with an error that says where: `assets/iris.csv:17: column 3: "abc" is not a
// number`, so the line can be found and fixed in an editor.
#pragma once

#include <string>

#include "autograd/tensor.hpp"

namespace minigrad::data {

/// Options of read_csv: `read_csv("assets/iris.csv", {.skip_header = true})`.
struct CsvOptions {
  bool skip_header = false;  ///< ignore the first line (column names, or iris's `150,4,setosa,...`)
  char delimiter = ',';      ///< what separates the values of a line
};

/// The numbers of a CSV file as a float64 tensor [N, D]: N lines of D values each (blank lines
/// are skipped, spaces around a value are ignored, "\r\n" line ends are accepted, values are
/// anything std::from_chars reads: 5.1, -3, 1e-4, nan, inf). float64 keeps every value as the
/// double nearest to what is written, as numpy reads it; `.to(kFloat32)` then rounds as
/// `torch.from_numpy(a).float()` does. Plain or gzip-compressed files alike.
/// Throws std::runtime_error naming the file: one that cannot be opened or holds no data line;
/// naming the line (counted from 1, header included) too: a value that is not a number
/// (`read_csv: assets/iris.csv:17: column 3: "abc" is not a number`), a line with another number
/// of values than the first data line (ragged rows), or corrupt gzip data.
Tensor read_csv(const std::string& path, CsvOptions options = {});

}  // namespace minigrad::data
