// Packed weights (model/packed_weights.h) against the file's layout: a model built with the
// packed layouts of kernels::best() gives, token by token, the logits of the same model
// multiplied in the file's layout (the table without packed forms), within float summation
// noise; both run the same quantized activations and integer block dots, only the order of
// float additions differs.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "comm/communicator.h"
#include "format/gguf.h"
#include "kernels/registry.h"
#include "model/synth.h"
#include "model/transformer.h"
#include "support/temp_dir.h"

namespace cohort {
namespace {

constexpr int64_t kPackedCtx = 32;

// The logits after each of tokens, fed one at a time after a 6-token prompt.
std::vector<std::vector<float>> logits_by_step(const format::GgufFile& file,
                                               const kernels::KernelTable& kt,
                                               size_t* packed_bytes) {
  ThreadPool pool(2);
  auto comm = comm::make_local_communicator();
  auto hp = model::HParams::from_gguf(file);
  auto m = model::Transformer::create(file, model::ShardSpec::whole(*hp), *comm, pool, kt, 8);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  *packed_bytes = (*m)->packed_weight_bytes();
  model::KvCache kv = std::move((*m)->new_cache(kPackedCtx, DType::kF16).value());
  const int64_t n_vocab = hp->n_vocab;
  std::vector<std::vector<float>> out;
  std::vector<float> logits(static_cast<size_t>(n_vocab));
  std::vector<int32_t> prompt;
  for (int i = 0; i < 6; ++i) prompt.push_back(static_cast<int32_t>((11 + 37 * i) % n_vocab));
  model::ForwardIo io;
  io.tokens = prompt.data();
  io.logits = logits.data();
  EXPECT_TRUE((*m)->forward(6, 0, kv, io).is_ok());
  out.push_back(logits);
  for (int64_t step = 0; step < 6; ++step) {
    const int32_t token = static_cast<int32_t>((5 + 53 * step) % n_vocab);
    io.tokens = &token;
    EXPECT_TRUE((*m)->forward(1, 6 + step, kv, io).is_ok());
    out.push_back(logits);
  }
  return out;
}

TEST(PackedForwardTest, PackedModelMatchesFileLayout) {
  if (!kernels::cpu_has_avx2_fma_f16c()) GTEST_SKIP() << "no packed layouts without AVX2";
  testing::TempDir dir;
  kernels::KernelTable unpacked = kernels::best();
  for (kernels::TypeOps& ops : unpacked.types) ops.packed = {};
  for (DType type : {DType::kF16, DType::kQ8_0, DType::kQ4_0, DType::kQ4_K, DType::kQ6_K}) {
    SCOPED_TRACE(std::string(dtype_name(type)));
    model::SynthConfig c;
    c.dim = 256;
    c.n_heads = 4;
    c.n_kv_heads = 2;
    c.ffn_dim = 512;
    c.n_vocab = 300;  // not a multiple of any panel: the output's last panel is partial
    c.type = type;
    const std::string path = dir.file(std::string(dtype_name(type)) + ".gguf");
    const Status written = model::write_synthetic_model(c, path);
    ASSERT_TRUE(written.is_ok()) << written.message();
    auto file = format::GgufFile::open(path);
    ASSERT_TRUE(file.is_ok());
    size_t packed = 0, none = 0;
    const auto want = logits_by_step(*file, unpacked, &none);
    const auto got = logits_by_step(*file, kernels::best(), &packed);
    EXPECT_EQ(none, 0u);
    const bool has_form = kernels::best().types[static_cast<uint32_t>(type)].packed.panel_rows > 0;
    EXPECT_EQ(packed > 0, has_form);
    ASSERT_EQ(want.size(), got.size());
    for (size_t s = 0; s < want.size(); ++s) {
      float top = 0;
      for (float v : want[s]) top = std::max(top, std::fabs(v));
      for (size_t i = 0; i < want[s].size(); ++i) {
        ASSERT_NEAR(got[s][i], want[s][i], 1e-4f * top + 1e-6f) << "step " << s << " logit " << i;
      }
    }
  }
}

}  // namespace
}  // namespace cohort
