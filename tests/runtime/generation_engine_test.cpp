// GenerationEngine on the trained stories260K model: streamed pieces add up to the result
// text, stop strings cut the text (and the stream) before them, a sink returning false
// cancels, limits give "length"; and chat prompts are rendered by the model's template
// (phi-3's real one, the fallback for stories260K) and tokenized with special tokens parsed.
// Embeddings: the normalised mean of the model's hidden states, queued with generations
// (concurrent requests get what each gets alone), with their input errors.
#include "runtime/generation_engine.h"

#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <thread>

#include "comm/communicator.h"
#include "core/thread_pool.h"
#include "format/gguf.h"
#include "kernels/kernels.h"
#include "model/hparams.h"
#include "model/transformer.h"
#include "runtime/chat_renderer.h"
#include "runtime/embedding_pool.h"
#include "runtime/model_info.h"
#include "support/shared_data.h"
#include "text/tokenizer.h"

namespace cohort::runtime {
namespace {

// The model, its tokenizer and a GenerationEngine over a LocalStepper.
struct Served {
  explicit Served(const std::string& path) {
    auto f = format::GgufFile::open(path);
    EXPECT_TRUE(f.is_ok()) << f.status().message();
    file = std::make_unique<format::GgufFile>(std::move(f).value());
    tok = std::move(text::Tokenizer::from_gguf(*file)).value();
    auto hp = model::HParams::from_gguf(*file);
    model = std::move(model::Transformer::create(*file, model::ShardSpec::whole(*hp), *comm, pool,
                                                 kernels::best(), 8))
                .value();
    for (int slot = 0; slot < 2; ++slot) {
      kv.push_back(std::move(model->new_cache(2048, DType::kF32)).value());
    }
    stepper = std::make_unique<LocalStepper>(*model, kv);
    engine = std::make_unique<GenerationEngine>(
        "stories", *stepper, *tok, std::move(ChatRenderer::from_gguf(*file, *tok)).value(),
        model_info_from_gguf(*file, 2048));
  }
  ThreadPool pool{1};
  std::unique_ptr<comm::Communicator> comm = comm::make_local_communicator();
  std::unique_ptr<format::GgufFile> file;
  std::unique_ptr<text::Tokenizer> tok;
  std::unique_ptr<model::Transformer> model;
  std::vector<model::KvCache> kv;  // two slots
  std::unique_ptr<LocalStepper> stepper;
  std::unique_ptr<GenerationEngine> engine;
};

CompletionRequest greedy(const std::string& prompt, int64_t max_tokens) {
  CompletionRequest r;
  r.prompt = prompt;
  r.max_tokens = max_tokens;
  r.temperature = 0;
  return r;
}

class GenerationEngineTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COHORT_SKIP_WITHOUT_SHARED_DATA();
    served_ = std::make_unique<Served>(testing::kSharedData + "/models/stories260K.gguf");
  }
  std::unique_ptr<Served> served_;
};

TEST_F(GenerationEngineTest, StreamedPiecesAddUpToTheText) {
  CompletionRequest r = greedy("Once upon a time", 40);
  std::string streamed;
  int pieces = 0;
  r.on_text = [&](std::string_view p) {
    streamed += p;
    ++pieces;
    return true;
  };
  auto res = served_->engine->complete(r);
  ASSERT_TRUE(res.is_ok()) << res.status().message();
  EXPECT_FALSE(res->text.empty());
  EXPECT_EQ(streamed, res->text);
  EXPECT_GT(pieces, 5);
  EXPECT_EQ(res->finish_reason, "length");
  EXPECT_EQ(res->completion_tokens, 40);
  EXPECT_EQ(res->prompt_tokens, *served_->engine->count_tokens(r.prompt, false));
  // Without a sink the same greedy text comes back.
  auto plain = served_->engine->complete(greedy("Once upon a time", 40));
  EXPECT_EQ(plain->text, res->text);
}

TEST_F(GenerationEngineTest, StopStringCutsTextAndStream) {
  auto full = served_->engine->complete(greedy("Once upon a time", 40));
  ASSERT_TRUE(full.is_ok());
  ASSERT_GT(full->text.size(), 12u);
  const std::string stop = full->text.substr(8, 4);
  CompletionRequest r = greedy("Once upon a time", 40);
  r.stop = {stop};
  std::string streamed;
  r.on_text = [&](std::string_view p) {
    streamed += p;
    return true;
  };
  auto res = served_->engine->complete(r);
  ASSERT_TRUE(res.is_ok());
  EXPECT_EQ(res->text, full->text.substr(0, full->text.find(stop)));
  EXPECT_EQ(streamed, res->text);
  EXPECT_EQ(res->finish_reason, "stop");
  EXPECT_EQ(res->stop_sequence, stop);
  EXPECT_LT(res->completion_tokens, 40);
}

