// A minimal SVG line chart (axes, ticks, one polyline with markers per series, a legend),
// for benchmark plots committed next to the docs. Self-contained SVG 1.1, no scripts, text
// XML-escaped.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace cohort {

struct PlotSeries {
  std::string label;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in the order given
};

struct PlotOptions {
  std::string title;
  std::string x_label;
  std::string y_label;
  // x drawn at log10(1 + x), so 0 and a spread of decades (0, 3, ..., 1000 us) share an axis.
  bool log1p_x = false;
  std::vector<double> x_ticks;  // where to label x (default: five even steps)
  int width = 800;
  int height = 480;
};

// Points with a non-finite coordinate are left out; an empty series draws only its legend
// entry. The y axis starts at 0 and ends a little above the largest y.
std::string svg_line_plot(const PlotOptions& options, const std::vector<PlotSeries>& series);

}  // namespace cohort
