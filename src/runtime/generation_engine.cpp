#include "runtime/generation_engine.h"

#include <algorithm>
#include <random>

#include "runtime/generator.h"
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

Result<CompletionResult> GenerationEngine::complete(const CompletionRequest& req) {
  std::vector<int32_t> prompt = encode(req.prompt, req.prompt_is_chat);
  if (prompt.empty()) return Status::invalid_argument("the prompt is empty");
  if (static_cast<int64_t>(prompt.size()) >= stepper_.n_ctx()) {
    return Status::out_of_range("the prompt has " + std::to_string(prompt.size()) +
                                " tokens; the context holds " + std::to_string(stepper_.n_ctx()));
  }
  const int64_t room = stepper_.n_ctx() - static_cast<int64_t>(prompt.size());
  const int64_t max_tokens = req.max_tokens < 0 ? room : std::min(req.max_tokens, room);
  std::lock_guard<std::mutex> lock(mu_);
  text::Sampler sampler(sampler_config(req), static_cast<int32_t>(stepper_.n_vocab()));
  text::Detokenizer detok(tok_);
  StopScanner stops(req.stop);
  CompletionResult out;
  out.prompt_tokens = static_cast<int64_t>(prompt.size());
  out.finish_reason = "length";
  bool cancelled = false;
  const auto emit = [&](const std::string& piece) {
    if (!piece.empty() && req.on_text && !req.on_text(piece)) cancelled = true;
  };
  Generator gen(stepper_, [&](int32_t id) { return tok_.is_eog(id); });
  GenerateStats st;
  if (max_tokens > 0) {
    Status s = gen.generate(
        prompt, max_tokens, sampler,
        [&](int32_t id) {
          ++out.completion_tokens;
          if (tok_.is_eog(id)) {
            out.finish_reason = "stop";
            return false;
          }
          emit(stops.push(detok.push(id)));
          if (stops.matched()) out.finish_reason = "stop";
          return !stops.matched() && !cancelled;
        },
        &st);
    if (!s.is_ok()) return s;
  }
  if (!stops.matched() && !cancelled) {
    emit(stops.push(detok.flush()));
    if (!stops.matched()) emit(stops.flush());
  }
  if (stops.matched()) out.finish_reason = "stop";
  out.text = stops.text();
  out.stop_sequence = stops.matched_stop();
  if (cancelled) out.finish_reason = "cancelled";
  return out;
}

}  // namespace cohort::runtime
