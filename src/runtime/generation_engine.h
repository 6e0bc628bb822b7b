// runtime::Engine over any Stepper (one node or a cluster): tokenizes, generates and
// detokenizes one request at a time (requests are serialised by a mutex; batching several
// is the API issue's work).
#pragma once

#include <atomic>
#include <mutex>
#include <string>

#include "runtime/engine.h"
#include "runtime/stepper.h"
#include "text/tokenizer.h"

namespace cohort::runtime {

class GenerationEngine final : public Engine {
 public:
  // stepper and tokenizer must outlive the engine.
  GenerationEngine(std::string model_name, Stepper& stepper, const text::Tokenizer& tokenizer)
      : name_(std::move(model_name)), stepper_(stepper), tok_(tokenizer) {}

  bool ready() const override { return true; }
  std::string model_name() const override { return name_; }
  Result<CompletionResult> complete(const CompletionRequest& request) override;

 private:
  std::string name_;
  Stepper& stepper_;
  const text::Tokenizer& tok_;
  std::mutex mu_;  // one generation at a time on the stepper
};

}  // namespace cohort::runtime
