// The model registry: names (loose matches, unknown names, path-like names refused), loading
// on demand once however many wait, LRU eviction under --max-loaded and when the loader says
// memory is short, busy models kept, the waiting queue's limit, keep-alive and unload.
#include "runtime/model_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace cohort::runtime {
namespace {

class NamedEngine final : public Engine {
 public:
  explicit NamedEngine(std::string name, std::atomic<int>* live = nullptr)
      : name_(std::move(name)), live_(live) {
    if (live_) ++*live_;
  }
  ~NamedEngine() override {
    if (live_) --*live_;
  }
  bool ready() const override { return true; }
  std::string model_name() const override { return name_; }
  Result<std::string> render_chat(const ChatPrompt&) const override { return std::string(); }
  Result<int64_t> count_tokens(const std::string&, bool) const override { return int64_t{1}; }
  Result<CompletionResult> complete(const CompletionRequest&) override {
    return CompletionResult{};
  }

 private:
  std::string name_;
  std::atomic<int>* live_;
};

// A loader that counts loads per model and the engines alive.
struct CountingLoader {
  std::atomic<int> live{0};
  std::mutex mu;
  std::vector<std::string> loaded;  // in load order
  ModelLoader loader() {
    return [this](const ModelSource& s) -> Result<std::shared_ptr<Engine>> {
      {
        std::lock_guard<std::mutex> lock(mu);
        loaded.push_back(s.name);
      }
      return std::shared_ptr<Engine>(std::make_shared<NamedEngine>(s.name, &live));
    };
  }
};

ModelSource source(const std::string& name) { return {name, "/models/" + name, 1000}; }

ModelState state_of(ModelRegistry& r, const std::string& name) {
  Result<ModelStatus> s = r.find(name);
  EXPECT_TRUE(s.is_ok()) << s.status().message();
  return s.is_ok() ? s->state : ModelState::kUnloaded;
}

void add_sources(ModelRegistry& r, const std::vector<std::string>& names) {
  for (const std::string& n : names) ASSERT_TRUE(r.add_source(source(n)).is_ok()) << n;
}

TEST(ModelRegistry, NamesMatchLooselyAndUnknownNamesAreNotFound) {
  CountingLoader c;
  ModelRegistry r({}, c.loader());
  add_sources(r, {"a.gguf", "b.gguf"});
  for (const char* name : {"b.gguf", "b", "b:latest", "b.gguf:latest"}) {
    Result<ModelLease> l = r.acquire(name);
    ASSERT_TRUE(l.is_ok()) << name << ": " << l.status().message();
    EXPECT_EQ((*l)->model_name(), "b.gguf") << name;
  }
  Result<ModelLease> first = r.acquire("");
  ASSERT_TRUE(first.is_ok());
  EXPECT_EQ((*first)->model_name(), "a.gguf");  // no name: the first offered
  Result<ModelLease> unknown = r.acquire("c");
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_EQ(unknown.status().code(), StatusCode::kNotFound);
  EXPECT_FALSE(r.find("c.gguf").is_ok());
  EXPECT_EQ(c.loaded.size(), 2u);  // b once for all four names, then a
}

TEST(ModelRegistry, PathLikeNamesAreRefusedWithoutLoading) {
  CountingLoader c;
  ModelRegistry r({}, c.loader());
  add_sources(r, {"a.gguf"});
  for (const char* name : {"../a.gguf", "..", ".", "/models/a.gguf", "x/../a.gguf", "..\\a.gguf",
                           "a.gguf\n", "../../etc/passwd"}) {
    Result<ModelLease> l = r.acquire(name);
    ASSERT_FALSE(l.is_ok()) << name;
    EXPECT_EQ(l.status().code(), StatusCode::kInvalidArgument) << name;
    EXPECT_FALSE(r.load(name).is_ok()) << name;
    EXPECT_FALSE(r.unload(name).is_ok()) << name;
  }
  EXPECT_EQ(r.loads(), 0);
  for (const char* name : {"../b.gguf", "sub/b.gguf", "..", ""}) {
    EXPECT_FALSE(r.add_source(source(name)).is_ok()) << name;
  }
  EXPECT_FALSE(r.add_source(source("a.gguf")).is_ok()) << "offered twice";
}

TEST(ModelRegistry, MaxLoadedEvictsTheLeastRecentlyUsedIdleModel) {
  CountingLoader c;
  ModelRegistryOptions o;
  o.max_loaded = 2;
  ModelRegistry r(o, c.loader());
  add_sources(r, {"a", "b", "c"});
  ASSERT_TRUE(r.load("a").is_ok());
  ASSERT_TRUE(r.load("b").is_ok());
  ASSERT_TRUE(r.load("a").is_ok());  // a is now used more recently than b
  EXPECT_EQ(r.loads(), 2);
  ASSERT_TRUE(r.load("c").is_ok());  // no room: b goes
  EXPECT_EQ(state_of(r, "a"), ModelState::kLoaded);
  EXPECT_EQ(state_of(r, "b"), ModelState::kUnloaded);
  EXPECT_EQ(state_of(r, "c"), ModelState::kLoaded);
  EXPECT_EQ(c.live.load(), 2) << "the evicted engine is destroyed";
  ASSERT_TRUE(r.load("b").is_ok());  // now a is the least recently used
  EXPECT_EQ(state_of(r, "a"), ModelState::kUnloaded);
  EXPECT_EQ((std::vector<std::string>{"a", "b", "c", "b"}), c.loaded);
  EXPECT_EQ(r.most_recent()->model_name(), "b");
}

TEST(ModelRegistry, AModelInUseIsNeverEvicted) {
  CountingLoader c;
  ModelRegistryOptions o;
  o.max_loaded = 1;
  o.wait_timeout_ms = 100;
  ModelRegistry r(o, c.loader());
  add_sources(r, {"a", "b"});
  Result<ModelLease> a = r.acquire("a");
  ASSERT_TRUE(a.is_ok());
  Result<ModelLease> b = r.acquire("b");  // a is busy: b waits for room, then gives up
  ASSERT_FALSE(b.is_ok());
  EXPECT_EQ(b.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(state_of(r, "a"), ModelState::kLoaded);
  EXPECT_EQ((*a)->model_name(), "a");

  // Once a is let go while b waits, b gets the room.
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    a = Status::unavailable("released");
  });
  Result<ModelLease> b2 = r.acquire("b");
  releaser.join();
  ASSERT_TRUE(b2.is_ok()) << b2.status().message();
  EXPECT_EQ(state_of(r, "a"), ModelState::kUnloaded);
  EXPECT_EQ(c.live.load(), 1);
}

