#include "runtime/model_info.h"

#include <cctype>
#include <cinttypes>
#include <cstdio>
#include <map>

#include "cluster/fingerprint.h"
#include "tensor/dtype.h"

namespace cohort::runtime {

ModelInfo model_info_from_gguf(const format::GgufFile& file, int64_t n_ctx) {
  ModelInfo info;
  if (auto a = file.get_string("general.architecture")) info.architecture = std::string(*a);
  info.context_length = n_ctx;
  info.file_bytes = file.file_bytes();
  std::map<std::string_view, uint64_t> bytes_by_type;
  for (const format::GgufTensorInfo& t : file.tensors()) {
    info.parameter_count += t.n_elements();
    bytes_by_type[dtype_name(t.type)] += t.bytes;
  }
  uint64_t most = 0;
  for (const auto& [name, bytes] : bytes_by_type) {
    if (bytes > most) {
      most = bytes;
      info.quantization = std::string(name);
      for (char& c : info.quantization)
        c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    }
  }
  char hex[17];
  std::snprintf(hex, sizeof(hex), "%016" PRIx64, cluster::model_fingerprint(file));
  info.digest = hex;
  if (auto t = file.get_string("tokenizer.chat_template")) info.chat_template = std::string(*t);
  return info;
}

}  // namespace cohort::runtime
