// The Q8_0 KV cache (blocks of 32: an f16 scale and 32 int8, 34 bytes where F16 takes 64):
// what it stores decodes back within half a quantization step, it takes the bytes it says,
// shapes it cannot hold are refused with a clear error, and a model's logits with it stay
// within a stated tolerance of the F16 cache's and give the same greedy tokens.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "comm/communicator.h"
#include "core/fp16.h"
#include "core/rng.h"
#include "format/gguf.h"
#include "kernels/kernels.h"
#include "model/kv_cache.h"
#include "model/synth.h"
#include "model/transformer.h"
#include "support/shared_data.h"
#include "support/temp_dir.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace cohort {
namespace {

TEST(KvCacheQ8, StoredRowsDecodeWithinHalfAStepAndTakeTheirBytes) {
  const int64_t n_layers = 2, n_ctx = 5, n_kv_heads = 3, hd = 64;
  auto kv = model::KvCache::create(n_layers, n_ctx, n_kv_heads, hd, DType::kQ8_0);
  ASSERT_TRUE(kv.is_ok()) << kv.status().message();
  // Keys and values of every position and layer: hd / 32 blocks of 34 bytes per KV head, the
  // context rounded up to whole key blocks (kv_cache.h: the keys are blocked).
  const int64_t whole = kernels::kKeyBlock;
  EXPECT_EQ(kv->bytes(), static_cast<size_t>(2 * n_layers * whole * n_kv_heads * (hd / 32) * 34));
  // 34 bytes for F16's 64.
  auto q8_whole = model::KvCache::create(n_layers, whole, n_kv_heads, hd, DType::kQ8_0);
  auto f16 = model::KvCache::create(n_layers, whole, n_kv_heads, hd, DType::kF16);
  ASSERT_TRUE(q8_whole.is_ok() && f16.is_ok());
  EXPECT_EQ(q8_whole->bytes() * 64, f16->bytes() * 34);

  Rng rng(3);
  std::vector<float> k(static_cast<size_t>(n_kv_heads * hd)), v(k.size());
  std::vector<float> decoded(static_cast<size_t>(hd));
  for (int64_t l = 0; l < n_layers; ++l) {
    for (int64_t pos = 0; pos < n_ctx; ++pos) {
      for (size_t i = 0; i < k.size(); ++i) {
        k[i] = rng.uniform_f32(-3.0f, 3.0f);
        v[i] = rng.uniform_f32(-0.5f, 0.5f);
      }
      kv->store(l, pos, k.data(), v.data());
      for (int64_t h = 0; h < n_kv_heads; ++h) {
        for (bool keys : {true, false}) {
          const auto* head =
              static_cast<const uint8_t*>(keys ? kv->k_head(l, h) : kv->v_head(l, h));
          // A position's blocks: a row of the values; the keys' gathered from their blocked
          // layout (kernels.h q8_key_scale_offset).
          BlockQ8_0 blocks[hd / kQK];
          if (keys) {
            ASSERT_TRUE(kv->keys_blocked());
            for (int64_t i = 0; i < hd; ++i) {
              BlockQ8_0& b = blocks[i / kQK];
              std::memcpy(&b.d, head + kernels::q8_key_scale_offset(hd, pos, i), sizeof b.d);
              std::memcpy(&b.qs[i % kQK], head + kernels::q8_key_value_offset(hd, pos, i), 1);
            }
          } else {
            std::memcpy(blocks, head + kv->span_bytes(pos * hd), sizeof blocks);
          }
          dequantize_row_q8_0(blocks, decoded.data(), hd);
          const float* want = (keys ? k.data() : v.data()) + h * hd;
          for (int64_t b = 0; b < hd / kQK; ++b) {
            const BlockQ8_0* block = &blocks[b];
            const float half_step = 0.5f * fp16_to_f32(block->d) * 1.0001f;
            for (int64_t i = b * kQK; i < (b + 1) * kQK; ++i) {
              ASSERT_LE(std::fabs(decoded[static_cast<size_t>(i)] - want[i]), half_step)
                  << "layer " << l << " pos " << pos << " head " << h << " dim " << i
                  << (keys ? " key" : " value");
            }
          }
        }
      }
    }
  }
}

TEST(KvCacheQ8, ShapesItCannotHoldAreRefusedClearly) {
  auto odd = model::KvCache::create(2, 8, 4, 48, DType::kQ8_0);
  ASSERT_FALSE(odd.is_ok());
  EXPECT_EQ(odd.status().code(), StatusCode::kUnsupported);
  EXPECT_NE(odd.status().message().find("multiple of 32"), std::string::npos)
      << odd.status().message();
  auto latent = model::KvCache::create_latent(2, 8, 96, DType::kQ8_0);
  ASSERT_FALSE(latent.is_ok());
  EXPECT_NE(latent.status().message().find("deepseek2"), std::string::npos)
      << latent.status().message();
  auto other = model::KvCache::create(2, 8, 4, 64, DType::kQ4_0);
  ASSERT_FALSE(other.is_ok());
  EXPECT_NE(other.status().message().find("f16, f32 or q8_0"), std::string::npos);
}

// stories260K has heads of 8 dims: a Q8_0 block cannot fit in one, so its cache is refused
// (the model, a runner's --kv-type q8_0, says why) rather than laid out some other way.
TEST(KvCacheQ8, Stories260KHeadsOfEightAreRefused) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  auto file = format::GgufFile::open(testing::kSharedData + "/models/stories260K.gguf");
  ASSERT_TRUE(file.is_ok());
  auto hp = model::HParams::from_gguf(*file);
  ASSERT_TRUE(hp.is_ok());
  ASSERT_EQ(hp->head_dim, 8);
  ThreadPool pool(1);
  auto comm = comm::make_local_communicator();
  auto m = model::Transformer::create(*file, model::ShardSpec::whole(*hp), *comm, pool,
                                      kernels::best(), 4);
  ASSERT_TRUE(m.is_ok());
  auto kv = (*m)->new_cache(16, DType::kQ8_0);
  ASSERT_FALSE(kv.is_ok());
  EXPECT_NE(kv.status().message().find("this one is 8"), std::string::npos)
      << kv.status().message();
}

