// A forward pass gives the same logits, bit for bit, on any number of threads and whether the
// threads balance their work (kernels::split_stealing) or keep fixed shares: every matrix
// row and every attention head is computed the same whichever thread computes it. The model
// is large enough that its products, its attention and its per-row steps (norms, rotation,
// cache stores, activation, residual adds: Transformer::for_rows) run on every thread (a
// 160-token prompt, then single tokens that attend ~160 positions of 16 heads).
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "format/gguf.h"
#include "kernels/registry.h"
#include "model/synth.h"
#include "model/transformer.h"
#include "support/temp_dir.h"

namespace cohort {
namespace {

constexpr int64_t kPrompt = 160, kSteps = 4;

// The logits after the prompt and after each of kSteps single tokens.
std::vector<std::vector<float>> thread_logits_by_step(const format::GgufFile& file, int threads) {
  ThreadPool pool(threads);
  auto comm = comm::make_local_communicator();
  auto hp = model::HParams::from_gguf(file);
  EXPECT_TRUE(hp.is_ok());
  auto m = model::Transformer::create(file, model::ShardSpec::whole(*hp), *comm, pool,
                                      kernels::best(), kPrompt);
  EXPECT_TRUE(m.is_ok()) << m.status().message();
  model::KvCache kv = std::move((*m)->new_cache(kPrompt + kSteps, DType::kF16).value());
  std::vector<float> logits(static_cast<size_t>(hp->n_vocab));
  std::vector<int32_t> tokens;
  for (int64_t i = 0; i < kPrompt + kSteps; ++i) {
    tokens.push_back(static_cast<int32_t>((7 + 41 * i) % hp->n_vocab));
  }
  std::vector<std::vector<float>> out;
  model::ForwardIo io;
  io.tokens = tokens.data();
  io.logits = logits.data();
  EXPECT_TRUE((*m)->forward(kPrompt, 0, kv, io).is_ok());
  out.push_back(logits);
  for (int64_t s = 0; s < kSteps; ++s) {
    io.tokens = &tokens[static_cast<size_t>(kPrompt + s)];
    EXPECT_TRUE((*m)->forward(1, kPrompt + s, kv, io).is_ok());
    out.push_back(logits);
  }
  return out;
}

TEST(ThreadCount, LogitsAreTheSameBitsOnAnyThreadsAndSplit) {
  const bool saved = kernels::split_stealing();
  testing::TempDir dir;
  for (DType type : {DType::kQ4_0, DType::kF16}) {
    SCOPED_TRACE(std::string(dtype_name(type)));
    model::SynthConfig c;
    c.dim = 512;
    c.n_heads = 16;
    c.n_kv_heads = 4;
    c.ffn_dim = 1024;
    c.n_layers = 2;
    c.type = type;
    const std::string path = dir.file(std::string(dtype_name(type)) + ".gguf");
    ASSERT_TRUE(model::write_synthetic_model(c, path).is_ok());
    auto file = format::GgufFile::open(path);
    ASSERT_TRUE(file.is_ok());
    kernels::set_split_stealing(false);
    const auto want = thread_logits_by_step(*file, 1);
    for (bool steal : {false, true}) {
      kernels::set_split_stealing(steal);
      for (int threads : {2, 3}) {
        SCOPED_TRACE(std::to_string(threads) + (steal ? " threads stealing" : " threads static"));
        const auto got = thread_logits_by_step(*file, threads);
        ASSERT_EQ(got.size(), want.size());
        for (size_t s = 0; s < want.size(); ++s) {
          EXPECT_EQ(std::memcmp(got[s].data(), want[s].data(), want[s].size() * sizeof(float)), 0)
              << "step " << s;
        }
      }
    }
  }
  kernels::set_split_stealing(saved);
}

}  // namespace
}  // namespace cohort
