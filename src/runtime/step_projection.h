// Projections of the step-time model (runtime/step_model.h) to shapes and nodes this
// machine cannot run: a 70B model on four Mac Studio-like nodes, as in the story that
// motivated `cohort bench cluster` (pipeline 5 tok/s; tensor over ~300 us links 3 tok/s;
// tensor over RDMA, ~3 us, 16 tok/s).
//
// Assumptions, all stated in the printed report:
//  - compute: a token streams every weight byte once; a node reads weights at
//    node_bytes_per_s (Mac Studio-like: 800 GB/s peak unified memory, 400 GB/s achieved);
//    the embedding and output are counted with the layers (they are ~1% of a 70B model).
//  - syncs per token: as runtime/cluster_bench.h counts them (tensor: 2 + 2 per layer per
//    all-reduce hop; pipeline of S stages: 2 + S). An all-reduce is one hop with the
//    one-step exchange cohort uses, 2 x (N - 1) hops with a ring (what the story's stack
//    used); every hop pays the one-way link latency x the fitted latency factor.
//  - bytes: an all-reduce moves dim f32 values to each of the N - 1 peers (one-step) or
//    2 x (N - 1) / N of them (ring); a stage boundary moves dim f32 values; the link
//    carries link_bytes_per_s.
#pragma once

#include <string>
#include <vector>

#include "runtime/step_model.h"

namespace cohort::runtime {

struct ProjectionShape {
  std::string name;  // "70B q8_0"
  int64_t n_layers = 0;
  int64_t dim = 0;
  double weight_bytes = 0;
};

struct ProjectionNode {
  double node_bytes_per_s = 400e9;
  double link_bytes_per_s = 4e9;
  double latency_factor = 1;  // from the fit on this machine's measurements
};

struct ProjectionCase {
  ProjectionShape shape;
  int nodes = 4;
  std::string mode;  // "pipeline", "tensor" (one-step all-reduce), "tensor-ring"
  double link_latency_us = 0;
};

struct Projection {
  double syncs = 0;
  double bytes = 0;
  double token_s = 0;
};

Projection project(const ProjectionCase& c, const ProjectionNode& node);

// The shapes of the report: the synthetic 8B and a 70B (Llama-3-70B-like: 80 layers,
// dim 8192), both at 8.5 bits per weight (q8_0).
std::vector<ProjectionShape> projection_shapes();

}  // namespace cohort::runtime
