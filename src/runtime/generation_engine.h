// runtime::Engine over any Stepper (one node or a cluster): tokenizes and validates on the
// calling (HTTP) thread, then hands the request to a SlotScheduler, whose engine thread
// interleaves it with the other requests on the stepper's sequence slots; detokenizes and
// applies stop strings as tokens arrive. complete() blocks until its request has ended.
#pragma once

#include <string>

#include "runtime/engine.h"
#include "runtime/slot_scheduler.h"
#include "runtime/stepper.h"
#include "text/tokenizer.h"

namespace cohort::runtime {

class GenerationEngine final : public Engine {
 public:
  // stepper and tokenizer must outlive the engine. Starts the engine thread.
  GenerationEngine(std::string model_name, Stepper& stepper, const text::Tokenizer& tokenizer)
      : name_(std::move(model_name)),
        stepper_(stepper),
        tok_(tokenizer),
        scheduler_(stepper, [&tokenizer](int32_t id) { return tokenizer.is_eog(id); }) {}

  bool ready() const override { return true; }
  std::string model_name() const override { return name_; }
  Result<CompletionResult> complete(const CompletionRequest& request) override;

 private:
  std::string name_;
  Stepper& stepper_;
  const text::Tokenizer& tok_;
  SlotScheduler scheduler_;
};

}  // namespace cohort::runtime
