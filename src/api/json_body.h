// JSON in and out of HTTP bodies without exceptions: nlohmann-json throws on bad input and
// on invalid UTF-8 when serialising; these wrappers turn both into values.
#pragma once

#include <string>
#include <string_view>

#include <nlohmann/json_fwd.hpp>

#include "api/http_message.h"
#include "core/status.h"

namespace cohort::api {

// Parses `body` as a JSON object. kInvalidArgument (with a message fit for a client) when
// it is not valid JSON or not an object.
Result<nlohmann::json> parse_json_object(std::string_view body);

// Serialises `j` compactly; invalid UTF-8 in strings (a token cut inside a character)
// becomes U+FFFD instead of throwing.
std::string dump_json(const nlohmann::json& j);

// A response with `j` as its body and Content-Type application/json.
HttpResponse json_response(int status, const nlohmann::json& j);

}  // namespace cohort::api
