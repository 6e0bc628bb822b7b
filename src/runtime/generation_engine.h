// runtime::Engine over any Stepper (one node or a cluster): tokenizes, generates and
// detokenizes one request at a time (requests are serialised by a mutex; batching several
// is the scheduler's work). Chat prompts are rendered by a ChatRenderer
// (runtime/chat_renderer.h); text is streamed through the request's on_text as it comes.
#pragma once

#include <atomic>
#include <mutex>
#include <string>
#include <vector>

#include "runtime/chat_renderer.h"
#include "runtime/engine.h"
#include "runtime/stepper.h"
#include "text/tokenizer.h"

namespace cohort::runtime {

class GenerationEngine final : public Engine {
 public:
  // stepper and tokenizer must outlive the engine. The default renderer is the fallback
  // chat format.
  GenerationEngine(std::string model_name, Stepper& stepper, const text::Tokenizer& tokenizer,
                   ChatRenderer renderer = {}, ModelInfo info = {})
      : name_(std::move(model_name)),
        stepper_(stepper),
        tok_(tokenizer),
        renderer_(std::move(renderer)),
        info_(std::move(info)) {}

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

 private:
  std::vector<int32_t> encode(const std::string& prompt, bool prompt_is_chat) const;

  std::string name_;
  Stepper& stepper_;
  const text::Tokenizer& tok_;
  ChatRenderer renderer_;
  ModelInfo info_;
  std::mutex mu_;  // one generation at a time on the stepper
};

}  // namespace cohort::runtime
