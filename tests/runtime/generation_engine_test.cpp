// GenerationEngine on the trained stories260K model: streamed pieces add up to the result
// text, stop strings cut the text (and the stream) before them, a sink returning false
// cancels, limits give "length"; and chat prompts are rendered by the model's template
// (phi-3's real one, the fallback for stories260K) and tokenized with special tokens parsed.
#include "runtime/generation_engine.h"

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>

#include "comm/communicator.h"
#include "core/thread_pool.h"
#include "format/gguf.h"
#include "kernels/kernels.h"
#include "model/hparams.h"
#include "model/transformer.h"
#include "runtime/chat_renderer.h"
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

}  // namespace
}  // namespace cohort::runtime
