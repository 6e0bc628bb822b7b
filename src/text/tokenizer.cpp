// PLACEHOLDER: replaced by the real implementation.
#include "text/tokenizer.h"

namespace cohort::text {

Result<std::unique_ptr<Tokenizer>> Tokenizer::from_gguf(const format::GgufFile& file) {
  return Status::unsupported("tokenizer: " + file.name() + ": not implemented yet");
}
bool Tokenizer::is_eog(int32_t id) const { return id == eos_id_; }
std::string Detokenizer::push(int32_t id) { return tok_.token_to_piece(id); }
std::string Detokenizer::flush() { return {}; }

}  // namespace cohort::text
