// runtime::Engine over any Stepper (one node or a cluster): tokenizes and validates on the
// calling (HTTP) thread, then hands the request to a SlotScheduler, whose engine thread
// interleaves it with the other requests on the stepper's sequence slots. Text is
// detokenized and stop strings applied as tokens arrive; a streaming request's pieces are
// handed to its on_text on the calling thread (so a slow client never stalls the engine
// thread), and on_text returning false cancels the request at its next token. Chat prompts
// are rendered by a ChatRenderer (runtime/chat_renderer.h).
#pragma once

#include <mutex>
#include <string>
#include <vector>

#include "runtime/chat_renderer.h"
#include "runtime/engine.h"
#include "runtime/serving_stats.h"
#include "runtime/slot_scheduler.h"
#include "runtime/stepper.h"
#include "text/tokenizer.h"

namespace cohort::runtime {

class GenerationEngine final : public Engine {
 public:
  // stepper and tokenizer must outlive the engine. The default renderer is the fallback
  // chat format. Starts the engine thread.
  GenerationEngine(std::string model_name, Stepper& stepper, const text::Tokenizer& tokenizer,
                   ChatRenderer renderer = {}, ModelInfo info = {})
      : name_(std::move(model_name)),
        stepper_(stepper),
        tok_(tokenizer),
        renderer_(std::move(renderer)),
        info_(std::move(info)),
        stats_(stepper.n_slots()),
        scheduler_(stepper, [&tokenizer](int32_t id) { return tokenizer.is_eog(id); }) {}

  bool ready() const override { return true; }
  std::string model_name() const override { return name_; }
  ModelInfo model_info() const override { return info_; }
  Result<std::string> render_chat(const ChatPrompt& chat) const override {
    return renderer_.render(chat);
  }
  Result<int64_t> count_tokens(const std::string& prompt, bool prompt_is_chat) const override {
    return static_cast<int64_t>(encode(prompt, prompt_is_chat).size());
  }
  Result<CompletionResult> complete(const CompletionRequest& request) override;
  int64_t embedding_length() const override { return stepper_.n_embd(); }
  // Each input runs on the scheduler's engine thread (SlotScheduler::embed), queued with the
  // generations, one input after another.
  Result<EmbeddingResult> embed(const EmbeddingRequest& request) override;

  // Requests, tokens, queue and tok/s so far. Thread-safe.
  EngineStats stats() const { return stats_.snapshot(); }

 private:
  // complete() without the bookkeeping of its outcome.
  Result<CompletionResult> generate(const CompletionRequest& request);
  std::vector<int32_t> encode(const std::string& prompt, bool prompt_is_chat) const;
  // An embedding input's tokens, checked (and cut to the context when truncate).
  Result<std::vector<int32_t>> embedding_tokens(const EmbeddingInput& input, bool truncate) const;
  // embed() without the bookkeeping of its outcome.
  Result<EmbeddingResult> run_embed(const EmbeddingRequest& request);
  // The text of every token as generation emits it (for constrained decoding), made once.
  const std::vector<std::string>& token_texts() const;

  std::string name_;
  Stepper& stepper_;
  const text::Tokenizer& tok_;
  ChatRenderer renderer_;
  ModelInfo info_;
  mutable std::once_flag token_texts_once_;
  mutable std::vector<std::string> token_texts_;
  ServingStats stats_;
  SlotScheduler scheduler_;  // last: its engine thread may use the members above
};

}  // namespace cohort::runtime
