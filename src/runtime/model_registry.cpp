#include "runtime/model_registry.h"

#include <chrono>
#include <exception>
#include <utility>

#include "runtime/model_name.h"

namespace cohort::runtime {
namespace {

int64_t unix_ms() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

struct ModelRegistry::Entry {
  ModelSource source;  // fixed once added: read without the lock by the loading thread
  bool resident = false;
  ModelState state = ModelState::kUnloaded;
  bool admitted = false;  // loading with room reserved under max_loaded
  std::shared_ptr<Engine> engine;
  int leases = 0;
  int waiting = 0;  // requests waiting for this model's load
  bool unload_when_idle = false;
  std::optional<int64_t> keep_alive_ms;  // unset: the registry's default
  int64_t last_used_ms = 0;
  int64_t last_use_seq = 0;
  uint64_t attempts_done = 0;  // loads finished (either way): waiters tell theirs ended
  Status last_error;           // how the last load failed
};

// The owner of a lease: while it lives the entry counts the lease; its engine copy keeps the
// engine alive even after the registry unloads it.
struct LeaseGuard {
  ModelRegistry* registry;
  size_t index;
  std::shared_ptr<Engine> engine;
  ~LeaseGuard() { registry->release(index); }
};

ModelRegistry::ModelRegistry(ModelRegistryOptions options, ModelLoader loader)
    : options_(options), loader_(std::move(loader)) {}

ModelRegistry::~ModelRegistry() = default;

Status ModelRegistry::add_source(ModelSource source) {
  if (!is_plain_model_name(source.name)) {
    return Status::invalid_argument("model name '" + source.name + "' is not a plain name");
  }
  return add_entry(std::move(source), nullptr);
}

Status ModelRegistry::add_entry(ModelSource source, std::shared_ptr<Engine> resident) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& e : entries_) {
    if (e->source.name == source.name) {
      return Status::invalid_argument("model '" + source.name + "' is offered twice");
    }
  }
  auto e = std::make_unique<Entry>();
  e->source = std::move(source);
  if (resident) {
    e->resident = true;
    e->state = ModelState::kLoaded;
    e->engine = std::move(resident);
  }
  entries_.push_back(std::move(e));
  return Status::ok();
}

Status ModelRegistry::add_resident(std::shared_ptr<Engine> engine) {
  if (engine == nullptr) return Status::invalid_argument("no engine");
  ModelSource source;
  source.name = engine->model_name();
  source.file_bytes = engine->model_info().file_bytes;
  return add_entry(std::move(source), std::move(engine));
}

Result<size_t> ModelRegistry::resolve(std::string_view requested) const {
  if (entries_.empty()) return Status::not_found("no models are offered");
  if (requested.empty()) return size_t{0};
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (entries_[i]->source.name == requested) return i;
  }
  if (!is_plain_model_name(requested)) {
    return Status::invalid_argument("model name '" + std::string(requested) +
                                    "' is not a plain name (no '/', '\\', '..' or control "
                                    "characters)");
  }
  for (size_t i = 0; i < entries_.size(); ++i) {
    if (model_names_match(requested, entries_[i]->source.name)) return i;
  }
  return Status::not_found("the model '" + std::string(requested) + "' is not offered here");
}

int ModelRegistry::loaded_count(size_t except) const {
  int n = 0;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = *entries_[i];
    if (i == except) continue;
    if (e.state == ModelState::kLoaded || (e.state == ModelState::kLoading && e.admitted)) ++n;
  }
  return n;
}

std::optional<size_t> ModelRegistry::eviction_candidate(size_t except) const {
  std::optional<size_t> best;
  for (size_t i = 0; i < entries_.size(); ++i) {
    const Entry& e = *entries_[i];
    if (i == except || e.resident || e.state != ModelState::kLoaded || e.leases > 0) continue;
    if (!best || e.last_use_seq < entries_[*best]->last_use_seq) best = i;
  }
  return best;
}

namespace {

// Marks a loaded entry unloaded; its engine goes to *drop, to be destroyed without the lock.
template <typename E>
void evict(E& e, std::vector<std::shared_ptr<Engine>>* drop) {
  drop->push_back(std::move(e.engine));
  e.engine.reset();
  e.state = ModelState::kUnloaded;
  e.admitted = false;
  e.unload_when_idle = false;
}

}  // namespace

void ModelRegistry::expire_idle(int64_t now_ms, std::vector<std::shared_ptr<Engine>>* drop) {
  for (auto& p : entries_) {
    Entry& e = *p;
    if (e.resident || e.state != ModelState::kLoaded || e.leases > 0) continue;
    const int64_t keep = e.keep_alive_ms.value_or(options_.keep_alive_ms);
    if (keep >= 0 && now_ms - e.last_used_ms >= keep) evict(e, drop);
  }
}

