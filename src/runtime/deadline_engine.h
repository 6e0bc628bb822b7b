// A per-request time limit around any Engine (`cohort serve --request-timeout S`): a
// completion still generating when its limit passes is cancelled at its next piece of text
// (its slot freed) and fails with kTimeout, so the client sees an error (HTTP 504, or an
// error event mid-stream) rather than an answer cut short without a word. Everything else
// is passed through.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "runtime/engine.h"

namespace cohort::runtime {

class DeadlineEngine final : public Engine {
 public:
  // limit_ms > 0.
  DeadlineEngine(std::shared_ptr<Engine> inner, int64_t limit_ms)
      : inner_(std::move(inner)), limit_ms_(limit_ms) {}

  bool ready() const override { return inner_->ready(); }
  std::string model_name() const override { return inner_->model_name(); }
  ModelInfo model_info() const override { return inner_->model_info(); }
  Result<std::string> render_chat(const ChatPrompt& chat) const override {
    return inner_->render_chat(chat);
  }
  Result<int64_t> count_tokens(const std::string& prompt, bool prompt_is_chat) const override {
    return inner_->count_tokens(prompt, prompt_is_chat);
  }
  Result<CompletionResult> complete(const CompletionRequest& request) override;
  // Embeddings pass through: they produce no text to cut at, and an input is bounded by the
  // context.
  int64_t embedding_length() const override { return inner_->embedding_length(); }
  Result<EmbeddingResult> embed(const EmbeddingRequest& request) override {
    return inner_->embed(request);
  }

  const std::shared_ptr<Engine>& inner() const { return inner_; }

 private:
  std::shared_ptr<Engine> inner_;
  int64_t limit_ms_;
};

}  // namespace cohort::runtime
