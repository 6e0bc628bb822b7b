// Byte-level BPE ("gpt2") tokenizer, matching llama.cpp's BPE tokenizer and Hugging Face's
// ByteLevel BPE:
//  - special-token pre-split: control, user-defined and unknown token texts are cut out of
//    the text first, longest text first (control/unknown only when parse_special;
//    user-defined always, as llama.cpp and HF's added tokens do);
//  - each remaining fragment is split by the pre-tokenizer tokenizer.ggml.pre selects
//    (text/pretokenizer.h);
//  - each pre-token's bytes become GPT-2's printable code points (byte_to_codepoint), one
//    symbol per byte, and the adjacent pair with the lowest merge rank (index in
//    tokenizer.ggml.merges) is merged until none applies (ties: leftmost). Families with
//    ignore_merges (llama3, tekken) emit a pre-token that is a whole vocabulary entry as is;
//  - a byte whose code point is not in the vocabulary becomes the unknown token, or is
//    dropped when there is none.
// Decoding maps the code points of normal tokens back to bytes; user-defined tokens give
// their text as is; control/unknown tokens give "" unless render_special.
//
// Differences from llama.cpp, on purpose: bytes that are not valid UTF-8 are kept (each is
// its own pre-token, so byte-level vocabularies round-trip arbitrary bytes) where llama.cpp
// turns them into U+FFFD; bos/eos default to none (llama.cpp: id 11) when the GGUF has no
// id; encode() never appends EOS (add_eos_default() says whether the vocabulary wants it).
//
// Thread-safety: immutable after create(); share freely.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "text/pretokenizer.h"
#include "text/tokenizer.h"

namespace cohort::text {

// GPT-2's byte <-> printable code point table: bytes '!'..'~', 0xA1..0xAC and 0xAE..0xFF
// stand for themselves, the other 68 bytes for U+0100.. in byte order.
uint32_t byte_to_codepoint(uint8_t b);
// The byte a code point stands for, or -1 when it is not in the table.
int codepoint_to_byte(uint32_t cp);

// Everything a byte-level BPE tokenizer is built from (what a GGUF's tokenizer.ggml.* keys
// hold).
struct BpeVocab {
  std::string name;                 // for messages: "tokenizer: <name>: ..."
  std::vector<std::string> pieces;  // token texts (byte-level encoded), id = index
  std::vector<TokenType> types;     // empty: all kNormal
  std::vector<std::string> merges;  // "left right", rank = index
  std::string pre;                  // tokenizer.ggml.pre ("" when absent)
  int32_t bos_id = -1;              // -1: none
  int32_t eos_id = -1;
  int32_t unk_id = -1;
  int32_t eot_id = -1;  // end of turn; -1: detected from well-known texts ("<|im_end|>", ...)
  int32_t eom_id = -1;  // end of message; -1: "<|eom_id|>" when present
  int32_t pad_id = -1;
  int add_bos = -1;  // 1/0 from the file; -1: the pre-tokenizer family's default
  bool add_eos = false;
};

class BpeTokenizer final : public Tokenizer {
 public:
  // Validates the vocabulary (counts agree, ids in range, every merge is two vocabulary
  // tokens whose concatenation is one too); a bad one gives kCorrupt, never a crash.
  static Result<std::unique_ptr<BpeTokenizer>> create(BpeVocab vocab);

  BpeTokenizer(const BpeTokenizer&) = delete;
  BpeTokenizer& operator=(const BpeTokenizer&) = delete;

  std::vector<int32_t> encode(std::string_view text, bool add_bos,
                              bool parse_special) const override;
  // Out-of-range ids give "".
  std::string token_to_piece(int32_t id, bool render_special = false) const override;

  int32_t unk_id() const { return unk_id_; }
  bool add_eos_default() const { return add_eos_; }
  // Id of the exact piece text, or -1 (a repeated text maps to its highest id).
  int32_t find_piece(std::string_view piece) const;
  // The token of a lone byte's code point (-1 when none: encoding gives the unknown token).
  int32_t byte_token(uint8_t b) const { return byte_to_id_[b]; }
  const PreTokenizer& pre_tokenizer() const { return *pre_; }

 private:
  struct Merge {
    uint64_t key;    // left id << 32 | right id
    int32_t rank;    // -1: empty slot
    int32_t result;  // the merged token
  };
  // Piece text -> id: open addressing over (hash, id) slots, the texts stay in pieces_.
  // (A node-based map costs a cache miss more per lookup, which 100k-merge vocabularies
  // pay a few hundred thousand times while loading.)
  struct Slot {
    uint32_t hash;
    int32_t id;  // -1: empty
  };

  BpeTokenizer() = default;
  Status init(BpeVocab vocab);
  // One pre-token (raw bytes) -> ids.
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;
  const Merge* find_merge(int32_t left, int32_t right) const;

  std::string name_;
  std::unique_ptr<PreTokenizer> pre_;
  std::vector<Slot> slots_;           // size a power of two, at most half full
  std::vector<Merge> merges_;         // open addressing, size a power of two, at most half full
  std::vector<int32_t> special_ids_;  // control/user-defined/unknown, longest first
  std::array<int32_t, 256> byte_to_id_{};
  bool add_eos_ = false;
};

}  // namespace cohort::text
