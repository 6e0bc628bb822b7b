// The streamed (SSE) bodies of /v1/chat/completions and /v1/completions. The producer runs
// the generation itself, on the handler thread the server calls it on:
//   chat:        a role chunk (delta {role:"assistant",content:""}), then one chunk per
//                text piece (delta {content}), then a chunk with delta {} and the
//                finish_reason;
//   completions: one text_completion chunk per piece, then one with text "" and the
//                finish_reason;
// then, with include_usage, a chunk with empty choices and usage; then "data: [DONE]".
// Every chunk carries the same id, created and model. When the client goes away the
// generation is cancelled and nothing more is written. An engine error after the 200 is
// sent as data: {"error":{message,type,code}} and the stream ends without [DONE].
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "api/http_message.h"
#include "api/tool_calls.h"
#include "runtime/engine.h"

namespace cohort::api {

struct OpenAiStream {
  bool chat = true;
  std::string id;
  int64_t created = 0;
  std::string model;  // echoed as the client sent it
  bool include_usage = false;
  runtime::CompletionRequest request;  // on_text is set by the producer
  // Chat with tools: text that begins a call is held back and the calls are sent at the
  // end as one delta {tool_calls:[{index,id,type,function:{name,arguments}}]}, then
  // finish_reason "tool_calls".
  std::optional<ToolFormat> tools;
};

// `engine` must outlive the producer.
StreamProducer openai_stream_producer(runtime::Engine& engine, OpenAiStream stream);

}  // namespace cohort::api
