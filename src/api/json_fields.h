// Reading request fields from a parsed JSON body, shared by the dialects. Every reader
// treats an absent field and JSON null alike (SDKs send null for "unset") and leaves *out
// untouched then. On a wrong type or a value out of range it returns kInvalidArgument with
// a message for the client ("'top_p' must be a number in [0, 1]") and sets *param to the
// field's name, so the dialect can name it in its error body.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/status.h"

namespace cohort::api {

// The field, or nullptr when absent or null.
const nlohmann::json* field(const nlohmann::json& body, std::string_view name);

// kInvalidArgument(message), with *param = name.
Status field_error(std::string* param, std::string_view name, std::string message);

// An integer JSON value that fits int64 (unsigned ones too).
bool as_int64(const nlohmann::json& v, int64_t* out);

Status read_float(const nlohmann::json& body, std::string_view name, double lo, double hi,
                  float* out, std::string* param);
Status read_int(const nlohmann::json& body, std::string_view name, int64_t lo, int64_t hi,
                int64_t* out, std::string* param);
Status read_bool(const nlohmann::json& body, std::string_view name, bool* out, std::string* param);
Status read_string(const nlohmann::json& body, std::string_view name, std::string* out,
                   std::string* param);
// Any integer; negative ones are taken modulo 2^64.
Status read_seed(const nlohmann::json& body, std::string_view name, std::optional<uint64_t>* out,
                 std::string* param);
// A string or an array of strings (when allow_string; else only the array). Empty strings
// are dropped. Appends to *out.
Status read_stop(const nlohmann::json& body, std::string_view name, bool allow_string,
                 std::vector<std::string>* out, std::string* param);

}  // namespace cohort::api
