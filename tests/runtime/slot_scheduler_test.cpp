// The engine loop: requests from several threads at once, more than there are slots, decode
// interleaved on one stepper (one node, or a two-stage pipeline in process) and each gets
// exactly the tokens it gets alone through Generator (greedy and seeded sampling).
#include "runtime/slot_scheduler.h"

#include <gtest/gtest.h>

#include <thread>

#include "cluster/model_desc.h"
#include "runtime/generation_engine.h"
#include "runtime/generator.h"
#include "runtime/in_process_cluster.h"
#include "support/shared_data.h"
#include "text/tokenizer.h"

namespace cohort {
namespace {

struct Request {
  std::string prompt;
  int64_t n_predict;
  float temperature;
  uint64_t seed;
};

const std::vector<Request> kRequests = {
    {"Once upon a time", 40, 0.0f, 1},  {"The little dog", 25, 0.8f, 7},
    {"Lily and Tom went", 60, 0.0f, 1}, {"One day", 3, 1.0f, 99},
    {"The sun was", 33, 0.7f, 5},
};

text::SamplerConfig sampling(const Request& r) {
  text::SamplerConfig sc;
  sc.temperature = r.temperature;
  sc.seed = r.seed;
  return sc;
}

// The whole model on this node with n_slots caches.
struct OneNode {
  OneNode(const format::GgufFile& f, int64_t n_slots)
      : pool(1), comm(comm::make_local_communicator()) {
    auto hp = model::HParams::from_gguf(f);
    model = std::move(model::Transformer::create(f, model::ShardSpec::whole(*hp), *comm, pool,
                                                 kernels::best(), testing::kTestBatch)
                          .value());
    for (int64_t s = 0; s < n_slots; ++s)
      slots.push_back(*model->new_cache(testing::kTestCtx, DType::kF32));
    stepper = std::make_unique<runtime::LocalStepper>(*model, slots);
  }
  ThreadPool pool;
  std::unique_ptr<comm::Communicator> comm;
  std::unique_ptr<model::Transformer> model;
  std::vector<model::KvCache> slots;
  std::unique_ptr<runtime::LocalStepper> stepper;
};

// Forwards every call to another stepper and records the batched steps it is given.
class RecordingStepper final : public runtime::Stepper {
 public:
  explicit RecordingStepper(runtime::Stepper& inner) : inner_(inner) {}
  int64_t n_vocab() const override { return inner_.n_vocab(); }
  int64_t n_ctx() const override { return inner_.n_ctx(); }
  int64_t max_batch() const override { return inner_.max_batch(); }
  int64_t n_slots() const override { return inner_.n_slots(); }
  int64_t max_in_flight() const override { return inner_.max_in_flight(); }
  Status step(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0, bool all_logits,
              float* logits) override {
    rows += n;
    return inner_.step(slot, tokens, n, pos0, all_logits, logits);
  }
  Status submit(int64_t slot, const int32_t* tokens, int64_t n, int64_t pos0,
                bool all_logits) override {
    rows += n;
    return inner_.submit(slot, tokens, n, pos0, all_logits);
  }
  Status collect(float* logits) override { return inner_.collect(logits); }
  void abandon() override { inner_.abandon(); }
  Status submit_batch(std::span<const runtime::StepEntry> entries) override {
    max_entries = std::max(max_entries, static_cast<int64_t>(entries.size()));
    for (const runtime::StepEntry& e : entries) rows += e.n;
    return inner_.submit_batch(entries);
  }
  Status collect_batch(int64_t n_entries, float* logits) override {
    return inner_.collect_batch(n_entries, logits);
  }

  int64_t max_entries = 0;  // the most slots one batched step carried
  int64_t rows = 0;         // tokens run, all together

 private:
  runtime::Stepper& inner_;
};

class SlotSchedulerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    COHORT_SKIP_WITHOUT_SHARED_DATA();
    auto f = format::GgufFile::open(testing::kSharedData + "/models/stories260K.gguf");
    ASSERT_TRUE(f.is_ok());
    file_ = std::make_unique<format::GgufFile>(std::move(f).value());
    tok_ = std::move(text::Tokenizer::from_gguf(*file_).value());
    // Each request alone, through Generator on one slot.
    OneNode one(*file_, 1);
    for (const Request& r : kRequests) {
      runtime::Generator gen(*one.stepper, eog());
      text::Sampler s(sampling(r), static_cast<int32_t>(one.stepper->n_vocab()));
      std::vector<int32_t> out;
      ASSERT_TRUE(gen.generate(
                         tok_->encode(r.prompt, true, false), r.n_predict, s,
                         [&](int32_t id) {
                           out.push_back(id);
                           return true;
                         },
                         nullptr)
                      .is_ok());
      alone_.push_back(out);
    }
  }

