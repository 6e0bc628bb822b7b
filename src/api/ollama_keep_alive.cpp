#include "api/ollama_keep_alive.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <string>

namespace cohort::api {
namespace {

constexpr double kMaxMs = 1e15;  // ~31000 years: longer is "forever"

double unit_ms(const std::string& unit) {
  if (unit == "ns") return 1e-6;
  if (unit == "us" || unit == "µs") return 1e-3;
  if (unit == "ms") return 1;
  if (unit == "s" || unit.empty()) return 1e3;
  if (unit == "m") return 60e3;
  if (unit == "h") return 3600e3;
  return -1;
}

int64_t to_ms(double ms) {
  if (ms < 0) return -1;
  return static_cast<int64_t>(std::llround(std::min(ms, kMaxMs)));
}

// "1h30m", "-1", "2.5s", "300": a sum of number+unit terms; a bare number is seconds.
Result<int64_t> parse_duration(const std::string& text) {
  const Status bad = Status::invalid_argument("keep_alive '" + text + "' is not a duration");
  size_t i = 0;
  bool negative = false;
  if (i < text.size() && (text[i] == '-' || text[i] == '+')) negative = text[i++] == '-';
  if (i == text.size()) return bad;
  double total = 0;
  while (i < text.size()) {
    const size_t start = i;
    while (i < text.size() &&
           (std::isdigit(static_cast<unsigned char>(text[i])) || text[i] == '.')) {
      ++i;
    }
    if (i == start) return bad;
    double value = 0;
    try {
      value = std::stod(text.substr(start, i - start));
    } catch (...) {
      return bad;
    }
    const size_t unit_start = i;
    while (i < text.size() && !std::isdigit(static_cast<unsigned char>(text[i])) &&
           text[i] != '.') {
      ++i;
    }
    const double per = unit_ms(text.substr(unit_start, i - unit_start));
    if (per < 0 || !std::isfinite(value)) return bad;
    total += value * per;
  }
  return negative ? (total == 0 ? int64_t{0} : int64_t{-1}) : to_ms(total);
}

}  // namespace

Result<std::optional<int64_t>> parse_keep_alive(const nlohmann::json& body) {
  auto it = body.find("keep_alive");
  if (it == body.end() || it->is_null()) return std::optional<int64_t>();
  if (it->is_number()) {
    const double s = it->get<double>();
    if (!std::isfinite(s)) return Status::invalid_argument("keep_alive must be finite");
    return std::optional<int64_t>(to_ms(s * 1e3));
  }
  if (it->is_string()) {
    COHORT_ASSIGN_OR_RETURN(const int64_t ms, parse_duration(it->get<std::string>()));
    return std::optional<int64_t>(ms);
  }
  return Status::invalid_argument("keep_alive must be a number of seconds or a duration string");
}

}  // namespace cohort::api
