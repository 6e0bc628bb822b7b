#include "runtime/cluster_stepper.h"

#include <cstring>

namespace cohort::runtime {

// Fixed-size, explicitly laid out (little-endian hosts only: every node runs this build).
struct ClusterRank::Header {
  uint32_t op;  // 1 = step, 2 = stop
  uint32_t all_logits;
  int64_t n_tokens;
  int64_t pos0;
};

namespace {
constexpr uint32_t kOpStep = 1;
constexpr uint32_t kOpStop = 2;
}  // namespace

ClusterRank::ClusterRank(const cluster::Plan& plan, int rank, comm::Communicator& world,
                         model::Transformer& model, model::KvCache& kv)
    : plan_(plan), rank_(rank), world_(world), model_(model), kv_(kv) {
  const int64_t B = model_.max_batch();
  tokens_.resize(B);
  hidden_.resize(B * model_.hparams().dim);
  logits_.resize(B * model_.hparams().n_vocab);
}

static_assert(sizeof(int64_t) == 8);

Status ClusterRank::run_step(const Header& h, const int32_t* tokens, float* logits) {
  const cluster::RankPlan& me = plan_.ranks[rank_];
  const auto& stages = plan_.stage_ranks;
  const int64_t n = h.n_tokens, dim = model_.hparams().dim, V = model_.hparams().n_vocab;
  const int64_t n_logits = h.all_logits ? n : 1;
  const bool leader = stages[me.stage][0] == rank_;

  model::ForwardIo io;
  io.tokens = tokens;
  io.all_logits = h.all_logits != 0;
  if (!me.shard.embeds) {
    const int prev_leader = stages[me.stage - 1][0];
    COHORT_RETURN_IF_ERROR(world_.recv(prev_leader, hidden_.data(), n * dim * 4, timeout_ms_));
    io.hidden_in = hidden_.data();
  }
  if (!me.shard.outputs) io.hidden_out = hidden_.data();
  // The head writes the logits straight into the caller's buffer when it holds them.
  float* out_logits = rank_ == 0 && logits ? logits : logits_.data();
  if (me.shard.outputs) io.logits = out_logits;
  COHORT_RETURN_IF_ERROR(model_.forward(n, h.pos0, kv_, io));

  if (!me.shard.outputs && leader) {
    for (int r : stages[me.stage + 1]) {
      COHORT_RETURN_IF_ERROR(world_.send(r, hidden_.data(), n * dim * 4, timeout_ms_));
    }
  }
  const int last_leader = stages.back()[0];
  if (me.shard.outputs && leader && rank_ != 0) {
    COHORT_RETURN_IF_ERROR(world_.send(0, out_logits, n_logits * V * 4, timeout_ms_));
  }
  if (rank_ == 0 && last_leader != 0) {
    COHORT_RETURN_IF_ERROR(world_.recv(last_leader, logits, n_logits * V * 4, timeout_ms_));
  }
  return Status::ok();
}

Status ClusterRank::step(const int32_t* tokens, int64_t n, int64_t pos0, bool all_logits,
                         float* logits) {
  if (rank_ != 0) return Status::internal("cluster: step() is for rank 0");
  if (n < 1 || n > model_.max_batch()) {
    return Status::invalid_argument("cluster: batch of " + std::to_string(n) + " tokens");
  }
  Header h{kOpStep, all_logits ? 1u : 0u, n, pos0};
  COHORT_RETURN_IF_ERROR(world_.broadcast(&h, sizeof(h), 0, timeout_ms_));
  std::memcpy(tokens_.data(), tokens, n * sizeof(int32_t));
  COHORT_RETURN_IF_ERROR(world_.broadcast(tokens_.data(), n * sizeof(int32_t), 0, timeout_ms_));
  return run_step(h, tokens_.data(), logits);
}

Status ClusterRank::stop() {
  Header h{kOpStop, 0, 0, 0};
  return world_.broadcast(&h, sizeof(h), 0, timeout_ms_);
}

Status ClusterRank::serve(int64_t timeout_ms) {
  for (;;) {
    Header h{};
    // Idle workers wait as long as the caller allows for the next step.
    COHORT_RETURN_IF_ERROR(world_.broadcast(&h, sizeof(h), 0, timeout_ms));
    if (h.op == kOpStop) return Status::ok();
    if (h.op != kOpStep || h.n_tokens < 1 || h.n_tokens > model_.max_batch()) {
      return Status::corrupt("cluster: rank " + std::to_string(rank_) + " got a bad step header");
    }
    COHORT_RETURN_IF_ERROR(
        world_.broadcast(tokens_.data(), h.n_tokens * sizeof(int32_t), 0, timeout_ms_));
    COHORT_RETURN_IF_ERROR(run_step(h, tokens_.data(), nullptr));
  }
}

}  // namespace cohort::runtime
