#include "text/jinja_lexer.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>

#include "text/jinja_strings.h"

namespace cohort::text::jinja {
namespace {

enum class TagKind { kVar, kBlock, kComment };

// Byte length of the whitespace code point at pos (Python's \s), or 0.
size_t space_len_at(std::string_view s, size_t pos) {
  if (pos >= s.size()) return 0;
  const auto b = static_cast<uint8_t>(s[pos]);
  if (b < 0x80) return pystr::is_space(b) ? 1 : 0;
  const pystr::CodePoints d = pystr::decode(s.substr(pos, std::min<size_t>(4, s.size() - pos)));
  return pystr::is_space(d.cps[0]) ? d.offsets[1] : 0;
}

bool is_ident_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

class Lexer {
 public:
  Lexer(std::string source, const LexOptions& o) : src_(std::move(source)), o_(o) {}

  Result<std::vector<Token>> run() {
    while (pos_ < src_.size()) {
      const size_t at = find_tag(pos_);
      if (at == std::string::npos) {
        push_data(src_.substr(pos_), std::string_view(src_).substr(pos_));
        pos_ = src_.size();
        break;
      }
      COHORT_RETURN_IF_ERROR(lex_tag(at));
    }
    Token end;
    end.kind = TokenKind::kEnd;
    end.line = line_;
    out_.push_back(std::move(end));
    return std::move(out_);
  }

 private:
  Status error(const std::string& msg) const {
    return Status::invalid_argument("jinja: line " + std::to_string(line_) + ": " + msg);
  }

  size_t find_tag(size_t from) const {
    for (size_t i = src_.find('{', from); i != std::string::npos; i = src_.find('{', i + 1)) {
      if (i + 1 < src_.size() && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#'))
        return i;
    }
    return std::string::npos;
  }

  // Emits data (after stripping) and advances the line count over the original text.
  void push_data(std::string text, std::string_view original) {
    const int line = line_;
    for (char c : original) line_ += c == '\n';
    if (text.empty()) return;
    Token t;
    t.kind = TokenKind::kData;
    t.line = line;
    t.text = std::move(text);
    out_.push_back(std::move(t));
  }

  void push(TokenKind kind, std::string text = {}) {
    Token t;
    t.kind = kind;
    t.line = line_;
    t.text = std::move(text);
    out_.push_back(std::move(t));
  }

  // Applies "-" (strip all) or lstrip_blocks to the text before a tag.
  std::string strip_before(std::string text, char sign, bool lstrip_applies) const {
    if (sign == '-') return pystr::strip(text, std::nullopt, false, true);
    if (sign != '+' && o_.lstrip_blocks && lstrip_applies) {
      const size_t nl = text.rfind('\n');
      const size_t l_pos = nl == std::string::npos ? 0 : nl + 1;
      if ((l_pos > 0 || line_starting_) && l_pos < text.size()) {
        bool all_space = true;
        for (size_t i = l_pos; i < text.size();) {
          const size_t n = space_len_at(text, i);
          if (n == 0) {
            all_space = false;
            break;
          }
          i += n;
        }
        if (all_space) text.resize(l_pos);
      }
    }
    return text;
  }

  // Skips whitespace from pos_, counting lines; returns whether the last one was '\n'.
  bool skip_space() {
    bool last_nl = false;
    while (size_t n = space_len_at(src_, pos_)) {
      last_nl = src_[pos_] == '\n';
      line_ += last_nl;
      pos_ += n;
    }
    return last_nl;
  }

  // Consumes a block-style end ("+%}", "-%}\s*", "%}\n?") at pos_ if there is one.
  bool consume_block_end(char close) {
    const std::string end = std::string(1, close) + "}";
    if (src_.compare(pos_, 3, "+" + end) == 0) {
      pos_ += 3;
      line_starting_ = false;
      return true;
    }
    if (src_.compare(pos_, 3, "-" + end) == 0) {
      pos_ += 3;
      const bool nl = skip_space();
      line_starting_ = nl;
      return true;
    }
    if (src_.compare(pos_, 2, end) == 0) {
      pos_ += 2;
      line_starting_ = false;
      if (o_.trim_blocks && pos_ < src_.size() && src_[pos_] == '\n') {
        ++pos_;
        ++line_;
        line_starting_ = true;
      }
      return true;
    }
    return false;
  }

  Status lex_tag(size_t at) {
    const char c = src_[at + 1];
    const TagKind kind =
        c == '{' ? TagKind::kVar : (c == '%' ? TagKind::kBlock : TagKind::kComment);
    char sign = 0;
    if (at + 2 < src_.size() && (src_[at + 2] == '-' || src_[at + 2] == '+')) sign = src_[at + 2];
    const std::string_view before = std::string_view(src_).substr(pos_, at - pos_);
    const bool raw = kind == TagKind::kBlock && is_raw_begin(at + 2 + (sign ? 1 : 0));
    push_data(strip_before(std::string(before), sign, kind != TagKind::kVar), before);
    pos_ = at + 2 + (sign ? 1 : 0);
    if (raw) return lex_raw();
    line_starting_ = false;
    if (kind == TagKind::kComment) return lex_comment();
    push(kind == TagKind::kVar ? TokenKind::kVarBegin : TokenKind::kBlockBegin);
    return lex_expression(kind);
  }

  Status lex_comment() {
    const size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) return error("Missing end of comment tag");
    for (size_t i = pos_; i < end; ++i) line_ += src_[i] == '\n';
    const char before = end > pos_ ? src_[end - 1] : 0;
    pos_ = end - (before == '-' || before == '+' ? 1 : 0);
    if (!consume_block_end('#')) return error("Missing end of comment tag");
    return Status::ok();
  }

