// --request-timeout: a completion still generating past its limit is cancelled (the engine
// sees its sink return false) and fails with kTimeout; one that ends in time is untouched,
// its pieces reaching the caller's sink.
#include "runtime/deadline_engine.h"

#include <gtest/gtest.h>

#include <chrono>
#include <memory>
#include <string>
#include <thread>

namespace cohort::runtime {
namespace {

// Streams `pieces` one-character pieces, one every `gap_ms`; stops when the sink says so.
class SlowEngine final : public Engine {
 public:
  SlowEngine(int pieces, int gap_ms) : pieces_(pieces), gap_ms_(gap_ms) {}
  bool ready() const override { return true; }
  std::string model_name() const override { return "slow"; }
  Result<std::string> render_chat(const ChatPrompt&) const override { return std::string(); }
  Result<int64_t> count_tokens(const std::string&, bool) const override { return int64_t{1}; }
  Result<CompletionResult> complete(const CompletionRequest& req) override {
    CompletionResult out;
    out.finish_reason = "length";
    for (int i = 0; i < pieces_; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(gap_ms_));
      out.text += "x";
      if (req.on_text && !req.on_text("x")) {
        out.finish_reason = "cancelled";
        ++cancelled;
        break;
      }
    }
    return out;
  }
  int cancelled = 0;

 private:
  int pieces_;
  int gap_ms_;
};

TEST(DeadlineEngine, ARequestPastItsLimitIsCancelledAndFailsWithTimeout) {
  auto slow = std::make_shared<SlowEngine>(100, 10);  // a second at least
  DeadlineEngine limited(slow, 50);
  EXPECT_EQ(limited.model_name(), "slow");
  const auto t0 = std::chrono::steady_clock::now();
  Result<CompletionResult> r = limited.complete(CompletionRequest{});
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), StatusCode::kTimeout);
  EXPECT_EQ(slow->cancelled, 1);
  EXPECT_LT(s, 0.5) << "cancelled at the next piece, not at the end";
}

TEST(DeadlineEngine, ARequestInTimePassesThroughWithItsStream) {
  auto slow = std::make_shared<SlowEngine>(3, 1);
  DeadlineEngine limited(slow, 10000);
  std::string seen;
  CompletionRequest req;
  req.on_text = [&](std::string_view p) {
    seen += p;
    return true;
  };
  Result<CompletionResult> r = limited.complete(req);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(r->text, "xxx");
  EXPECT_EQ(seen, "xxx");
  EXPECT_EQ(slow->cancelled, 0);

  // The caller's own cancellation still reaches the engine, and is not a timeout.
  req.on_text = [](std::string_view) { return false; };
  Result<CompletionResult> gone = limited.complete(req);
  ASSERT_TRUE(gone.is_ok());
  EXPECT_EQ(gone->finish_reason, "cancelled");
}

}  // namespace
}  // namespace cohort::runtime
