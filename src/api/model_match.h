// Which model names a request may use for the one model we serve. Clients name it in
// several ways: exactly as /v1/models lists it, without the ".gguf" extension, or with
// Ollama's ":latest" tag. Anything else is an unknown model (404 in every dialect).
#pragma once

#include <string_view>

namespace cohort::api {

// True when `requested` names `served`. An empty `requested` (no model given) matches.
bool model_matches(std::string_view requested, std::string_view served);

}  // namespace cohort::api
