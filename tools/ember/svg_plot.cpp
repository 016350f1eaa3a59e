#include "tools/ember/svg_plot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>

namespace ember::tools {
namespace {

std::string num(double v) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", v);
  return b;
}

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    if (c == '<') o += "&lt;";
    else if (c == '>') o += "&gt;";
    else if (c == '&') o += "&amp;";
    else o += c;
  }
  return o;
}

}  // namespace

std::string svg_line_chart(const std::string& title, const std::vector<Series>& series) {
  return svg_line_chart(title, series, ChartAxes{});
}

std::string svg_line_chart(const std::string& title, const std::vector<Series>& series, const ChartAxes& axes) {
  const double rmax = axes.right_max > 0 ? axes.right_max : 1.0;
  const double W = 720, H = 420, left = 70, right = 70, top = 50, bottom = 60;
  const double pw = W - left - right, ph = H - top - bottom;
  std::size_t n = 1;
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  for (const auto& s : series) {
    n = std::max(n, s.values.size());
    if (s.right_axis) continue;
    for (double v : s.values) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  }
  if (!(lo < hi)) {
    lo = std::isfinite(lo) ? lo - 1 : 0;
    hi = std::isfinite(hi) ? hi + 1 : 1;
  }
  lo = std::min(lo, 0.0);
  auto x = [&](std::size_t i) { return left + (n == 1 ? pw / 2 : pw * static_cast<double>(i) / static_cast<double>(n - 1)); };
  auto yl = [&](double v) { return top + ph * (1.0 - (v - lo) / (hi - lo)); };
  auto yr = [&](double v) { return top + ph * (1.0 - v / rmax); };

  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + num(W) + "\" height=\"" + num(H) +
                    "\" font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  svg += "<text x=\"" + num(W / 2) + "\" y=\"28\" text-anchor=\"middle\" font-size=\"16\">" + escape(title) + "</text>\n";
  // Axes and grid.
  for (int k = 0; k <= 4; ++k) {
    const double v = lo + (hi - lo) * k / 4.0, y = yl(v);
    svg += "<line x1=\"" + num(left) + "\" x2=\"" + num(left + pw) + "\" y1=\"" + num(y) + "\" y2=\"" + num(y) +
           "\" stroke=\"#ddd\"/>\n";
    svg += "<text x=\"" + num(left - 8) + "\" y=\"" + num(y + 4) + "\" text-anchor=\"end\">" + num(v) + "</text>\n";
    svg += "<text x=\"" + num(left + pw + 8) + "\" y=\"" + num(yr(rmax * k / 4.0) + 4) + "\">" + num(rmax * k / 4.0) + "</text>\n";
  }
  svg += "<rect x=\"" + num(left) + "\" y=\"" + num(top) + "\" width=\"" + num(pw) + "\" height=\"" + num(ph) +
         "\" fill=\"none\" stroke=\"#333\"/>\n";
  const std::size_t step = std::max<std::size_t>(1, n / 10);
  for (std::size_t i = 0; i < n; i += step)
    svg += "<text x=\"" + num(x(i)) + "\" y=\"" + num(top + ph + 18) + "\" text-anchor=\"middle\">" +
           std::to_string(static_cast<int64_t>(i + 1) * axes.x_every) + "</text>\n";
  svg += "<text x=\"" + num(left + pw / 2) + "\" y=\"" + num(H - 15) + "\" text-anchor=\"middle\">" + escape(axes.x_label) + "</text>\n";
  // Lines and legend.
  double ly = top + 14;
  for (const auto& s : series) {
    std::string pts;
    for (std::size_t i = 0; i < s.values.size(); ++i)
      pts += num(x(i)) + "," + num(s.right_axis ? yr(s.values[i]) : yl(s.values[i])) + " ";
    svg += "<polyline fill=\"none\" stroke=\"" + s.color + "\" stroke-width=\"2\" points=\"" + pts + "\"/>\n";
    svg += "<rect x=\"" + num(left + 12) + "\" y=\"" + num(ly - 9) + "\" width=\"12\" height=\"3\" fill=\"" + s.color +
           "\"/><text x=\"" + num(left + 30) + "\" y=\"" + num(ly - 4) + "\">" + escape(s.name) +
           (s.right_axis ? " (right axis)" : "") + "</text>\n";
    ly += 16;
  }
  return svg + "</svg>\n";
}

}  // namespace ember::tools
