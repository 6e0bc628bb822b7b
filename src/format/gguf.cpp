// PLACEHOLDER: replaced by the real implementation.
#include "format/gguf.h"

namespace cohort::format {

Result<GgufFile> GgufFile::open(const std::string& path) {
  return Status::unsupported("gguf: " + path + ": reader not implemented yet");
}
Result<GgufFile> GgufFile::from_bytes(std::string name, std::shared_ptr<const std::vector<uint8_t>>) {
  return Status::unsupported("gguf: " + name + ": reader not implemented yet");
}
const GgufValue* GgufFile::find(std::string_view) const { return nullptr; }
std::optional<int64_t> GgufFile::get_int(std::string_view) const { return std::nullopt; }
std::optional<double> GgufFile::get_float(std::string_view) const { return std::nullopt; }
std::optional<bool> GgufFile::get_bool(std::string_view) const { return std::nullopt; }
std::optional<std::string_view> GgufFile::get_string(std::string_view) const { return std::nullopt; }
const GgufArray* GgufFile::get_array(std::string_view) const { return nullptr; }
const GgufTensorInfo* GgufFile::find_tensor(std::string_view) const { return nullptr; }
std::optional<int64_t> GgufValue::as_int() const { return std::nullopt; }
std::optional<double> GgufValue::as_float() const { return std::nullopt; }
std::optional<bool> GgufValue::as_bool() const { return std::nullopt; }
std::optional<std::string_view> GgufValue::as_string() const { return std::nullopt; }
std::string GgufValue::to_display_string() const { return ""; }
std::optional<int64_t> GgufArray::int_at(uint64_t) const { return std::nullopt; }
std::optional<double> GgufArray::float_at(uint64_t) const { return std::nullopt; }
int64_t GgufTensorInfo::n_elements() const { return 0; }
const char* gguf_type_name(GgufType) { return "?"; }

}  // namespace cohort::format
