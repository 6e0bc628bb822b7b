#include "runtime/replacing_stepper.h"

#include "core/clock.h"
#include "core/log.h"

namespace cohort::runtime {
namespace {

// Errors that mean a node or link is gone, rather than a bad request.
bool cluster_broke(const Status& s) {
  switch (s.code()) {
    case StatusCode::kUnavailable:
    case StatusCode::kTimeout:
    case StatusCode::kCorrupt:
    case StatusCode::kIoError:
      return true;
    default:
      return false;
  }
}

}  // namespace

ReplacingStepper::ReplacingStepper(Factory factory, std::unique_ptr<ClusterSession> first,
                                   double retry_interval_s, EventLog* events)
    : factory_(std::move(factory)),
      session_(std::move(first)),
      retry_interval_s_(retry_interval_s),
      events_(events) {
  Stepper& s = session_->stepper();
  n_vocab_ = s.n_vocab();
  n_ctx_ = s.n_ctx();
  max_batch_ = s.max_batch();
  n_slots_ = s.n_slots();
  n_embd_ = s.n_embd();
  pooling_ = s.pooling();
  status_ = session_->status_report();
  view_ = session_->view();
  view_.placements = placements_;
}

ReplacingStepper::~ReplacingStepper() = default;

int64_t ReplacingStepper::max_in_flight() const {
  return session_ && !broken_ ? session_->stepper().max_in_flight() : 1;
}

Status ReplacingStepper::note(const Status& status) {
  Status s = status;
  // A step that failed because a lost node's links were broken says why the node was lost.
  if (!s.is_ok() && session_ && cluster_broke(s)) {
    if (std::string lost = session_->lost(); !lost.empty()) {
      s = Status::unavailable("cluster: node lost: " + lost);
    }
  }
  if (!s.is_ok() && cluster_broke(s) && !broken_) {
    broken_ = true;
    COHORT_LOG_WARN("cluster: lost a node or link (%s); the model will be placed again",
                    s.message().c_str());
    if (events_ != nullptr) events_->append("node_lost", "lost a node or link: " + s.message());
    std::lock_guard<std::mutex> lock(mu_);
    status_ = "cluster broken: " + s.message() + "\n(placing again at the next request)\n";
    view_.state = "broken: " + s.message();
  }
  return s;
}

Status ReplacingStepper::ensure_session() {
  // A node lost while no step ran: place again before this step rather than fail it.
  if (session_ && !broken_) {
    if (std::string lost = session_->lost(); !lost.empty()) {
      (void)note(Status::unavailable("cluster: node lost: " + lost));
    }
  }
  if (session_ && !broken_) return Status::ok();
  if (session_) {
    session_.reset();  // stops what is left of the old placement; workers wait for a head
  }
  const double now = now_s();
  if (last_attempt_s_ > 0 && now - last_attempt_s_ < retry_interval_s_) {
    return Status::unavailable("cluster: no placement (" + last_failure_.message() +
                               "); retrying shortly");
  }
  last_attempt_s_ = now;
  return place(excluded_);
}

Status ReplacingStepper::place(const std::vector<net::HostPort>& excluded) {
  auto next = factory_(excluded);
  if (!next.is_ok()) {
    last_failure_ = next.status();
    COHORT_LOG_WARN("cluster: cannot place the model again: %s", next.status().message().c_str());
    if (events_ != nullptr) {
      events_->append("no_placement", "cannot place the model again: " + next.status().message());
    }
    std::lock_guard<std::mutex> lock(mu_);
    status_ = "no placement: " + next.status().message() + "\n";
    view_ = ClusterView();
    view_.clustered = true;
    view_.placements = placements_;
    view_.state = "no placement: " + next.status().message();
    return Status::unavailable("cluster: cannot place the model on the nodes left: " +
                               next.status().message());
  }
  Stepper& s = (*next)->stepper();
  if (s.n_vocab() != n_vocab_ || s.n_ctx() != n_ctx_ || s.n_slots() != n_slots_ ||
      s.max_batch() != max_batch_) {
    return Status::internal("cluster: the new placement changed the model's shape");
  }
  session_ = std::move(next).value();
  broken_ = false;
  last_attempt_s_ = 0;
  std::lock_guard<std::mutex> lock(mu_);
  status_ = session_->status_report();
  ++placements_;
  view_ = session_->view();
  view_.placements = placements_;
  if (events_ != nullptr) {
    events_->append("replaced", "model placed again on " + std::to_string(view_.nodes.size()) +
                                    " nodes (placement " + std::to_string(placements_) + ")");
  }
  COHORT_LOG_INFO("cluster: placed again (placement %d)\n%s", placements_, status_.c_str());
  return Status::ok();
}

bool ReplacingStepper::wants_relocation() const {
  return session_ && !broken_ && session_->slow_node().has_value();
}

Status ReplacingStepper::relocate() {
  if (!wants_relocation()) return Status::ok();
  const SlowNode slow = *session_->slow_node();
  excluded_.push_back(slow.address);
  COHORT_LOG_INFO("cluster: placing the model again without %s (%s)", slow.name.c_str(),
                  slow.address.to_string().c_str());
  session_.reset();  // the workers' step loops end; they wait for a head again
  Status placed = place(excluded_);
  if (placed.is_ok()) return placed;
  // The nodes left cannot hold it: slow is better than nothing.
  excluded_.pop_back();
  COHORT_LOG_WARN("cluster: cannot place the model without %s; placing it on every node again",
                  slow.name.c_str());
  placed = place(excluded_);
  if (!placed.is_ok()) {
    broken_ = true;  // no session: the next step retries placing, as after a lost node
    last_attempt_s_ = now_s();
  }
  return placed;
}

Status ReplacingStepper::step(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                              bool all_logits, float* logits) {
  COHORT_RETURN_IF_ERROR(ensure_session());
  return note(session_->stepper().step(slot, tokens, n, pos0, all_logits, logits));
}

Status ReplacingStepper::submit(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                                bool all_logits) {
  COHORT_RETURN_IF_ERROR(ensure_session());
  return note(session_->stepper().submit(slot, tokens, n, pos0, all_logits));
}

Status ReplacingStepper::collect(float* logits) {
  if (!session_ || broken_) return Status::unavailable("cluster: the placement was lost");
  return note(session_->stepper().collect(logits));
}

Status ReplacingStepper::step_hidden(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                                     float* hidden) {
  COHORT_RETURN_IF_ERROR(ensure_session());
  return note(session_->stepper().step_hidden(slot, tokens, n, pos0, hidden));
}

Status ReplacingStepper::step_batch(std::span<const StepEntry> entries, float* logits) {
  COHORT_RETURN_IF_ERROR(ensure_session());
  return note(session_->stepper().step_batch(entries, logits));
}

Status ReplacingStepper::submit_batch(std::span<const StepEntry> entries) {
  COHORT_RETURN_IF_ERROR(ensure_session());
  return note(session_->stepper().submit_batch(entries));
}

Status ReplacingStepper::collect_batch(int64_t n_entries, float* logits) {
  if (!session_ || broken_) return Status::unavailable("cluster: the placement was lost");
  return note(session_->stepper().collect_batch(n_entries, logits));
}

void ReplacingStepper::abandon() {
  if (session_) session_->stepper().abandon();
}

std::string ReplacingStepper::status_report() const {
  std::lock_guard<std::mutex> lock(mu_);
  return status_;
}

ClusterView ReplacingStepper::view() const {
  std::lock_guard<std::mutex> lock(mu_);
  return view_;
}

int ReplacingStepper::placements() const {
  std::lock_guard<std::mutex> lock(mu_);
  return placements_;
}

}  // namespace cohort::runtime
