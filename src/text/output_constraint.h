// Decoding constrained to a shape: the sampler only picks tokens whose text keeps the output
// a prefix of something of that shape, and the end of generation only once it is whole.
// Shapes: any JSON object (OpenAI response_format json_object, Ollama format "json"), and a
// tool call `{"name": "<one of the tools>", "arguments": {...}}` (tool_choice "required" or
// a named tool), whatever the model or its chat template.
//
// A constraint is a sequence of parts (a literal, one of several strings, a JSON object);
// its state is small and copyable so accepts() can try a candidate on a copy.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "text/json_prefix.h"

namespace cohort::text {

class OutputConstraint {
 public:
  static OutputConstraint json_object();

  struct Tool {
    std::string name;
    // The argument names the tool declares (its JSON schema's properties); the arguments
    // object may use only these. nullopt: any keys (the schema names none).
    std::optional<std::vector<std::string>> keys;
  };
  // tools: those the call may name (not empty); the text is
  // {"name": "<name>", "arguments": <object>}.
  static OutputConstraint tool_call(const std::vector<Tool>& tools);

  // Whether appending bytes keeps the output a prefix of the shape (empty bytes: true).
  bool accepts(std::string_view bytes) const;
  // Appends bytes the caller checked with accepts().
  void advance(std::string_view bytes);
  // The output so far is a whole instance of the shape.
  bool complete() const { return state_.part == parts_->size(); }

 private:
  struct Part {
    enum class Kind { kLiteral, kOneOf, kJsonObject } kind;
    std::string literal;               // kLiteral
    std::vector<std::string> options;  // kOneOf: none is a prefix of another
    // kJsonObject: allowed top-level keys per option chosen by the last kOneOf part
    // (empty, or an entry nullopt: any keys).
    std::vector<std::optional<std::vector<std::string>>> keys;
  };
  struct State {
    size_t part = 0;
    std::string typed;  // kLiteral, kOneOf: the bytes of this part so far
    size_t chosen = 0;  // the option the last kOneOf part matched
    bool json_started = false;
    JsonPrefix json{true};
  };
  explicit OutputConstraint(std::vector<Part> parts);
  bool step(State& s, char c) const;

  std::shared_ptr<const std::vector<Part>> parts_;
  State state_;
};

}  // namespace cohort::text
