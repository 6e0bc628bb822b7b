#include "runtime/slot_scheduler.h"

#include <algorithm>

#include "runtime/sequence.h"

namespace cohort::runtime {

struct SlotScheduler::Active {
  Active(Pending* p, int64_t s, int64_t n_vocab, int64_t n_ctx,
         const std::function<bool(int32_t)>& eog)
      : pending(p),
        slot(s),
        sampler(p->job.sampling, static_cast<int32_t>(n_vocab)),
        seq(static_cast<int64_t>(p->job.prompt.size()), p->job.n_predict, n_ctx, sampler,
            p->job.on_token, eog) {}
  Pending* pending;
  int64_t slot;
  text::Sampler sampler;
  Sequence seq;
};

SlotScheduler::SlotScheduler(Stepper& stepper, std::function<bool(int32_t)> eog)
    : stepper_(stepper), eog_(std::move(eog)), logits_(stepper.n_vocab()) {
  // Slot 0 first, so a lone request runs where `cohort run` would.
  for (int64_t s = stepper_.n_slots() - 1; s >= 0; --s) free_slots_.push_back(s);
  thread_ = std::thread([this] { loop(); });
}

SlotScheduler::~SlotScheduler() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stop_ = true;
  }
  cv_.notify_all();
  thread_.join();
}

Status SlotScheduler::run(GenerationJob job) {
  Pending p{std::move(job), {}};
  std::future<Status> done = p.done.get_future();
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (stop_) return Status::unavailable("engine: stopping");
    queue_.push_back(&p);
  }
  cv_.notify_all();
  return done.get();
}

void SlotScheduler::finish(Active* a, const Status& s) {
  free_slots_.push_back(a->slot);
  Pending* p = a->pending;
  auto it = std::find_if(active_.begin(), active_.end(),
                         [a](const std::unique_ptr<Active>& x) { return x.get() == a; });
  active_.erase(it);
  p->done.set_value(s);  // last: the caller's job (and p itself) may go away now
}

void SlotScheduler::fail_all(const Status& s) {
  stepper_.abandon();
  ready_.clear();
  in_flight_.clear();
  while (!active_.empty()) finish(active_.back().get(), s);
}

Status SlotScheduler::turn(const std::vector<Pending*>& admitted) {
  // Every admitted job becomes active first, so an error below ends each of them.
  std::vector<Active*> fresh;
  for (Pending* p : admitted) {
    const int64_t slot = free_slots_.back();
    free_slots_.pop_back();
    active_.push_back(
        std::make_unique<Active>(p, slot, stepper_.n_vocab(), stepper_.n_ctx(), eog_));
    if (p->job.n_predict < 1) {
      finish(active_.back().get(), Status::ok());
    } else {
      fresh.push_back(active_.back().get());
    }
  }
  for (Active* a : fresh) {
    // Prefill runs synchronously; steps of other slots in flight are kept for collect().
    const std::vector<int32_t>& prompt = a->pending->job.prompt;
    COHORT_RETURN_IF_ERROR(prefill(stepper_, a->slot, prompt, logits_.data(), nullptr));
    for (int32_t id : prompt) a->sampler.accept(id);
    if (a->seq.advance(logits_.data())) {
      ready_.push_back(a);
    } else {
      finish(a, Status::ok());
    }
  }
  while (!ready_.empty() && static_cast<int64_t>(in_flight_.size()) < stepper_.max_in_flight()) {
    Active* a = ready_.front();
    const int32_t token = a->seq.next_token();
    COHORT_RETURN_IF_ERROR(stepper_.submit(a->slot, &token, 1, a->seq.feed_pos(), false));
    ready_.pop_front();
    in_flight_.push_back(a);
  }
  if (in_flight_.empty()) return Status::ok();
  COHORT_RETURN_IF_ERROR(stepper_.collect(logits_.data()));
  Active* a = in_flight_.front();
  in_flight_.pop_front();
  if (a->seq.advance(logits_.data())) {
    ready_.push_back(a);
  } else {
    finish(a, Status::ok());
  }
  return Status::ok();
}

void SlotScheduler::loop() {
  for (;;) {
    std::vector<Pending*> admitted;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] {
        return stop_ || (!queue_.empty() && !free_slots_.empty()) || !ready_.empty() ||
               !in_flight_.empty();
      });
      if (stop_) break;
      while (!queue_.empty() && admitted.size() < free_slots_.size()) {
        admitted.push_back(queue_.front());
        queue_.pop_front();
      }
    }
    Status s = turn(admitted);
    if (!s.is_ok()) fail_all(s);
  }
  fail_all(Status::unavailable("engine: stopped"));
  std::lock_guard<std::mutex> lock(mu_);
  for (Pending* p : queue_) p->done.set_value(Status::unavailable("engine: stopped"));
  queue_.clear();
}

}  // namespace cohort::runtime
