// PLACEHOLDER: replaced by the real implementation.
#include "format/gguf_writer.h"

namespace cohort::format {

void GgufWriter::set_u32(std::string, uint32_t) {}
void GgufWriter::set_f32(std::string, float) {}
void GgufWriter::set_string(std::string, std::string) {}
void GgufWriter::set_strings(std::string, std::vector<std::string>) {}
void GgufWriter::set_f32s(std::string, std::vector<float>) {}
void GgufWriter::set_i32s(std::string, std::vector<int32_t>) {}
void GgufWriter::set_bool(std::string, bool) {}
void GgufWriter::set_i32(std::string, int32_t) {}
void GgufWriter::add_tensor(std::string, DType, std::vector<int64_t>, FillFn) {}
Status GgufWriter::write_file(const std::string& path) const {
  return Status::unsupported("gguf: " + path + ": writer not implemented yet");
}

}  // namespace cohort::format
