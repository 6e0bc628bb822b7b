// The regex split a byte-level BPE vocabulary applies to text before merging, chosen by the
// GGUF key tokenizer.ggml.pre (llama.cpp's names: "llama-bpe", "qwen2", "gpt-2", ...).
//
// A family is a list of PCRE2 patterns applied in sequence, as llama.cpp's
// unicode_regex_split does: every pattern splits each piece the previous patterns left
// into its matches and the unmatched text between them (both are kept, so the pieces
// always concatenate back to the input). Each piece is matched on its own, so lookaheads
// such as \s+(?!\S) and the anchor $ see the end of the piece, not of the whole text.
//
// Patterns are the ones the models' tokenizer.json files use (PCRE2 runs them as written,
// including (?i:...), \p{Lu} and possessive quantifiers), except where llama.cpp splits in
// several steps (deepseek-*, falcon, starcoder, default), whose step lists are used as is.
// \s also matches U+0085 (NEXT LINE), as in llama.cpp and the Rust/Python regex engines.
//
// Input need not be valid UTF-8: every byte that is not part of a well-formed UTF-8
// sequence becomes a one-byte piece of its own before any pattern runs; the valid runs
// between them are matched with PCRE2_NO_UTF_CHECK.
//
// Thread-safety: immutable after creation; split() may run on many threads at once (each
// call uses its own match data).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cohort::text {

// What a tokenizer.ggml.pre name selects.
struct PreTokenizerFamily {
  std::string_view name;                   // canonical family name ("llama3", "gpt2", ...)
  std::vector<std::string_view> patterns;  // applied in order
  bool ignore_merges = false;  // a pre-token that is a whole vocabulary entry skips merging
  bool add_bos = false;        // the family's add_bos default when the GGUF does not say
};

// The family for a tokenizer.ggml.pre value, or nullptr when the name is not known.
// "" (key absent) and "default" give llama.cpp's default split.
const PreTokenizerFamily* find_pre_tokenizer_family(std::string_view pre);

class PreTokenizer {
 public:
  // The splitter for a tokenizer.ggml.pre value. An unknown name logs one warning and
  // falls back to the default family (never an error); context names the file in it.
  static Result<std::unique_ptr<PreTokenizer>> for_name(std::string_view pre,
                                                        std::string_view context = {});
  // A splitter from explicit patterns (tests, future families). Bad patterns give
  // kInvalidArgument with PCRE2's message and offset.
  static Result<std::unique_ptr<PreTokenizer>> from_patterns(
      std::string name, const std::vector<std::string_view>& patterns);

  ~PreTokenizer();
  PreTokenizer(const PreTokenizer&) = delete;
  PreTokenizer& operator=(const PreTokenizer&) = delete;

  // The pieces of text, in order, as views into text; they concatenate to text exactly.
  // Empty text gives no pieces.
  std::vector<std::string_view> split(std::string_view text) const;

  const std::string& name() const { return name_; }  // family name
  bool ignore_merges() const { return ignore_merges_; }
  bool add_bos_default() const { return add_bos_; }

 private:
  struct Regex;
  PreTokenizer();

  std::string name_;
  bool ignore_merges_ = false;
  bool add_bos_ = false;
  std::vector<std::unique_ptr<Regex>> regexes_;
};

namespace utf8 {
// Bytes in the well-formed UTF-8 sequence at s[0] (1..4), or 0 when s does not start with
// one (stray continuation, overlong form, surrogate, > U+10FFFF, truncated). s non-empty.
size_t valid_sequence_length(std::string_view s);
}  // namespace utf8

}  // namespace cohort::text
