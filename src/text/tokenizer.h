// Tokenizers built from a GGUF's tokenizer.ggml.* metadata: SentencePiece-style ("llama":
// score-ordered merges, byte fallback, the dummy prefix; text/spm_tokenizer.h) and byte-level
// BPE ("gpt2": ranked merges after a per-family PCRE2 pre-split; text/bpe_tokenizer.h).
//
// Thread-safety: a Tokenizer is immutable after construction; share it freely.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "format/gguf.h"

namespace cohort::text {

enum class TokenType : int32_t {  // tokenizer.ggml.token_type values
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

class Tokenizer {
 public:
  virtual ~Tokenizer() = default;

  // Builds the tokenizer the file's metadata describes; a clear Status when it is missing,
  // malformed or of a kind we do not implement.
  static Result<std::unique_ptr<Tokenizer>> from_gguf(const format::GgufFile& file);

  // Text -> ids. add_bos prepends BOS when the vocabulary has one; parse_special
  // recognises control/user-defined token texts ("<s>") inside text.
  virtual std::vector<int32_t> encode(std::string_view text, bool add_bos,
                                      bool parse_special) const = 0;
  // The bytes one token stands for (byte tokens give their byte, "▁" becomes a space,
  // control tokens give "" unless render_special).
  virtual std::string token_to_piece(int32_t id, bool render_special = false) const = 0;

  int32_t n_vocab() const { return static_cast<int32_t>(pieces_.size()); }
  int32_t bos_id() const { return bos_id_; }  // -1 when none
  int32_t eos_id() const { return eos_id_; }  // -1 when none
  // End of generation: EOS, EOT and similar end tokens.
  bool is_eog(int32_t id) const;
  const std::string& piece(int32_t id) const { return pieces_[id]; }  // raw vocabulary text
  TokenType token_type(int32_t id) const { return types_[id]; }
  std::string_view kind() const { return kind_; }  // "llama", "gpt2", ...
  bool add_bos_default() const { return add_bos_; }

 protected:
  std::string kind_;
  std::vector<std::string> pieces_;
  std::vector<float> scores_;
  std::vector<TokenType> types_;
  std::vector<int32_t> eog_ids_;
  int32_t bos_id_ = -1;
  int32_t eos_id_ = -1;
  int32_t unk_id_ = -1;
  bool add_bos_ = true;
  bool add_space_prefix_ = true;
};

// Streams ids to text without ever emitting half a UTF-8 character: push() returns the
// bytes that are complete so far, flush() whatever is left (invalid bytes included).
class Detokenizer {
 public:
  explicit Detokenizer(const Tokenizer& tok) : tok_(tok) {}
  std::string push(int32_t id);
  std::string flush();

 private:
  const Tokenizer& tok_;
  std::string pending_;
};

}  // namespace cohort::text
