#include "runtime/chat_renderer.h"

#include <utility>

namespace cohort::runtime {

Result<ChatRenderer> ChatRenderer::create(std::string_view source, std::string bos_token,
                                          std::string eos_token) {
  Result<text::ChatTemplate> parsed = text::ChatTemplate::parse(source);
  if (!parsed.is_ok()) {
    return Status::invalid_argument("chat: the model's chat template does not parse: " +
                                    parsed.status().message());
  }
  ChatRenderer r;
  r.source_ = std::string(source);
  r.template_ = std::move(parsed).value();
  r.bos_token_ = std::move(bos_token);
  r.eos_token_ = std::move(eos_token);
  return r;
}

Result<ChatRenderer> ChatRenderer::from_gguf(const format::GgufFile& file,
                                             const text::Tokenizer& tokenizer) {
  std::string_view source;
  if (auto t = file.get_string("tokenizer.chat_template")) source = *t;
  const auto token_text = [&](int32_t id) {
    return id >= 0 && id < tokenizer.n_vocab() ? tokenizer.piece(id) : std::string();
  };
  return create(source, token_text(tokenizer.bos_id()), token_text(tokenizer.eos_id()));
}

Result<std::string> ChatRenderer::render(const ChatPrompt& chat) const {
  nlohmann::ordered_json ctx = nlohmann::ordered_json::object();
  ctx["messages"] = chat.messages;
  if (!chat.tools.is_null()) ctx["tools"] = chat.tools;
  ctx["add_generation_prompt"] = chat.add_generation_prompt;
  ctx["bos_token"] = bos_token_;
  ctx["eos_token"] = eos_token_;
  if (chat.extra.is_object()) {
    for (const auto& [key, value] : chat.extra.items()) {
      if (!ctx.contains(key)) ctx[key] = value;
    }
  }
  Result<std::string> out = template_.render(ctx);
  if (!out.is_ok()) return Status::invalid_argument(out.status().message());
  return out;
}

}  // namespace cohort::runtime
