// Opens the model a user names: a GGUF file, or a llama2.c checkpoint plus its tokenizer.
#pragma once

#include <string>

#include "core/status.h"
#include "format/gguf.h"

namespace cohort::cli {

// tokenizer_path is required for llama2.c checkpoints and rejected for GGUF files (their
// vocabulary is inside). huge_pages: a GGUF file is copied into huge-page memory instead of
// mapped (MappedFile: faster decode, the file's size in private memory).
Result<format::GgufFile> open_model(const std::string& path, const std::string& tokenizer_path,
                                    bool huge_pages = false);

}  // namespace cohort::cli
