#pragma once
// A dependency-free SVG line chart for training curves (loss and accuracy per epoch).
#include <cstdint>
#include <string>
#include <vector>

namespace ember::tools {

struct Series {
  std::string name;
  std::string color;  // CSS color
  std::vector<double> values;
  bool right_axis = false;  // plotted against the right axis (accuracy in [0, 1])
};

struct ChartAxes {
  std::string x_label = "epoch";
  int64_t x_every = 1;     // point i is at x = (i + 1) * x_every (a step count when points are logged every k steps)
  double right_max = 1.0;  // the right axis spans [0, right_max]
};

// Returns an SVG document: x = epoch (1..n), left axis auto-scaled, right axis [0, 1].
std::string svg_line_chart(const std::string& title, const std::vector<Series>& series);
// The same with another x label / spacing and right-axis range (the language model: loss left, perplexity right).
std::string svg_line_chart(const std::string& title, const std::vector<Series>& series, const ChartAxes& axes);

}  // namespace ember::tools
