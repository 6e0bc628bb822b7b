#include "runtime/cluster_bench_report.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "core/svg_plot.h"
#include "runtime/bench_report.h"

namespace cohort::runtime {
namespace {

struct StoryFigure {
  const char* mode;
  double latency_us;
  double tok_s;
};
// The seed story: 70B on four Mac Studios.
constexpr StoryFigure kStory[] = {
    {"pipeline", 300, 5}, {"tensor-ring", 300, 3}, {"tensor-ring", 3, 16}};
constexpr double kProjectionLatenciesUs[] = {3, 30, 300, 1000};
constexpr int kProjectionNodes[] = {2, 4, 8};
constexpr const char* kProjectionModes[] = {"pipeline", "tensor", "tensor-ring"};

double error_pct(double predicted, double measured) {
  return measured > 0 ? (predicted - measured) / measured * 100 : 0;
}

}  // namespace

std::string cluster_table_header() {
  return "| mode     | transport | nodes | lat us | placement          | syncs/tok | ops/tok | "
         "pp tok/s | ttft ms | tg tok/s | comm ms/tok |\n"
         "| -------- | --------- | ----: | -----: | ------------------ | --------: | ------: | "
         "-------: | ------: | -------: | ----------: |\n";
}

std::string cluster_table_row(const ClusterBenchRow& r) {
  if (!r.skipped.empty()) {
    return format("| %-8s | %-9s | %5d | %6lld | skipped: %s |\n", r.mode.c_str(),
                  r.transport.c_str(), r.nodes, static_cast<long long>(r.link_latency_us),
                  r.skipped.c_str());
  }
  const ClusterMeasurement& m = r.m;
  return format(
      "| %-8s | %-9s | %5d | %6lld | %-18s | %9lld | %7.1f | %8.1f | %7.1f | %8.2f | "
      "%11.2f |\n",
      r.mode.c_str(), r.transport.c_str(), r.nodes, static_cast<long long>(r.link_latency_us),
      r.placement.c_str(), static_cast<long long>(r.syncs_per_token), m.head_ops_per_token,
      m.pp_tok_s, m.ttft_ms, m.tg_tok_s, m.comm_ms_per_token);
}

std::string cluster_json_line(const std::string& model, const ClusterBenchRow& r) {
  const std::string common =
      format("\"model\":%s,\"mode\":%s,\"transport\":%s,\"nodes\":%d,\"link_latency_us\":%lld",
             json_string(model).c_str(), json_string(r.mode).c_str(),
             json_string(r.transport).c_str(), r.nodes, static_cast<long long>(r.link_latency_us));
  if (!r.skipped.empty()) {
    return "{\"kind\":\"skipped\"," + common + ",\"reason\":" + json_string(r.skipped) + "}";
  }
  const ClusterMeasurement& m = r.m;
  return "{\"kind\":\"measurement\"," + common +
         format(
             ",\"placement\":%s,\"syncs_per_token\":%lld,\"head_ops_per_token\":%.3f,"
             "\"compute_share\":%.4f,\"pp_tok_s\":%.3f,\"ttft_ms\":%.3f,\"tg_tok_s\":%.3f,"
             "\"comm_ms_per_token\":%.4f,\"bytes_per_token\":%.1f}",
             json_string(r.placement).c_str(), static_cast<long long>(r.syncs_per_token),
             m.head_ops_per_token, r.compute_share, m.pp_tok_s, m.ttft_ms, m.tg_tok_s,
             m.comm_ms_per_token, m.bytes_per_token);
}

std::string cluster_svg(const std::string& title, const std::vector<ClusterBenchRow>& rows) {
  std::vector<PlotSeries> series;
  std::map<std::string, size_t> index;  // "mode/transport" -> series
  std::vector<double> ticks;
  for (const ClusterBenchRow& r : rows) {
    if (!r.skipped.empty() || r.m.tg_tok_s <= 0) continue;
    const std::string label = r.mode + "/" + r.transport;
    auto [it, added] = index.emplace(label, series.size());
    if (added) series.push_back({label, {}});
    const double x = static_cast<double>(r.link_latency_us);
    series[it->second].points.emplace_back(x, r.m.tg_tok_s);
    if (std::find(ticks.begin(), ticks.end(), x) == ticks.end()) ticks.push_back(x);
  }
  PlotOptions o;
  o.title = title;
  o.x_label = "injected one-way link latency (us, log scale)";
  o.y_label = "generation tok/s";
  o.log1p_x = true;
  o.x_ticks = ticks;
  return svg_line_plot(o, series);
}

std::vector<StepSample> step_samples(const std::vector<ClusterBenchRow>& rows) {
  std::vector<StepSample> out;
  for (const ClusterBenchRow& r : rows) {
    if (!r.skipped.empty() || r.m.tg_tok_s <= 0) continue;
    StepSample s;
    s.compute_share = r.compute_share;
    s.syncs = static_cast<double>(r.syncs_per_token);
    s.link_latency_us = static_cast<double>(r.link_latency_us);
    s.transport = r.transport;
    s.bytes = r.m.bytes_per_token;
    s.token_s = 1 / r.m.tg_tok_s;
    out.push_back(s);
  }
  return out;
}

std::string fit_text(const StepModel& m, const std::vector<StepSample>& samples) {
  std::string s =
      "step-time model fitted to tg: token_s = compute x share + fixed + syncs x "
      "(factor x latency + transport) + bytes / bandwidth\n";
  s += format("  compute %.3f ms, fixed %.3f ms, latency factor %.3f, bandwidth %s",
              m.compute_s * 1e3, m.fixed_s * 1e3, m.latency_factor,
              m.s_per_byte > 0 ? format("%.2f GB/s", 1e-9 / m.s_per_byte).c_str() : "unlimited");
  for (const auto& [t, us] : m.transport_latency_us)
    s += format(", %s %.1f us/sync", t.c_str(), us);
  s += "\n  | share | syncs | lat us | transport | measured tok/s | model tok/s | error |\n";
  std::vector<double> errs;
  for (const StepSample& x : samples) {
    const double measured = 1 / x.token_s, model = 1 / m.predict_s(x);
    errs.push_back(std::fabs(error_pct(model, measured)));
    s += format("  | %5.3f | %5.0f | %6.0f | %-9s | %14.2f | %11.2f | %+5.1f%% |\n",
                x.compute_share, x.syncs, x.link_latency_us, x.transport.c_str(), measured, model,
                error_pct(model, measured));
  }
  if (!errs.empty()) {
    std::sort(errs.begin(), errs.end());
    s += format("  error over %zu points: median %.1f%%, max %.1f%%\n", errs.size(),
                errs[errs.size() / 2], errs.back());
  }
  return s;
}

std::string fit_json_line(const StepModel& m, const std::vector<StepSample>& samples) {
  std::string s = format(
      "{\"kind\":\"fit\",\"compute_ms\":%.4f,\"fixed_ms\":%.4f,"
      "\"latency_factor\":%.4f,\"s_per_byte\":%.6g,\"transport_us\":{",
      m.compute_s * 1e3, m.fixed_s * 1e3, m.latency_factor, m.s_per_byte);
  bool first = true;
  for (const auto& [t, us] : m.transport_latency_us) {
    s += format("%s%s:%.3f", first ? "" : ",", json_string(t).c_str(), us);
    first = false;
  }
  s += "},\"points\":[";
  for (size_t i = 0; i < samples.size(); ++i) {
    const double measured = 1 / samples[i].token_s, model = 1 / m.predict_s(samples[i]);
    s += format("%s{\"measured_tok_s\":%.3f,\"model_tok_s\":%.3f,\"error_pct\":%.2f}", i ? "," : "",
                measured, model, error_pct(model, measured));
  }
  return s + "]}";
}

std::string projection_text(const ProjectionNode& node) {
  std::string s = format(
      "projections (tg tok/s): node reads weights at %.0f GB/s, links carry %.1f GB/s, each hop "
      "pays %.2f x the one-way latency; q8_0 weights; tensor = cohort's one-step all-reduce (1 "
      "hop), tensor-ring = a ring all-reduce (2 x (N-1) hops, as the story's stack)\n",
      node.node_bytes_per_s / 1e9, node.link_bytes_per_s / 1e9, node.latency_factor);
  s += "  | shape    | nodes | mode        |";
  for (double l : kProjectionLatenciesUs) s += format(" %4.0f us |", l);
  s += " syncs/tok | story\n";
  for (const ProjectionShape& shape : projection_shapes())
    for (int n : kProjectionNodes)
      for (const char* mode : kProjectionModes) {
        s += format("  | %-8s | %5d | %-11s |", shape.name.c_str(), n, mode);
        double syncs = 0;
        for (double l : kProjectionLatenciesUs) {
          const Projection p = project({shape, n, mode, l}, node);
          syncs = p.syncs;
          s += format(" %7.1f |", 1 / p.token_s);
        }
        s += format(" %9.0f |", syncs);
        if (shape.n_layers == 80 && n == 4) {
          for (const StoryFigure& f : kStory) {
            if (std::string(f.mode) == mode) {
              s += format(" %.0f tok/s at %.0f us;", f.tok_s, f.latency_us);
            }
          }
        }
        s += "\n";
      }
  return s;
}

std::string projection_json_lines(const ProjectionNode& node) {
  std::string s;
  for (const ProjectionShape& shape : projection_shapes())
    for (int n : kProjectionNodes)
      for (const char* mode : kProjectionModes)
        for (double l : kProjectionLatenciesUs) {
          const Projection p = project({shape, n, mode, l}, node);
          s += format(
              "{\"kind\":\"projection\",\"shape\":%s,\"nodes\":%d,\"mode\":%s,"
              "\"link_latency_us\":%.0f,\"syncs_per_token\":%.0f,\"bytes_per_token\":%.0f,"
              "\"tg_tok_s\":%.3f,\"node_gbps\":%.1f,\"link_gbps\":%.2f,"
              "\"latency_factor\":%.4f}\n",
              json_string(shape.name).c_str(), n, json_string(mode).c_str(), l, p.syncs, p.bytes,
              1 / p.token_s, node.node_bytes_per_s / 1e9, node.link_bytes_per_s / 1e9,
              node.latency_factor);
        }
  return s;
}

}  // namespace cohort::runtime
