// Drawing pictures as SVG text: shapes, axes with tick marks, and a file any browser opens.
//
// Not part of minigrad: the examples draw their loss curves and decision regions with it, so a
// learner sees a run without plotting software (open the .svg file in a browser or an editor).
// An SVG file is XML: each shape is one element, `<line x1=... />`, placed in pixels from the top
// left corner. An Axis maps data values (a step, a loss) to pixels, linearly or on a log scale,
// and picks round tick values (1, 2 or 5 times a power of ten) as plotting libraries do.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "examples/support/text_file.hpp"

namespace support {

/// Ten distinct colours (matplotlib's default cycle, "tab10"); class k is drawn in colour k % 10.
inline const char* color(size_t index) {
  static const char* palette[] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
                                  "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
  return palette[index % 10];
}

/// color(index) mixed with white, `strength` of the colour (0.25: a pale background shade).
/// Opaque, so cells drawn edge to edge leave no darker seams where they overlap.
inline std::string tint(size_t index, double strength) {
  const std::string hex = color(index);
  std::string out = "#";
  for (int i = 0; i < 3; ++i) {
    const int channel = std::stoi(hex.substr(1 + 2 * i, 2), nullptr, 16);
    const int mixed = static_cast<int>(std::lround(255 - strength * (255 - channel)));
    char text[3];
    std::snprintf(text, sizeof text, "%02x", mixed);
    out += text;
  }
  return out;
}

/// Text made safe inside an XML element or attribute.
inline std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '&')
      out += "&amp;";
    else if (c == '<')
      out += "&lt;";
    else if (c == '>')
      out += "&gt;";
    else if (c == '"')
      out += "&quot;";
    else
      out += c;
  }
  return out;
}

/// A number as a tick label: 0.001, 250, 1e-05 (printf's %g).
inline std::string label(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", std::abs(value) < 1e-12 ? 0.0 : value);
  return text;
}

/// Data values [lo, hi] drawn between two pixel positions; on a log scale, equal ratios take
/// equal space (a loss falling from 1 to 0.1 and from 0.1 to 0.01 looks the same).
struct Axis {
  double lo = 0, hi = 1;              ///< the data range shown (lo > 0 on a log scale)
  double pixel_lo = 0, pixel_hi = 1;  ///< where lo and hi are drawn
  bool log = false;

  double pixel(double value) const {
    const double t = log ? (std::log10(value) - std::log10(lo)) / (std::log10(hi) - std::log10(lo))
                         : (value - lo) / (hi - lo);
    return pixel_lo + t * (pixel_hi - pixel_lo);
  }

  /// Round values inside [lo, hi] to mark: about five of them.
  std::vector<double> ticks() const {
    std::vector<double> out;
    if (!log) {
      // The round step nearest to a fifth of the range: 1, 2, 5 or 10 times a power of ten.
      const double raw = (hi - lo) / 5;
      const double power = std::pow(10.0, std::floor(std::log10(raw)));
      double step = 10 * power;
      if (raw / power < 1.5)
        step = power;
      else if (raw / power < 3.5)
        step = 2 * power;
      else if (raw / power < 7.5)
        step = 5 * power;
      for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push_back(v);
      return out;
    }
    // Powers of ten when the range spans several; otherwise 1, 2, 5 (or every digit) times them.
    const int first = static_cast<int>(std::floor(std::log10(lo)));
    const int last = static_cast<int>(std::ceil(std::log10(hi)));
    for (const std::vector<double>& mantissas :
         {std::vector<double>{1}, {1, 2, 5}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}) {
      out.clear();
      for (int e = first; e <= last; ++e) {
        for (double m : mantissas) {
          const double v = m * std::pow(10.0, e);
          if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) out.push_back(v);
        }
      }
      if (out.size() >= 3) break;
    }
    return out;
  }
};

/// The smallest and largest finite values (and, on a log scale, positive ones) of `values`,
/// widened by `margin` of the range on each side (in log space for a log scale).
inline Axis axis_over(const std::vector<double>& values, bool log, double margin) {
  double lo = INFINITY;
  double hi = -INFINITY;
  for (double v : values) {
    if (!std::isfinite(v) || (log && v <= 0)) continue;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo > hi) lo = hi = log ? 1.0 : 0.0;  // nothing to show
  Axis axis;
  axis.log = log;
  if (log) {
    const double span = std::max(std::log10(hi) - std::log10(lo), 0.1);
    axis.lo = lo / std::pow(10.0, margin * span);
    axis.hi = hi * std::pow(10.0, margin * span);
  } else {
    const double span = hi > lo ? hi - lo : std::max(std::abs(hi), 1.0);
    axis.lo = lo - margin * span;
    axis.hi = hi + margin * span;
  }
  return axis;
}

