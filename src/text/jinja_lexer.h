// Tokenizer for Jinja2 template source, with jinja2's whitespace rules.
//
// The source is split into data (text outside tags) and the tokens inside {{ }} and {% %};
// comments {# #} and {% raw %} blocks are resolved here. Whitespace control follows
// jinja2.lexer exactly: "{%-"/"-%}" strip all whitespace on that side, "+" disables
// lstrip/trim, trim_blocks removes one newline after a block or comment tag, lstrip_blocks
// removes spaces and tabs before a block or comment tag that starts its line. \r\n and \r
// become \n, and one trailing newline is dropped unless keep_trailing_newline.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"

namespace cohort::text::jinja {

enum class TokenKind {
  kData,        // text: the raw output text
  kVarBegin,    // {{
  kVarEnd,      // }}
  kBlockBegin,  // {%
  kBlockEnd,    // %}
  kName,        // identifiers and keywords (text)
  kString,      // text: the literal's value, escapes already decoded
  kInt,         // int_value
  kFloat,       // float_value
  kOp,          // text: + - * / // % ** ~ == != < <= > >= = . : | , ( ) [ ] { } ;
  kEnd,         // end of the template
};

struct Token {
  TokenKind kind = TokenKind::kEnd;
  std::string text;
  int line = 1;
  int64_t int_value = 0;
  double float_value = 0;
};

struct LexOptions {
  bool trim_blocks = true;
  bool lstrip_blocks = true;
  bool keep_trailing_newline = false;
};

// The whole token stream, ending with kEnd. Errors ("jinja: line N: ...") for unterminated
// tags, comments, strings and unexpected characters.
Result<std::vector<Token>> tokenize(std::string_view source, const LexOptions& options);

}  // namespace cohort::text::jinja
