#include "text/jinja_strings.h"

#include <algorithm>
#include <cstdio>

#include "core/markup_escape.h"

namespace cohort::text::jinja::pystr {
namespace {

// Invalid bytes decode to U+DC80..U+DCFF (Python's surrogateescape) so that re-encoding
// writes the original byte back.
constexpr uint32_t kEscapeBase = 0xDC00;

size_t decode_one(std::string_view s, size_t i, uint32_t* cp) {
  const auto b0 = static_cast<uint8_t>(s[i]);
  if (b0 < 0x80) {
    *cp = b0;
    return 1;
  }
  size_t need = 0;
  uint32_t v = 0;
  uint32_t min = 0;
  if (b0 >= 0xC2 && b0 < 0xE0) {
    need = 1, v = b0 & 0x1F, min = 0x80;
  } else if (b0 >= 0xE0 && b0 < 0xF0) {
    need = 2, v = b0 & 0x0F, min = 0x800;
  } else if (b0 >= 0xF0 && b0 < 0xF5) {
    need = 3, v = b0 & 0x07, min = 0x10000;
  }
  if (need == 0 || i + need >= s.size()) {
    *cp = kEscapeBase + b0;
    return 1;
  }
  for (size_t k = 1; k <= need; ++k) {
    const auto b = static_cast<uint8_t>(s[i + k]);
    if ((b & 0xC0) != 0x80) {
      *cp = kEscapeBase + b0;
      return 1;
    }
    v = (v << 6) | (b & 0x3F);
  }
  if (v < min || v > 0x10FFFF || (v >= 0xD800 && v < 0xE000)) {
    *cp = kEscapeBase + b0;
    return 1;
  }
  *cp = v;
  return need + 1;
}

bool in_chars(uint32_t cp, const std::vector<uint32_t>& set) {
  return std::find(set.begin(), set.end(), cp) != set.end();
}

bool is_line_break(uint32_t cp) {
  return cp == '\n' || cp == '\r' || cp == 0x0B || cp == 0x0C || (cp >= 0x1C && cp <= 0x1E) ||
         cp == 0x85 || cp == 0x2028 || cp == 0x2029;
}

bool is_printable(uint32_t cp) {
  if (cp < 0x20 || (cp >= 0x7F && cp <= 0xA0) || cp == 0xAD) return false;
  if (cp >= 0xD800 && cp <= 0xF8FF) return false;  // surrogates, private use
  if (cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200F) || (cp >= 0x2028 && cp <= 0x202F) ||
      (cp >= 0x205F && cp <= 0x206F) || cp == 0x3000 || cp == 0xFEFF ||
      (cp >= 0xFFF9 && cp <= 0xFFFB) || cp == 0x061C || cp == 0x180E) {
    return false;
  }
  return cp <= 0x10FFFF;
}

std::string map_code_points(std::string_view s, uint32_t (*fn)(uint32_t)) {
  std::string out;
  out.reserve(s.size());
  for (uint32_t cp : decode(s).cps) append_utf8(out, fn(cp));
  return out;
}

bool is_cased(uint32_t cp) { return is_cased_upper(cp) || is_cased_lower(cp); }

}  // namespace

CodePoints decode(std::string_view s) {
  CodePoints r;
  r.cps.reserve(s.size());
  r.offsets.reserve(s.size() + 1);
  size_t i = 0;
  while (i < s.size()) {
    uint32_t cp = 0;
    const size_t n = decode_one(s, i, &cp);
    r.cps.push_back(cp);
    r.offsets.push_back(i);
    i += n;
  }
  r.offsets.push_back(s.size());
  return r;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp >= kEscapeBase + 0x80 && cp <= kEscapeBase + 0xFF) {
    out += static_cast<char>(cp - kEscapeBase);
  } else if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

bool is_ascii(std::string_view s) {
  return std::all_of(s.begin(), s.end(), [](char c) { return static_cast<uint8_t>(c) < 0x80; });
}

size_t count_code_points(std::string_view s) {
  return is_ascii(s) ? s.size() : decode(s).cps.size();
}

std::string code_point_at(std::string_view s, int64_t i) {
  if (is_ascii(s)) return std::string(1, s[static_cast<size_t>(i)]);
  const CodePoints d = decode(s);
  const auto k = static_cast<size_t>(i);
  return std::string(s.substr(d.offsets[k], d.offsets[k + 1] - d.offsets[k]));
}

std::vector<int64_t> slice_indices(int64_t n, std::optional<int64_t> start,
                                   std::optional<int64_t> stop, int64_t step) {
  auto clamp = [n, step](std::optional<int64_t> v, bool is_start) -> int64_t {
    if (!v) {
      if (step > 0) return is_start ? 0 : n;
      return is_start ? n - 1 : -1;
    }
    int64_t x = *v;
    if (x < 0) {
      x += n;
      if (x < 0) x = step > 0 ? 0 : -1;
    } else if (x >= n) {
      x = step > 0 ? n : n - 1;
    }
    return x;
  };
  const int64_t b = clamp(start, true);
  const int64_t e = clamp(stop, false);
  std::vector<int64_t> r;
  if (step > 0) {
    for (int64_t i = b; i < e; i += step) r.push_back(i);
  } else {
    for (int64_t i = b; i > e; i += step) r.push_back(i);
  }
  return r;
}

