#include "runtime/stop_scanner.h"

#include <algorithm>

namespace cohort::runtime {

StopScanner::StopScanner(std::vector<std::string> stops) {
  for (std::string& s : stops) {
    if (s.empty()) continue;
    max_stop_bytes_ = std::max(max_stop_bytes_, s.size());
    stops_.push_back(std::move(s));
  }
}

std::string StopScanner::push(std::string_view piece) {
  if (matched()) return {};
  const size_t old_size = text_.size();
  text_.append(piece);
  // A new match must end inside the new piece, so it starts at most max-1 bytes before it.
  const size_t from = old_size > max_stop_bytes_ ? old_size - max_stop_bytes_ : 0;
  size_t first = std::string::npos;
  for (const std::string& s : stops_) {
    const size_t at = text_.find(s, from);
    if (at < first) {
      first = at;
      matched_stop_ = s;
    }
  }
  if (first != std::string::npos) {
    text_.resize(first);
    std::string out = first > released_ ? text_.substr(released_) : std::string();
    released_ = text_.size();
    return out;
  }
  // Hold back the longest tail of text_ that is a proper prefix of some stop string.
  size_t hold = 0;
  for (const std::string& s : stops_) {
    const size_t most = std::min(s.size() - 1, text_.size());
    for (size_t n = most; n > hold; --n) {
      if (text_.compare(text_.size() - n, n, s, 0, n) == 0) {
        hold = n;
        break;
      }
    }
  }
  const size_t safe = std::max(released_, text_.size() - hold);
  std::string out = text_.substr(released_, safe - released_);
  released_ = safe;
  return out;
}

std::string StopScanner::flush() {
  if (matched()) return {};
  std::string out = text_.substr(released_);
  released_ = text_.size();
  return out;
}

}  // namespace cohort::runtime
