// The SVG writer: well-formed XML (every element closed, attributes quoted), one polyline
// per series through its points in order, escaped text, non-finite points left out.
#include "core/svg_plot.h"

#include "core/markup_escape.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace cohort {
namespace {

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t at = s.find(what); at != std::string::npos; at = s.find(what, at + 1)) ++n;
  return n;
}

// A small tag balance check: every <name ...> is closed by </name> or is self-closing,
// in nesting order.
bool balanced(const std::string& s) {
  std::vector<std::string> open;
  for (size_t at = s.find('<'); at != std::string::npos; at = s.find('<', at + 1)) {
    const size_t end = s.find('>', at);
    if (end == std::string::npos) return false;
    const std::string tag = s.substr(at + 1, end - at - 1);
    if (tag.empty() || tag[0] == '?') continue;
    if (tag[0] == '/') {
      if (open.empty() || open.back() != tag.substr(1)) return false;
      open.pop_back();
    } else if (tag.back() != '/') {
      open.push_back(tag.substr(0, tag.find(' ')));
    }
  }
  return open.empty();
}

TEST(SvgPlot, WellFormedWithOneLinePerSeries) {
  PlotOptions o;
  o.title = "tok/s <vs> latency & \"mode\"";
  o.x_label = "us";
  o.y_label = "tok/s";
  o.log1p_x = true;
  o.x_ticks = {0, 3, 30, 300};
  const std::vector<PlotSeries> series = {{"tensor/tcp", {{0, 10}, {3, 9}, {30, 7}, {300, 2}}},
                                          {"pipeline/shm", {{0, 8}, {300, 7.5}}},
                                          {"empty", {}}};
  const std::string svg = svg_line_plot(o, series);
  EXPECT_EQ(svg.rfind("<?xml", 0), 0u);
  EXPECT_NE(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\""), std::string::npos);
  EXPECT_TRUE(balanced(svg)) << svg;
  EXPECT_EQ(count(svg, "<polyline"), 2u);
  EXPECT_EQ(count(svg, "<circle"), 6u);
  EXPECT_NE(svg.find("tok/s &lt;vs&gt; latency &amp; &#34;mode&#34;"), std::string::npos);
  for (const char* label : {"tensor/tcp", "pipeline/shm", "empty"}) {
    EXPECT_NE(svg.find(std::string(">") + label + "</text>"), std::string::npos) << label;
  }
  for (const char* tick : {">0</text>", ">3</text>", ">30</text>", ">300</text>"}) {
    EXPECT_NE(svg.find(tick), std::string::npos) << tick;
  }
}

TEST(SvgPlot, PointsAreScaledIntoThePlotArea) {
  PlotOptions o;
  o.width = 400;
  o.height = 300;
  const std::string svg = svg_line_plot(o, {{"a", {{0, 0}, {10, 5}, {NAN, 3}, {5, INFINITY}}}});
  EXPECT_TRUE(balanced(svg)) << svg;
  EXPECT_EQ(count(svg, "<circle"), 2u);  // the non-finite points are left out
  const size_t at = svg.find("points=\"");
  ASSERT_NE(at, std::string::npos);
  const std::string pts = svg.substr(at + 8, svg.find('"', at + 8) - at - 8);
  double x0, y0, x1, y1;
  ASSERT_EQ(std::sscanf(pts.c_str(), "%lf,%lf %lf,%lf", &x0, &y0, &x1, &y1), 4) << pts;
  EXPECT_LT(x0, x1);  // x grows to the right
  EXPECT_GT(y0, y1);  // y grows upwards
  for (double x : {x0, x1}) EXPECT_TRUE(x >= 0 && x <= 400) << x;
  for (double y : {y0, y1}) EXPECT_TRUE(y >= 0 && y <= 300) << y;
}

TEST(SvgPlot, EscapesMarkup) { EXPECT_EQ(markup_escape("a<b>&'\""), "a&lt;b&gt;&amp;&#39;&#34;"); }

}  // namespace
}  // namespace cohort
