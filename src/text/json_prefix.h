// An incremental check that bytes are the start of one JSON value (RFC 8259, strings in
// valid UTF-8 as RFC 3629 defines it: no overlong forms, no surrogates), for decoding
// constrained to JSON: a generated text is only ever extended by bytes that keep it a prefix
// of some valid JSON text. The state is a small fixed-size value (nesting is limited to
// kMaxDepth), so a caller can copy it to try a candidate token and throw the copy away.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace cohort::text {

class JsonPrefix {
 public:
  static constexpr int kMaxDepth = 32;
  // Whitespace bytes accepted in a row outside strings: a bound, so that a model cannot
  // spend its whole budget on indentation.
  static constexpr int kMaxWhitespaceRun = 2;

  // A value of any type, or only an object (what tool arguments and json_object need).
  // keys (optional, must outlive this and its copies): the only keys the top-level object
  // may have (a tool's parameter names); an empty list allows only {}. Keys are matched
  // byte for byte (no escapes).
  explicit JsonPrefix(bool object_only = false, const std::vector<std::string>* keys = nullptr);

  // Feeds bytes; false (and the state is then unusable) when no JSON text starts with the
  // bytes fed so far, or the value is already complete and the byte is not whitespace.
  bool feed(std::string_view bytes);
  bool feed(char c);
  // A whole value has been read. A top-level number is complete only once a byte after it
  // shows that it ended (JSON numbers have no terminator), so object_only avoids that case.
  bool complete() const { return mode_ == Mode::kDone; }
  bool failed() const { return mode_ == Mode::kFailed; }

 private:
  enum class Mode : uint8_t {
    kValue,         // before a value (after '[', ':', ',' in an array, or at the start)
    kValueOrClose,  // right after '[': a value or ']'
    kKeyOrClose,    // right after '{': a key or '}'
    kKey,           // after ',' in an object: a key
    kColon,         // after a key
    kAfterValue,    // after a value inside a container: ',' or the closing bracket
    kString,        // inside a string (key or value)
    kEscape,        // after a backslash
    kUnicode,       // inside \uXXXX (hex_left_ digits to go)
    kNumber,        // inside a number (num_ says where)
    kLiteral,       // inside true/false/null (literal_ and lit_pos_)
    kDone,          // the top-level value is complete
    kFailed,
  };
  enum class Num : uint8_t { kSign, kZero, kInt, kDot, kFrac, kExp, kExpSign, kExpDigits };

  bool value_start(char c);
  void end_value();  // a value just ended: back to its container, or done
  bool number(char c);
  bool whitespace(char c);
  bool utf8(unsigned char b);  // b continues valid UTF-8 inside a string
  bool key_allowed(char c);    // c continues (or with '"' ends) a top-level key that is allowed
  bool keys_limited() const { return keys_ != nullptr && depth_ == 1; }

  Mode mode_ = Mode::kValue;
  Num num_ = Num::kSign;
  bool object_only_ = false;
  bool string_is_key_ = false;
  uint8_t hex_left_ = 0;
  uint8_t lit_pos_ = 0;
  uint8_t ws_run_ = 0;
  uint8_t utf8_left_ = 0;                    // continuation bytes still due
  uint8_t utf8_lo_ = 0x80, utf8_hi_ = 0xBF;  // the range of the next one
  const char* literal_ = nullptr;
  int depth_ = 0;
  std::array<char, kMaxDepth> stack_{};  // '{' or '[' per open container
  const std::vector<std::string>* keys_ = nullptr;
  std::string key_;  // the top-level key being read, when keys_ limits them
};

}  // namespace cohort::text
