// A model-free runtime::Engine for the API tests: one byte = one token. complete() answers
// with the prompt (or a set output), cut at max_tokens bytes and before the first stop
// string, streamed one byte per on_text call; render_chat() writes "role: content\n" per
// message. It counts calls, remembers the last request, and can be made not ready or
// failing (before or after streaming some text). embed() gives, per input of n tokens (bytes
// or ids), [n, 1, 2, 3] normalised (cut to context_length_ when truncate), then shortened.
#pragma once

#include <algorithm>
#include <atomic>
#include <mutex>
#include <string>
#include <utility>

#include "runtime/embedding_pool.h"
#include "runtime/engine.h"

namespace cohort::api_test {

class FakeEngine : public runtime::Engine {
 public:
  bool ready() const override { return ready_.load(); }
  std::string model_name() const override { return "fake-model"; }
  runtime::ModelInfo model_info() const override {
    runtime::ModelInfo info;
    info.architecture = "llama";
    info.context_length = context_length_;
    info.parameter_count = 260'000;
    info.quantization = "F32";
    info.file_bytes = 1234;
    info.digest = "0123456789abcdef";
    return info;
  }
  Result<std::string> render_chat(const runtime::ChatPrompt& chat) const override {
    std::string out;
    for (const auto& m : chat.messages) {
      out += m["role"].get<std::string>() + ": " + m["content"].get<std::string>() + "\n";
    }
    if (out.find("REJECT") != std::string::npos) {
      return Status::invalid_argument("template: roles must alternate");
    }
    return out;
  }
  Result<int64_t> count_tokens(const std::string& prompt, bool) const override {
    return static_cast<int64_t>(prompt.size());
  }
  Result<runtime::CompletionResult> complete(const runtime::CompletionRequest& req) override {
    calls_.fetch_add(1);
    std::string text;
    Status fail, fail_after;
    {
      std::lock_guard<std::mutex> lock(mu_);
      last_ = req;
      fail = fail_;
      fail_after = fail_after_text_;
      text = output_override_.empty() ? req.prompt : output_override_;
    }
    if (!fail.is_ok()) return fail;
    runtime::CompletionResult out;
    out.prompt_tokens = static_cast<int64_t>(req.prompt.size());
    out.finish_reason = "stop";
    for (const std::string& s : req.stop) {
      const size_t at = text.find(s);
      if (at != std::string::npos && (out.stop_sequence.empty() || at < text.size())) {
        text.resize(at);
        out.stop_sequence = s;
      }
    }
    if (req.max_tokens >= 0 && static_cast<int64_t>(text.size()) > req.max_tokens) {
      text.resize(static_cast<size_t>(req.max_tokens));
      out.finish_reason = "length";
      out.stop_sequence.clear();
    }
    for (char c : text) {
      ++out.completion_tokens;
      out.text += c;
      if (req.on_text && !req.on_text(std::string(1, c))) {
        out.finish_reason = "cancelled";
        cancelled_.fetch_add(1);
        return out;
      }
    }
    if (!fail_after.is_ok()) return fail_after;
    return out;
  }

  int64_t embedding_length() const override { return 4; }
  Result<runtime::EmbeddingResult> embed(const runtime::EmbeddingRequest& req) override {
    embed_calls_.fetch_add(1);
    runtime::EmbeddingResult out;
    for (const runtime::EmbeddingInput& in : req.inputs) {
      int64_t n = static_cast<int64_t>(in.is_tokens ? in.tokens.size() : in.text.size());
      if (n > context_length_ && !req.truncate) {
        return Status::out_of_range("the input has " + std::to_string(n) +
                                    " tokens; the context holds " +
                                    std::to_string(context_length_));
      }
      n = std::min(n, context_length_);
      std::vector<float> e = {static_cast<float>(n), 1, 2, 3};
      runtime::l2_normalize(e);
      if (req.dimensions > 0) runtime::shorten_embedding(e, req.dimensions);
      out.embeddings.push_back(std::move(e));
      out.prompt_tokens += n;
    }
    return out;
  }

  void set_fail(Status st) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_ = std::move(st);
  }
  void set_fail_after_text(Status st) {
    std::lock_guard<std::mutex> lock(mu_);
    fail_after_text_ = std::move(st);
  }
  void set_output(std::string text) {
    std::lock_guard<std::mutex> lock(mu_);
    output_override_ = std::move(text);
  }
  runtime::CompletionRequest last() {
    std::lock_guard<std::mutex> lock(mu_);
    return last_;
  }

  std::atomic<bool> ready_{true};
  std::atomic<int> calls_{0};
  std::atomic<int> cancelled_{0};
  std::atomic<int> embed_calls_{0};
  int64_t context_length_ = 4096;

 private:
  std::mutex mu_;
  Status fail_;
  Status fail_after_text_;
  std::string output_override_;
  runtime::CompletionRequest last_;
};

}  // namespace cohort::api_test
