// The engine loop: requests queue for a free sequence slot of a Stepper; one engine thread
// runs them all with continuous batching. Per turn it admits queued jobs into free slots,
// then, while the stepper has room for another step in flight (stepper.max_in_flight()),
// submits one batched step: one token of each slot waiting to decode plus chunks of the
// prompts still being prefilled, up to max_batch() rows, so new prompts ride along with
// running decodes instead of stalling them. Then it collects the oldest batch, samples each
// decoding slot's next token, and either keeps the slot for the next batch or finishes its
// job and frees the slot: requests join and leave the batch at every step. On a pipeline of
// S stages the waiting slots are spread over S batches, keeping every stage busy.
//
// Prefix reuse: each slot remembers the tokens its cache holds when its job ends; a new job
// takes the free slot sharing the longest prefix with its prompt and prefills only the rest.
// After a stepper error (slots' contents unspecified) every slot is forgotten.
//
// Moving: while the stepper wants to move (Stepper::wants_relocation, e.g. a cluster that
// found a slow node), no job is admitted; once the running ones have ended the stepper moves,
// every slot is forgotten, and admission resumes.
//
// A job whose on_token returns false (e.g. its client went away) ends at once and frees its
// slot. Only the engine thread touches the stepper (and so the model and its caches).
//
// Embeddings queue here too (embed()), so they never touch the model beside the engine
// thread: at the start of a turn, each queued embedding borrows a free slot and runs its
// tokens there in max_batch chunks with Stepper::step_hidden, synchronously (a pipeline's
// batches in flight are received first and kept). Running decodes pause for that time, as
// they would for a prompt of that length. The slot's cache then holds the embedded tokens,
// which a later prompt with that prefix reuses.
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

struct EmbeddingJob {
  std::vector<int32_t> tokens;  // non-empty, at most the stepper's n_ctx(), valid ids
  // Called on the engine thread with the next tokens' hidden states, [n_rows][n_embd()], in
  // token order (Stepper::step_hidden's rows).
  std::function<void(const float* rows, int64_t n_rows)> on_rows;
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
  // Queues an embedding and blocks until its rows have all been handed to on_rows (ok) or
  // it failed. Thread-safe.
  Status embed(EmbeddingJob job);

 private:
  struct Pending {
    GenerationJob job;
    std::promise<Status> done;
  };
  struct Active;
  struct PendingEmbedding {
    EmbeddingJob job;
    std::promise<Status> done;
  };

  void loop();
  // One turn of the engine loop with the jobs just taken from the queue.
  Status turn(const std::vector<PendingEmbedding*>& embeddings,
              const std::vector<Pending*>& admitted);
  // Runs one embedding on a free slot; a stepper error is returned (and ends the job).
  Status run_embedding(PendingEmbedding* e);
  // Takes the free slot whose cached tokens share the longest prefix with p's prompt.
  void admit(Pending* p);
  // Builds and submits one batched step for a free place in the stepper's pipeline.
  Status submit_batch();
  // Collects the oldest batch and moves each of its jobs on.
  Status collect_batch();
  // Lets the stepper move (Stepper::relocate) and forgets every slot's contents.
  void relocate();
  void finish(Active* a, const Status& s);
  void fail_all(const Status& s);

  Stepper& stepper_;
  std::function<bool(int32_t)> eog_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Pending*> queue_;                 // guarded by mu_
  std::deque<PendingEmbedding*> embed_queue_;  // guarded by mu_
  bool stop_ = false;                          // guarded by mu_

  // Engine thread only (free_slots_ is read under mu_ by the engine thread's wait).
  std::vector<int64_t> free_slots_;
  std::vector<std::vector<int32_t>> slot_tokens_;  // per free slot: the tokens its cache holds
  std::vector<std::unique_ptr<Active>> active_;
  std::deque<Active*> prefilling_;              // prompts not fully in their cache, in order
  std::deque<Active*> ready_;                   // slots with a token to feed, in turn order
  std::deque<std::vector<Active*>> in_flight_;  // submitted batches, oldest first
  std::vector<StepEntry> entries_;              // the batch being built
  std::vector<int32_t> decode_tokens_;          // its decode tokens (entries_ point here)
  std::vector<float> logits_;                   // a batch's logits, [n_slots][n_vocab]
  std::vector<float> hidden_;                   // an embedding chunk's states, sized once
  std::thread thread_;
};

}  // namespace cohort::runtime
