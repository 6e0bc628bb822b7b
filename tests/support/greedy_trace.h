// Comparing a distributed run's greedy tokens with one node's, from `cohort run --trace`
// files (one line per generated token: id, top-1 id and logit, top-2 id and logit).
// Summation order differs between modes, so the only accepted difference is a first
// divergence at a near-tie: where one node's top-2 logits are within kTieTolerance of each
// other (measured deviations: up to 0.7% of the largest logit for q8_0 on 4 ranks
// in-process, tests/model/sharded_forward_test.cpp).
#pragma once

#include <cmath>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

namespace cohort::testing {

inline constexpr double kTieTolerance = 0.02;  // relative to |top-1 logit|, plus 1e-3

struct TraceLine {
  int id;
  double logit1, logit2;
};

inline std::vector<TraceLine> read_trace(const std::string& path) {
  std::vector<TraceLine> t;
  std::ifstream in(path);
  int id;
  long long a, b;
  double l1, l2;
  while (in >> id >> a >> l1 >> b >> l2) t.push_back({id, l1, l2});
  return t;
}

// "" when multi's tokens are one_node's, or differ first at a near-tie (then *note says
// where); otherwise what is wrong.
inline std::string compare_greedy(const std::vector<TraceLine>& one_node,
                                  const std::vector<TraceLine>& multi, std::string* note) {
  if (one_node.empty()) return "the one-node trace is empty";
  size_t i = 0;
  while (i < one_node.size() && i < multi.size() && one_node[i].id == multi[i].id) ++i;
  if (i == one_node.size() && i == multi.size()) return "";
  if (i >= std::min(one_node.size(), multi.size())) {
    return "one run stopped early at token " + std::to_string(i);
  }
  const double margin = one_node[i].logit1 - one_node[i].logit2;
  char buf[200];
  std::snprintf(buf, sizeof(buf),
                "first divergence at token %zu, one-node top-2 margin %.4f of %.3f", i, margin,
                one_node[i].logit1);
  if (margin <= kTieTolerance * std::abs(one_node[i].logit1) + 1e-3) {
    if (note) *note = buf;
    return "";
  }
  return std::string(buf) + ": not a near-tie";
}

}  // namespace cohort::testing
