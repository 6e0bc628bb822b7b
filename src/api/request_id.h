// Response ids and timestamps shared by every dialect.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace cohort::api {

// `prefix` followed by 24 random alphanumeric characters ("cmpl-3Fq..."). Thread-safe.
std::string random_id(std::string_view prefix);

// Seconds since the Unix epoch, as OpenAI's `created` fields carry.
int64_t unix_time_s();

}  // namespace cohort::api