  // At p (after "{%" and its sign): \s* "raw" \s* ("-%}" | "%}").
  bool is_raw_begin(size_t p) const {
    while (size_t n = space_len_at(src_, p)) p += n;
    if (src_.compare(p, 3, "raw") != 0) return false;
    p += 3;
    if (p < src_.size() && is_ident_char(src_[p])) return false;
    while (size_t n = space_len_at(src_, p)) p += n;
    return src_.compare(p, 3, "-%}") == 0 || src_.compare(p, 2, "%}") == 0;
  }

  Status lex_raw() {
    // The opening tag gets no trim_blocks newline, as in jinja2.
    const size_t open_end = src_.find("%}", pos_);
    for (size_t i = pos_; i < open_end; ++i) line_ += src_[i] == '\n';
    pos_ = open_end + 2;
    line_starting_ = false;
    if (src_[open_end - 1] == '-') line_starting_ = skip_space();
    for (size_t at = src_.find("{%", pos_); at != std::string::npos; at = src_.find("{%", at + 1)) {
      size_t p = at + 2;
      char sign = 0;
      if (p < src_.size() && (src_[p] == '-' || src_[p] == '+')) sign = src_[p++];
      while (size_t n = space_len_at(src_, p)) p += n;
      if (src_.compare(p, 6, "endraw") != 0) continue;
      p += 6;
      while (size_t n = space_len_at(src_, p)) p += n;
      if (src_.compare(p, 3, "+%}") != 0 && src_.compare(p, 3, "-%}") != 0 &&
          src_.compare(p, 2, "%}") != 0) {
        continue;
      }
      const std::string_view text = std::string_view(src_).substr(pos_, at - pos_);
      push_data(strip_before(std::string(text), sign, true), text);
      for (size_t i = at; i < p; ++i) line_ += src_[i] == '\n';
      pos_ = p;
      consume_block_end('%');
      return Status::ok();
    }
    return error("Missing end of raw directive");
  }

