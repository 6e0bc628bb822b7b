#include "runtime/generation_engine.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <random>
#include <thread>

#include "runtime/embedding_pool.h"
#include "runtime/stop_scanner.h"
#include "text/sampler.h"

namespace cohort::runtime {
namespace {

text::SamplerConfig sampler_config(const CompletionRequest& req) {
  text::SamplerConfig sc;
  sc.temperature = req.temperature;
  sc.top_p = req.top_p;
  sc.top_k = req.top_k;
  sc.min_p = req.min_p;
  sc.repeat_penalty = req.repeat_penalty;
  sc.repeat_last_n = req.repeat_last_n;
  sc.presence_penalty = req.presence_penalty;
  sc.frequency_penalty = req.frequency_penalty;
  sc.seed = req.seed ? *req.seed : std::random_device{}();
  return sc;
}

// Pieces of text passed from the engine thread to the request's thread.
struct PieceQueue {
  std::mutex mu;
  std::condition_variable cv;
  std::deque<std::string> pieces;
  bool done = false;
  std::atomic<bool> cancel{false};

  void push(std::string piece) {
    {
      std::lock_guard<std::mutex> lock(mu);
      pieces.push_back(std::move(piece));
    }
    cv.notify_one();
  }
  void finish() {
    {
      std::lock_guard<std::mutex> lock(mu);
      done = true;
    }
    cv.notify_one();
  }
  // Hands every piece to sink until the producer finished; sink returning false cancels.
  void drain(const TextSink& sink) {
    for (;;) {
      std::deque<std::string> batch;
      bool finished = false;
      {
        std::unique_lock<std::mutex> lock(mu);
        cv.wait(lock, [&] { return !pieces.empty() || done; });
        batch.swap(pieces);
        finished = done;
      }
      for (std::string& p : batch) {
        if (!cancel.load() && !sink(p)) cancel = true;
      }
      if (finished) return;
    }
  }
};

}  // namespace

std::vector<int32_t> GenerationEngine::encode(const std::string& prompt,
                                              bool prompt_is_chat) const {
  bool add_bos = tok_.add_bos_default();
  if (prompt_is_chat && tok_.bos_id() >= 0) {
    // Templates usually write bos_token themselves: do not add a second one.
    const std::string& bos = tok_.piece(tok_.bos_id());
    if (!bos.empty() && prompt.compare(0, bos.size(), bos) == 0) add_bos = false;
  }
  return tok_.encode(prompt, add_bos, prompt_is_chat);
}

const std::vector<std::string>& GenerationEngine::token_texts() const {
  std::call_once(token_texts_once_, [this] {
    token_texts_.resize(static_cast<size_t>(tok_.n_vocab()));
    for (int32_t id = 0; id < tok_.n_vocab(); ++id) token_texts_[id] = tok_.token_to_piece(id);
  });
  return token_texts_;
}

Result<CompletionResult> GenerationEngine::complete(const CompletionRequest& req) {
  Result<CompletionResult> result = generate(req);
  if (!result.is_ok()) {
    stats_.request_ended("failed");
  } else {
    stats_.request_ended(result->finish_reason == "cancelled" ? "cancelled" : "ok");
  }
  return result;
}

Result<CompletionResult> GenerationEngine::generate(const CompletionRequest& req) {
  std::vector<int32_t> prompt = encode(req.prompt, req.prompt_is_chat);
  stats_.request_started(static_cast<int64_t>(prompt.size()));
  if (prompt.empty()) return Status::invalid_argument("the prompt is empty");
  if (static_cast<int64_t>(prompt.size()) >= stepper_.n_ctx()) {
    return Status::out_of_range("the prompt has " + std::to_string(prompt.size()) +
                                " tokens; the context holds " + std::to_string(stepper_.n_ctx()));
  }
  const int64_t room = stepper_.n_ctx() - static_cast<int64_t>(prompt.size());
  const int64_t max_tokens = req.max_tokens < 0 ? room : std::min(req.max_tokens, room);
  text::Detokenizer detok(tok_);
  StopScanner stops(req.stop);
  CompletionResult out;
  out.prompt_tokens = static_cast<int64_t>(prompt.size());
  out.finish_reason = "length";
  PieceQueue queue;
  std::optional<text::OutputConstraint> constraint = req.constraint;  // this request's state
  const std::vector<std::string>* texts = constraint ? &token_texts() : nullptr;
  const auto emit = [&](std::string piece) {
    if (!piece.empty() && req.on_text) queue.push(std::move(piece));
  };
  if (max_tokens > 0) {
    GenerationJob job;
    job.prompt = std::move(prompt);
    job.n_predict = max_tokens;
    job.sampling = sampler_config(req);
    if (constraint) {
      // Asked for every id at every step, on the engine thread (as on_token is).
      job.sampling.allow = [&](int32_t id) {
        if (tok_.is_eog(id)) return constraint->complete();
        const std::string& text = (*texts)[id];
        return !constraint->complete() && !text.empty() && constraint->accepts(text);
      };
    }
    // Runs on the engine thread; the detokenizer and stop scanner are this request's alone.
    job.on_token = [&](int32_t id) {
      ++out.completion_tokens;
      stats_.token_generated();
      if (tok_.is_eog(id)) {
        out.finish_reason = "stop";
        return false;
      }
      bool whole = false;
      if (constraint) {
        constraint->advance((*texts)[id]);
        whole = constraint->complete();
        if (whole) out.finish_reason = "stop";  // nothing may follow: no need to ask for EOG
      }
      emit(stops.push(detok.push(id)));
      return !whole && !stops.matched() && !queue.cancel.load();
    };
    Status status;
    if (req.on_text) {
      std::thread runner([&] {
        status = scheduler_.run(std::move(job));
        queue.finish();
      });
      queue.drain(req.on_text);
      runner.join();
    } else {
      status = scheduler_.run(std::move(job));
    }
    if (!status.is_ok()) return status;
  }
  const bool cancelled = queue.cancel.load();
  if (!stops.matched() && !cancelled && req.on_text) {
    // The tail held back by the detokenizer and the stop scanner, streamed now.
    std::string tail = stops.push(detok.flush());
    if (!stops.matched()) tail += stops.flush();
    if (!tail.empty() && !req.on_text(tail)) queue.cancel = true;
  } else if (!stops.matched() && !cancelled) {
    (void)stops.push(detok.flush());
    if (!stops.matched()) (void)stops.flush();
  }
  if (stops.matched()) out.finish_reason = "stop";
  out.text = stops.text();
  out.stop_sequence = stops.matched_stop();
  if (queue.cancel.load()) out.finish_reason = "cancelled";
  return out;
}

Result<std::vector<int32_t>> GenerationEngine::embedding_tokens(const EmbeddingInput& input,
                                                                bool truncate) const {
  std::vector<int32_t> tokens = input.is_tokens ? input.tokens : encode(input.text, false);
  if (tokens.empty()) return Status::invalid_argument("embed: an input is empty");
  for (int32_t id : tokens) {
    if (id < 0 || id >= stepper_.n_vocab()) {
      return Status::invalid_argument("embed: token id " + std::to_string(id) +
                                      " is outside the vocabulary of " +
                                      std::to_string(stepper_.n_vocab()));
    }
  }
  const int64_t n_ctx = stepper_.n_ctx();
  if (static_cast<int64_t>(tokens.size()) > n_ctx) {
    if (!truncate) {
      return Status::out_of_range("the input has " + std::to_string(tokens.size()) +
                                  " tokens; the context holds " + std::to_string(n_ctx));
    }
    tokens.resize(static_cast<size_t>(n_ctx));
  }
  return tokens;
}

Result<EmbeddingResult> GenerationEngine::embed(const EmbeddingRequest& req) {
  Result<EmbeddingResult> result = run_embed(req);
  stats_.request_ended(result.is_ok() ? "ok" : "failed");
  return result;
}

Result<EmbeddingResult> GenerationEngine::run_embed(const EmbeddingRequest& req) {
  stats_.request_started(0);
  const int64_t dim = stepper_.n_embd();
  if (dim <= 0) return Status::unsupported("embed: this model gives no hidden states");
  if (req.dimensions < 0 || req.dimensions > dim) {
    return Status::invalid_argument("embed: dimensions " + std::to_string(req.dimensions) +
                                    " is outside 1.." + std::to_string(dim));
  }
  // Every input is checked before any runs: a bad one fails the request without work.
  std::vector<std::vector<int32_t>> inputs;
  inputs.reserve(req.inputs.size());
  for (const EmbeddingInput& in : req.inputs) {
    COHORT_ASSIGN_OR_RETURN(std::vector<int32_t> tokens, embedding_tokens(in, req.truncate));
    inputs.push_back(std::move(tokens));
  }
  EmbeddingResult out;
  for (std::vector<int32_t>& tokens : inputs) {
    out.prompt_tokens += static_cast<int64_t>(tokens.size());
    EmbeddingPooler pooler(stepper_.pooling(), dim);
    EmbeddingJob job;
    job.tokens = std::move(tokens);
    job.on_rows = [&pooler](const float* rows, int64_t n) { pooler.add(rows, n); };
    COHORT_RETURN_IF_ERROR(scheduler_.embed(std::move(job)));
    std::vector<float> e = pooler.finish();
    if (req.dimensions > 0) shorten_embedding(e, req.dimensions);
    out.embeddings.push_back(std::move(e));
  }
  return out;
}

}  // namespace cohort::runtime
