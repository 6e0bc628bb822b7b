#include "api/ollama_response.h"

#include <chrono>
#include <cstdio>
#include <ctime>

namespace cohort::api {

using nlohmann::json;

std::string rfc3339_utc(int64_t unix_ns) {
  const std::time_t secs = static_cast<std::time_t>(unix_ns / 1'000'000'000);
  std::tm tm{};
  gmtime_r(&secs, &tm);
  char buf[64];
  std::snprintf(buf, sizeof(buf), "%04d-%02d-%02dT%02d:%02d:%02d.%09lldZ", tm.tm_year + 1900,
                tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
                static_cast<long long>(unix_ns % 1'000'000'000));
  return buf;
}

int64_t unix_time_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

namespace {

json base(const std::string& model) {
  return {{"model", model}, {"created_at", rfc3339_utc(unix_time_ns())}};
}

void put_text(json& j, bool chat, const std::string& text) {
  if (chat) {
    j["message"] = {{"role", "assistant"}, {"content", text}};
  } else {
    j["response"] = text;
  }
}

// "260K", "1.2M", "7.6B", as Ollama prints parameter sizes.
std::string parameter_size(int64_t n) {
  const char* units[] = {"", "K", "M", "B", "T"};
  double v = static_cast<double>(n);
  int u = 0;
  while (v >= 1000 && u < 4) {
    v /= 1000;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof(buf), v < 10 && u > 0 ? "%.1f%s" : "%.0f%s", v, units[u]);
  return buf;
}

json details(const runtime::ModelInfo& info) {
  return {{"parent_model", ""},
          {"format", "gguf"},
          {"family", info.architecture},
          {"families", json::array({info.architecture})},
          {"parameter_size", parameter_size(info.parameter_count)},
          {"quantization_level", info.quantization}};
}

}  // namespace

json ollama_piece(const std::string& model, bool chat, const std::string& text) {
  json j = base(model);
  put_text(j, chat, text);
  j["done"] = false;
  return j;
}

json ollama_final(const std::string& model, bool chat, const std::string& text,
                  const runtime::CompletionResult& result, const OllamaTimings& t) {
  json j = base(model);
  put_text(j, chat, text);
  j["done"] = true;
  j["done_reason"] = result.finish_reason == "length" ? "length" : "stop";
  j["total_duration"] = t.total_ns;
  j["load_duration"] = 0;
  j["prompt_eval_count"] = result.prompt_tokens;
  j["prompt_eval_duration"] = t.prompt_eval_ns;
  j["eval_count"] = result.completion_tokens;
  j["eval_duration"] = t.eval_ns;
  return j;
}

json ollama_loaded(const std::string& model, bool chat, const char* reason) {
  json j = base(model);
  put_text(j, chat, "");
  j["done"] = true;
  j["done_reason"] = reason;
  return j;
}

json ollama_model_entry(const std::string& name, const runtime::ModelInfo& info,
                        int64_t modified_ns, bool ps, std::optional<int64_t> expires_ns) {
  json j = {{"name", name},
            {"model", name},
            {"modified_at", rfc3339_utc(modified_ns)},
            {"size", info.file_bytes},
            {"digest", info.digest},
            {"details", details(info)}};
  if (ps) {
    // No expiry: loaded for as long as the server runs, shown as Ollama shows keep_alive -1.
    j["expires_at"] = expires_ns ? rfc3339_utc(*expires_ns) : "2318-01-01T00:00:00Z";
    j["size_vram"] = 0;
  }
  return j;
}

json ollama_show(const std::string& name, const runtime::ModelInfo& info, int64_t modified_ns) {
  std::string parameters;
  if (info.context_length > 0) parameters = "num_ctx " + std::to_string(info.context_length);
  json model_info = {{"general.architecture", info.architecture},
                     {"general.parameter_count", info.parameter_count}};
  if (!info.architecture.empty() && info.context_length > 0) {
    model_info[info.architecture + ".context_length"] = info.context_length;
  }
  return {{"modelfile", "# served by cohort\nFROM " + name + "\n"},
          {"parameters", parameters},
          {"template", info.chat_template},
          {"details", details(info)},
          {"model_info", std::move(model_info)},
          {"capabilities", json::array({"completion"})},
          {"modified_at", rfc3339_utc(modified_ns)}};
}

}  // namespace cohort::api
