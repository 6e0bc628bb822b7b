// Cutting special-token texts ("<s>", "<|im_end|>") out of input text before the normal
// tokenizer sees it: shared by the SentencePiece and byte-level BPE tokenizers.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "text/tokenizer.h"

namespace cohort::text {

// A piece of the input: a special token (id >= 0) or raw text [off, off + len).
struct TextFragment {
  int32_t id;
  size_t off;
  size_t len;
};

// Splits text around every occurrence of the tokens in special_ids (ordered longest text
// first, so longer texts win). Control and unknown tokens are recognised only with
// parse_special; user-defined ones always (llama.cpp's rule). rstrip, when given, marks
// tokens after which whitespace is dropped (indexed by token id).
std::vector<TextFragment> split_special_tokens(std::string_view text, bool parse_special,
                                               const std::vector<int32_t>& special_ids,
                                               const std::vector<std::string>& pieces,
                                               const std::vector<TokenType>& types,
                                               const std::vector<uint8_t>* rstrip = nullptr);

}  // namespace cohort::text