ModelLease ModelRegistry::lease(size_t i) {
  Entry& e = *entries_[i];
  ++e.leases;
  e.last_used_ms = unix_ms();
  e.last_use_seq = ++use_clock_;
  // Not make_shared of a temporary: a temporary guard's destructor would release the lease.
  std::shared_ptr<LeaseGuard> guard(new LeaseGuard{this, i, e.engine});
  Engine* engine = guard->engine.get();
  return ModelLease(std::move(guard), engine);
}

void ModelRegistry::release(size_t i) {
  std::shared_ptr<Engine> drop;  // destroyed after the lock is released
  std::lock_guard<std::mutex> lock(mu_);
  Entry& e = *entries_[i];
  --e.leases;
  e.last_used_ms = unix_ms();
  e.last_use_seq = ++use_clock_;
  if (e.leases == 0 && !e.resident && e.state == ModelState::kLoaded &&
      (e.unload_when_idle || e.keep_alive_ms.value_or(options_.keep_alive_ms) == 0)) {
    drop = std::move(e.engine);
    e.engine.reset();
    e.state = ModelState::kUnloaded;
    e.unload_when_idle = false;
  }
  changed_.notify_all();
}

Status ModelRegistry::load_entry(size_t i, std::unique_lock<std::mutex>& lock) {
  Entry& e = *entries_[i];
  std::vector<std::shared_ptr<Engine>> drop;
  const auto finish = [&](Status st) {
    e.state = st.is_ok() ? ModelState::kLoaded : ModelState::kUnloaded;
    if (!st.is_ok()) e.admitted = false;
    e.last_error = st;
    ++e.attempts_done;
    changed_.notify_all();
    return st;
  };
  for (;;) {
    ++loads_;
    lock.unlock();
    drop.clear();  // the models evicted for this one go before it loads
    Result<std::shared_ptr<Engine>> loaded =
        Status::internal("loading '" + e.source.name + "' threw");
    try {
      loaded = loader_(e.source);
    } catch (const std::exception& ex) {
      loaded = Status::internal("loading '" + e.source.name + "' failed: " + ex.what());
    }
    lock.lock();
    if (loaded.is_ok() && *loaded != nullptr) {
      e.engine = std::move(loaded).value();
      return finish(Status::ok());
    }
    if (loaded.is_ok()) return finish(Status::internal("loading '" + e.source.name + "' failed"));
    if (loaded.status().code() == StatusCode::kOutOfRange) {
      if (std::optional<size_t> victim = eviction_candidate(i)) {
        evict(*entries_[*victim], &drop);
        continue;
      }
    }
    return finish(loaded.status());
  }
}

Result<ModelLease> ModelRegistry::acquire(std::string_view requested,
                                          std::optional<int64_t> keep_alive_ms) {
  std::vector<std::shared_ptr<Engine>> drop;  // declared first: destroyed after the unlock
  std::unique_lock<std::mutex> lock(mu_);
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::milliseconds(options_.wait_timeout_ms);
  expire_idle(unix_ms(), &drop);
  COHORT_ASSIGN_OR_RETURN(const size_t i, resolve(requested));
  Entry& e = *entries_[i];
  if (keep_alive_ms) e.keep_alive_ms = *keep_alive_ms;
  const std::string& name = e.source.name;
  for (;;) {
    if (e.state == ModelState::kLoaded) {
      if (options_.max_active <= 0 || e.leases < options_.max_active) return lease(i);
      // Admission: the model runs max_active requests; wait for one to end, if there is room
      // in the queue.
      if (e.waiting >= options_.max_waiting) {
        return Status::unavailable("the model '" + name + "' is busy: " + std::to_string(e.leases) +
                                   " requests running and " + std::to_string(e.waiting) +
                                   " waiting");
      }
      ++e.waiting;
      const bool freed = changed_.wait_until(lock, deadline, [&] {
        return e.state != ModelState::kLoaded || e.leases < options_.max_active;
      });
      --e.waiting;
      if (!freed) return Status::unavailable("timed out waiting for a turn on '" + name + "'");
      continue;
    }
    if (e.state == ModelState::kLoading) {
      if (e.waiting >= options_.max_waiting) {
        return Status::unavailable("the model '" + name + "' is loading and " +
                                   std::to_string(e.waiting) + " requests already wait for it");
      }
      const uint64_t attempt = e.attempts_done;
      ++e.waiting;
      const bool ended = changed_.wait_until(lock, deadline, [&] {
        return e.state != ModelState::kLoading || e.attempts_done != attempt;
      });
      --e.waiting;
      if (!ended) return Status::unavailable("timed out waiting for '" + name + "' to load");
      // The load this request waited for failed: so does the request. (A load that worked
      // and was unloaded again before this thread woke is simply tried again.)
      if (e.state == ModelState::kUnloaded && e.attempts_done != attempt && !e.last_error.is_ok()) {
        return e.last_error;
      }
      continue;
    }
    // Not loaded: this request loads it; requests for it that come meanwhile wait.
    e.state = ModelState::kLoading;
    e.admitted = false;
    while (options_.max_loaded > 0 && loaded_count(i) >= options_.max_loaded) {
      if (std::optional<size_t> victim = eviction_candidate(i)) {
        evict(*entries_[*victim], &drop);
        continue;
      }
      if (changed_.wait_until(lock, deadline) == std::cv_status::timeout) {
        e.state = ModelState::kUnloaded;
        ++e.attempts_done;
        e.last_error = Status::unavailable("every loaded model is in use; '" + name +
                                           "' cannot load until one is idle");
        changed_.notify_all();
        return e.last_error;
      }
    }
    e.admitted = true;
    lock.unlock();
    drop.clear();
    lock.lock();
    COHORT_RETURN_IF_ERROR(load_entry(i, lock));
    return lease(i);
  }
}

