// The step-time model of one generated token on a cluster, and its fit to measurements:
//
//   token_s = compute_s x compute_share + fixed_s
//           + syncs x (latency_factor x link_latency + transport_latency[transport])
//           + bytes / bandwidth
//
//  - compute_s: the split part of one token's compute on one node (the layers);
//    compute_share: the fraction of it on the critical path (pipeline: 1, since one token
//    visits every stage in turn; tensor over N ranks: 1/N; hybrid: sum over stages of
//    layers_k / (layers x tp_k)).
//  - fixed_s: compute every rank repeats (embedding, output projection) and per-step costs.
//  - syncs: waits on a peer on the critical path per token (cluster_bench.h counts them);
//    link_latency: the one-way latency of the link (the injected delay); each sync pays it
//    latency_factor times (1 when a sync is one one-way hop) plus the transport's own cost.
//  - bytes: payload per token the head moves; bandwidth: one value for every transport.
//
// The fit is linear least squares of the relative error over those coefficients, none allowed below
// 0 (a coefficient the data drive negative is fixed at 0 and the rest refitted), and those the data
// cannot separate from earlier ones held at 0.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "core/status.h"

namespace cohort::runtime {

struct StepSample {
  double compute_share = 1;
  double syncs = 0;  // per token
  double link_latency_us = 0;
  std::string transport;
  double bytes = 0;    // per token
  double token_s = 0;  // measured seconds per token (ignored by predict)
};

struct StepModel {
  double compute_s = 0;
  double fixed_s = 0;
  double latency_factor = 1;
  std::map<std::string, double> transport_latency_us;
  double s_per_byte = 0;  // 1 / bandwidth; 0: bandwidth not limiting

  double predict_s(const StepSample& x) const;
};

// Needs more samples than coefficients (4 + one per transport), each with positive token_s;
// kInvalidArgument otherwise. Coefficients the samples cannot tell apart (e.g. the bytes of
// only two modes, which the compute share already separates) are held at 0, listed first
// to last: compute, fixed, latency factor, bandwidth, transports.
Result<StepModel> fit_step_model(std::span<const StepSample> samples);

// Least squares: the x minimising |A x - y|, A given as rows of equal length. Columns whose
// index is in `fixed_zero`, all-zero columns, and columns that are linear combinations of
// earlier columns (the data cannot tell their coefficients apart) are held at 0.
// kInvalidArgument for ragged or mismatched input.
Result<std::vector<double>> least_squares(const std::vector<std::vector<double>>& a,
                                          const std::vector<double>& y,
                                          const std::vector<bool>& fixed_zero = {});

}  // namespace cohort::runtime