TEST_F(GenerationEngineTest, SinkReturningFalseCancels) {
  // Pieces reach the sink on the request's thread while the engine thread goes on, so the
  // cancel lands a few tokens after the third piece: with room for 1900 tokens (a few
  // hundred ms of stories260K), it must land long before the end.
  CompletionRequest r = greedy("Once upon a time", 1900);
  int calls = 0;
  r.on_text = [&](std::string_view) { return ++calls < 3; };
  auto res = served_->engine->complete(r);
  ASSERT_TRUE(res.is_ok());
  EXPECT_EQ(res->finish_reason, "cancelled");
  EXPECT_EQ(calls, 3);
  EXPECT_LT(res->completion_tokens, 1900);
}

TEST_F(GenerationEngineTest, PromptErrors) {
  EXPECT_EQ(served_->engine->complete(greedy(std::string(4000, 'a'), 4)).status().code(),
            StatusCode::kOutOfRange);
  auto none = served_->engine->complete(greedy("Hi", 0));
  ASSERT_TRUE(none.is_ok());
  EXPECT_EQ(none->completion_tokens, 0);
  EXPECT_EQ(served_->engine->model_info().context_length, 2048);
  EXPECT_EQ(served_->engine->model_info().architecture, "llama");
}

TEST_F(GenerationEngineTest, FallbackChatFormat) {
  ChatPrompt chat;
  chat.messages = {{{"role", "user"}, {"content", "Hi"}}};
  auto prompt = served_->engine->render_chat(chat);
  ASSERT_TRUE(prompt.is_ok());
  EXPECT_EQ(*prompt, "<|user|>\nHi\n<|assistant|>\n");
  CompletionRequest r = greedy(*prompt, 8);
  r.prompt_is_chat = true;
  auto res = served_->engine->complete(r);
  ASSERT_TRUE(res.is_ok()) << res.status().message();
  EXPECT_GT(res->completion_tokens, 0);
}

TEST(ChatRenderer, RealTemplateFromGguf) {
  COHORT_SKIP_WITHOUT_SHARED_DATA();
  auto f = format::GgufFile::open(testing::kSharedData + "/vocab/ggml-vocab-phi-3.gguf");
  ASSERT_TRUE(f.is_ok());
  auto tok = text::Tokenizer::from_gguf(*f);
  ASSERT_TRUE(tok.is_ok());
  auto r = ChatRenderer::from_gguf(*f, **tok);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  EXPECT_FALSE(r->source().empty());
  ChatPrompt chat;
  chat.messages = {{{"role", "user"}, {"content", "Hello"}}};
  auto text = r->render(chat);
  ASSERT_TRUE(text.is_ok()) << text.status().message();
  EXPECT_NE(text->find("<|user|>"), std::string::npos) << *text;
  EXPECT_NE(text->find("Hello"), std::string::npos);
  EXPECT_NE(text->find("<|assistant|>"), std::string::npos) << *text;
  // Parsed as special tokens, the chat markers are one token each.
  const auto special = (*tok)->encode(*text, false, true);
  const auto plain = (*tok)->encode(*text, false, false);
  EXPECT_LT(special.size(), plain.size());
}

const char* const kStory =
    "Once upon a time, there was a little girl named Lily. She loved to play";

EmbeddingRequest embedding_request(std::vector<std::string> texts) {
  EmbeddingRequest r;
  for (std::string& t : texts) {
    EmbeddingInput in;
    in.text = std::move(t);
    r.inputs.push_back(std::move(in));
  }
  return r;
}