TEST(ModelRegistry, ALoadThatRunsOutOfMemoryEvictsAndRetries) {
  std::atomic<int> live{0};
  std::atomic<int> calls{0};
  // Room for two engines at a time, as a planner would find.
  ModelLoader loader = [&](const ModelSource& s) -> Result<std::shared_ptr<Engine>> {
    ++calls;
    if (live.load() >= 2) return Status::out_of_range("planner: no placement fits");
    return std::shared_ptr<Engine>(std::make_shared<NamedEngine>(s.name, &live));
  };
  ModelRegistry r({}, loader);  // no --max-loaded: memory decides
  add_sources(r, {"a", "b", "c"});
  ASSERT_TRUE(r.load("a").is_ok());
  ASSERT_TRUE(r.load("b").is_ok());
  ASSERT_TRUE(r.load("c").is_ok());
  EXPECT_EQ(calls.load(), 4);  // c failed once, then fitted once a was gone
  EXPECT_EQ(state_of(r, "a"), ModelState::kUnloaded);
  EXPECT_EQ(state_of(r, "b"), ModelState::kLoaded);

  // With every other model busy there is nothing to evict: the error stands.
  Result<ModelLease> hold_b = r.acquire("b");
  Result<ModelLease> hold_c = r.acquire("c");
  Status st = r.load("a");
  EXPECT_EQ(st.code(), StatusCode::kOutOfRange) << st.message();
  EXPECT_EQ(state_of(r, "a"), ModelState::kUnloaded);
}

