// Splitting streamed bodies back into events for the API tests: SSE ("event:" and "data:"
// lines, events separated by a blank line) and NDJSON (one JSON object per line).
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace cohort::api_test {

struct SseEvent {
  std::string event;  // "" when the event had no event: line
  std::string data;   // the data: line's text
  nlohmann::json json() const { return nlohmann::json::parse(data, nullptr, false); }
};

// Events of `body`; a trailing part without its blank line is reported with event "!partial".
inline std::vector<SseEvent> parse_sse(const std::string& body) {
  std::vector<SseEvent> out;
  size_t pos = 0;
  while (pos < body.size()) {
    const size_t end = body.find("\n\n", pos);
    const std::string block = body.substr(pos, end == std::string::npos ? end : end - pos);
    SseEvent ev;
    size_t line_start = 0;
    while (line_start <= block.size()) {
      size_t nl = block.find('\n', line_start);
      if (nl == std::string::npos) nl = block.size();
      const std::string line = block.substr(line_start, nl - line_start);
      if (line.rfind("event: ", 0) == 0) ev.event = line.substr(7);
      if (line.rfind("data: ", 0) == 0) ev.data = line.substr(6);
      line_start = nl + 1;
    }
    if (end == std::string::npos) ev.event = "!partial";
    out.push_back(ev);
    if (end == std::string::npos) break;
    pos = end + 2;
  }
  return out;
}

inline std::vector<nlohmann::json> parse_ndjson(const std::string& body) {
  std::vector<nlohmann::json> out;
  size_t pos = 0;
  while (pos < body.size()) {
    size_t nl = body.find('\n', pos);
    if (nl == std::string::npos) nl = body.size();
    out.push_back(nlohmann::json::parse(body.substr(pos, nl - pos), nullptr, false));
    pos = nl + 1;
  }
  return out;
}

}  // namespace cohort::api_test