int64_t argmax(const std::vector<float>& x) {
  return std::max_element(x.begin(), x.end()) - x.begin();
}

// Logits of a synthetic llama (heads of 64 dims, GQA 2:1) decoding greedily with an F16
// cache, and the same tokens fed through a model with a Q8_0 cache: every step's logits
// within kLogitTol of the largest F16 logit, and the same argmax at every step (so a greedy
// run with the Q8_0 cache makes the same kSteps tokens). Run with the best kernels and the
// scalar reference.
TEST(KvCacheQ8, LogitsStayNearTheF16CacheAndGreedyTokensAgree) {
  constexpr int64_t kPrompt = 12, kSteps = 48;
  constexpr double kLogitTol = 0.02;
  testing::TempDir dir;
  model::SynthConfig c;
  c.dim = 256;
  c.n_heads = 4;
  c.n_kv_heads = 2;
  c.n_layers = 3;
  c.ffn_dim = 512;
  c.n_vocab = 512;
  c.type = DType::kF16;
  const std::string path = dir.file("m.gguf");
  ASSERT_TRUE(model::write_synthetic_model(c, path).is_ok());
  auto file = format::GgufFile::open(path);
  ASSERT_TRUE(file.is_ok());
  auto hp = model::HParams::from_gguf(*file);
  ASSERT_TRUE(hp.is_ok());
  ASSERT_EQ(hp->head_dim, 64);
  for (const kernels::KernelTable* kt : {&kernels::best(), &kernels::reference()}) {
    SCOPED_TRACE(kt->isa);
    ThreadPool pool(2);
    auto comm = comm::make_local_communicator();
    auto m =
        model::Transformer::create(*file, model::ShardSpec::whole(*hp), *comm, pool, *kt, kPrompt);
    ASSERT_TRUE(m.is_ok()) << m.status().message();
    auto f16 = (*m)->new_cache(kPrompt + kSteps, DType::kF16);
    auto q8 = (*m)->new_cache(kPrompt + kSteps, DType::kQ8_0);
    ASSERT_TRUE(f16.is_ok() && q8.is_ok());
    std::vector<int32_t> tokens;
    for (int64_t i = 0; i < kPrompt; ++i) tokens.push_back(static_cast<int32_t>(1 + 37 * i % 500));
    std::vector<float> want(static_cast<size_t>(c.n_vocab)), got(want.size());
    auto step = [&](model::KvCache& kv, int64_t pos, int64_t n, std::vector<float>& logits) {
      model::ForwardIo io;
      io.tokens = &tokens[static_cast<size_t>(pos)];
      io.logits = logits.data();
      Status s = (*m)->forward(n, pos, kv, io);
      ASSERT_TRUE(s.is_ok()) << s.message();
    };
    double worst = 0;
    for (int64_t i = 0; i <= kSteps; ++i) {
      const int64_t pos = i == 0 ? 0 : kPrompt + i - 1;
      const int64_t n = i == 0 ? kPrompt : 1;
      step(*f16, pos, n, want);
      step(*q8, pos, n, got);
      float largest = 0;
      for (float x : want) largest = std::max(largest, std::fabs(x));
      double diff = 0;
      for (size_t j = 0; j < want.size(); ++j) {
        diff = std::max(diff, static_cast<double>(std::fabs(got[j] - want[j])));
      }
      worst = std::max(worst, diff / largest);
      EXPECT_LE(diff, kLogitTol * largest) << "step " << i;
      ASSERT_EQ(argmax(got), argmax(want)) << "greedy token of step " << i;
      if (i < kSteps) tokens.push_back(static_cast<int32_t>(argmax(want)));
    }
    std::printf("[ %s ] q8_0 vs f16 cache: largest logit difference %.2e of the largest logit\n",
                kt->isa, worst);
  }
}

}  // namespace
}  // namespace cohort