TEST(ModelRegistry, ConcurrentRequestsDuringALoadShareIt) {
  std::promise<void> go;
  std::shared_future<void> gate = go.get_future().share();
  std::atomic<int> calls{0};
  ModelLoader loader = [&](const ModelSource& s) -> Result<std::shared_ptr<Engine>> {
    ++calls;
    gate.wait();
    return std::shared_ptr<Engine>(std::make_shared<NamedEngine>(s.name));
  };
  ModelRegistryOptions o;
  o.max_waiting = 3;
  ModelRegistry r(o, loader);
  add_sources(r, {"a"});
  std::vector<Result<ModelLease>> got(4, Status::internal("not run"));
  std::vector<std::thread> threads;
  threads.emplace_back([&] { got[0] = r.acquire("a"); });
  while (state_of(r, "a") != ModelState::kLoading) std::this_thread::yield();
  for (int i = 1; i < 4; ++i) threads.emplace_back([&, i] { got[i] = r.acquire("a"); });
  while (r.find("a")->waiting < 3) std::this_thread::yield();
  // The queue for a is full: one more is refused at once, without waiting for the load.
  Result<ModelLease> refused = r.acquire("a");
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.find("a")->state, ModelState::kLoading);
  go.set_value();
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    ASSERT_TRUE(got[i].is_ok()) << i << ": " << got[i].status().message();
    EXPECT_EQ(got[i]->get(), got[0]->get());
  }
  EXPECT_EQ(calls.load(), 1);
  EXPECT_EQ(r.find("a")->active, 4);
}

