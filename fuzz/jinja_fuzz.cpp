// libFuzzer target: a chat template and its context. Input: template source, a NUL byte,
// then a JSON context (a default conversation when absent or not JSON). Parsing and
// rendering must end with output or an error within the interpreter's limits: no crash,
// no sanitizer report, no hang (libFuzzer's -timeout catches one).
#include <cstddef>
#include <cstdint>
#include <string_view>

#include <nlohmann/json.hpp>

#include "text/chat_template.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cohort;
  const std::string_view all(reinterpret_cast<const char*>(data), size);
  const size_t nul = all.find('\0');
  const std::string_view source = all.substr(0, nul);
  nlohmann::ordered_json context = nlohmann::ordered_json::parse(
      nul == std::string_view::npos ? std::string_view("{}") : all.substr(nul + 1), nullptr,
      /*allow_exceptions=*/false);
  if (context.is_discarded() || !context.is_object()) context = nlohmann::ordered_json::object();
  if (!context.contains("messages")) {
    context["messages"] = {{{"role", "system"}, {"content", "Be brief."}},
                           {{"role", "user"}, {"content", "Hi"}},
                           {{"role", "assistant"}, {"content", "Hello"}}};
  }
  text::RenderOptions opts;
  std::tm fixed{};
  fixed.tm_year = 125;
  fixed.tm_mday = 1;
  opts.now = fixed;  // strftime_now() must not make runs differ
  (void)text::render_chat_template(source, context, opts);
  return 0;
}
