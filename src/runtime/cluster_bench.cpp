#include "runtime/cluster_bench.h"

#include <algorithm>
#include <vector>

#include "core/clock.h"
#include "core/stats.h"

namespace cohort::runtime {
namespace {

constexpr int64_t kUntimedPromptTokens = 4;

// Token ids spread over the vocabulary, the same every run.
int32_t token_at(int64_t i, int64_t n_vocab) {
  return static_cast<int32_t>((i * 7919 + 13) % n_vocab);
}

// Steps tokens [from, to) of the fixed sequence at their positions, at most `batch` at a
// time; returns the seconds it took.
Result<double> run_tokens(Stepper& st, int64_t from, int64_t to, int64_t batch,
                          std::vector<float>& logits) {
  std::vector<int32_t> ids;
  const int64_t t0 = now_ns();
  for (int64_t p = from; p < to;) {
    const int64_t n = std::min(batch, to - p);
    ids.resize(n);
    for (int64_t i = 0; i < n; ++i) ids[i] = token_at(p + i, st.n_vocab());
    COHORT_RETURN_IF_ERROR(st.step(0, ids.data(), n, p, false, logits.data()));
    p += n;
  }
  return static_cast<double>(now_ns() - t0) * 1e-9;
}

}  // namespace

Result<ClusterMeasurement> measure_cluster(Stepper& st,
                                           const std::function<comm::CommTotals()>& comm_totals,
                                           const ClusterBenchOptions& o) {
  if (o.reps < 1) return Status::invalid_argument("bench cluster: repetitions must be >= 1");
  const int64_t needed = std::max(o.n_prompt, kUntimedPromptTokens + o.n_gen);
  if (needed > st.n_ctx()) {
    return Status::invalid_argument("bench cluster: " + std::to_string(needed) +
                                    " positions, the context holds " + std::to_string(st.n_ctx()));
  }
  std::vector<float> logits(st.n_vocab());
  ClusterMeasurement m;
  if (o.n_prompt > 0) {
    std::vector<double> secs;
    for (int r = 0; r <= o.reps; ++r) {
      COHORT_ASSIGN_OR_RETURN(double s, run_tokens(st, 0, o.n_prompt, st.max_batch(), logits));
      if (r > 0) secs.push_back(s);  // the first run warms up
    }
    const double s = median(secs);
    m.pp_tok_s = static_cast<double>(o.n_prompt) / s;
    m.ttft_ms = s * 1e3;
  }
  if (o.n_gen > 0) {
    std::vector<double> tok_s, comm_ms, ops, bytes;
    const double n = static_cast<double>(o.n_gen);
    for (int r = 0; r <= o.reps; ++r) {
      COHORT_RETURN_IF_ERROR(
          run_tokens(st, 0, kUntimedPromptTokens, st.max_batch(), logits).status());
      const comm::CommTotals before = comm_totals();
      COHORT_ASSIGN_OR_RETURN(double s, run_tokens(st, kUntimedPromptTokens,
                                                   kUntimedPromptTokens + o.n_gen, 1, logits));
      const comm::CommTotals d = comm_totals() - before;
      if (r == 0) continue;  // warm-up
      tok_s.push_back(n / s);
      comm_ms.push_back(static_cast<double>(d.ns) * 1e-6 / n);
      ops.push_back(static_cast<double>(d.ops) / n);
      bytes.push_back(static_cast<double>(d.bytes) / n);
    }
    m.tg_tok_s = median(tok_s);
    m.comm_ms_per_token = median(comm_ms);
    m.head_ops_per_token = median(ops);
    m.bytes_per_token = median(bytes);
  }
  return m;
}

int64_t critical_path_syncs(const cluster::Plan& plan) {
  int64_t syncs = 2;  // step header and token ids
  const int n_stages = plan.n_stages();
  for (int s = 0; s < n_stages; ++s) {
    const std::vector<int>& ranks = plan.stage_ranks[s];
    if (ranks.size() > 1) syncs += 2 * plan.ranks[ranks[0]].shard.n_layers();
    if (s + 1 < n_stages) syncs += static_cast<int64_t>(plan.stage_ranks[s + 1].size());
  }
  if (plan.stage_ranks.back()[0] != 0) syncs += 1;  // logits back to the head
  return syncs;
}

double compute_share(const cluster::Plan& plan) {
  int64_t layers = 0;
  for (const std::vector<int>& ranks : plan.stage_ranks) {
    layers += plan.ranks[ranks[0]].shard.n_layers();
  }
  if (layers == 0) return 1;
  double share = 0;
  for (const std::vector<int>& ranks : plan.stage_ranks) {
    share += static_cast<double>(plan.ranks[ranks[0]].shard.n_layers()) /
             (static_cast<double>(layers) * static_cast<double>(ranks.size()));
  }
  return share;
}

}  // namespace cohort::runtime