std::string slice(std::string_view s, std::optional<int64_t> start, std::optional<int64_t> stop,
                  int64_t step) {
  const CodePoints d = decode(s);
  const auto idx = slice_indices(static_cast<int64_t>(d.cps.size()), start, stop, step);
  std::string out;
  if (step == 1 && !idx.empty()) {
    const size_t b = d.offsets[static_cast<size_t>(idx.front())];
    const size_t e = d.offsets[static_cast<size_t>(idx.back()) + 1];
    return std::string(s.substr(b, e - b));
  }
  for (int64_t i : idx) {
    const auto k = static_cast<size_t>(i);
    out.append(s.substr(d.offsets[k], d.offsets[k + 1] - d.offsets[k]));
  }
  return out;
}

bool is_space(uint32_t cp) {
  return (cp >= 0x09 && cp <= 0x0D) || (cp >= 0x1C && cp <= 0x20) || cp == 0x85 || cp == 0xA0 ||
         cp == 0x1680 || (cp >= 0x2000 && cp <= 0x200A) || cp == 0x2028 || cp == 0x2029 ||
         cp == 0x202F || cp == 0x205F || cp == 0x3000;
}

std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left,
                  bool right) {
  const CodePoints d = decode(s);
  std::vector<uint32_t> set;
  if (chars) set = decode(*chars).cps;
  auto strippable = [&](uint32_t cp) { return chars ? in_chars(cp, set) : is_space(cp); };
  size_t b = 0;
  size_t e = d.cps.size();
  if (left) {
    while (b < e && strippable(d.cps[b])) ++b;
  }
  if (right) {
    while (e > b && strippable(d.cps[e - 1])) --e;
  }
  return std::string(s.substr(d.offsets[b], d.offsets[e] - d.offsets[b]));
}

std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep,
                               int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t pos = 0;
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      const size_t at = s.find(*sep, pos);
      if (at == std::string_view::npos) break;
      out.emplace_back(s.substr(pos, at - pos));
      pos = at + sep->size();
    }
    out.emplace_back(s.substr(pos));
    return out;
  }
  const CodePoints d = decode(s);
  const size_t n = d.cps.size();
  size_t i = 0;
  while (true) {
    while (i < n && is_space(d.cps[i])) ++i;
    if (i >= n) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
      out.emplace_back(s.substr(d.offsets[i]));
      break;
    }
    size_t j = i;
    while (j < n && !is_space(d.cps[j])) ++j;
    out.emplace_back(s.substr(d.offsets[i], d.offsets[j] - d.offsets[i]));
    i = j;
  }
  return out;
}

std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep,
                                int64_t maxsplit) {
  std::vector<std::string> out;
  if (sep) {
    size_t end = s.size();
    while (maxsplit < 0 || static_cast<int64_t>(out.size()) < maxsplit) {
      if (end < sep->size()) break;
      const size_t at = s.substr(0, end).rfind(*sep);
      if (at == std::string_view::npos) break;
      out.emplace_back(s.substr(at + sep->size(), end - at - sep->size()));
      end = at;
    }
    out.emplace_back(s.substr(0, end));
    std::reverse(out.begin(), out.end());
    return out;
  }
  const CodePoints d = decode(s);
  size_t j = d.cps.size();
  while (true) {
    while (j > 0 && is_space(d.cps[j - 1])) --j;
    if (j == 0) break;
    if (maxsplit >= 0 && static_cast<int64_t>(out.size()) >= maxsplit) {
      out.emplace_back(s.substr(0, d.offsets[j]));
      break;
    }
    size_t i = j;
    while (i > 0 && !is_space(d.cps[i - 1])) --i;
    out.emplace_back(s.substr(d.offsets[i], d.offsets[j] - d.offsets[i]));
    j = i;
  }
  std::reverse(out.begin(), out.end());
  return out;
}

std::vector<std::string> splitlines(std::string_view s, bool keepends) {
  const CodePoints d = decode(s);
  std::vector<std::string> out;
  size_t start = 0;
  size_t i = 0;
  while (i < d.cps.size()) {
    if (!is_line_break(d.cps[i])) {
      ++i;
      continue;
    }
    size_t end_break = i + 1;
    if (d.cps[i] == '\r' && end_break < d.cps.size() && d.cps[end_break] == '\n') ++end_break;
    const size_t stop = keepends ? end_break : i;
    out.emplace_back(s.substr(d.offsets[start], d.offsets[stop] - d.offsets[start]));
    start = i = end_break;
  }
  if (start < d.cps.size()) out.emplace_back(s.substr(d.offsets[start]));
  return out;
}

