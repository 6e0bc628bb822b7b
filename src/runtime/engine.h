// What the API layer asks of a served model: the seam between api/ (HTTP, dialects) and
// runtime/ (generation on one node or a cluster). Implementations are thread-safe: HTTP
// threads call complete() concurrently; an implementation may serialise requests.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace cohort::runtime {

struct CompletionRequest {
  std::string prompt;
  int64_t max_tokens = 16;
  float temperature = 1.0f;
  float top_p = 1.0f;
  int32_t top_k = 0;
  uint64_t seed = 0;
  std::vector<std::string> stop;  // generation ends before any of these strings
};

struct CompletionResult {
  std::string text;
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  std::string finish_reason;  // "stop" (EOS or a stop string) or "length"
};

class Engine {
 public:
  virtual ~Engine() = default;
  // False while the model is loading or the cluster is being placed.
  virtual bool ready() const = 0;
  virtual std::string model_name() const = 0;
  // Runs one completion to the end. Errors: kInvalidArgument for bad requests (prompt too long
  // for the context...), kUnavailable when the cluster lost a node, kInternal otherwise.
  virtual Result<CompletionResult> complete(const CompletionRequest& request) = 0;
};

}  // namespace cohort::runtime
