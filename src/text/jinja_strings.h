// Python str semantics on UTF-8 bytes, for the Jinja2 interpreter: code-point indexing and
// slicing, whitespace as str.isspace() defines it, strip/split/splitlines, case mapping
// (ASCII and Latin-1), and the escapes Python's repr() and markupsafe use.
//
// Strings are treated as sequences of code points; an invalid UTF-8 byte counts as one
// code point of its own, so nothing ever fails or loses bytes.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace cohort::text::jinja::pystr {

// Decoded code points, and the byte offset where each starts (offsets has one more entry:
// the end). Invalid bytes decode as themselves (0x80..0xFF).
struct CodePoints {
  std::vector<uint32_t> cps;
  std::vector<size_t> offsets;
};
CodePoints decode(std::string_view s);
void append_utf8(std::string& out, uint32_t cp);

bool is_ascii(std::string_view s);
size_t count_code_points(std::string_view s);
// Python's s[i] (i already normalised to 0 <= i < len); s[start:stop:step] with Python's
// slice rules (nullopt = omitted). step must be non-zero.
std::string code_point_at(std::string_view s, int64_t i);
std::string slice(std::string_view s, std::optional<int64_t> start, std::optional<int64_t> stop,
                  int64_t step);
// The indices a slice of a sequence of length n visits (shared with list slicing).
std::vector<int64_t> slice_indices(int64_t n, std::optional<int64_t> start,
                                   std::optional<int64_t> stop, int64_t step);

// str.isspace() for one code point.
bool is_space(uint32_t cp);
// str.strip/lstrip/rstrip: chars == nullopt strips whitespace, otherwise any of chars'
// code points.
std::string strip(std::string_view s, const std::optional<std::string>& chars, bool left,
                  bool right);
// str.split(sep, maxsplit) / str.rsplit: sep == nullopt splits on runs of whitespace and
// drops empty pieces. maxsplit < 0 means no limit. An empty sep is the caller's error.
std::vector<std::string> split(std::string_view s, const std::optional<std::string>& sep,
                               int64_t maxsplit);
std::vector<std::string> rsplit(std::string_view s, const std::optional<std::string>& sep,
                                int64_t maxsplit);
// str.splitlines(keepends).
std::vector<std::string> splitlines(std::string_view s, bool keepends);
// str.replace(old, new, count); count < 0 replaces all.
std::string replace(std::string_view s, std::string_view old_s, std::string_view new_s,
                    int64_t count);
// str.find / str.count over the whole string, in code points (-1 when absent).
int64_t find(std::string_view s, std::string_view sub, bool from_right);
int64_t count(std::string_view s, std::string_view sub);

uint32_t to_upper(uint32_t cp);
uint32_t to_lower(uint32_t cp);
bool is_cased_upper(uint32_t cp);
bool is_cased_lower(uint32_t cp);
std::string upper(std::string_view s);
std::string lower(std::string_view s);
// str.capitalize(), str.title(), and jinja2's |title filter (words split at -, whitespace
// and opening brackets).
std::string capitalize(std::string_view s);
std::string title(std::string_view s);
std::string jinja_title(std::string_view s);

// Python's repr() of a str: quotes chosen as Python does, escapes for the non-printable.
std::string repr(std::string_view s);
// markupsafe.escape(): & < > ' " become entities.
std::string html_escape(std::string_view s);

}  // namespace cohort::text::jinja::pystr
