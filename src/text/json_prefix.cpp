#include "text/json_prefix.h"

#include <cstring>

namespace cohort::text {
namespace {

bool is_ws(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool is_ascii_digit(char c) { return c >= '0' && c <= '9'; }
bool is_hex(char c) {
  return is_ascii_digit(c) || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

}  // namespace

JsonPrefix::JsonPrefix(bool object_only, const std::vector<std::string>* keys)
    : object_only_(object_only), keys_(keys) {}

bool JsonPrefix::utf8(unsigned char b) {
  if (utf8_left_ > 0) {
    if (b < utf8_lo_ || b > utf8_hi_) return false;
    --utf8_left_;
    utf8_lo_ = 0x80;
    utf8_hi_ = 0xBF;
    return true;
  }
  if (b < 0x80) return true;
  // The lead byte fixes the length and the range of the first continuation byte.
  if (b >= 0xC2 && b <= 0xDF) {
    utf8_left_ = 1;
  } else if (b >= 0xE0 && b <= 0xEF) {
    utf8_left_ = 2;
    if (b == 0xE0) utf8_lo_ = 0xA0;  // no overlong forms
    if (b == 0xED) utf8_hi_ = 0x9F;  // no surrogates
  } else if (b >= 0xF0 && b <= 0xF4) {
    utf8_left_ = 3;
    if (b == 0xF0) utf8_lo_ = 0x90;
    if (b == 0xF4) utf8_hi_ = 0x8F;  // nothing above U+10FFFF
  } else {
    return false;
  }
  return true;
}

bool JsonPrefix::key_allowed(char c) {
  if (c == '\\') return false;
  if (c != '"') key_ += c;
  for (const std::string& k : *keys_) {
    if (c == '"' ? k == key_ : k.compare(0, key_.size(), key_) == 0) return true;
  }
  return false;
}

bool JsonPrefix::feed(std::string_view bytes) {
  for (char c : bytes) {
    if (!feed(c)) return false;
  }
  return true;
}

bool JsonPrefix::whitespace(char c) {
  if (!is_ws(c)) {
    ws_run_ = 0;
    return false;
  }
  if (++ws_run_ > kMaxWhitespaceRun) mode_ = Mode::kFailed;
  return true;
}

void JsonPrefix::end_value() { mode_ = depth_ == 0 ? Mode::kDone : Mode::kAfterValue; }

bool JsonPrefix::value_start(char c) {
  if (object_only_ && depth_ == 0 && c != '{') return false;
  switch (c) {
    case '{':
    case '[':
      if (depth_ == kMaxDepth) return false;
      stack_[depth_++] = c;
      mode_ = c == '{' ? Mode::kKeyOrClose : Mode::kValueOrClose;
      return true;
    case '"':
      mode_ = Mode::kString;
      string_is_key_ = false;
      return true;
    case 't':
    case 'f':
    case 'n':
      literal_ = c == 't' ? "true" : c == 'f' ? "false" : "null";
      lit_pos_ = 1;
      mode_ = Mode::kLiteral;
      return true;
    case '-':
      mode_ = Mode::kNumber;
      num_ = Num::kSign;
      return true;
    default:
      if (!is_ascii_digit(c)) return false;
      mode_ = Mode::kNumber;
      num_ = c == '0' ? Num::kZero : Num::kInt;
      return true;
  }
}

// A byte in a number, or the byte right after it (which ends it and is then read in the
// surrounding context).
bool JsonPrefix::number(char c) {
  const bool digit = is_ascii_digit(c);
  switch (num_) {
    case Num::kSign:
      if (!digit) return false;
      num_ = c == '0' ? Num::kZero : Num::kInt;
      return true;
    case Num::kInt:
      if (digit) return true;
      [[fallthrough]];
    case Num::kZero:
      if (c == '.') {
        num_ = Num::kDot;
        return true;
      }
      if (c == 'e' || c == 'E') {
        num_ = Num::kExp;
        return true;
      }
      break;  // the number ended before c
    case Num::kDot:
      if (!digit) return false;
      num_ = Num::kFrac;
      return true;
    case Num::kFrac:
      if (digit) return true;
      if (c == 'e' || c == 'E') {
        num_ = Num::kExp;
        return true;
      }
      break;
    case Num::kExp:
      if (c == '+' || c == '-') {
        num_ = Num::kExpSign;
        return true;
      }
      [[fallthrough]];
    case Num::kExpSign:
      if (!digit) return false;
      num_ = Num::kExpDigits;
      return true;
    case Num::kExpDigits:
      if (digit) return true;
      break;
  }
  end_value();
  return feed(c);
}

bool JsonPrefix::feed(char c) {
  switch (mode_) {
    case Mode::kFailed:
      return false;
    case Mode::kDone:
      if (!whitespace(c)) mode_ = Mode::kFailed;
      break;
    case Mode::kValue:
      if (whitespace(c)) break;
      if (!value_start(c)) mode_ = Mode::kFailed;
      break;
    case Mode::kValueOrClose:
      if (whitespace(c)) break;
      if (c == ']') {
        --depth_;
        end_value();
      } else if (!value_start(c)) {
        mode_ = Mode::kFailed;
      }
      break;
    case Mode::kKeyOrClose:
    case Mode::kKey:
      if (whitespace(c)) break;
      if (c == '}' && mode_ == Mode::kKeyOrClose) {
        --depth_;
        end_value();
      } else if (c == '"' && !(keys_limited() && keys_->empty())) {
        mode_ = Mode::kString;
        string_is_key_ = true;
        key_.clear();
      } else {
        mode_ = Mode::kFailed;
      }
      break;
    case Mode::kColon:
      if (whitespace(c)) break;
      mode_ = c == ':' ? Mode::kValue : Mode::kFailed;
      break;
    case Mode::kAfterValue: {
      if (whitespace(c)) break;
      const char open = stack_[depth_ - 1];
      if (c == ',') {
        mode_ = open == '{' ? Mode::kKey : Mode::kValue;
      } else if ((open == '{' && c == '}') || (open == '[' && c == ']')) {
        --depth_;
        end_value();
      } else {
        mode_ = Mode::kFailed;
      }
      break;
    }
    case Mode::kString:
      ws_run_ = 0;
      if (!utf8(static_cast<unsigned char>(c)) ||
          (string_is_key_ && keys_limited() && !key_allowed(c))) {
        mode_ = Mode::kFailed;
      } else if (utf8_left_ > 0 || static_cast<unsigned char>(c) >= 0x80) {
        // inside a multi-byte character: text
      } else if (c == '"') {
        if (string_is_key_) {
          mode_ = Mode::kColon;
        } else {
          end_value();
        }
      } else if (c == '\\') {
        mode_ = Mode::kEscape;
      } else if (static_cast<unsigned char>(c) < 0x20) {
        mode_ = Mode::kFailed;  // control characters must be escaped
      }
      break;
    case Mode::kEscape:
      if (c == 'u') {
        mode_ = Mode::kUnicode;
        hex_left_ = 4;
      } else if (std::strchr("\"\\/bfnrt", c) != nullptr && c != '\0') {
        mode_ = Mode::kString;
      } else {
        mode_ = Mode::kFailed;
      }
      break;
    case Mode::kUnicode:
      if (!is_hex(c)) {
        mode_ = Mode::kFailed;
      } else if (--hex_left_ == 0) {
        mode_ = Mode::kString;
      }
      break;
    case Mode::kNumber:
      ws_run_ = 0;
      if (!number(c)) mode_ = Mode::kFailed;
      break;
    case Mode::kLiteral:
      if (literal_[lit_pos_] != c) {
        mode_ = Mode::kFailed;
      } else if (literal_[++lit_pos_] == '\0') {
        end_value();
      }
      break;
  }
  return mode_ != Mode::kFailed;
}

}  // namespace cohort::text
