// Renders a ChatPrompt (runtime/engine.h) into prompt text with a model's chat template
// (text/chat_template.h), giving the template what Hugging Face's apply_chat_template
// gives it: messages, tools (when set), add_generation_prompt, bos_token, eos_token and the
// prompt's extra variables.
//
// Thread-safety: immutable after construction; render() may be called concurrently.
#pragma once

#include <string>
#include <string_view>

#include "core/status.h"
#include "format/gguf.h"
#include "runtime/engine.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace cohort::runtime {

class ChatRenderer {
 public:
  // The fallback format, without BOS/EOS texts.
  ChatRenderer() = default;

  // `source` empty selects the fallback format. Errors: the template does not parse.
  static Result<ChatRenderer> create(std::string_view source, std::string bos_token,
                                     std::string eos_token);
  // The file's tokenizer.chat_template (the fallback when absent), with the tokenizer's BOS
  // and EOS texts.
  static Result<ChatRenderer> from_gguf(const format::GgufFile& file,
                                        const text::Tokenizer& tokenizer);

  // kInvalidArgument (the template's own message) when the template refuses the prompt.
  Result<std::string> render(const ChatPrompt& chat) const;

  const std::string& source() const { return source_; }  // empty for the fallback

 private:
  std::string source_;
  text::ChatTemplate template_;
  std::string bos_token_;
  std::string eos_token_;
};

}  // namespace cohort::runtime
