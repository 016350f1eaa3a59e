#pragma once
// A dependency-free SVG line chart for training curves (loss and accuracy per epoch).
#include <string>
#include <vector>

namespace ember::tools {

struct Series {
  std::string name;
  std::string color;  // CSS color
  std::vector<double> values;
  bool right_axis = false;  // plotted against the right axis (accuracy in [0, 1])
};

// Returns an SVG document: x = epoch (1..n), left axis auto-scaled, right axis [0, 1].
std::string svg_line_chart(const std::string& title, const std::vector<Series>& series);

}  // namespace ember::tools
