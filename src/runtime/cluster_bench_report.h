// How `cohort bench cluster` prints: a table of the measured grid, one JSON object per line,
// an SVG plot of tok/s against link latency, the step-time model fitted to the grid with its
// error on every measured point, and the model's projections to larger shapes and clusters
// next to the story's figures. Pure formatting of measured numbers.
#pragma once

#include <string>
#include <vector>

#include "runtime/cluster_bench_sweep.h"
#include "runtime/step_model.h"
#include "runtime/step_projection.h"

namespace cohort::runtime {

std::string cluster_table_header();
std::string cluster_table_row(const ClusterBenchRow& r);
// kind "measurement": model, mode, transport, nodes, link_latency_us, placement,
// syncs_per_token, head_ops_per_token, compute_share, pp_tok_s, ttft_ms, tg_tok_s,
// comm_ms_per_token, bytes_per_token; or kind "skipped" with a reason.
std::string cluster_json_line(const std::string& model, const ClusterBenchRow& r);

// tg tok/s against link latency, one line per mode/transport (measured rows only).
std::string cluster_svg(const std::string& title, const std::vector<ClusterBenchRow>& rows);

// The samples the step model is fitted to: measured rows with a tg figure.
std::vector<StepSample> step_samples(const std::vector<ClusterBenchRow>& rows);

// The fitted coefficients and, per sample, measured and modelled tok/s and the error.
std::string fit_text(const StepModel& m, const std::vector<StepSample>& samples);
std::string fit_json_line(const StepModel& m, const std::vector<StepSample>& samples);

// Projections (runtime/step_projection.h) with their assumptions, and the story's figures
// beside the cases it measured.
std::string projection_text(const ProjectionNode& node);
std::string projection_json_lines(const ProjectionNode& node);

}  // namespace cohort::runtime
