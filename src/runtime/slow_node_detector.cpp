#include "runtime/slow_node_detector.h"

#include <cstdio>

namespace cohort::runtime {

SlowNodeDetector::SlowNodeDetector(std::vector<std::string> names, std::vector<double> weights,
                                   SlowRule rule)
    : rule_(rule) {
  nodes_.resize(names.size());
  for (size_t i = 0; i < names.size(); ++i) {
    nodes_[i].name = std::move(names[i]);
    nodes_[i].weight = i < weights.size() ? weights[i] : 0;
  }
}

double SlowNodeDetector::reference_pace(size_t i) const {
  double best = -1;
  for (size_t j = 0; j < nodes_.size(); ++j) {
    const Node& n = nodes_[j];
    if (j == i || n.weight <= 0 || n.per_step_s < 0) continue;
    const double pace = n.per_step_s / n.weight;
    if (best < 0 || pace < best) best = pace;
  }
  return best;
}

std::string SlowNodeDetector::report(size_t node, int64_t steps, double busy_s) {
  if (node >= nodes_.size()) return {};
  Node& n = nodes_[node];
  if (!n.started || steps < n.window_start_steps) {  // first report (or a counter reset)
    n.started = true;
    n.window_start_steps = steps;
    n.window_start_busy_s = busy_s;
    return {};
  }
  const int64_t window = steps - n.window_start_steps;
  if (window < rule_.window_steps) return {};
  n.per_step_s = (busy_s - n.window_start_busy_s) / static_cast<double>(window);
  n.window_start_steps = steps;
  n.window_start_busy_s = busy_s;
  if (node == 0 || n.weight <= 0 || n.judged) return {};
  const double pace = reference_pace(node);
  if (pace < 0) return {};
  const double expected_s = pace * n.weight;
  const bool slow =
      n.per_step_s > rule_.factor * expected_s && n.per_step_s - expected_s > rule_.min_excess_s;
  n.strikes = slow ? n.strikes + 1 : 0;
  if (n.strikes < rule_.strikes) return {};
  n.judged = true;
  char buf[256];
  std::snprintf(buf, sizeof(buf),
                "%s is slow: %.1f ms of its own work per step over the last %d windows of %lld+ "
                "steps, %.1fx the %.2f ms its share should take",
                n.name.c_str(), n.per_step_s * 1e3, rule_.strikes,
                static_cast<long long>(rule_.window_steps),
                expected_s > 0 ? n.per_step_s / expected_s : 0.0, expected_s * 1e3);
  return buf;
}

}  // namespace cohort::runtime
