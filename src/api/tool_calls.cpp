#include "api/tool_calls.h"

#include <algorithm>

namespace cohort::api {
namespace {

using nlohmann::json;

constexpr std::string_view kToolCallOpen = "<tool_call>";
constexpr std::string_view kToolCallClose = "</tool_call>";
constexpr std::string_view kMistralMarker = "[TOOL_CALLS]";
constexpr std::string_view kMistralArgs = "[ARGS]";
constexpr std::string_view kPythonTag = "<|python_tag|>";

std::string_view trim_space(std::string_view s) {
  const auto ws = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  while (!s.empty() && ws(s.front())) s.remove_prefix(1);
  while (!s.empty() && ws(s.back())) s.remove_suffix(1);
  return s;
}

// {"name": ..., "arguments"|"parameters": {...} or a JSON string of an object}.
bool call_from_json(const json& j, ToolCall* out) {
  if (!j.is_object() || !j.contains("name") || !j["name"].is_string()) return false;
  out->name = j["name"].get<std::string>();
  json args = j.contains("arguments") ? j["arguments"] : j.value("parameters", json::object());
  if (args.is_string()) args = json::parse(args.get<std::string>(), nullptr, false);
  if (!args.is_object()) return false;
  out->arguments = std::move(args);
  return true;
}

bool parse_json(std::string_view text, json* out) {
  *out = json::parse(text.begin(), text.end(), nullptr, false);
  return !out->is_discarded();
}

// <function=NAME><parameter=P>VALUE</parameter>...</function>; values that parse as JSON
// are taken as such, others as strings.
bool parse_xml_call(std::string_view body, ToolCall* out) {
  body = trim_space(body);
  constexpr std::string_view kFn = "<function=";
  if (body.substr(0, kFn.size()) != kFn) return false;
  const size_t name_end = body.find('>');
  if (name_end == std::string_view::npos) return false;
  out->name = std::string(trim_space(body.substr(kFn.size(), name_end - kFn.size())));
  std::string_view rest = body.substr(name_end + 1);
  constexpr std::string_view kParam = "<parameter=";
  constexpr std::string_view kParamEnd = "</parameter>";
  for (size_t at; (at = rest.find(kParam)) != std::string_view::npos;) {
    rest.remove_prefix(at + kParam.size());
    const size_t key_end = rest.find('>');
    const size_t value_end = rest.find(kParamEnd);
    if (key_end == std::string_view::npos || value_end == std::string_view::npos ||
        value_end < key_end) {
      return false;
    }
    const std::string key(trim_space(rest.substr(0, key_end)));
    const std::string_view raw = trim_space(rest.substr(key_end + 1, value_end - key_end - 1));
    json value;
    if (!parse_json(raw, &value)) value = std::string(raw);
    out->arguments[key] = std::move(value);
    rest.remove_prefix(value_end + kParamEnd.size());
  }
  return !out->name.empty() && rest.find("</function>") != std::string_view::npos;
}

// Calls between <tool_call> and </tool_call>, the rest content.
ParsedOutput parse_tagged(std::string_view text, bool xml) {
  ParsedOutput p;
  std::string content;
  while (!text.empty()) {
    const size_t open = text.find(kToolCallOpen);
    const size_t close = open == std::string_view::npos ? open : text.find(kToolCallClose, open);
    if (close == std::string_view::npos) break;
    const std::string_view body =
        text.substr(open + kToolCallOpen.size(), close - open - kToolCallOpen.size());
    ToolCall call;
    json j;
    const bool ok =
        xml ? parse_xml_call(body, &call) : parse_json(body, &j) && call_from_json(j, &call);
    if (!ok) break;
    content += text.substr(0, open);
    p.calls.push_back(std::move(call));
    text.remove_prefix(close + kToolCallClose.size());
  }
  content += text;
  p.content = std::string(trim_space(content));
  return p;
}

ParsedOutput parse_mistral(std::string_view text) {
  ParsedOutput p;
  const size_t at = text.find(kMistralMarker);
  if (at == std::string_view::npos) {
    p.content = std::string(trim_space(text));
    return p;
  }
  std::string_view rest = trim_space(text.substr(at + kMistralMarker.size()));
  json j;
  if (parse_json(rest, &j) && j.is_array()) {  // [{"name", "arguments"}, ...]
    for (const json& c : j) {
      ToolCall call;
      if (!call_from_json(c, &call)) return {std::string(trim_space(text)), {}};
      p.calls.push_back(std::move(call));
    }
  } else {  // NAME[ARGS]{...}, possibly repeated with [TOOL_CALLS] before each
    for (;;) {
      const size_t args = rest.find(kMistralArgs);
      if (args == std::string_view::npos) return {std::string(trim_space(text)), {}};
      ToolCall call;
      call.name = std::string(trim_space(rest.substr(0, args)));
      rest.remove_prefix(args + kMistralArgs.size());
      const size_t next = rest.find(kMistralMarker);
      if (!parse_json(trim_space(rest.substr(0, next)), &j) || !j.is_object() ||
          call.name.empty()) {
        return {std::string(trim_space(text)), {}};
      }
      call.arguments = std::move(j);
      p.calls.push_back(std::move(call));
      if (next == std::string_view::npos) break;
      rest.remove_prefix(next + kMistralMarker.size());
    }
  }
  p.content = std::string(trim_space(text.substr(0, at)));
  return p;
}

// The whole output is one or more JSON calls (separated by ';'), after an optional tag.
ParsedOutput parse_llama3(std::string_view text) {
  std::string_view body = trim_space(text);
  if (body.substr(0, kPythonTag.size()) == kPythonTag)
    body = trim_space(body.substr(kPythonTag.size()));
  ParsedOutput p;
  while (!body.empty()) {
    // The next ';' that is followed by another object (a ';' inside a string is not).
    size_t semi = body.find(';');
    json j;
    while (semi != std::string_view::npos &&
           !(trim_space(body.substr(semi + 1)).substr(0, 1) == "{" &&
             parse_json(body.substr(0, semi), &j))) {
      semi = body.find(';', semi + 1);
    }
    ToolCall call;
    if (!parse_json(body.substr(0, semi), &j) || !call_from_json(j, &call)) {
      return {std::string(trim_space(text)), {}};
    }
    p.calls.push_back(std::move(call));
    if (semi == std::string_view::npos) break;
    body = trim_space(body.substr(semi + 1));
  }
  if (p.calls.empty()) p.content = std::string(trim_space(text));
  return p;
}

// Where a call begins in text (npos: nowhere yet); *partial is set when text ends with
// something that could still grow into the marker.
size_t call_start(ToolFormat f, std::string_view text, size_t* keep_back) {
  *keep_back = 0;
  if (f == ToolFormat::kForced) return 0;
  if (f == ToolFormat::kLlama3Json) {
    const std::string_view t = trim_space(text);
    if (t.empty()) {
      *keep_back = text.size();  // only whitespace so far: it may precede a call
      return std::string_view::npos;
    }
    if (t.front() == '{' || t.substr(0, kPythonTag.size()) == kPythonTag) return 0;
    if (kPythonTag.substr(0, t.size()) == t) *keep_back = text.size();
    return std::string_view::npos;
  }
  const std::string_view marker = f == ToolFormat::kMistral ? kMistralMarker : kToolCallOpen;
  const size_t at = text.find(marker);
  if (at != std::string_view::npos) return at;
  for (size_t n = std::min(marker.size() - 1, text.size()); n > 0; --n) {
    if (text.substr(text.size() - n) == marker.substr(0, n)) {
      *keep_back = n;
      break;
    }
  }
  return std::string_view::npos;
}

}  // namespace

ToolFormat detect_tool_format(std::string_view tmpl) {
  const auto has = [&](std::string_view s) { return tmpl.find(s) != std::string_view::npos; };
  if (has("<function=") && has("<parameter=")) return ToolFormat::kQwen3Coder;
  if (has(kToolCallOpen)) return ToolFormat::kHermes;
  if (has(kMistralMarker)) return ToolFormat::kMistral;
  if (has(kPythonTag) || has("ipython")) return ToolFormat::kLlama3Json;
  return ToolFormat::kHermes;
}

ParsedOutput parse_tool_output(ToolFormat format, std::string_view text) {
  switch (format) {
    case ToolFormat::kHermes:
      return parse_tagged(text, /*xml=*/false);
    case ToolFormat::kQwen3Coder:
      return parse_tagged(text, /*xml=*/true);
    case ToolFormat::kMistral:
      return parse_mistral(text);
    case ToolFormat::kLlama3Json:
    case ToolFormat::kForced:
      return parse_llama3(text);
  }
  return {std::string(text), {}};
}

std::string ToolStreamFilter::push(std::string_view piece) {
  text_ += piece;
  if (holding_) return {};
  size_t keep_back = 0;
  const size_t start = call_start(format_, text_, &keep_back);
  size_t end = text_.size() - keep_back;
  if (start != std::string::npos) {
    holding_ = true;
    end = start;
  }
  if (end <= sent_) return {};
  std::string out = text_.substr(sent_, end - sent_);
  sent_ = end;
  return out;
}

ParsedOutput ToolStreamFilter::finish(std::string* unsent) const {
  ParsedOutput p = parse_tool_output(format_, text_);
  // Without calls everything is content: send what was held back. With calls, the content
  // streamed is the text before the first marker; what the model wrote after the calls
  // (rare) is sent now.
  if (p.calls.empty()) {
    *unsent = text_.substr(sent_);
  } else {
    const std::string_view streamed = trim_space(std::string_view(text_).substr(0, sent_));
    *unsent = p.content.size() > streamed.size() ? p.content.substr(streamed.size()) : "";
  }
  return p;
}

}  // namespace cohort::api