  Status lex_expression(TagKind kind) {
    std::string brackets;
    while (true) {
      skip_space();
      if (pos_ >= src_.size()) return error("unexpected end of template inside a tag");
      if (brackets.empty()) {
        if (kind == TagKind::kBlock && consume_block_end('%')) {
          push(TokenKind::kBlockEnd);
          return Status::ok();
        }
        if (kind == TagKind::kVar) {
          if (src_.compare(pos_, 3, "-}}") == 0) {
            pos_ += 3;
            line_starting_ = skip_space();
            push(TokenKind::kVarEnd);
            return Status::ok();
          }
          if (src_.compare(pos_, 2, "}}") == 0) {
            pos_ += 2;
            line_starting_ = false;
            push(TokenKind::kVarEnd);
            return Status::ok();
          }
        }
      }
      COHORT_RETURN_IF_ERROR(lex_token(brackets));
    }
  }

  Status lex_token(std::string& brackets) {
    const char c = src_[pos_];
    if (is_digit(c)) return lex_number();
    if (is_ident_start(c)) {
      size_t e = pos_;
      while (e < src_.size() && is_ident_char(src_[e])) ++e;
      push(TokenKind::kName, src_.substr(pos_, e - pos_));
      pos_ = e;
      return Status::ok();
    }
    if (c == '\'' || c == '"') return lex_string();
    static const char* const kTwo[] = {"//", "**", "==", "!=", ">=", "<="};
    for (const char* op : kTwo) {
      if (src_.compare(pos_, 2, op) == 0) {
        push(TokenKind::kOp, op);
        pos_ += 2;
        return Status::ok();
      }
    }
    static const std::string kOne = "+-/*%~[](){}><=.:|,;";
    if (kOne.find(c) == std::string::npos) {
      return error(std::string("unexpected char '") + c + "'");
    }
    if (c == '(' || c == '[' || c == '{') {
      brackets += c == '(' ? ')' : (c == '[' ? ']' : '}');
    } else if (c == ')' || c == ']' || c == '}') {
      if (brackets.empty()) return error(std::string("unexpected '") + c + "'");
      if (brackets.back() != c) {
        return error(std::string("unexpected '") + c + "', expected '" + brackets.back() + "'");
      }
      brackets.pop_back();
    }
    push(TokenKind::kOp, std::string(1, c));
    ++pos_;
    return Status::ok();
  }

  // Digits with optional single underscores between them, from p; returns the end.
  size_t scan_digits(size_t p, int (*digit)(char)) const {
    size_t e = p;
    while (e < src_.size()) {
      if (digit(src_[e]) >= 0) {
        ++e;
      } else if (src_[e] == '_' && e > p && e + 1 < src_.size() && digit(src_[e + 1]) >= 0) {
        ++e;
      } else {
        break;
      }
    }
    return e;
  }

  Status lex_number() {
    static auto dec = [](char ch) { return is_digit(ch) ? ch - '0' : -1; };
    const size_t start = pos_;
    auto strip_us = [](std::string s) {
      std::string r;
      for (char ch : s) {
        if (ch != '_') r += ch;
      }
      return r;
    };
    // Prefixed integers.
    if (src_[pos_] == '0' && pos_ + 1 < src_.size()) {
      const char p = static_cast<char>(src_[pos_ + 1] | 0x20);
      int base = p == 'x' ? 16 : (p == 'o' ? 8 : (p == 'b' ? 2 : 0));
      if (base) {
        size_t e = pos_ + 2;
        while (e < src_.size() && (hex_value(src_[e]) >= 0 || src_[e] == '_') &&
               (src_[e] == '_' || hex_value(src_[e]) < base)) {
          ++e;
        }
        if (e > pos_ + 2) {
          const std::string digits = strip_us(src_.substr(pos_ + 2, e - pos_ - 2));
          errno = 0;
          const long long v = std::strtoll(digits.c_str(), nullptr, base);
          if (errno == ERANGE) return error("integer literal too large");
          Token t;
          t.kind = TokenKind::kInt;
          t.line = line_;
          t.int_value = v;
          out_.push_back(t);
          pos_ = e;
          return Status::ok();
        }
      }
    }
    size_t e = scan_digits(pos_, dec);
    bool is_float = false;
    const bool after_dot = start > 0 && src_[start - 1] == '.';
    if (!after_dot) {
      size_t f = e;
      if (f + 1 < src_.size() && src_[f] == '.' && is_digit(src_[f + 1])) {
        f = scan_digits(f + 1, dec);
        is_float = true;
      }
      if (f < src_.size() && (src_[f] == 'e' || src_[f] == 'E')) {
        size_t g = f + 1;
        if (g < src_.size() && (src_[g] == '+' || src_[g] == '-')) ++g;
        if (g < src_.size() && is_digit(src_[g])) {
          f = scan_digits(g, dec);
          is_float = true;
        }
      }
      if (is_float) e = f;
    }
    const std::string text = strip_us(src_.substr(start, e - start));
    Token t;
    t.line = line_;
    if (is_float) {
      t.kind = TokenKind::kFloat;
      t.float_value = std::strtod(text.c_str(), nullptr);
    } else {
      t.kind = TokenKind::kInt;
      errno = 0;
      t.int_value = std::strtoll(text.c_str(), nullptr, 10);
      if (errno == ERANGE) return error("integer literal too large");
    }
    out_.push_back(std::move(t));
    pos_ = e;
    return Status::ok();
  }

