// What the API layer asks of a served model: the seam between api/ (HTTP, dialects) and
// runtime/ (generation on one node or a cluster). Implementations are thread-safe: HTTP
// threads call every method concurrently; an implementation may serialise generations.
//
// A chat request is two calls: render_chat() turns the conversation into prompt text with
// the model's chat template, then complete() generates from that text with
// `prompt_is_chat` set (so the template's special-token texts become their tokens).
// count_tokens() measures a prompt the way complete() will, so a dialect can answer
// count_tokens endpoints and refuse an over-long prompt with a 400 before it starts a stream.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"
#include "text/output_constraint.h"

namespace cohort::runtime {

// Receives each new piece of generated text while complete() runs, on complete()'s thread.
// Pieces are whole UTF-8 characters and never contain (part of) a stop string: text that
// could still become a stop string is held back until it cannot. Returning false means the
// client has gone: generation stops at once, its slot is freed, and complete() returns with
// finish_reason "cancelled".
using TextSink = std::function<bool(std::string_view piece)>;

struct CompletionRequest {
  std::string prompt;
  // The prompt came from render_chat(): control-token texts in it ("<|im_start|>") are
  // parsed as those tokens, and BOS is not added when the text already starts with it.
  bool prompt_is_chat = false;
  int64_t max_tokens = 16;  // < 0: no limit (until end of generation or the context is full)
  // Sampling (text/sampler.h applies them). The defaults switch every filter off.
  float temperature = 1.0f;      // <= 0: greedy
  float top_p = 1.0f;            // >= 1: off
  int32_t top_k = 0;             // <= 0: off
  float min_p = 0.0f;            // <= 0: off
  std::optional<uint64_t> seed;  // nullopt: a fresh random seed per request
  float repeat_penalty = 1.0f;   // 1: off
  int32_t repeat_last_n = 64;    // tokens the penalties look back over
  float presence_penalty = 0.0f;
  float frequency_penalty = 0.0f;
  std::vector<std::string> stop;  // generation ends before any of these strings (not empty)
  // Constrained decoding: the text generated takes this shape (a JSON object, a tool call)
  // and generation ends when it is whole. finish_reason is then "stop".
  std::optional<text::OutputConstraint> constraint;
  TextSink on_text;  // optional: stream the text as it is generated
};

struct CompletionResult {
  std::string text;  // everything generated, without the end token or the stop string
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;  // tokens sampled, the end-of-generation token included
  // "stop" (an end-of-generation token or a stop string), "length" (max_tokens or the
  // context is full) or "cancelled" (on_text returned false).
  std::string finish_reason;
  std::string stop_sequence;  // the stop string that ended generation, else empty
};

// One text to embed: a string (tokenized as a completion prompt is, without chat tokens), or
// token ids given by the client (used as they are).
struct EmbeddingInput {
  std::string text;
  std::vector<int32_t> tokens;
  bool is_tokens = false;
};

struct EmbeddingRequest {
  std::vector<EmbeddingInput> inputs;  // each is embedded on its own, in order
  // An input longer than the context: cut to its first n_ctx tokens (Ollama's default), or
  // refused with kOutOfRange.
  bool truncate = false;
  // 0: the model's embedding length; else 1..embedding_length(): the first `dimensions`
  // values, normalised again (Matryoshka shortening, as OpenAI and Ollama do).
  int64_t dimensions = 0;
};

struct EmbeddingResult {
  std::vector<std::vector<float>> embeddings;  // per input, unit L2 length (zero stays zero)
  int64_t prompt_tokens = 0;                   // tokens run, over every input
};

// A conversation for the model's chat template. Dialects normalise their messages into the
// shape Hugging Face templates read: {"role": ..., "content": "<text>"} plus whatever else a
// template uses (tool_calls, name...), passed through unchanged.
struct ChatPrompt {
  nlohmann::ordered_json messages = nlohmann::ordered_json::array();
  nlohmann::ordered_json tools;  // null: no tools (the template sees tools undefined)
  // More template variables (enable_thinking...); keys override nothing set above.
  nlohmann::ordered_json extra = nlohmann::ordered_json::object();
  bool add_generation_prompt = true;
};

// What the dialects report about the served model (Ollama's /api/show, /api/tags).
struct ModelInfo {
  std::string architecture;    // GGUF general.architecture, e.g. "llama"
  int64_t context_length = 0;  // tokens the served context holds
  int64_t parameter_count = 0;
  std::string quantization;   // the most common weight type, e.g. "F32", "Q4_K"
  uint64_t file_bytes = 0;    // the model file's size
  std::string digest;         // a hex identity of the file (not a sha256), or empty
  std::string chat_template;  // the Jinja source; empty: the fallback format
};

class Engine {
 public:
  virtual ~Engine() = default;
  // False while the model is loading or the cluster is being placed.
  virtual bool ready() const = 0;
  virtual std::string model_name() const = 0;
  virtual ModelInfo model_info() const { return {}; }

  // The prompt text for a conversation. kInvalidArgument when the template rejects it (its
  // raise_exception message, e.g. "roles must alternate"), with the template's message.
  virtual Result<std::string> render_chat(const ChatPrompt& chat) const = 0;

  // The number of tokens complete() would feed for this prompt.
  virtual Result<int64_t> count_tokens(const std::string& prompt, bool prompt_is_chat) const = 0;

  // Runs one completion to the end (or until on_text returns false). Errors:
  // kInvalidArgument for bad requests (an empty prompt...), kOutOfRange when the prompt does
  // not fit the context, kUnavailable when the cluster lost a node, kInternal otherwise.
  // Once on_text has been called, an error means the stream broke mid-way.
  virtual Result<CompletionResult> complete(const CompletionRequest& request) = 0;

  // Embeddings: the floats per embedding (the model's hidden size), 0 when embed() is not
  // supported.
  virtual int64_t embedding_length() const { return 0; }
  // The final hidden states of each input (after the output norm, no logits computed), pooled
  // (the model's pooling_type; the mean when it has none) and L2-normalised. Errors:
  // kInvalidArgument (an empty input, a token id outside the vocabulary, bad dimensions),
  // kOutOfRange (an input longer than the context without truncate), kUnsupported (no
  // hidden-state output), and complete()'s others.
  virtual Result<EmbeddingResult> embed(const EmbeddingRequest& /*request*/) {
    return Status::unsupported("engine: this model does not serve embeddings");
  }
};

}  // namespace cohort::runtime
