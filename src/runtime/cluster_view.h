// A snapshot of the cluster for people and dashboards: the nodes (memory, speed, what part
// of the model each holds), the measured links and the placement's mode and reason. Plain
// values, copied out under the owner's lock, so a reader never touches a live session.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cohort::runtime {

struct NodeView {
  std::string name;
  std::string role;     // "head" or "worker"
  std::string address;  // the worker's control address; empty for the head
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  uint64_t used_bytes = 0;  // the planner's estimate of weights + KV cache placed here
  double kernel_gbps = 0;
  std::string isa;
  // The part of the model this node computes (a rank of the plan).
  int stage = 0;
  int64_t layer_begin = 0, layer_end = 0;
  int64_t head_begin = 0, head_end = 0;
  bool embeds = false, outputs = false;
};

struct LinkView {
  int a = 0, b = 0;   // indices into ClusterView::nodes
  double rtt_us = 0;  // 0: not measured
  double bandwidth_bytes_per_s = 0;
};

struct ClusterView {
  bool clustered = false;  // false: the model runs on this node alone
  std::string state;       // "placed", "broken: ..." or "no placement: ..."
  std::string mode;        // pipeline | tensor | hybrid
  std::string transport;
  std::string why;  // the planner's explanation
  int placements = 0;
  int64_t n_layers = 0, n_heads = 0;
  std::vector<NodeView> nodes;
  std::vector<LinkView> links;
};

// The median round trip of the links measured (0 when none was).
double median_rtt_us(const std::vector<LinkView>& links);
// A link is slow when its round trip is far above the median of those measured (over 4x)
// and above 1 ms: it slows every step that crosses it.
bool is_slow_link(const LinkView& link, double median_rtt_us);

}  // namespace cohort::runtime