  Status lex_string() {
    const char q = src_[pos_];
    size_t e = pos_ + 1;
    while (e < src_.size() && src_[e] != q) {
      if (src_[e] == '\\') ++e;
      ++e;
    }
    if (e >= src_.size()) return error("unexpected end of string literal");
    const std::string raw = src_.substr(pos_ + 1, e - pos_ - 1);
    std::string value;
    COHORT_RETURN_IF_ERROR(unescape(raw, &value));
    Token t;
    t.kind = TokenKind::kString;
    t.line = line_;
    t.text = std::move(value);
    out_.push_back(std::move(t));
    for (char ch : raw) line_ += ch == '\n';
    pos_ = e + 1;
    return Status::ok();
  }

  // Python's "unicode-escape" decoding of a string literal's body.
  Status unescape(const std::string& raw, std::string* out) const {
    for (size_t i = 0; i < raw.size(); ++i) {
      if (raw[i] != '\\' || i + 1 >= raw.size()) {
        *out += raw[i];
        continue;
      }
      const char c = raw[++i];
      switch (c) {
        case '\n':
          break;
        case '\\':
        case '\'':
        case '"':
          *out += c;
          break;
        case 'a':
          *out += '\a';
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        case 'v':
          *out += '\v';
          break;
        case 'x':
        case 'u':
        case 'U': {
          const size_t n = c == 'x' ? 2 : (c == 'u' ? 4 : 8);
          uint32_t cp = 0;
          for (size_t k = 0; k < n; ++k) {
            const int h = i + 1 + k < raw.size() ? hex_value(raw[i + 1 + k]) : -1;
            if (h < 0) return error(std::string("truncated \\") + c + " escape in string literal");
            cp = cp * 16 + static_cast<uint32_t>(h);
          }
          if (cp > 0x10FFFF) return error("illegal Unicode character in string literal");
          pystr::append_utf8(*out, cp);
          i += n;
          break;
        }
        default:
          if (c >= '0' && c <= '7') {
            uint32_t cp = 0;
            size_t k = 0;
            while (k < 3 && i + k < raw.size() && raw[i + k] >= '0' && raw[i + k] <= '7') {
              cp = cp * 8 + static_cast<uint32_t>(raw[i + k] - '0');
              ++k;
            }
            pystr::append_utf8(*out, cp);
            i += k - 1;
          } else {
            *out += '\\';
            *out += c;
          }
      }
    }
    return Status::ok();
  }

  std::string src_;
  const LexOptions& o_;
  size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;
  std::vector<Token> out_;
};

std::string normalize_newlines(std::string_view s, bool keep_trailing_newline) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\r') {
      out += '\n';
      if (i + 1 < s.size() && s[i + 1] == '\n') ++i;
    } else {
      out += s[i];
    }
  }
  if (!keep_trailing_newline && !out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace

Result<std::vector<Token>> tokenize(std::string_view source, const LexOptions& options) {
  Lexer lexer(normalize_newlines(source, options.keep_trailing_newline), options);
  return lexer.run();
}

}  // namespace cohort::text::jinja
