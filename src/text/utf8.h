// Minimal UTF-8 helpers for the tokenizers. They never validate: bytes that are not valid
// UTF-8 pass through as themselves, because tokenizers must round-trip arbitrary bytes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace cohort::text::utf8 {

// Bytes in the sequence a lead byte announces, judged by its top four bits only (as
// llama.cpp's unicode_len_utf8): ASCII and stray continuation bytes count as 1, 0xF8..0xFF
// as 4. Callers clamp to the bytes actually left.
inline size_t sequence_length(uint8_t lead) {
  static constexpr uint8_t kLengths[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLengths[lead >> 4];
}

// Length of the longest prefix of s that does not end inside an unfinished multi-byte
// sequence: only a well-formed lead byte (0xC0..0xF7) near the end whose continuation bytes
// have not all arrived yet is held back. Invalid bytes count as complete.
inline size_t complete_prefix(std::string_view s) {
  const size_t n = s.size();
  for (size_t k = 1; k <= 4 && k <= n; ++k) {
    const auto c = static_cast<uint8_t>(s[n - k]);
    if ((c & 0xC0) == 0x80) continue;  // continuation byte: keep looking for its lead
    size_t need = 1;
    if (c >= 0xC0 && c < 0xE0) {
      need = 2;
    } else if (c >= 0xE0 && c < 0xF0) {
      need = 3;
    } else if (c >= 0xF0 && c < 0xF8) {
      need = 4;
    }
    return need > k ? n - k : n;
  }
  return n;
}

}  // namespace cohort::text::utf8
