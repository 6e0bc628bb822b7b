// stories260K from the .gguf and from the llama2.c .bin + tok512.bin must reproduce the
// llama2.c reference program's greedy output token for token.
#include <gtest/gtest.h>

#include <filesystem>

#include "comm/communicator.h"
#include "format/gguf.h"
#include "format/llama2c.h"
#include "model/transformer.h"
#include "runtime/generator.h"
#include "support/reference_cases.h"
#include "support/shared_data.h"
#include "text/tokenizer.h"

namespace cohort {
namespace {

using testing::kSharedData;

struct Source {
  const char* label;
  bool gguf;
};

class ReferenceTest
    : public ::testing::TestWithParam<std::tuple<Source, const kernels::KernelTable*>> {};

Result<format::GgufFile> open(bool gguf) {
  if (gguf) return format::GgufFile::open(kSharedData + "/models/stories260K.gguf");
  return format::load_llama2c(kSharedData + "/models/stories260K.bin",
                              kSharedData + "/models/tok512.bin");
}

TEST_P(ReferenceTest, GreedyTokensMatchLlama2c) {
  if (!std::filesystem::exists(kSharedData + "/reference/stories260K-greedy.txt"))
    GTEST_SKIP() << "shared data not found at " << kSharedData;
  const auto [source, kt] = GetParam();
  if (kt == nullptr) GTEST_SKIP() << "ISA not available on this CPU";
  auto cases = testing::load_reference_cases(kSharedData + "/reference/stories260K-greedy.txt");
  ASSERT_GE(cases.size(), 2u);

  auto file = open(source.gguf);
  ASSERT_TRUE(file.is_ok()) << file.status().message();
  auto tok = text::Tokenizer::from_gguf(*file);
  ASSERT_TRUE(tok.is_ok()) << tok.status().message();
  ThreadPool pool(2);
  auto comm = comm::make_local_communicator();
  auto hp = model::HParams::from_gguf(*file);
  ASSERT_TRUE(hp.is_ok());
  auto model =
      model::Transformer::create(*file, model::ShardSpec::whole(*hp), *comm, pool, *kt, 16);
  ASSERT_TRUE(model.is_ok()) << model.status().message();

  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    std::vector<int32_t> prompt = (*tok)->encode(c.prompt, true, false);
    ASSERT_EQ(prompt, c.prompt_ids);
    auto kv = (*model)->new_cache(512, DType::kF32);
    ASSERT_TRUE(kv.is_ok());
    runtime::Generator gen(**model, *kv, [](int32_t) { return false; });
    text::SamplerConfig greedy;
    greedy.temperature = 0;
    text::Sampler sampler(greedy, hp->n_vocab);
    std::vector<int32_t> seq = prompt;
    const int64_t n_gen = c.steps - static_cast<int64_t>(prompt.size()) + 1;
    ASSERT_TRUE(gen.generate(
                       prompt, n_gen, sampler,
                       [&](int32_t id) {
                         seq.push_back(id);
                         return true;
                       },
                       nullptr)
                    .is_ok());
    ASSERT_EQ(seq.size(), c.seq_ids.size());
    for (size_t i = 0; i < seq.size(); ++i) ASSERT_EQ(seq[i], c.seq_ids[i]) << "position " << i;

    text::Detokenizer detok(**tok);
    std::string text = c.prompt;
    for (size_t i = prompt.size(); i < seq.size(); ++i) text += detok.push(seq[i]);
    text += detok.flush() + "\n";
    EXPECT_EQ(text, c.output);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Sources, ReferenceTest,
    ::testing::Combine(::testing::Values(Source{"gguf", true}, Source{"llama2c", false}),
                       ::testing::Values(&kernels::reference(), kernels::available()[1])),
    [](const ::testing::TestParamInfo<ReferenceTest::ParamType>& p) {
      return std::string(std::get<0>(p.param).label) + "_" +
             (std::get<1>(p.param) ? std::get<1>(p.param)->isa : "none");
    });

}  // namespace
}  // namespace cohort
