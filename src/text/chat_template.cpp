#include "text/chat_template.h"

#include <cstdio>

#include "text/jinja_json.h"

namespace cohort::text {
namespace {

std::string content_text(const nlohmann::ordered_json& content) {
  if (content.is_string()) return content.get<std::string>();
  if (content.is_null()) return "";
  if (content.is_array()) {
    std::string out;
    for (const auto& part : content) {
      if (part.is_string()) {
        out += part.get<std::string>();
      } else if (part.is_object() && part.contains("text") && part["text"].is_string()) {
        out += part["text"].get<std::string>();
      }
    }
    return out;
  }
  return content.dump();
}

}  // namespace

Result<ChatTemplate> ChatTemplate::parse(std::string_view template_source) {
  ChatTemplate t;
  if (template_source.empty()) return t;
  jinja::LexOptions lex;
  lex.trim_blocks = true;
  lex.lstrip_blocks = true;
  lex.keep_trailing_newline = false;
  auto parsed = jinja::Template::parse(template_source, lex);
  if (!parsed.is_ok()) return parsed.status();
  t.tmpl_ = std::move(*parsed);
  return t;
}

Result<std::string> ChatTemplate::render(const nlohmann::ordered_json& context,
                                         const RenderOptions& opts) const {
  if (!context.is_object()) {
    return Status::invalid_argument("chat template: the context must be a JSON object");
  }
  if (!tmpl_) return render_fallback_chat(context);
  auto vars = jinja::value_from_json(context);
  if (!vars.is_ok()) return vars.status();
  jinja::RenderEnv env;
  env.now = opts.now;
  env.limits = opts.limits;
  return tmpl_->render(*vars, env);
}

Result<std::string> render_chat_template(std::string_view template_source,
                                         const nlohmann::ordered_json& context,
                                         const RenderOptions& opts) {
  auto t = ChatTemplate::parse(template_source);
  if (!t.is_ok()) return t.status();
  return t->render(context, opts);
}

Result<std::string> render_fallback_chat(const nlohmann::ordered_json& context) {
  if (!context.is_object()) {
    return Status::invalid_argument("chat template: the context must be a JSON object");
  }
  std::string out;
  auto it = context.find("messages");
  if (it != context.end() && it->is_array()) {
    for (const auto& m : *it) {
      if (!m.is_object())
        return Status::invalid_argument("chat template: a message is not an object");
      std::string role = "user";
      if (m.contains("role") && m["role"].is_string()) role = m["role"].get<std::string>();
      out += "<|" + role + "|>\n";
      if (m.contains("content")) out += content_text(m["content"]);
      out += "\n";
      if (m.contains("tool_calls") && m["tool_calls"].is_array()) {
        for (const auto& call : m["tool_calls"]) {
          const auto& fn = call.contains("function") ? call["function"] : call;
          nlohmann::ordered_json line = nlohmann::ordered_json::object();
          line["name"] = fn.contains("name") ? fn["name"] : nlohmann::ordered_json();
          line["arguments"] = fn.contains("arguments") ? fn["arguments"] : nlohmann::ordered_json();
          // dump() cannot throw here: every string came from parsed (valid UTF-8) JSON.
          out += "<|tool_call|>" +
                 line.dump(-1, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
        }
      }
    }
  }
  auto gen = context.find("add_generation_prompt");
  if (gen != context.end() && gen->is_boolean() && gen->get<bool>()) out += "<|assistant|>\n";
  return out;
}

Result<std::tm> parse_local_time(std::string_view iso8601) {
  const std::string s(iso8601);
  int y = 0, mo = 0, d = 0, h = 0, mi = 0, sec = 0;
  char sep = 0;
  int consumed = 0;
  const int n =
      std::sscanf(s.c_str(), "%4d-%2d-%2d%c%2d:%2d%n", &y, &mo, &d, &sep, &h, &mi, &consumed);
  bool ok = n == 6 && (sep == 'T' || sep == ' ');
  if (ok && static_cast<size_t>(consumed) < s.size()) {
    int more = 0;
    ok = std::sscanf(s.c_str() + consumed, ":%2d%n", &sec, &more) == 1;
    size_t pos = static_cast<size_t>(consumed + more);
    if (ok && pos < s.size() && s[pos] == '.') {
      ++pos;
      while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
    }
    ok = ok && pos == s.size();
  } else if (ok) {
    ok = static_cast<size_t>(consumed) == s.size();
  }
  if (!ok || mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 60 || h < 0 ||
      mi < 0 || sec < 0) {
    return Status::invalid_argument("chat template: cannot parse time '" + s +
                                    "' (expected YYYY-MM-DDTHH:MM[:SS])");
  }
  std::tm t{};
  t.tm_year = y - 1900;
  t.tm_mon = mo - 1;
  t.tm_mday = d;
  t.tm_hour = h;
  t.tm_min = mi;
  t.tm_sec = sec;
  // timegm normalises as UTC, which fills weekday and day of year without any time zone
  // shifting the fields.
  std::tm norm = t;
  const time_t as_utc = timegm(&norm);
  std::tm check{};
  gmtime_r(&as_utc, &check);
  if (check.tm_mday != d || check.tm_mon != mo - 1) {
    return Status::invalid_argument("chat template: no such date '" + s + "'");
  }
  t.tm_wday = check.tm_wday;
  t.tm_yday = check.tm_yday;
  t.tm_isdst = -1;
  return t;
}

}  // namespace cohort::text