/// An SVG picture being drawn: call the shape functions, then save().
class Svg {
 public:
  Svg(int width, int height) : width_(width), height_(height) { rect(0, 0, width, height, "white"); }

  void rect(double x, double y, double w, double h, const std::string& fill, const std::string& extra = "") {
    body_ << "<rect x=\"" << px(x) << "\" y=\"" << px(y) << "\" width=\"" << px(w) << "\" height=\"" << px(h)
          << "\" fill=\"" << fill << "\"" << extra << "/>\n";
  }
  void line(double x1, double y1, double x2, double y2, const std::string& stroke, double width = 1,
            double opacity = 1) {
    body_ << "<line x1=\"" << px(x1) << "\" y1=\"" << px(y1) << "\" x2=\"" << px(x2) << "\" y2=\"" << px(y2)
          << "\" stroke=\"" << stroke << "\" stroke-width=\"" << width << "\" stroke-opacity=\"" << opacity
          << "\"/>\n";
  }
  void circle(double x, double y, double r, const std::string& fill) {
    body_ << "<circle cx=\"" << px(x) << "\" cy=\"" << px(y) << "\" r=\"" << r << "\" fill=\"" << fill
          << "\" stroke=\"white\" stroke-width=\"0.8\"/>\n";
  }
  /// `anchor` is "start", "middle" or "end": which part of the text sits at x.
  void text(double x, double y, const std::string& words, const std::string& anchor = "start", int size = 12,
            const std::string& extra = "") {
    body_ << "<text x=\"" << px(x) << "\" y=\"" << px(y) << "\" font-size=\"" << size << "\" text-anchor=\""
          << anchor << "\"" << extra << ">" << escape(words) << "</text>\n";
  }
  /// A line through the points (x0, y0), (x1, y1), ... in pixels.
  void polyline(const std::vector<double>& xs, const std::vector<double>& ys, const std::string& stroke,
                double width, double opacity = 1) {
    body_ << "<polyline fill=\"none\" stroke=\"" << stroke << "\" stroke-width=\"" << width
          << "\" stroke-opacity=\"" << opacity << "\" stroke-linejoin=\"round\" points=\"";
    for (size_t i = 0; i < xs.size(); ++i) body_ << (i > 0 ? " " : "") << px(xs[i]) << "," << px(ys[i]);
    body_ << "\"/>\n";
  }

  /// Writes the picture, as a whole or not at all (write_text_file). Throws std::runtime_error
  /// naming the file when it cannot be written.
  void save(const std::string& path) const {
    std::ostringstream file;
    file << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
         << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width_ << "\" height=\"" << height_
         << "\" viewBox=\"0 0 " << width_ << " " << height_ << "\" font-family=\"sans-serif\">\n"
         << body_.str() << "</svg>\n";
    write_text_file(path, file.str(), "Svg::save");  // whole or not at all
  }

 private:
  // Pixels with one decimal: enough for a screen, and the file stays small.
  static std::string px(double value) {
    char text[32];
    std::snprintf(text, sizeof text, "%.1f", value);
    return text;
  }

  int width_;
  int height_;
  std::ostringstream body_;
};

/// The frame of a plot: grid lines and labels at the ticks of both axes, the axis titles and the
/// plot's title above. The axes' pixel ranges give the plotting area.
inline void draw_axes(Svg& svg, const Axis& x, const Axis& y, const std::string& title,
                      const std::string& x_title, const std::string& y_title) {
  const double left = x.pixel_lo, right = x.pixel_hi, bottom = y.pixel_lo, top = y.pixel_hi;
  for (double v : x.ticks()) {
    svg.line(x.pixel(v), top, x.pixel(v), bottom, "#e0e0e0");
    svg.text(x.pixel(v), bottom + 16, label(v), "middle", 11);
  }
  for (double v : y.ticks()) {
    svg.line(left, y.pixel(v), right, y.pixel(v), "#e0e0e0");
    svg.text(left - 6, y.pixel(v) + 4, label(v), "end", 11);
  }
  svg.rect(left, top, right - left, bottom - top, "none", " stroke=\"#404040\"");
  svg.text((left + right) / 2, top - 14, title, "middle", 15, " font-weight=\"bold\"");
  svg.text((left + right) / 2, bottom + 38, x_title, "middle", 12);
  const double middle = (top + bottom) / 2;
  svg.text(18, middle, y_title, "middle", 12,
           " transform=\"rotate(-90 18 " + std::to_string(static_cast<int>(middle)) + ")\"");
}

}  // namespace support
