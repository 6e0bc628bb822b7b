#include "cli/model_source.h"

#include "format/llama2c.h"

namespace cohort::cli {

Result<format::GgufFile> open_model(const std::string& path, const std::string& tokenizer_path,
                                    bool huge_pages) {
  if (format::looks_like_llama2c(path)) {
    if (tokenizer_path.empty()) {
      return Status::invalid_argument("model: " + path +
                                      " is a llama2.c checkpoint, which has no vocabulary: pass "
                                      "--tokenizer (for example tok512.bin)");
    }
    return format::load_llama2c(path, tokenizer_path);
  }
  if (!tokenizer_path.empty()) {
    return Status::invalid_argument("model: " + path +
                                    " is a GGUF file with its own vocabulary; drop --tokenizer");
  }
  return format::GgufFile::open(path, huge_pages);
}

}  // namespace cohort::cli