std::string replace(std::string_view s, std::string_view old_s, std::string_view new_s,
                    int64_t count_limit) {
  std::string out;
  if (old_s.empty()) {
    // Python inserts new_s between every code point and at both ends.
    const CodePoints d = decode(s);
    int64_t done = 0;
    for (size_t k = 0; k <= d.cps.size(); ++k) {
      if (count_limit < 0 || done < count_limit) {
        out.append(new_s);
        ++done;
      }
      if (k < d.cps.size()) out.append(s.substr(d.offsets[k], d.offsets[k + 1] - d.offsets[k]));
    }
    return out;
  }
  size_t pos = 0;
  int64_t done = 0;
  while (count_limit < 0 || done < count_limit) {
    const size_t at = s.find(old_s, pos);
    if (at == std::string_view::npos) break;
    out.append(s.substr(pos, at - pos));
    out.append(new_s);
    pos = at + old_s.size();
    ++done;
  }
  out.append(s.substr(pos));
  return out;
}

int64_t find(std::string_view s, std::string_view sub, bool from_right) {
  const size_t at = from_right ? s.rfind(sub) : s.find(sub);
  if (at == std::string_view::npos) return -1;
  return static_cast<int64_t>(count_code_points(s.substr(0, at)));
}

int64_t count(std::string_view s, std::string_view sub) {
  if (sub.empty()) return static_cast<int64_t>(count_code_points(s)) + 1;
  int64_t n = 0;
  size_t pos = 0;
  while ((pos = s.find(sub, pos)) != std::string_view::npos) {
    ++n;
    pos += sub.size();
  }
  return n;
}

bool is_cased_upper(uint32_t cp) {
  return (cp >= 'A' && cp <= 'Z') || (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7);
}

bool is_cased_lower(uint32_t cp) {
  return (cp >= 'a' && cp <= 'z') || (cp >= 0xDF && cp <= 0xFF && cp != 0xF7);
}

uint32_t to_upper(uint32_t cp) {
  if (cp >= 'a' && cp <= 'z') return cp - 32;
  if (cp >= 0xE0 && cp <= 0xFE && cp != 0xF7) return cp - 32;
  if (cp == 0xFF) return 0x178;
  return cp;
}

uint32_t to_lower(uint32_t cp) {
  if (cp >= 'A' && cp <= 'Z') return cp + 32;
  if (cp >= 0xC0 && cp <= 0xDE && cp != 0xD7) return cp + 32;
  return cp;
}

std::string upper(std::string_view s) { return map_code_points(s, to_upper); }
std::string lower(std::string_view s) { return map_code_points(s, to_lower); }

std::string capitalize(std::string_view s) {
  std::string out;
  bool first = true;
  for (uint32_t cp : decode(s).cps) {
    append_utf8(out, first ? to_upper(cp) : to_lower(cp));
    first = false;
  }
  return out;
}

std::string title(std::string_view s) {
  std::string out;
  bool prev_cased = false;
  for (uint32_t cp : decode(s).cps) {
    append_utf8(out, prev_cased ? to_lower(cp) : to_upper(cp));
    prev_cased = is_cased(cp);
  }
  return out;
}

std::string jinja_title(std::string_view s) {
  // Pieces alternate between words and separator runs; each piece gets its first code
  // point upper-cased and the rest lower-cased.
  auto is_sep = [](uint32_t cp) {
    return cp == '-' || cp == '(' || cp == '{' || cp == '[' || cp == '<' || is_space(cp);
  };
  std::string out;
  bool at_piece_start = true;
  bool prev_sep = false;
  bool first = true;
  for (uint32_t cp : decode(s).cps) {
    const bool sep = is_sep(cp);
    if (!first && sep != prev_sep) at_piece_start = true;
    append_utf8(out, at_piece_start ? to_upper(cp) : to_lower(cp));
    at_piece_start = false;
    prev_sep = sep;
    first = false;
  }
  return out;
}

std::string repr(std::string_view s) {
  const bool has_single = s.find('\'') != std::string_view::npos;
  const bool has_double = s.find('"') != std::string_view::npos;
  const char quote = has_single && !has_double ? '"' : '\'';
  std::string out(1, quote);
  for (uint32_t cp : decode(s).cps) {
    if (cp == static_cast<uint32_t>(quote) || cp == '\\') {
      out += '\\';
      out += static_cast<char>(cp);
    } else if (cp == '\n') {
      out += "\\n";
    } else if (cp == '\r') {
      out += "\\r";
    } else if (cp == '\t') {
      out += "\\t";
    } else if (cp >= kEscapeBase + 0x80 && cp <= kEscapeBase + 0xFF) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "\\udc%02x", cp - kEscapeBase);
      out += buf;
    } else if (!is_printable(cp)) {
      char buf[16];
      if (cp < 0x100) {
        std::snprintf(buf, sizeof(buf), "\\x%02x", cp);
      } else if (cp < 0x10000) {
        std::snprintf(buf, sizeof(buf), "\\u%04x", cp);
      } else {
        std::snprintf(buf, sizeof(buf), "\\U%08x", cp);
      }
      out += buf;
    } else {
      append_utf8(out, cp);
    }
  }
  out += quote;
  return out;
}

std::string html_escape(std::string_view s) { return markup_escape(s); }

}  // namespace cohort::text::jinja::pystr
