// The engine loop: requests queue for a free sequence slot of a Stepper; one engine thread
// runs them all, interleaved. Per turn it admits queued jobs into free slots and prefills
// each (synchronously, chunked), keeps up to stepper.max_in_flight() decode steps submitted
// (one token of one slot each, slots taking turns), then collects the oldest step's logits,
// samples that slot's next token, and either puts the slot back in line or finishes its job
// and frees the slot. On a pipeline of S stages, S slots in flight keep every stage busy.
//
// The seam for continuous batching: the turn's "submit one slot's token" becomes "submit
// several slots' tokens as one forward"; admission, Sequence and completion stay as they are.
//
// Only the engine thread touches the stepper (and so the model and its caches).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "core/status.h"
#include "runtime/stepper.h"
#include "text/sampler.h"

namespace cohort::runtime {

struct GenerationJob {
  std::vector<int32_t> prompt;  // non-empty, shorter than the stepper's n_ctx()
  int64_t n_predict = 1;        // >= 1
  text::SamplerConfig sampling;
  // Called on the engine thread for each sampled token, as Generator::generate's on_token.
  std::function<bool(int32_t)> on_token;
};

class SlotScheduler {
 public:
  // stepper must outlive the scheduler; eog(id) says whether a token ends generation.
  // Starts the engine thread.
  SlotScheduler(Stepper& stepper, std::function<bool(int32_t)> eog);
  // Stops the engine thread; jobs queued or running end with kUnavailable.
  ~SlotScheduler();
  SlotScheduler(const SlotScheduler&) = delete;
  SlotScheduler& operator=(const SlotScheduler&) = delete;

  // Queues job and blocks until it has ended: ok, or the stepper's error (which also ends
  // every other job running with it). Thread-safe.
  Status run(GenerationJob job);

 private:
  struct Pending {
    GenerationJob job;
    std::promise<Status> done;
  };
  struct Active;

  void loop();
  // One turn of the engine loop with the jobs just taken from the queue.
  Status turn(const std::vector<Pending*>& admitted);
  void finish(Active* a, const Status& s);
  void fail_all(const Status& s);

  Stepper& stepper_;
  std::function<bool(int32_t)> eog_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending*> queue_;  // guarded by mu_
  bool stop_ = false;           // guarded by mu_

  // Engine thread only (free_slots_ is read under mu_ by the engine thread's wait).
  std::vector<int64_t> free_slots_;
  std::vector<std::unique_ptr<Active>> active_;
  std::deque<Active*> ready_;      // slots with a token to feed, in turn order
  std::deque<Active*> in_flight_;  // submitted, oldest first
  std::vector<float> logits_;
  std::thread thread_;
};

}  // namespace cohort::runtime
