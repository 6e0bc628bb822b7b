// A cluster Stepper that survives losing a node. When a step fails because the cluster
// broke (a peer gone, a link cut, a timeout: kUnavailable, kTimeout, kCorrupt, kIoError;
// a node the session's heartbeat monitor declared lost, ClusterSession::lost(), breaks the
// links so its steps fail at once), the steps in flight fail (their requests end with that
// error, which names the node lost) and the session is torn down when the caller abandons
// them; the next step places the model again on the nodes still reachable (a new plan;
// workers reuse their cached or local weights) and runs there. A node lost while no step
// ran is placed around before the next step, which then succeeds.
// When no placement is possible (too little memory left, no node answers), steps fail with
// kUnavailable and the reason, and placement is retried at most every retry_interval_s.
//
// The shape a caller sees (vocabulary, context, batch, slots) is the first session's and
// must not change: the factory builds every session from the same options.
//
// Thread-safety: one thread drives the stepper (as any Stepper); status_report() may be
// called from any thread.
#pragma once

#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/address.h"
#include "runtime/cluster_session.h"
#include "runtime/cluster_view.h"
#include "runtime/event_log.h"
#include "runtime/stepper.h"

namespace cohort::runtime {

class ReplacingStepper final : public Stepper {
 public:
  // Starts a session with the options of the first, leaving out the workers named.
  using Factory = std::function<Result<std::unique_ptr<ClusterSession>>(
      const std::vector<net::HostPort>& excluded)>;

  // first: the session already started with factory's options. Losing a node, placing
  // again and failing to are appended to events when given (it must outlive the stepper).
  ReplacingStepper(Factory factory, std::unique_ptr<ClusterSession> first,
                   double retry_interval_s = 2.0, EventLog* events = nullptr);
  ~ReplacingStepper() override;

  int64_t n_vocab() const override { return n_vocab_; }
  int64_t n_ctx() const override { return n_ctx_; }
  int64_t max_batch() const override { return max_batch_; }
  int64_t n_slots() const override { return n_slots_; }
  int64_t max_in_flight() const override;

  Status step(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0, bool all_logits,
              float* logits) override;
  Status submit(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                bool all_logits) override;
  Status collect(float* logits) override;
  void abandon() override;
  int64_t n_embd() const override { return n_embd_; }
  model::Pooling pooling() const override { return pooling_; }
  Status step_hidden(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                     float* hidden) override;
  // Forwarded, so a session's native batching is kept.
  Status step_batch(std::span<const StepEntry> entries, float* logits) override;
  Status submit_batch(std::span<const StepEntry> entries) override;
  Status collect_batch(int64_t n_entries, float* logits) override;
  // A session that found a slow worker (ClusterSession::slow_node()) wants the model placed
  // without it; relocate() does so, from then on leaving that worker out of every placement
  // (while this stepper lives). When the nodes left cannot hold the model, it is placed on
  // all of them again.
  bool wants_relocation() const override;
  Status relocate() override;

  // The current placement's report, or why there is none; the number of placements so far.
  std::string status_report() const;
  int placements() const;
  // The current placement as values (state says when there is none). Any thread.
  ClusterView view() const;

 private:
  // Makes sure a session exists (placing again when due); kUnavailable when it cannot.
  Status ensure_session();
  // Places the model again with factory_ (the old session must be gone): records the new
  // session, or the failure and its time.
  Status place(const std::vector<net::HostPort>& excluded);
  // Remembers that the cluster broke when status says so; returns status, or, when the session
  // declared a node lost, kUnavailable naming it.
  Status note(const Status& status);

  Factory factory_;
  std::vector<net::HostPort> excluded_;  // workers found slow
  std::unique_ptr<ClusterSession> session_;
  bool broken_ = false;
  double retry_interval_s_;
  double last_attempt_s_ = 0;
  Status last_failure_;
  int64_t n_vocab_, n_ctx_, max_batch_, n_slots_, n_embd_;
  model::Pooling pooling_;

  mutable std::mutex mu_;  // guards status_, view_ and placements_ (read by other threads)
  std::string status_;
  ClusterView view_;
  int placements_ = 1;
  EventLog* events_;
};

}  // namespace cohort::runtime
