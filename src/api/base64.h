// Base64 (RFC 4648, with padding) for what the API returns as bytes: OpenAI's
// encoding_format "base64" embeddings, which SDKs decode as little-endian float32.
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace cohort::api {

std::string base64_encode(std::span<const uint8_t> bytes);

// The floats as little-endian IEEE-754 float32 bytes, base64-encoded.
std::string base64_floats(std::span<const float> values);

}  // namespace cohort::api
