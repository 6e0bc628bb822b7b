// llama2.c checkpoints (the legacy "version 0" layout: seven int32 header fields, then fp32
// weights) and their tokenizer files, converted to an in-memory GGUF with the same tensor
// names, metadata keys and tokenizer.ggml.* vocabulary a llama GGUF would carry. The rest of
// the engine then sees one format.
#pragma once

#include <string>

#include "core/status.h"
#include "format/gguf.h"

namespace cohort::format {

// Reads checkpoint_path and tokenizer_path (llama2.c tokenizer.bin layout) and returns the
// equivalent GGUF. Every size is validated against the files.
Result<GgufFile> load_llama2c(const std::string& checkpoint_path,
                              const std::string& tokenizer_path);

// True when path looks like a llama2.c checkpoint rather than a GGUF (no "GGUF" magic).
bool looks_like_llama2c(const std::string& path);

}  // namespace cohort::format
