#include "runtime/step_projection.h"

namespace cohort::runtime {

Projection project(const ProjectionCase& c, const ProjectionNode& node) {
  const double n = c.nodes;
  const double hidden_bytes = static_cast<double>(c.shape.dim) * 4;
  StepSample x;
  x.link_latency_us = c.link_latency_us;
  if (c.mode == "pipeline") {
    x.compute_share = 1;
    x.syncs = 2 + n;
    x.bytes = (n - 1) * hidden_bytes;
  } else {
    const bool ring = c.mode == "tensor-ring";
    const double hops = ring ? 2 * (n - 1) : 1;
    const double per_reduce_bytes = ring ? 2 * (n - 1) / n * hidden_bytes : (n - 1) * hidden_bytes;
    x.compute_share = 1 / n;
    x.syncs = 2 + 2 * static_cast<double>(c.shape.n_layers) * hops;
    x.bytes = 2 * static_cast<double>(c.shape.n_layers) * per_reduce_bytes;
  }
  StepModel m;
  m.compute_s = c.shape.weight_bytes / node.node_bytes_per_s;
  m.latency_factor = node.latency_factor;
  m.s_per_byte = 1 / node.link_bytes_per_s;
  Projection p;
  p.syncs = x.syncs;
  p.bytes = x.bytes;
  p.token_s = m.predict_s(x);
  return p;
}

std::vector<ProjectionShape> projection_shapes() {
  constexpr double kBytesPerParam = 8.5 / 8;  // q8_0
  // Parameters: 8B as `cohort synth` makes it (dim 4096, 32 layers, ffn 14336, vocab 32000,
  // 8 KV heads of 128); 70B with Llama-3-70B's 70.6e9.
  const double p8 =
      32 * (4096.0 * 4096 * 2 + 4096.0 * 1024 * 2 + 3 * 4096.0 * 14336) + 2 * 32000.0 * 4096;
  return {{"8B q8_0", 32, 4096, p8 * kBytesPerParam},
          {"70B q8_0", 80, 8192, 70.6e9 * kBytesPerParam}};
}

}  // namespace cohort::runtime
