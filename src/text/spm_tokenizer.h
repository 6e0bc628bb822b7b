// SentencePiece-style ("llama") tokenizer, matching llama.cpp's SPM tokenizer:
//  - special-token pre-split: control, user-defined and unknown token texts are cut out of
//    the text first, longest text first (control/unknown only when parse_special; user-defined
//    always, as llama.cpp and HF tokenizers do);
//  - each remaining text fragment gets a "▁" prefix when add_space_prefix and it starts the
//    text or follows a special token, has ' ' replaced by "▁", is split into UTF-8 characters
//    and then greedily merged: the adjacent pair whose concatenation is a vocabulary piece
//    with the highest score goes first (ties: leftmost);
//  - a symbol that is not a vocabulary piece falls back to byte tokens "<0xXX>" (then to a
//    one-byte piece, then to the unknown token).
//
// Thread-safety: immutable after create(); share freely.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "core/status.h"
#include "text/tokenizer.h"

namespace cohort::text {

// Everything an SPM tokenizer is built from (what a GGUF's tokenizer.ggml.* keys hold).
struct SpmVocab {
  std::string name;                 // for messages: "tokenizer: <name>: ..."
  std::vector<std::string> pieces;  // token texts, id = index
  std::vector<float> scores;        // empty: all 0
  std::vector<TokenType> types;     // empty: all kNormal
  int32_t bos_id = -1;              // -1: none
  int32_t eos_id = -1;
  int32_t unk_id = -1;
  int32_t eot_id = -1;  // end of turn; -1: detected from well-known texts ("<|end|>", ...)
  int32_t eom_id = -1;  // end of message
  bool add_bos = true;
  bool add_space_prefix = true;
  // llama.cpp's Phi-3 quirk (general.name contains "phi3"/"phi-3"): whitespace right after a
  // special token other than <unk>, <s>, <|endoftext|> is dropped when pre-splitting.
  bool rstrip_after_special = false;
};

class SpmTokenizer final : public Tokenizer {
 public:
  // Validates the vocabulary (counts agree, ids in range, byte pieces well formed, no NaN
  // scores); a bad one gives kCorrupt / kInvalidArgument, never a crash.
  static Result<std::unique_ptr<SpmTokenizer>> create(SpmVocab vocab);

  SpmTokenizer(const SpmTokenizer&) = delete;  // piece_to_id_ points into pieces_
  SpmTokenizer& operator=(const SpmTokenizer&) = delete;

  std::vector<int32_t> encode(std::string_view text, bool add_bos,
                              bool parse_special) const override;
  // Out-of-range ids give "".
  std::string token_to_piece(int32_t id, bool render_special = false) const override;

  int32_t unk_id() const { return unk_id_; }
  float score(int32_t id) const { return scores_[id]; }  // id in [0, n_vocab)
  // Id of the exact piece text, or -1 (when a text repeats, the highest id wins, as in
  // llama.cpp).
  int32_t find_piece(std::string_view piece) const;

 private:
  SpmTokenizer() = default;
  Status init(SpmVocab vocab);
  void encode_fragment(std::string_view fragment, bool space_prefix,
                       std::vector<int32_t>& out) const;

  std::string name_;
  std::unordered_map<std::string_view, int32_t> piece_to_id_;
  std::vector<int32_t> special_ids_;       // control/user-defined/unknown, longest text first
  std::vector<uint8_t> rstrip_;            // per token: drop whitespace after it when splitting
  std::vector<int16_t> byte_value_;        // per token: the byte a kByte token stands for, or -1
  std::array<int32_t, 256> byte_to_id_{};  // fallback id per byte, -1 when none
  size_t max_piece_bytes_ = 0;
};

}  // namespace cohort::text
