#include "runtime/generation_engine.h"

#include "text/sampler.h"

namespace cohort::runtime {

Result<CompletionResult> GenerationEngine::complete(const CompletionRequest& req) {
  if (req.max_tokens < 0) return Status::invalid_argument("max_tokens must be >= 0");
  std::vector<int32_t> prompt = tok_.encode(req.prompt, tok_.add_bos_default(), false);
  if (prompt.empty()) return Status::invalid_argument("the prompt is empty");
  if (static_cast<int64_t>(prompt.size()) >= stepper_.n_ctx()) {
    return Status::invalid_argument("the prompt has " + std::to_string(prompt.size()) +
                                    " tokens; the context holds " +
                                    std::to_string(stepper_.n_ctx()));
  }
  CompletionResult out;
  out.prompt_tokens = static_cast<int64_t>(prompt.size());
  out.finish_reason = "length";
  if (req.max_tokens == 0) return out;

  text::Detokenizer detok(tok_);
  GenerationJob job;
  job.prompt = std::move(prompt);
  job.n_predict = req.max_tokens;
  job.sampling.temperature = req.temperature;
  job.sampling.top_p = req.top_p;
  job.sampling.top_k = req.top_k;
  job.sampling.min_p = 0;
  job.sampling.seed = req.seed;
  // Runs on the engine thread while this thread waits in run().
  job.on_token = [&](int32_t id) {
    ++out.completion_tokens;
    if (tok_.is_eog(id)) {
      out.finish_reason = "stop";
      return false;
    }
    out.text += detok.push(id);
    for (const std::string& stop : req.stop) {
      const size_t at = stop.empty() ? std::string::npos : out.text.find(stop);
      if (at != std::string::npos) {
        out.text.resize(at);
        out.finish_reason = "stop";
        return false;
      }
    }
    return true;
  };
  COHORT_RETURN_IF_ERROR(scheduler_.run(std::move(job)));
  if (out.finish_reason == "length") out.text += detok.flush();
  return out;
}

}  // namespace cohort::runtime