  std::function<bool(int32_t)> eog() const {
    return [t = tok_.get()](int32_t id) { return t->is_eog(id); };
  }

  // Every request from its own thread at once.
  std::vector<std::vector<int32_t>> run_concurrently(runtime::Stepper& stepper) {
    runtime::SlotScheduler sched(stepper, eog());
    std::vector<std::vector<int32_t>> got(kRequests.size());
    std::vector<std::thread> threads;
    for (size_t i = 0; i < kRequests.size(); ++i) {
      threads.emplace_back([&, i] {
        runtime::GenerationJob job;
        job.prompt = tok_->encode(kRequests[i].prompt, true, false);
        job.n_predict = kRequests[i].n_predict;
        job.sampling = sampling(kRequests[i]);
        job.on_token = [&got, i](int32_t id) {
          got[i].push_back(id);
          return true;
        };
        Status s = sched.run(std::move(job));
        EXPECT_TRUE(s.is_ok()) << s.message();
      });
    }
    for (auto& t : threads) t.join();
    return got;
  }

  // One job, run to its end on sched; returns its tokens (on_token stops after `stop_after`).
  std::vector<int32_t> run_one(runtime::SlotScheduler& sched, std::vector<int32_t> prompt,
                               int64_t n_predict, int64_t stop_after = -1) {
    std::vector<int32_t> out;
    runtime::GenerationJob job;
    job.prompt = std::move(prompt);
    job.n_predict = n_predict;
    job.on_token = [&](int32_t id) {
      out.push_back(id);
      return static_cast<int64_t>(out.size()) != stop_after;
    };
    Status s = sched.run(std::move(job));
    EXPECT_TRUE(s.is_ok()) << s.message();
    return out;
  }

  std::unique_ptr<format::GgufFile> file_;
  std::unique_ptr<text::Tokenizer> tok_;
  std::vector<std::vector<int32_t>> alone_;
};

TEST_F(SlotSchedulerTest, ConcurrentRequestsOnOneNodeMatchEachAlone) {
  OneNode one(*file_, 3);
  EXPECT_EQ(run_concurrently(*one.stepper), alone_);
}

// Continuous batching: the decoding slots go through the model together.
TEST_F(SlotSchedulerTest, ConcurrentDecodesShareBatchedSteps) {
  OneNode one(*file_, 3);
  RecordingStepper rec(*one.stepper);
  EXPECT_EQ(run_concurrently(rec), alone_);
  EXPECT_GE(rec.max_entries, 2);
}

// A follow-up turn resends the first turn's prompt and answer: only the new tokens run.
TEST_F(SlotSchedulerTest, PromptSharingACachedPrefixRunsOnlyTheRest) {
  const std::vector<int32_t> first = tok_->encode("Once upon a time", true, false);
  const int64_t n_first = 12, n_second = 15;
  std::vector<int32_t> second, second_out;
  {
    OneNode one(*file_, 2);
    RecordingStepper rec(*one.stepper);
    runtime::SlotScheduler sched(rec, eog());
    const std::vector<int32_t> answer = run_one(sched, first, n_first);
    ASSERT_EQ(static_cast<int64_t>(answer.size()), n_first);
    second = first;
    second.insert(second.end(), answer.begin(), answer.end());
    for (int32_t id : tok_->encode(" Then the dog", false, false)) second.push_back(id);
    const int64_t rows_before = rec.rows;
    second_out = run_one(sched, second, n_second);
    // The cache held the prompt and every answer token but the last (never fed).
    const int64_t held = static_cast<int64_t>(first.size()) + n_first - 1;
    EXPECT_EQ(rec.rows - rows_before, static_cast<int64_t>(second.size()) - held +
                                          static_cast<int64_t>(second_out.size()) - 1);
  }
  OneNode fresh(*file_, 1);
  runtime::SlotScheduler sched(*fresh.stepper, eog());
  EXPECT_EQ(second_out, run_one(sched, second, n_second));
}

