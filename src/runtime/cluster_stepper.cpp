#include "runtime/cluster_stepper.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <thread>

#include "comm/collectives.h"
#include "core/check.h"
#include "core/clock.h"

namespace cohort::runtime {

// Fixed-size, explicitly laid out (little-endian hosts only: every node runs this build).
// A batched step (op 3) carries all its rows in n_tokens and its entry count in slot; an
// array of n_entries (slot, n, pos0) triples follows the header, then the tokens. A hidden
// step (op 4) is a plain step whose last stage returns every token's normed hidden state
// ([n_tokens][dim], for embeddings) instead of logits.
struct ClusterRank::Header {
  uint32_t op;  // 1 = step, 2 = stop, 3 = batched step, 4 = hidden step
  uint32_t all_logits;
  int64_t n_tokens;
  int64_t pos0;
  int64_t slot;  // op 3: the number of entries
};
static_assert(sizeof(int64_t) == 8);

namespace {
constexpr uint32_t kOpStep = 1;
constexpr uint32_t kOpStop = 2;
constexpr uint32_t kOpBatch = 3;
constexpr uint32_t kOpHidden = 4;
constexpr int64_t kEntryWords = 3;  // slot, n, pos0 per entry of a batched step
// Framing a transport adds per message, rounded up (tcp frames 12 bytes, shm 8).
constexpr int64_t kMessageOverheadBytes = 64;
}  // namespace

// The in-flight window, and why overlapping steps cannot deadlock.
//
// Only sends can wait on another rank's progress: a tcp or shm send returns once its bytes fit
// in the pair's buffers (socket buffers, ring). Were no send ever to wait, ranks would behave
// as with unbounded buffers, and progress is plain: every rank handles steps in submission
// order; a worker's step s needs the head's header and tokens for s (sent before submit()
// returns) and the previous stage's hidden states for s, which that stage computes from
// messages of steps <= s only; by induction on (s, stage) every submitted step reaches the
// last stage, whose leader sends its logits to the head, which reads logits in step order.
//
// Sends that can wait form edges: stage i -> stage i+1 (hidden states), last leader -> head
// (logits), head -> every rank (header, tokens; hidden states to stage 1), and all-reduces
// inside a stage between ranks on the same step (exchanges of at most kOneStepMaxBytes, as
// before overlap). Every cycle of waiting sends thus runs through a send of the head: e.g. the
// head blocked sending the next step to the last stage while the last leader is blocked
// sending logits the head would read only after that send.
//
// The window keeps every send of the head from waiting. What the head has sent a rank j and j
// has not read belongs to steps whose logits the head has not received: once it holds step
// s's logits, every rank has started s (the last leader's forward of s needed the hidden
// states of every earlier stage's leader and the all-reduces of every tp rank for s), and a
// rank reads all its head messages for s before starting it. submit() keeps the sum of
// wire_bytes() over those steps at most window_bytes_ (kOneStepMaxBytes, which every
// transport buffers per pair without the receiver reading: the collectives' contract,
// comm/collectives.h; tcp socket buffers, the data plane's 4 MiB shm rings), and keeps at
// most max_in_flight() of them, by receiving the oldest logits into a buffer first when
// needed. A larger step (a prefill chunk) is sent only with nothing awaiting logits, when
// every rank reads it without waiting on the head. So the head waits only to receive logits
// (in order, so the last leader's logits sends drain) or in its own stage's all-reduces with
// ranks on the same step, and no cycle can form.
int64_t ClusterRank::wire_bytes(int64_t n_tokens, int64_t n_entries) const {
  const int64_t hidden = plan_.n_stages() > 1 ? n_tokens * model_.hparams().dim * 4 : 0;
  const int64_t entries = n_entries > 0 ? kMessageOverheadBytes + n_entries * kEntryWords * 8 : 0;
  return 3 * kMessageOverheadBytes + static_cast<int64_t>(sizeof(Header)) + n_tokens * 4 + hidden +
         entries;
}

ClusterRank::ClusterRank(const cluster::Plan& plan, int rank, comm::Communicator& world,
                         model::Transformer& model, std::span<model::KvCache> slots,
                         int64_t window_bytes)
    : plan_(plan),
      rank_(rank),
      world_(world),
      model_(model),
      slots_(slots),
      window_bytes_(window_bytes) {
  COHORT_CHECK(!slots_.empty());
  const int64_t B = model_.max_batch();
  tokens_.resize(B);
  entries_.resize(slots_.size() * kEntryWords);
  seqs_.reserve(slots_.size());
  hidden_.resize(B * model_.hparams().dim);
  logits_.resize(B * model_.hparams().n_vocab);
}

Status ClusterRank::run_stage(const Header& h, const int32_t* tokens, float* logits) {
  if (times_ == nullptr && step_delay_ms_ == 0) return run_stage_untimed(h, tokens, logits);
  const int64_t t0 = now_ns();
  const int64_t comm0 = counters_ ? counters_->totals().ns : 0;
  if (step_delay_ms_ > 0) std::this_thread::sleep_for(std::chrono::milliseconds(step_delay_ms_));
  COHORT_RETURN_IF_ERROR(run_stage_untimed(h, tokens, logits));
  if (times_ != nullptr) {
    const int64_t comm_ns = counters_ ? counters_->totals().ns - comm0 : 0;
    times_->busy_ns.fetch_add(std::max<int64_t>(0, now_ns() - t0 - comm_ns),
                              std::memory_order_relaxed);
    times_->steps.fetch_add(1, std::memory_order_relaxed);
  }
  return Status::ok();
}

Status ClusterRank::run_stage_untimed(const Header& h, const int32_t* tokens, float* logits) {
  const cluster::RankPlan& me = plan_.ranks[rank_];
  const auto& stages = plan_.stage_ranks;
  const int64_t n = h.n_tokens, dim = model_.hparams().dim, V = model_.hparams().n_vocab;
  const int64_t n_logits = h.op == kOpBatch ? h.slot : (h.all_logits ? n : 1);
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
  float* out_logits = logits ? logits : logits_.data();
  if (me.shard.outputs && h.op == kOpHidden) {
    // hidden_ held this stage's input, which forward_batch copies before anything else.
    io.hidden_normed = logits ? logits : hidden_.data();
  } else if (me.shard.outputs) {
    io.logits = out_logits;
  }
  seqs_.clear();
  if (h.op == kOpBatch) {
    for (int64_t e = 0; e < h.slot; ++e) {
      const int64_t* w = &entries_[static_cast<size_t>(e * kEntryWords)];
      seqs_.push_back({&slots_[static_cast<size_t>(w[0])], w[2], w[1]});
    }
  } else {
    seqs_.push_back({&slots_[static_cast<size_t>(h.slot)], h.pos0, n});
  }
  COHORT_RETURN_IF_ERROR(model_.forward_batch(seqs_, io));

  if (!me.shard.outputs && leader) {
    for (int r : stages[me.stage + 1]) {
      COHORT_RETURN_IF_ERROR(world_.send(r, hidden_.data(), n * dim * 4, timeout_ms_));
    }
  }
  if (me.shard.outputs && leader && rank_ != 0) {
    if (h.op == kOpHidden) {
      COHORT_RETURN_IF_ERROR(world_.send(0, io.hidden_normed, n * dim * 4, timeout_ms_));
    } else {
      COHORT_RETURN_IF_ERROR(world_.send(0, out_logits, n_logits * V * 4, timeout_ms_));
    }
  }
  return Status::ok();
}

Status ClusterRank::check_request(int64_t slot, int64_t n) const {
  if (rank_ != 0) return Status::internal("cluster: steps are driven by rank 0");
  if (n < 1 || n > model_.max_batch()) {
    return Status::invalid_argument("cluster: batch of " + std::to_string(n) + " tokens");
  }
  if (slot < 0 || slot >= static_cast<int64_t>(slots_.size())) {
    return Status::invalid_argument("cluster: no slot " + std::to_string(slot) + " of " +
                                    std::to_string(slots_.size()));
  }
  return Status::ok();
}

Status ClusterRank::check_batch(std::span<const StepEntry> entries) {
  if (rank_ != 0) return Status::internal("cluster: steps are driven by rank 0");
  if (entries.empty() || entries.size() > slots_.size()) {
    return Status::invalid_argument("cluster: a batch of " + std::to_string(entries.size()) +
                                    " entries");
  }
  int64_t rows = 0;
  for (size_t e = 0; e < entries.size(); ++e) {
    const StepEntry& x = entries[e];
    COHORT_RETURN_IF_ERROR(check_request(x.slot, x.n));
    for (size_t j = 0; j < e; ++j) {
      if (entries[j].slot == x.slot) {
        return Status::invalid_argument("cluster: slot " + std::to_string(x.slot) +
                                        " twice in one batch");
      }
    }
    if (x.n > model_.max_batch() - rows) {
      return Status::invalid_argument("cluster: a batch of more than " +
                                      std::to_string(model_.max_batch()) + " tokens");
    }
    std::copy(x.tokens, x.tokens + x.n, tokens_.begin() + rows);
    rows += x.n;
    int64_t* w = &entries_[e * kEntryWords];
    w[0] = x.slot;
    w[1] = x.n;
    w[2] = x.pos0;
  }
  return Status::ok();
}

Status ClusterRank::check_entries(const Header& h) const {
  int64_t rows = 0;
  for (int64_t e = 0; e < h.slot; ++e) {
    const int64_t* w = &entries_[static_cast<size_t>(e * kEntryWords)];
    if (w[0] < 0 || w[0] >= static_cast<int64_t>(slots_.size()) || w[1] < 1 ||
        w[1] > h.n_tokens - rows) {
      return Status::corrupt("cluster: rank " + std::to_string(rank_) + " got a bad batched step");
    }
    rows += w[1];
  }
  if (rows != h.n_tokens) {
    return Status::corrupt("cluster: rank " + std::to_string(rank_) + " got a bad batched step");
  }
  return Status::ok();
}

Status ClusterRank::start(const Header& h, const int32_t* tokens, float* logits) {
  Header wire = h;
  COHORT_RETURN_IF_ERROR(world_.broadcast(&wire, sizeof(wire), 0, timeout_ms_));
  if (h.op == kOpBatch) {
    COHORT_RETURN_IF_ERROR(
        world_.broadcast(entries_.data(), h.slot * kEntryWords * 8, 0, timeout_ms_));
  }
  if (tokens != tokens_.data()) std::memcpy(tokens_.data(), tokens, h.n_tokens * sizeof(int32_t));
  COHORT_RETURN_IF_ERROR(
      world_.broadcast(tokens_.data(), h.n_tokens * sizeof(int32_t), 0, timeout_ms_));
  return run_stage(h, tokens_.data(), logits);
}

Status ClusterRank::recv_logits(int64_t n_logits, float* dst) {
  const int last_leader = plan_.stage_ranks.back()[0];
  const size_t bytes = n_logits * model_.hparams().n_vocab * sizeof(float);
  return world_.recv(last_leader, dst, bytes, timeout_ms_);
}

int64_t ClusterRank::n_awaiting() const {
  return std::count_if(in_flight_.begin(), in_flight_.end(),
                       [](const InFlight& f) { return !f.received; });
}

Status ClusterRank::receive_oldest() {
  // Logits arrive in step order, so the steps received form a prefix of in_flight_.
  auto it = std::find_if(in_flight_.begin(), in_flight_.end(),
                         [](const InFlight& f) { return !f.received; });
  COHORT_CHECK(it != in_flight_.end());
  it->logits.resize(it->n_logits * model_.hparams().n_vocab);
  COHORT_RETURN_IF_ERROR(recv_logits(it->n_logits, it->logits.data()));
  it->received = true;
  return Status::ok();
}

Status ClusterRank::submit(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                           bool all_logits) {
  COHORT_RETURN_IF_ERROR(check_request(slot, n));
  InFlight f;
  f.n_logits = all_logits ? n : 1;
  f.wire_bytes = wire_bytes(n, 0);
  return submit_header(Header{kOpStep, all_logits ? 1u : 0u, n, pos0, slot}, tokens, std::move(f));
}

Status ClusterRank::submit_batch(std::span<const StepEntry> entries) {
  // One entry goes as a plain step: no entry list on the wire.
  if (entries.size() == 1) {
    const StepEntry& e = entries[0];
    return submit(e.slot, e.tokens, e.n, e.pos0, false);
  }
  COHORT_RETURN_IF_ERROR(check_batch(entries));
  const int64_t n_entries = static_cast<int64_t>(entries.size());
  int64_t rows = 0;
  for (const StepEntry& e : entries) rows += e.n;
  InFlight f;
  f.n_logits = n_entries;
  f.wire_bytes = wire_bytes(rows, n_entries);
  return submit_header(Header{kOpBatch, 0, rows, 0, n_entries}, tokens_.data(), std::move(f));
}

Status ClusterRank::submit_header(const Header& h, const int32_t* tokens, InFlight f) {
  for (;;) {
    int64_t awaiting_bytes = 0, awaiting = 0;
    for (const InFlight& g : in_flight_) {
      if (g.received) continue;
      awaiting_bytes += g.wire_bytes;
      ++awaiting;
    }
    if (awaiting == 0 ||
        (awaiting < max_in_flight() && awaiting_bytes + f.wire_bytes <= window_bytes_)) {
      break;
    }
    COHORT_RETURN_IF_ERROR(receive_oldest());
  }
  // With one stage the head computes the logits itself, now.
  const bool local = plan_.stage_ranks.back()[0] == 0;
  if (local) f.logits.resize(f.n_logits * model_.hparams().n_vocab);
  COHORT_RETURN_IF_ERROR(start(h, tokens, local ? f.logits.data() : nullptr));
  f.received = local;
  in_flight_.push_back(std::move(f));
  return Status::ok();
}

Status ClusterRank::collect(float* logits) {
  if (in_flight_.empty()) return Status::internal("cluster: collect() with no step in flight");
  InFlight& f = in_flight_.front();
  if (f.received) {
    std::copy(f.logits.begin(), f.logits.end(), logits);
  } else {
    COHORT_RETURN_IF_ERROR(recv_logits(f.n_logits, logits));
  }
  in_flight_.pop_front();
  return Status::ok();
}

Status ClusterRank::step(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                         bool all_logits, float* logits) {
  COHORT_RETURN_IF_ERROR(check_request(slot, n));
  while (n_awaiting() > 0) COHORT_RETURN_IF_ERROR(receive_oldest());
  Header h{kOpStep, all_logits ? 1u : 0u, n, pos0, slot};
  COHORT_RETURN_IF_ERROR(start(h, tokens, logits));
  if (plan_.stage_ranks.back()[0] != 0) {
    COHORT_RETURN_IF_ERROR(recv_logits(all_logits ? n : 1, logits));
  }
  return Status::ok();
}

Status ClusterRank::step_hidden(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                                float* hidden) {
  COHORT_RETURN_IF_ERROR(check_request(slot, n));
  while (n_awaiting() > 0) COHORT_RETURN_IF_ERROR(receive_oldest());
  COHORT_RETURN_IF_ERROR(start(Header{kOpHidden, 0, n, pos0, slot}, tokens, hidden));
  const int last_leader = plan_.stage_ranks.back()[0];
  if (last_leader != 0) {
    const size_t bytes = static_cast<size_t>(n * model_.hparams().dim) * sizeof(float);
    COHORT_RETURN_IF_ERROR(world_.recv(last_leader, hidden, bytes, timeout_ms_));
  }
  return Status::ok();
}

Status ClusterRank::step_batch(std::span<const StepEntry> entries, float* logits) {
  if (entries.size() == 1) {
    const StepEntry& e = entries[0];
    return step(e.slot, e.tokens, e.n, e.pos0, false, logits);
  }
  COHORT_RETURN_IF_ERROR(check_batch(entries));
  int64_t rows = 0;
  for (const StepEntry& e : entries) rows += e.n;
  const int64_t n_entries = static_cast<int64_t>(entries.size());
  while (n_awaiting() > 0) COHORT_RETURN_IF_ERROR(receive_oldest());
  COHORT_RETURN_IF_ERROR(start(Header{kOpBatch, 0, rows, 0, n_entries}, tokens_.data(), logits));
  if (plan_.stage_ranks.back()[0] != 0) COHORT_RETURN_IF_ERROR(recv_logits(n_entries, logits));
  return Status::ok();
}

Status ClusterRank::stop() {
  // Steps still in flight end normally on the workers before they read the stop.
  while (n_awaiting() > 0) COHORT_RETURN_IF_ERROR(receive_oldest());
  in_flight_.clear();
  Header h{kOpStop, 0, 0, 0, 0};
  return world_.broadcast(&h, sizeof(h), 0, timeout_ms_);
}

Status ClusterRank::serve(int64_t timeout_ms) {
  for (;;) {
    Header h{};
    // Idle workers wait as long as the caller allows for the next step.
    COHORT_RETURN_IF_ERROR(world_.broadcast(&h, sizeof(h), 0, timeout_ms));
    if (h.op == kOpStop) return Status::ok();
    const int64_t n_slots = static_cast<int64_t>(slots_.size());
    const bool rows_ok = h.n_tokens >= 1 && h.n_tokens <= model_.max_batch();
    const bool step_ok = (h.op == kOpStep || h.op == kOpHidden) && h.all_logits <= 1 &&
                         h.slot >= 0 && h.slot < n_slots;
    const bool batch_ok = h.op == kOpBatch && h.all_logits == 0 && h.slot >= 1 && h.slot <= n_slots;
    if (!rows_ok || !(step_ok || batch_ok)) {
      return Status::corrupt("cluster: rank " + std::to_string(rank_) + " got a bad step header");
    }
    if (h.op == kOpBatch) {
      COHORT_RETURN_IF_ERROR(
          world_.broadcast(entries_.data(), h.slot * kEntryWords * 8, 0, timeout_ms_));
      COHORT_RETURN_IF_ERROR(check_entries(h));
    }
    COHORT_RETURN_IF_ERROR(
        world_.broadcast(tokens_.data(), h.n_tokens * sizeof(int32_t), 0, timeout_ms_));
    COHORT_RETURN_IF_ERROR(run_stage(h, tokens_.data(), nullptr));
  }
}

}  // namespace cohort::runtime
