// Finds a worker that is persistently much slower than the placement assumed, from the step
// times every node reports (cluster::Heartbeat; the head's own from its StepTimes).
//
// The rule. Each node's busy time per step (its own compute, waiting for peers excluded) is
// taken over windows of at least rule.window_steps steps. When a worker's window closes it is
// compared with what its share should cost at the pace of the fastest other node:
//   expected = weight x min over other nodes j (per_step_j / weight_j)
// where a node's weight is the plan's bytes for its rank over its measured kernel speed (a
// decode step streams its weights, so that is the time the plan expected). The worker is
// slow in that window when per_step > rule.factor x expected and per_step - expected >
// rule.min_excess_s (tiny models' sub-millisecond noise is never "slow"). Slow in
// rule.strikes windows in a row: the verdict, given once per node. Node 0 (the head) is
// only compared against, never judged: the cluster cannot be placed without it.
//
// Thread-safety: none; one thread reports (the heartbeat monitor's).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace cohort::runtime {

struct SlowRule {
  int64_t window_steps = 16;
  double factor = 3.0;
  double min_excess_s = 0.010;
  int strikes = 3;
};

class SlowNodeDetector {
 public:
  // names and weights per node (node 0 the head); a weight <= 0 leaves that node out.
  SlowNodeDetector(std::vector<std::string> names, std::vector<double> weights, SlowRule rule = {});

  // Node i has run `steps` steps and been busy busy_s seconds in them since the session
  // started (both cumulative). Returns the verdict, a line for logs and people, when this
  // report makes node i slow; "" otherwise.
  std::string report(size_t node, int64_t steps, double busy_s);

 private:
  struct Node {
    std::string name;
    double weight = 0;
    bool started = false;  // window_start_* hold the first report
    int64_t window_start_steps = 0;
    double window_start_busy_s = 0;
    double per_step_s = -1;  // the last closed window's; < 0 before the first
    int strikes = 0;
    bool judged = false;
  };
  // The fastest pace of the nodes other than i (seconds per unit of weight); < 0 when none
  // has closed a window yet.
  double reference_pace(size_t i) const;

  std::vector<Node> nodes_;
  SlowRule rule_;
};

}  // namespace cohort::runtime
