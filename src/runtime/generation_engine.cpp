#include "runtime/generation_engine.h"

#include "runtime/generator.h"
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
  text::SamplerConfig sc;
  sc.temperature = req.temperature;
  sc.top_p = req.top_p;
  sc.top_k = req.top_k;
  sc.min_p = 0;
  sc.seed = req.seed;
  std::lock_guard<std::mutex> lock(mu_);
  text::Sampler sampler(sc, static_cast<int32_t>(stepper_.n_vocab()));
  text::Detokenizer detok(tok_);
  CompletionResult out;
  out.prompt_tokens = static_cast<int64_t>(prompt.size());
  out.finish_reason = "length";
  Generator gen(stepper_, [&](int32_t id) { return tok_.is_eog(id); });
  GenerateStats st;
  if (req.max_tokens > 0) {
    Status s = gen.generate(
        prompt, req.max_tokens, sampler,
        [&](int32_t id) {
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
        },
        &st);
    if (!s.is_ok()) return s;
  }
  if (out.finish_reason == "length") out.text += detok.flush();
  return out;
}

}  // namespace cohort::runtime