Status ModelRegistry::load(std::string_view requested, std::optional<int64_t> keep_alive_ms) {
  Result<ModelLease> lease = acquire(requested, keep_alive_ms);
  return lease.is_ok() ? Status::ok() : lease.status();
}

Status ModelRegistry::unload(std::string_view requested) {
  std::vector<std::shared_ptr<Engine>> drop;
  std::lock_guard<std::mutex> lock(mu_);
  COHORT_ASSIGN_OR_RETURN(const size_t i, resolve(requested));
  Entry& e = *entries_[i];
  if (e.resident || e.state == ModelState::kUnloaded) return Status::ok();
  if (e.state == ModelState::kLoaded && e.leases == 0) {
    evict(e, &drop);
  } else {
    e.unload_when_idle = true;
  }
  changed_.notify_all();
  return Status::ok();
}

ModelStatus ModelRegistry::status_of(const Entry& e) const {
  ModelStatus s;
  s.name = e.source.name;
  s.state = e.state;
  s.resident = e.resident;
  s.active = e.leases;
  s.waiting = e.waiting;
  if (e.engine) s.info = e.engine->model_info();
  if (s.info.file_bytes == 0) s.info.file_bytes = e.source.file_bytes;
  s.last_used_unix_ms = e.last_used_ms;
  const int64_t keep = e.keep_alive_ms.value_or(options_.keep_alive_ms);
  if (!e.resident && e.state == ModelState::kLoaded && e.leases == 0 && keep >= 0) {
    s.expires_unix_ms = e.last_used_ms + keep;
  }
  return s;
}

std::vector<ModelStatus> ModelRegistry::list() {
  std::vector<std::shared_ptr<Engine>> drop;
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = unix_ms();
  expire_idle(now, &drop);
  std::vector<ModelStatus> out;
  out.reserve(entries_.size());
  for (const auto& e : entries_) out.push_back(status_of(*e));
  return out;
}

Result<ModelStatus> ModelRegistry::find(std::string_view requested) {
  std::vector<std::shared_ptr<Engine>> drop;
  std::lock_guard<std::mutex> lock(mu_);
  const int64_t now = unix_ms();
  expire_idle(now, &drop);
  COHORT_ASSIGN_OR_RETURN(const size_t i, resolve(requested));
  return status_of(*entries_[i]);
}

bool ModelRegistry::ready() const {
  std::lock_guard<std::mutex> lock(mu_);
  for (const auto& e : entries_) {
    if (e->resident && !e->engine->ready()) return false;
  }
  return true;
}

std::shared_ptr<Engine> ModelRegistry::most_recent() const {
  std::lock_guard<std::mutex> lock(mu_);
  const Entry* best = nullptr;
  for (const auto& e : entries_) {
    if (e->engine && (best == nullptr || e->last_use_seq > best->last_use_seq)) best = e.get();
  }
  return best ? best->engine : nullptr;
}

int64_t ModelRegistry::loads() const {
  std::lock_guard<std::mutex> lock(mu_);
  return loads_;
}

}  // namespace cohort::runtime
