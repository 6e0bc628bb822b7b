// The streamed body of POST /v1/messages: SSE with an `event:` line on every event (the
// SDK dispatches on it), in this order:
//   message_start (content [], stop_reason null, usage {input_tokens, output_tokens: 0}),
//   content_block_start {index 0, text ""}, ping,
//   content_block_delta {index 0, text_delta} per text piece, content_block_stop,
//   message_delta {stop_reason, stop_sequence, usage {output_tokens}}, message_stop.
// The producer runs the generation; when the client goes away it is cancelled and nothing
// more is written. An engine error after the 200 is sent as `event: error`, then the end.
#pragma once

#include <cstdint>
#include <string>

#include "api/http_message.h"
#include "api/tool_calls.h"
#include "runtime/engine.h"

namespace cohort::api {

struct AnthropicStream {
  std::string id;
  std::string model;  // echoed as the client sent it
  int64_t input_tokens = 0;
  runtime::CompletionRequest request;  // on_text is set by the producer
  // With tools: call text is held back; each call follows the text block as a tool_use
  // block (content_block_start with input {}, one input_json_delta, content_block_stop),
  // and stop_reason is "tool_use".
  std::optional<ToolFormat> tools;
};

// `engine` must outlive the producer.
StreamProducer anthropic_stream_producer(runtime::Engine& engine, AnthropicStream stream);

}  // namespace cohort::api
