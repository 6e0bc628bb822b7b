#include "text/output_constraint.h"

#include <nlohmann/json.hpp>

namespace cohort::text {

OutputConstraint::OutputConstraint(std::vector<Part> parts)
    : parts_(std::make_shared<const std::vector<Part>>(std::move(parts))) {}

OutputConstraint OutputConstraint::json_object() {
  return OutputConstraint({Part{Part::Kind::kJsonObject, {}, {}, {}}});
}

OutputConstraint OutputConstraint::tool_call(const std::vector<Tool>& tools) {
  std::vector<std::string> options;
  std::vector<std::optional<std::vector<std::string>>> keys;
  for (const Tool& t : tools) {
    // Each option ends with the closing quote, so none is a prefix of another.
    options.push_back(nlohmann::json(t.name).dump().substr(1));
    keys.push_back(t.keys);
  }
  return OutputConstraint({Part{Part::Kind::kLiteral, "{\"name\": \"", {}, {}},
                           Part{Part::Kind::kOneOf, {}, std::move(options), {}},
                           Part{Part::Kind::kLiteral, ", \"arguments\": ", {}, {}},
                           Part{Part::Kind::kJsonObject, {}, {}, std::move(keys)},
                           Part{Part::Kind::kLiteral, "}", {}, {}}});
}

bool OutputConstraint::step(State& s, char c) const {
  if (s.part == parts_->size()) return false;  // whole: nothing may follow
  const Part& p = (*parts_)[s.part];
  switch (p.kind) {
    case Part::Kind::kLiteral:
      if (p.literal[s.typed.size()] != c) return false;
      s.typed += c;
      if (s.typed.size() == p.literal.size()) {
        s.typed.clear();
        ++s.part;
      }
      return true;
    case Part::Kind::kOneOf: {
      s.typed += c;
      bool prefix = false;
      for (size_t i = 0; i < p.options.size(); ++i) {
        const std::string& o = p.options[i];
        if (o.compare(0, s.typed.size(), s.typed) != 0) continue;
        if (o.size() == s.typed.size()) {
          s.typed.clear();
          s.chosen = i;
          ++s.part;
          return true;
        }
        prefix = true;
      }
      return prefix;
    }
    case Part::Kind::kJsonObject:
      if (!s.json_started) {
        const std::optional<std::vector<std::string>>* keys =
            s.chosen < p.keys.size() ? &p.keys[s.chosen] : nullptr;
        s.json = JsonPrefix(true, keys != nullptr && keys->has_value() ? &**keys : nullptr);
        s.json_started = true;
      }
      if (!s.json.feed(c)) return false;
      if (s.json.complete()) {
        s.json_started = false;
        ++s.part;
      }
      return true;
  }
  return false;
}

bool OutputConstraint::accepts(std::string_view bytes) const {
  if (bytes.empty()) return true;
  State s = state_;
  for (char c : bytes) {
    if (!step(s, c)) return false;
  }
  return true;
}

void OutputConstraint::advance(std::string_view bytes) {
  for (char c : bytes) {
    if (!step(state_, c)) return;  // callers check with accepts() first
  }
}

}  // namespace cohort::text