// A job whose consumer stops (a client gone) ends at once and frees its slot for the next,
// while the job beside it decodes on undisturbed.
TEST_F(SlotSchedulerTest, StoppedJobFreesItsSlot) {
  OneNode one(*file_, 2);
  runtime::SlotScheduler sched(*one.stepper, eog());
  std::vector<int32_t> stopped, beside;
  std::thread t(
      [&] { stopped = run_one(sched, tok_->encode(kRequests[1].prompt, true, false), 50, 3); });
  runtime::GenerationJob job;
  job.prompt = tok_->encode(kRequests[0].prompt, true, false);
  job.n_predict = kRequests[0].n_predict;
  job.sampling = sampling(kRequests[0]);
  job.on_token = [&](int32_t id) {
    beside.push_back(id);
    return true;
  };
  EXPECT_TRUE(sched.run(std::move(job)).is_ok());
  t.join();
  EXPECT_EQ(stopped.size(), 3u);
  EXPECT_EQ(beside, alone_[0]);
  // Both slots free again: two more jobs run at once.
  std::thread u(
      [&] { EXPECT_EQ(run_one(sched, tok_->encode("One day", true, false), 4).size(), 4u); });
  EXPECT_EQ(run_one(sched, tok_->encode("The sun", true, false), 4).size(), 4u);
  u.join();
}

// Bad prompts end their own job with an error; the engine keeps serving.
TEST_F(SlotSchedulerTest, BadPromptEndsOnlyItsJob) {
  OneNode one(*file_, 1);
  runtime::SlotScheduler sched(*one.stepper, eog());
  runtime::GenerationJob empty;
  EXPECT_EQ(sched.run(std::move(empty)).code(), StatusCode::kInvalidArgument);
  runtime::GenerationJob too_long;
  too_long.prompt.assign(static_cast<size_t>(one.stepper->n_ctx() + 1), 1);
  EXPECT_EQ(sched.run(std::move(too_long)).code(), StatusCode::kOutOfRange);
  EXPECT_EQ(run_one(sched, tok_->encode("One day", true, false), 4).size(), 4u);
}

TEST_F(SlotSchedulerTest, ConcurrentRequestsOnAPipelineMatchEachAlone) {
  auto md = cluster::describe_model(*file_);
  ASSERT_TRUE(md.is_ok());
  std::vector<cluster::NodeDesc> nodes(2, cluster::NodeDesc{"n", 1ull << 30, 1.0});
  cluster::PlanOptions opt;
  opt.mode = cluster::ParallelMode::kPipeline;
  auto plan = cluster::plan_placement(nodes, cluster::LinkMatrix::uniform(2, 50, 1e9), *md, opt);
  ASSERT_TRUE(plan.is_ok());
  std::vector<std::vector<int32_t>> got;
  Status st = testing::run_in_process_cluster(*file_, *plan, 3, [&](runtime::Stepper& s) {
    got = run_concurrently(s);
    return Status::ok();
  });
  ASSERT_TRUE(st.is_ok()) << st.message();
  EXPECT_EQ(got, alone_);
}

// The Engine interface on top: concurrent complete() calls give the texts of lone calls.
TEST_F(SlotSchedulerTest, EngineCompletionsConcurrentEqualAlone) {
  OneNode one(*file_, 2);
  runtime::GenerationEngine engine("stories", *one.stepper, *tok_);
  auto request = [](const Request& r) {
    runtime::CompletionRequest c;
    c.prompt = r.prompt;
    c.max_tokens = r.n_predict;
    c.temperature = r.temperature;
    c.seed = r.seed;
    return c;
  };
  std::vector<std::string> alone;
  for (const Request& r : kRequests) {
    auto res = engine.complete(request(r));
    ASSERT_TRUE(res.is_ok()) << res.status().message();
    EXPECT_GT(res->completion_tokens, 0);
    alone.push_back(res->text);
  }
  std::vector<std::string> together(kRequests.size());
  std::vector<std::thread> threads;
  for (size_t i = 0; i < kRequests.size(); ++i) {
    threads.emplace_back([&, i] {
      auto res = engine.complete(request(kRequests[i]));
      EXPECT_TRUE(res.is_ok()) << res.status().message();
      if (res.is_ok()) together[i] = res->text;
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(together, alone);
}

}  // namespace
}  // namespace cohort
