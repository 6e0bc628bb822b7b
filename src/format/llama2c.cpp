// PLACEHOLDER: replaced by the real implementation.
#include "format/llama2c.h"

namespace cohort::format {

Result<GgufFile> load_llama2c(const std::string& checkpoint_path, const std::string&) {
  return Status::unsupported("llama2c: " + checkpoint_path + ": not implemented yet");
}
bool looks_like_llama2c(const std::string&) { return false; }

}  // namespace cohort::format
