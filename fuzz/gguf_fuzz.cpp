// libFuzzer target: arbitrary bytes as a GGUF file image, then everything a node does with a
// model file before it runs it: metadata rendering, hyperparameters, the tokenizer, and
// weight binding (shapes, types, block alignment, small vectors read). Any crash, leak,
// sanitizer report or hang is a finding; errors are the expected outcome for most inputs.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "format/gguf.h"
#include "kernels/kernels.h"
#include "model/hparams.h"
#include "model/shard_spec.h"
#include "model/weights.h"
#include "text/tokenizer.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cohort;
  auto bytes = std::make_shared<const std::vector<uint8_t>>(data, data + size);
  auto file = format::GgufFile::from_bytes("fuzz.gguf", bytes);
  if (!file.is_ok()) return 0;
  for (const format::GgufKeyValue& kv : file->metadata()) (void)kv.value.to_display_string();
  auto tok = text::Tokenizer::from_gguf(*file);
  if (tok.is_ok()) {
    const std::vector<int32_t> ids = (*tok)->encode("Hello world, 123 <s>", true, true);
    for (int32_t id : ids) (void)(*tok)->token_to_piece(id);
  }
  auto hp = model::HParams::from_gguf(*file);
  if (!hp.is_ok()) return 0;
  // Binding converts small vectors ([dim] norms) to f32; hparams bound dim already.
  auto w = model::Weights::bind(*file, *hp, model::ShardSpec::whole(*hp), kernels::reference());
  (void)w;
  return 0;
}
