// The two pictures the training examples draw: a loss curve, and a classifier's decision regions.
//
// Not part of minigrad. write_loss_plot draws the loss of every step (faint: one batch's loss is
// noisy) with its running mean on top, on a log scale, where a loss that keeps falling by the
// same factor is a straight line. write_regions_plot colours each cell of a grid over the plane
// by the class a model picks there, then draws the data points on top: where the colours match
// the points, the model is right. Both are built from the shapes and axes of support/svg.hpp.
#pragma once

#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

#include "autograd/tensor.hpp"
#include "examples/support/csv.hpp"
#include "examples/support/svg.hpp"

namespace support {

/// One line of a plot: its points and how it looks.
struct Series {
  std::string label;  ///< shown in the legend
  std::vector<double> x;
  std::vector<double> y;
  std::string color = "#1f77b4";
  double width = 1.5;
  double opacity = 1.0;
};

/// A line plot: axes titles, and the lines to draw.
struct LinePlot {
  std::string title;
  std::string x_title;
  std::string y_title;
  bool log_y = false;  ///< falls back to a linear scale when some y is 0 or negative
  std::vector<Series> series;
};

/// Writes `plot` as an SVG picture of 720 x 440 pixels. Points that are not finite are left
/// out. Throws std::runtime_error naming the file when it cannot be written.
inline void write_line_plot(const std::string& path, const LinePlot& plot) {
  std::vector<double> all_x;
  std::vector<double> all_y;
  bool positive = true;
  for (const Series& s : plot.series) {
    all_x.insert(all_x.end(), s.x.begin(), s.x.end());
    all_y.insert(all_y.end(), s.y.begin(), s.y.end());
    for (double v : s.y) positive = positive && !(v <= 0);
  }
  Axis x = axis_over(all_x, false, 0.0);
  Axis y = axis_over(all_y, plot.log_y && positive, 0.05);
  x.pixel_lo = 80, x.pixel_hi = 700;
  y.pixel_lo = 380, y.pixel_hi = 40;  // pixels grow downwards: the smallest value at the bottom

  Svg svg(720, 440);
  draw_axes(svg, x, y, plot.title, plot.x_title, plot.y_title + (y.log ? " (log scale)" : ""));
  for (size_t k = 0; k < plot.series.size(); ++k) {
    const Series& s = plot.series[k];
    std::vector<double> xs;
    std::vector<double> ys;
    for (size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      if (!std::isfinite(s.x[i]) || !std::isfinite(s.y[i]) || (y.log && s.y[i] <= 0)) continue;
      xs.push_back(x.pixel(s.x[i]));
      ys.push_back(y.pixel(s.y[i]));
    }
    svg.polyline(xs, ys, s.color, s.width, s.opacity);
    // Legend, top right: a short stroke of the line's colour, then its label.
    const double row = 58 + 18 * static_cast<double>(k);
    svg.line(x.pixel_hi - 190, row - 4, x.pixel_hi - 170, row - 4, s.color, 3, s.opacity);
    svg.text(x.pixel_hi - 164, row, s.label, "start", 11);
  }
  svg.save(path);
}

/// The loss curve of a run: each step's loss, faint, and the mean of the last few steps
/// (1/25 of the run), bold, on a log scale.
inline void write_loss_plot(const std::string& path, const std::string& title, const LossHistory& history) {
  const size_t n = history.losses.size();
  const size_t window = std::max<size_t>(1, n / 25);
  Series mean{"mean of the last " + std::to_string(window) + " steps", history.steps, {}, color(0), 2.0, 1.0};
  double sum = 0;
  for (size_t i = 0; i < n; ++i) {
    sum += history.losses[i];
    if (i >= window) sum -= history.losses[i - window];
    mean.y.push_back(sum / static_cast<double>(std::min(i + 1, window)));
  }
  Series each{"loss of each step", history.steps, history.losses, color(0), 1.0, 0.3};
  write_line_plot(path, {title, "step", "loss", true, {each, mean}});
}

/// A size x size grid of points over a rectangle of the plane: the cell centres, row by row
/// from the top, as a tensor a model takes.
struct Grid {
  double x_lo = 0, x_hi = 1, y_lo = 0, y_hi = 1;
  int64_t size = 0;
  minigrad::Tensor points;  ///< [size * size, 2] float32; row r, column c is point r * size + c
};

/// A grid over the points `x` [N, 2] and a margin of a tenth of their extent on every side.
/// Throws std::invalid_argument for another shape of x, or size < 1.
inline Grid grid_around(const minigrad::Tensor& x, int64_t size) {
  if (x.dim() != 2 || x.size(1) != 2 || x.size(0) < 1 || size < 1) {
    throw std::invalid_argument("grid_around: expected points [N, 2] with N >= 1 and a size >= 1, got " +
                                minigrad::to_string(x.shape()) + " and " + std::to_string(size));
  }
  std::vector<double> xs;
  std::vector<double> ys;
  const std::vector<double> values = x.to_vector<double>();
  for (size_t i = 0; i < values.size(); i += 2) {
    xs.push_back(values[i]);
    ys.push_back(values[i + 1]);
  }
  const Axis ax = axis_over(xs, false, 0.1);
  const Axis ay = axis_over(ys, false, 0.1);
  Grid grid{ax.lo, ax.hi, ay.lo, ay.hi, size, {}};
  std::vector<float> points;
  for (int64_t r = 0; r < size; ++r) {
    for (int64_t c = 0; c < size; ++c) {
      points.push_back(static_cast<float>(grid.x_lo + (grid.x_hi - grid.x_lo) * (c + 0.5) / size));
      points.push_back(static_cast<float>(grid.y_hi - (grid.y_hi - grid.y_lo) * (r + 0.5) / size));
    }
  }
  grid.points = minigrad::tensor(points, {size * size, 2});
  return grid;
}

/// Draws the class picked at each grid point, `grid_classes` [size * size] int64, as coloured
/// cells, and the points x [N, 2] in the colours of their classes y [N] int64, as a 600 x 600
/// picture. Throws std::invalid_argument for tensors of other shapes, std::runtime_error naming
/// the file when it cannot be written.
inline void write_regions_plot(const std::string& path, const std::string& title, const Grid& grid,
                               const minigrad::Tensor& grid_classes, const minigrad::Tensor& x,
                               const minigrad::Tensor& y) {
  if (grid_classes.numel() != grid.size * grid.size || x.dim() != 2 || x.size(1) != 2 || y.dim() != 1 ||
      y.size(0) != x.size(0)) {
    throw std::invalid_argument(
        "write_regions_plot: expected grid classes [" + std::to_string(grid.size * grid.size) +
        "], points [N, 2] and labels [N], got " + minigrad::to_string(grid_classes.shape()) + ", " +
        minigrad::to_string(x.shape()) + " and " + minigrad::to_string(y.shape()));
  }
  Axis ax{grid.x_lo, grid.x_hi, 70, 580, false};
  Axis ay{grid.y_lo, grid.y_hi, 550, 40, false};
  Svg svg(600, 600);
  const double cell_w = (ax.pixel_hi - ax.pixel_lo) / grid.size;
  const double cell_h = (ay.pixel_lo - ay.pixel_hi) / grid.size;

  // Cells, one rectangle per run of equal classes along a row (a few hundred, not size^2).
  const std::vector<int64_t> classes = grid_classes.to_vector<int64_t>();
  for (int64_t r = 0; r < grid.size; ++r) {
    int64_t start = 0;
    for (int64_t c = 1; c <= grid.size; ++c) {
      const int64_t k = classes[r * grid.size + start];
      if (c < grid.size && classes[r * grid.size + c] == k) continue;
      svg.rect(ax.pixel_lo + start * cell_w, ay.pixel_hi + r * cell_h, (c - start) * cell_w + 0.5,
               cell_h + 0.5, tint(static_cast<size_t>(k), 0.25));
      start = c;
    }
  }
  draw_axes(svg, ax, ay, title, "x[0]", "x[1]");

  const std::vector<double> points = x.to_vector<double>();
  const std::vector<int64_t> labels = y.to_vector<int64_t>();
  for (size_t i = 0; i < labels.size(); ++i) {
    svg.circle(ax.pixel(points[2 * i]), ay.pixel(points[2 * i + 1]), 3.2,
               color(static_cast<size_t>(labels[i])));
  }
  svg.save(path);
}

}  // namespace support
