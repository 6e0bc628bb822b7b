#include "core/svg_plot.h"

#include "core/markup_escape.h"

#include <algorithm>
#include <cmath>
#include <cstdio>

namespace cohort {
namespace {

constexpr const char* kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                   "#9467bd", "#8c564b", "#e377c2", "#17becf"};
constexpr int kLeft = 70, kRight = 190, kTop = 40, kBottom = 60;  // margins, px

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f", v);
  return buf;
}

// A tick label without trailing zeros: 3, 0.5, 1000.
std::string tick_label(double v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", v);
  return buf;
}

// A round step giving about `target` intervals over [0, hi].
double nice_step(double hi, int target) {
  const double raw = hi / target;
  const double mag = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * mag >= raw) return m * mag;
  }
  return 10 * mag;
}

}  // namespace

std::string svg_line_plot(const PlotOptions& o, const std::vector<PlotSeries>& series) {
  auto tx = [&](double x) { return o.log1p_x ? std::log10(1 + std::max(x, 0.0)) : x; };
  double x_lo = INFINITY, x_hi = -INFINITY, y_hi = 0;
  for (const PlotSeries& s : series)
    for (const auto& [x, y] : s.points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      x_lo = std::min(x_lo, tx(x));
      x_hi = std::max(x_hi, tx(x));
      y_hi = std::max(y_hi, y);
    }
  if (!(x_lo < x_hi)) {  // no points, or one x: a unit-wide axis around it
    x_lo = std::isfinite(x_lo) ? x_lo - 0.5 : 0;
    x_hi = x_lo + 1;
  }
  const double y_step = nice_step(y_hi > 0 ? y_hi * 1.05 : 1, 5);
  const double y_top = std::ceil((y_hi > 0 ? y_hi * 1.05 : 1) / y_step) * y_step;
  const double pw = o.width - kLeft - kRight, ph = o.height - kTop - kBottom;
  auto px = [&](double x) { return kLeft + (tx(x) - x_lo) / (x_hi - x_lo) * pw; };
  auto py = [&](double y) { return kTop + ph - y / y_top * ph; };

  std::string s = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n";
  s += "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(o.width) +
       "\" height=\"" + std::to_string(o.height) + "\" viewBox=\"0 0 " + std::to_string(o.width) +
       " " + std::to_string(o.height) + "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s += "<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n";
  s += "<text x=\"" + num(o.width / 2.0) + "\" y=\"22\" text-anchor=\"middle\" font-size=\"15\">" +
       markup_escape(o.title) + "</text>\n";
  // Grid and y ticks.
  for (double y = 0; y <= y_top + y_step / 2; y += y_step) {
    s += "<line x1=\"" + num(kLeft) + "\" y1=\"" + num(py(y)) + "\" x2=\"" + num(kLeft + pw) +
         "\" y2=\"" + num(py(y)) + "\" stroke=\"#ddd\"/>\n";
    s += "<text x=\"" + num(kLeft - 6) + "\" y=\"" + num(py(y) + 4) + "\" text-anchor=\"end\">" +
         tick_label(y) + "</text>\n";
  }
  std::vector<double> xt = o.x_ticks;
  if (xt.empty()) {
    for (int i = 0; i <= 4; ++i) {
      const double t = x_lo + (x_hi - x_lo) * i / 4;
      xt.push_back(o.log1p_x ? std::pow(10.0, t) - 1 : t);
    }
  }
  for (double x : xt) {
    if (!std::isfinite(x)) continue;
    s += "<line x1=\"" + num(px(x)) + "\" y1=\"" + num(kTop + ph) + "\" x2=\"" + num(px(x)) +
         "\" y2=\"" + num(kTop + ph + 5) + "\" stroke=\"black\"/>\n";
    s += "<text x=\"" + num(px(x)) + "\" y=\"" + num(kTop + ph + 18) +
         "\" text-anchor=\"middle\">" + tick_label(x) + "</text>\n";
  }
  // Axes and their labels.
  s += "<path d=\"M" + num(kLeft) + " " + num(kTop) + " V" + num(kTop + ph) + " H" +
       num(kLeft + pw) + "\" fill=\"none\" stroke=\"black\"/>\n";
  s += "<text x=\"" + num(kLeft + pw / 2) + "\" y=\"" + num(o.height - 15.0) +
       "\" text-anchor=\"middle\">" + markup_escape(o.x_label) + "</text>\n";
  s += "<text transform=\"translate(18 " + num(kTop + ph / 2) +
       ") rotate(-90)\" text-anchor=\"middle\">" + markup_escape(o.y_label) + "</text>\n";
  // Series and legend.
  for (size_t i = 0; i < series.size(); ++i) {
    const std::string color = kColors[i % (sizeof(kColors) / sizeof(kColors[0]))];
    std::string pts, marks;
    for (const auto& [x, y] : series[i].points) {
      if (!std::isfinite(x) || !std::isfinite(y)) continue;
      pts += (pts.empty() ? "" : " ") + num(px(x)) + "," + num(py(y));
      marks += "<circle cx=\"" + num(px(x)) + "\" cy=\"" + num(py(y)) + "\" r=\"3\" fill=\"" +
               color + "\"/>\n";
    }
    if (!pts.empty()) {
      s += "<polyline points=\"" + pts + "\" fill=\"none\" stroke=\"" + color +
           "\" stroke-width=\"2\"/>\n" + marks;
    }
    const double ly = kTop + 10 + 20.0 * static_cast<double>(i);
    s += "<line x1=\"" + num(kLeft + pw + 15) + "\" y1=\"" + num(ly) + "\" x2=\"" +
         num(kLeft + pw + 40) + "\" y2=\"" + num(ly) + "\" stroke=\"" + color +
         "\" stroke-width=\"2\"/>\n";
    s += "<text x=\"" + num(kLeft + pw + 46) + "\" y=\"" + num(ly + 4) + "\">" +
         markup_escape(series[i].label) + "</text>\n";
  }
  s += "</svg>\n";
  return s;
}

}  // namespace cohort