TEST_F(GenerationEngineTest, EmbeddingIsTheNormalisedMeanOfTheHiddenStates) {
  Served& s = *served_;
  const int64_t dim = s.model->hparams().dim;
  EXPECT_EQ(s.engine->embedding_length(), dim);
  auto res = s.engine->embed(embedding_request({kStory}));
  ASSERT_TRUE(res.is_ok()) << res.status().message();
  ASSERT_EQ(res->embeddings.size(), 1u);
  const std::vector<float>& e = res->embeddings[0];
  ASSERT_EQ(static_cast<int64_t>(e.size()), dim);

  // By hand: the prompt through the model in chunks of max_batch on a fresh cache.
  const std::vector<int32_t> tokens = s.tok->encode(kStory, s.tok->add_bos_default(), false);
  ASSERT_GT(static_cast<int64_t>(tokens.size()), s.model->max_batch());  // several chunks
  EXPECT_EQ(res->prompt_tokens, static_cast<int64_t>(tokens.size()));
  model::KvCache kv = std::move(s.model->new_cache(256, DType::kF32)).value();
  std::vector<double> sum(static_cast<size_t>(dim), 0.0);
  std::vector<float> rows(static_cast<size_t>(s.model->max_batch() * dim));
  for (size_t pos = 0; pos < tokens.size(); pos += static_cast<size_t>(s.model->max_batch())) {
    const int64_t n = std::min<int64_t>(s.model->max_batch(), tokens.size() - pos);
    model::ForwardIo io;
    io.tokens = tokens.data() + pos;
    io.hidden_normed = rows.data();
    ASSERT_TRUE(s.model->forward(n, static_cast<int64_t>(pos), kv, io).is_ok());
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t i = 0; i < dim; ++i) sum[static_cast<size_t>(i)] += rows[t * dim + i];
    }
  }
  double norm2 = 0;
  for (double v : sum) norm2 += v * v;
  double e_norm2 = 0;
  for (int64_t i = 0; i < dim; ++i) {
    EXPECT_NEAR(e[static_cast<size_t>(i)], sum[static_cast<size_t>(i)] / std::sqrt(norm2), 1e-6);
    e_norm2 += static_cast<double>(e[static_cast<size_t>(i)]) * e[static_cast<size_t>(i)];
  }
  EXPECT_NEAR(e_norm2, 1.0, 1e-5);

  // Shortened: the first values, normalised again. Different texts differ.
  EmbeddingRequest shorter = embedding_request({kStory, "The dog ran to the park"});
  shorter.dimensions = 16;
  auto short_res = s.engine->embed(shorter);
  ASSERT_TRUE(short_res.is_ok());
  std::vector<float> want(e);
  shorten_embedding(want, 16);
  ASSERT_EQ(short_res->embeddings[0].size(), 16u);
  for (size_t i = 0; i < 16; ++i) EXPECT_NEAR(short_res->embeddings[0][i], want[i], 1e-6);
  EXPECT_NE(short_res->embeddings[0], short_res->embeddings[1]);
}

TEST_F(GenerationEngineTest, EmbeddingsQueueWithGenerations) {
  Served& s = *served_;
  const auto alone_e = s.engine->embed(embedding_request({kStory}));
  const auto alone_c = s.engine->complete(greedy("Once upon a time", 30));
  ASSERT_TRUE(alone_e.is_ok() && alone_c.is_ok());
  std::vector<Result<EmbeddingResult>> e(3, Status::internal("not run"));
  std::vector<Result<CompletionResult>> c(3, Status::internal("not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] { c[i] = s.engine->complete(greedy("Once upon a time", 30)); });
    threads.emplace_back([&, i] { e[i] = s.engine->embed(embedding_request({kStory})); });
  }
  for (std::thread& t : threads) t.join();
  for (size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(e[i].is_ok()) << e[i].status().message();
    ASSERT_TRUE(c[i].is_ok()) << c[i].status().message();
    EXPECT_EQ(e[i]->embeddings, alone_e->embeddings);
    EXPECT_EQ(c[i]->text, alone_c->text);
  }
}

TEST_F(GenerationEngineTest, CompletionReusesTheCacheAnEmbeddingFilled) {
  const auto before = served_->engine->complete(greedy(kStory, 12));
  Served fresh(testing::kSharedData + "/models/stories260K.gguf");
  ASSERT_TRUE(fresh.engine->embed(embedding_request({kStory})).is_ok());
  const auto after = fresh.engine->complete(greedy(kStory, 12));  // its prefix is cached
  ASSERT_TRUE(before.is_ok() && after.is_ok());
  EXPECT_EQ(after->text, before->text);
}

TEST_F(GenerationEngineTest, EmbeddingInputErrors) {
  GenerationEngine& engine = *served_->engine;
  EmbeddingRequest bad_id;
  bad_id.inputs.push_back({"", {1, 999999}, true});
  EXPECT_EQ(engine.embed(bad_id).status().code(), StatusCode::kInvalidArgument);
  EmbeddingRequest no_tokens;
  no_tokens.inputs.push_back({"", {}, true});
  EXPECT_EQ(engine.embed(no_tokens).status().code(), StatusCode::kInvalidArgument);
  EmbeddingRequest dims = embedding_request({"a"});
  dims.dimensions = engine.embedding_length() + 1;
  EXPECT_EQ(engine.embed(dims).status().code(), StatusCode::kInvalidArgument);

  EmbeddingRequest too_long;
  too_long.inputs.push_back({"", std::vector<int32_t>(2049, 5), true});
  const auto refused = engine.embed(too_long);
  EXPECT_EQ(refused.status().code(), StatusCode::kOutOfRange);
  EXPECT_NE(refused.status().message().find("2048"), std::string::npos);
  too_long.truncate = true;
  const auto cut = engine.embed(too_long);
  ASSERT_TRUE(cut.is_ok()) << cut.status().message();
  EXPECT_EQ(cut->prompt_tokens, 2048);
}

}  // namespace
}  // namespace cohort::runtime
