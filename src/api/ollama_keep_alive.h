// Ollama's keep_alive: how long a model stays loaded after a request. A number is seconds; a
// string is a Go duration ("5m", "1h30m", "300ms", "10s") or a bare number of seconds.
// Negative: for as long as the server runs; 0: unload as soon as the request is done.
#pragma once

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace cohort::api {

// The body's keep_alive in milliseconds (-1 for "forever"); nullopt when absent or null.
// kInvalidArgument for anything else that does not parse.
Result<std::optional<int64_t>> parse_keep_alive(const nlohmann::json& body);

}  // namespace cohort::api
