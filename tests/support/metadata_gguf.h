// Small in-memory GGUFs for hyper-parameter tests: the keys every architecture needs, the
// ones a test adds, and a zero token_embd so that HParams finds the vocabulary.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "format/gguf.h"
#include "format/gguf_writer.h"

namespace cohort::testing {

// arch with dim 64, 1 block, FFN 96, 4 heads, a 300-token embedding, plus add's keys and
// tensors.
inline Result<format::GgufFile> metadata_gguf(const std::string& arch,
                                              const std::function<void(format::GgufWriter&)>& add) {
  format::GgufWriter w;
  w.set_string("general.architecture", arch);
  w.set_u32(arch + ".embedding_length", 64);
  w.set_u32(arch + ".block_count", 1);
  w.set_u32(arch + ".feed_forward_length", 96);
  w.set_u32(arch + ".attention.head_count", 4);
  add(w);
  w.add_tensor_bytes("token_embd.weight", DType::kF32, {64, 300},
                     std::vector<uint8_t>(64 * 300 * sizeof(float)));
  return format::GgufFile::from_bytes(
      arch + ".gguf", std::make_shared<const std::vector<uint8_t>>(w.write_memory()));
}

}  // namespace cohort::testing
