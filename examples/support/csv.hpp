// The loss curve as a CSV file, `step,loss` one line per step, for a spreadsheet or pandas.
//
// Not part of minigrad: the examples' way of keeping their numbers. write_csv writes columns of
// numbers under a header line, each in the shortest text that reads back as the same double, so
// nothing is lost. read_csv_columns reads such a file back with minigrad's own CSV reader
// (data/csv.hpp), which is how an example that resumes from a checkpoint continues its curve.
#pragma once

#include <charconv>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "data/csv.hpp"
#include "examples/support/text_file.hpp"

namespace support {

/// A named column of numbers: {"loss", {0.9, 0.5, 0.3}}.
using Column = std::pair<std::string, std::vector<double>>;

/// The loss after each step of a run: what <name>_loss.csv holds and <name>_loss.svg draws.
struct LossHistory {
  std::vector<double> steps;   ///< 1, 2, 3, ...
  std::vector<double> losses;  ///< the training loss of that step's batch

  void add(int64_t step, double loss) {
    steps.push_back(static_cast<double>(step));
    losses.push_back(loss);
  }
};

/// The shortest text that reads back as exactly `value` ("0.1", "1e-05", "nan").
inline std::string number_text(double value) {
  char buffer[32];
  const auto result = std::to_chars(buffer, buffer + sizeof buffer, value);
  return std::string(buffer, result.ptr);
}

/// Writes the columns side by side under a header line of their names. Throws
/// std::invalid_argument for columns of different lengths, std::runtime_error naming the file
/// when it cannot be written.
inline void write_csv(const std::string& path, const std::vector<Column>& columns) {
  for (const Column& column : columns) {
    if (column.second.size() != columns.front().second.size()) {
      throw std::invalid_argument("write_csv: column '" + column.first + "' has " +
                                  std::to_string(column.second.size()) + " values but column '" +
                                  columns.front().first + "' has " +
                                  std::to_string(columns.front().second.size()));
    }
  }
  std::string text;
  for (size_t c = 0; c < columns.size(); ++c) {
    if (c > 0) text += ',';
    text += columns[c].first;
  }
  text += "\n";
  const size_t rows = columns.empty() ? 0 : columns.front().second.size();
  for (size_t r = 0; r < rows; ++r) {
    for (size_t c = 0; c < columns.size(); ++c) {
      if (c > 0) text += ',';  // appended piece by piece: GCC 12 warns falsely (-Wrestrict) of "," + string
      text += number_text(columns[c].second[r]);
    }
    text += "\n";
  }
  write_text_file(path, text, "write_csv");  // whole or not at all: a resumed run rewrites its history
}

/// `step,loss` lines: the history of a run.
inline void write_csv(const std::string& path, const LossHistory& history) {
  write_csv(path, {{"step", history.steps}, {"loss", history.losses}});
}

/// The columns of a CSV file written by write_csv (its header line skipped), each as a vector.
/// Throws std::runtime_error as minigrad::data::read_csv: naming the file, and the line if one
/// is malformed.
inline std::vector<std::vector<double>> read_csv_columns(const std::string& path) {
  const minigrad::Tensor table = minigrad::data::read_csv(path, {.skip_header = true});  // [N, D] float64
  const int64_t rows = table.size(0);
  const int64_t cols = table.size(1);
  const std::vector<double> values = table.to_vector<double>();
  std::vector<std::vector<double>> columns(cols);
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) columns[c].push_back(values[r * cols + c]);
  }
  return columns;
}

/// The history saved in `path` up to and including step `last_step` (for --resume: the steps
/// after the checkpoint are trained again). Throws as read_csv_columns, and std::runtime_error
/// for a file without the two columns step and loss.
inline LossHistory read_loss_history(const std::string& path, int64_t last_step) {
  const std::vector<std::vector<double>> columns = read_csv_columns(path);
  if (columns.size() != 2) {
    throw std::runtime_error("read_loss_history: " + path + " has " + std::to_string(columns.size()) +
                             " columns, expected 2 (step, loss)");
  }
  LossHistory history;
  for (size_t r = 0; r < columns[0].size(); ++r) {
    if (columns[0][r] <= static_cast<double>(last_step))
      history.add(static_cast<int64_t>(columns[0][r]), columns[1][r]);
  }
  return history;
}

}  // namespace support
