// The HTTP API's request handling, in-process: the first input byte picks a route (chat,
// completions, messages, count_tokens, Ollama chat/generate/show...) and the rest is the
// request body, handled by the real router and dialect code over a model-free engine (the
// API tests' FakeEngine), streams drained. Every answer must be a well-formed response
// (a status in 200..599, JSON bodies that parse). The same bytes also go through the tool
// call parsers of every family and the streaming filter, and through JsonPrefix, which is
// checked against nlohmann-json: text it calls a complete JSON value must parse.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "../tests/api/fake_engine.h"
#include "api/api_routes.h"
#include "api/router.h"
#include "api/tool_calls.h"
#include "text/json_prefix.h"

namespace {

using cohort::api::HttpRequest;
using cohort::api::HttpResponse;

struct NullWriter : cohort::api::StreamWriter {
  size_t budget = 1 << 20;  // a stream that does not end is a finding (libFuzzer timeout)
  bool write(std::string_view data) override {
    if (data.size() > budget) return false;
    budget -= data.size();
    return true;
  }
};

struct Server {
  cohort::api_test::FakeEngine engine;
  cohort::api::Router router;
  Server() { cohort::api::add_api_routes(router, engine); }
};

constexpr const char* kRoutes[][2] = {
    {"POST", "/v1/chat/completions"}, {"POST", "/v1/completions"},
    {"POST", "/v1/messages"},         {"POST", "/v1/messages/count_tokens"},
    {"POST", "/api/chat"},            {"POST", "/api/generate"},
    {"POST", "/api/show"},            {"GET", "/v1/models/x"},
};

void check_json_prefix(std::string_view text) {
  cohort::text::JsonPrefix p;
  if (p.feed(text) && p.complete() && !nlohmann::json::accept(text)) std::abort();
}

void check_tool_parsers(std::string_view text) {
  using cohort::api::ToolFormat;
  for (ToolFormat f : {ToolFormat::kHermes, ToolFormat::kQwen3Coder, ToolFormat::kMistral,
                       ToolFormat::kLlama3Json}) {
    for (const auto& call : cohort::api::parse_tool_output(f, text).calls) {
      if (!call.arguments.is_object()) std::abort();
    }
    cohort::api::ToolStreamFilter filter(f);
    std::string streamed;
    for (size_t i = 0; i < text.size(); i += 7) streamed += filter.push(text.substr(i, 7));
    std::string unsent;
    (void)filter.finish(&unsent);
    // Content streamed is always a prefix of what the model wrote.
    if (text.substr(0, streamed.size()) != streamed) std::abort();
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static Server* server = new Server();
  if (size == 0) return 0;
  const auto& route = kRoutes[data[0] % (sizeof(kRoutes) / sizeof(kRoutes[0]))];
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  check_json_prefix(body);
  check_tool_parsers(body);

  HttpRequest req;
  req.method = route[0];
  req.path = route[1];
  req.target = req.path;
  req.body = std::string(body);
  req.headers.push_back({"content-type", "application/json"});
  const cohort::api::Router::Match m = server->router.find(req.method, req.path);
  if (m.handler == nullptr) std::abort();  // every route above is registered
  HttpResponse res = (*m.handler)(req);
  if (res.status < 200 || res.status > 599) std::abort();
  if (res.stream) {
    NullWriter w;
    res.stream(w);
  } else if (res.content_type.rfind("application/json", 0) == 0 &&
             !nlohmann::json::accept(res.body)) {
    std::abort();
  }
  return 0;
}