TEST(ModelRegistry, AFailedLoadReachesEveryWaiterAndIsTriedAgainLater) {
  std::promise<void> go;
  std::shared_future<void> gate = go.get_future().share();
  std::atomic<int> calls{0};
  ModelLoader loader = [&](const ModelSource& s) -> Result<std::shared_ptr<Engine>> {
    if (++calls == 1) {
      gate.wait();
      return Status::corrupt("bad file");
    }
    return std::shared_ptr<Engine>(std::make_shared<NamedEngine>(s.name));
  };
  ModelRegistry r({}, loader);
  add_sources(r, {"a"});
  Result<ModelLease> first = Status::internal("not run"), second = Status::internal("not run");
  std::thread t1([&] { first = r.acquire("a"); });
  while (state_of(r, "a") != ModelState::kLoading) std::this_thread::yield();
  std::thread t2([&] { second = r.acquire("a"); });
  while (r.find("a")->waiting < 1) std::this_thread::yield();
  go.set_value();
  t1.join();
  t2.join();
  EXPECT_EQ(first.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(second.status().code(), StatusCode::kCorrupt);
  EXPECT_EQ(calls.load(), 1);
  EXPECT_TRUE(r.load("a").is_ok());
  EXPECT_EQ(calls.load(), 2);
}

TEST(ModelRegistry, KeepAliveAndUnload) {
  CountingLoader c;
  ModelRegistryOptions o;
  o.keep_alive_ms = 50;
  ModelRegistry r(o, c.loader());
  add_sources(r, {"a", "b"});
  ASSERT_TRUE(r.load("a").is_ok());
  Result<ModelStatus> s = r.find("a");
  ASSERT_TRUE(s.is_ok() && s->expires_unix_ms.has_value());
  EXPECT_EQ(*s->expires_unix_ms, s->last_used_unix_ms + 50);
  std::this_thread::sleep_for(std::chrono::milliseconds(80));
  EXPECT_EQ(state_of(r, "a"), ModelState::kUnloaded) << "idle past its keep-alive";

  // keep_alive 0: unloads when the request is done.
  {
    Result<ModelLease> l = r.acquire("b", /*keep_alive_ms=*/0);
    ASSERT_TRUE(l.is_ok());
    EXPECT_EQ(state_of(r, "b"), ModelState::kLoaded);
  }
  EXPECT_EQ(state_of(r, "b"), ModelState::kUnloaded);

  // unload() of a model in use waits for its last lease; a negative keep-alive never expires.
  Result<ModelLease> l = r.acquire("a", /*keep_alive_ms=*/-1);
  ASSERT_TRUE(l.is_ok());
  ASSERT_TRUE(r.unload("a").is_ok());
  EXPECT_EQ(state_of(r, "a"), ModelState::kLoaded);
  l = Status::unavailable("released");
  EXPECT_EQ(state_of(r, "a"), ModelState::kUnloaded);
  EXPECT_EQ(c.live.load(), 0);
}

TEST(ModelRegistry, AdmissionRunsMaxActiveQueuesMaxWaitingAndRefusesTheRest) {
  CountingLoader c;
  ModelRegistryOptions o;
  o.max_active = 2;
  o.max_waiting = 1;
  o.wait_timeout_ms = 5000;
  ModelRegistry r(o, c.loader());
  add_sources(r, {"a", "b"});
  Result<ModelLease> one = r.acquire("a"), two = r.acquire("a");
  ASSERT_TRUE(one.is_ok() && two.is_ok());
  Result<ModelLease> queued = Status::internal("not run");
  std::thread waiter([&] { queued = r.acquire("a"); });
  while (r.find("a")->waiting < 1) std::this_thread::yield();
  Result<ModelLease> refused = r.acquire("a");  // two running, one waiting: full
  ASSERT_FALSE(refused.is_ok());
  EXPECT_EQ(refused.status().code(), StatusCode::kUnavailable);
  EXPECT_NE(refused.status().message().find("busy"), std::string::npos);
  EXPECT_TRUE(r.acquire("b").is_ok()) << "the limit is per model";
  one = Status::unavailable("done");  // a turn frees: the waiter gets it
  waiter.join();
  ASSERT_TRUE(queued.is_ok()) << queued.status().message();
  EXPECT_EQ(r.find("a")->active, 2);

  o.max_waiting = 0;
  o.wait_timeout_ms = 30;
  ModelRegistry strict(o, c.loader());
  add_sources(strict, {"a"});
  Result<ModelLease> x = strict.acquire("a"), y = strict.acquire("a");
  ASSERT_TRUE(x.is_ok() && y.is_ok());
  EXPECT_EQ(strict.acquire("a").status().code(), StatusCode::kUnavailable) << "no queue at all";
}

TEST(ModelRegistry, AResidentModelNeverUnloads) {
  ModelRegistryOptions o;
  o.max_loaded = 1;
  o.keep_alive_ms = 0;
  o.wait_timeout_ms = 50;
  CountingLoader c;
  ModelRegistry r(o, c.loader());
  auto resident = std::make_shared<NamedEngine>("org/served");  // any name: it is no file
  ASSERT_TRUE(r.add_resident(resident).is_ok());
  add_sources(r, {"b"});
  EXPECT_TRUE(r.ready());
  ASSERT_TRUE(r.load("org/served").is_ok());
  ASSERT_TRUE(r.unload("org/served").is_ok());
  EXPECT_EQ(state_of(r, "org/served"), ModelState::kLoaded);
  // max_loaded 1 and the resident holds it for good: b cannot load.
  EXPECT_EQ(r.load("b").code(), StatusCode::kUnavailable);
  EXPECT_EQ(r.loads(), 0);
}

}  // namespace
}  // namespace cohort::runtime
