// Opens the model a user names: a GGUF file, or a llama2.c checkpoint plus its tokenizer.
#pragma once

#include <string>

#include "core/status.h"
#include "format/gguf.h"

namespace cohort::cli {

// tokenizer_path is required for llama2.c checkpoints and rejected for GGUF files (their
// vocabulary is inside).
Result<format::GgufFile> open_model(const std::string& path, const std::string& tokenizer_path);

}  // namespace cohort::cli
