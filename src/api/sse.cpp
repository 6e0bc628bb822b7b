#include "api/sse.h"

#include <utility>

#include <nlohmann/json.hpp>

#include "api/json_body.h"

namespace cohort::api {

std::string sse_data(const nlohmann::json& j) { return "data: " + dump_json(j) + "\n\n"; }

std::string sse_event(std::string_view type, const nlohmann::json& j) {
  return "event: " + std::string(type) + "\n" + sse_data(j);
}

std::string sse_done() { return "data: [DONE]\n\n"; }

std::string ndjson_line(const nlohmann::json& j) { return dump_json(j) + "\n"; }

namespace {

HttpResponse streamed(std::string content_type, StreamProducer producer) {
  HttpResponse res;
  res.status = 200;
  res.content_type = std::move(content_type);
  res.set_header("Cache-Control", "no-cache");
  res.set_header("X-Accel-Buffering", "no");  // proxies must not buffer the events
  res.stream = std::move(producer);
  return res;
}

}  // namespace

HttpResponse sse_response(StreamProducer producer) {
  return streamed("text/event-stream", std::move(producer));
}

HttpResponse ndjson_response(StreamProducer producer) {
  return streamed("application/x-ndjson", std::move(producer));
}

}  // namespace cohort::api
