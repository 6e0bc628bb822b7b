// The models a head offers, by name, and which of them are loaded. A request names a model;
// acquire() hands back its engine, loading it first when it is not loaded (the request waits
// for the load, as do others for the same model that arrive meanwhile). A model is loaded
// once however many requests wait for it, and stays loaded while any request holds a lease
// on it.
//
// Room for another model is judged two ways: --max-loaded (ModelRegistryOptions::max_loaded,
// models loaded or being loaded), and memory as the loader sees it: a load that fails with
// kOutOfRange (the planner found no placement that fits) is retried after unloading the least
// recently used idle model, for as long as there is one. A model in use is never unloaded
// under a request; a request that needs room while every loaded model is busy waits for one
// to go idle, up to wait_timeout_ms.
//
// Admission: at most max_active requests hold a lease on one model at once (each request
// holds one from before its response starts until its last byte). Overload: at most
// max_waiting requests wait for one model (for its load, for room, or for a turn); more get
// kUnavailable at once (HTTP 503 with Retry-After), as do those still waiting after
// wait_timeout_ms. Unknown names are kNotFound (404), names
// that look like paths kInvalidArgument (400, runtime/model_name.h); a name is only ever
// compared with the names offered, never used as a path.
//
// Idle models unload after their keep-alive (per model, set by the last request that asked,
// else the default); the check runs on every acquire() and list(), so an expired model goes
// at the next request rather than on a timer. Resident models (single-model serve: loaded at
// start) never unload.
//
// Thread-safe. Leases must not outlive the registry (the HTTP server that hands them out
// stops first).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/status.h"
#include "runtime/engine.h"

namespace cohort::runtime {

// Where a model comes from.
struct ModelSource {
  std::string name;  // the id clients use: the file name, e.g. "stories260K.gguf"
  std::string path;  // the file to load
  uint64_t file_bytes = 0;
};

// Loads a model: on this node or onto the cluster, whatever serve does for one model. Called
// without the registry's lock held, on the thread of the request that needs the model.
using ModelLoader = std::function<Result<std::shared_ptr<Engine>>(const ModelSource&)>;

// An engine in use: while any copy is alive the model stays loaded.
using ModelLease = std::shared_ptr<Engine>;

struct ModelRegistryOptions {
  int max_loaded = 0;                // models loaded (or loading) at once; 0: only memory limits
  int max_active = 0;                // requests on one model at once; 0: no limit
  int max_waiting = 16;              // requests that may wait for one model (load, room, turn)
  int64_t wait_timeout_ms = 300000;  // the longest a request waits for a load or for room
  int64_t keep_alive_ms = -1;        // idle time before a model unloads; < 0: never
};

enum class ModelState { kUnloaded, kLoading, kLoaded };

// One model as /v1/models, /api/tags and /api/ps show it.
struct ModelStatus {
  std::string name;
  ModelState state = ModelState::kUnloaded;
  bool resident = false;
  int active = 0;   // leases held
  int waiting = 0;  // requests waiting for it (to load, or for a turn)
  // The engine's model info when loaded; otherwise only file_bytes is known.
  ModelInfo info;
  int64_t last_used_unix_ms = 0;  // 0: never used
  // When an idle model will unload (Unix ms); nullopt: not while it is idle (no keep-alive,
  // resident, in use or not loaded).
  std::optional<int64_t> expires_unix_ms;
};

class ModelRegistry {
 public:
  ModelRegistry(ModelRegistryOptions options, ModelLoader loader);
  ~ModelRegistry();
  ModelRegistry(const ModelRegistry&) = delete;
  ModelRegistry& operator=(const ModelRegistry&) = delete;

  // Offers a model that loads on demand. kInvalidArgument when the name is not a plain
  // name or is already offered.
  Status add_source(ModelSource source);
  // Offers an engine that is already loaded and never unloads, named by its model_name()
  // (any name: it names no file). kInvalidArgument for a name already offered.
  Status add_resident(std::shared_ptr<Engine> engine);

  // The engine of the model `requested` names (runtime/model_name.h; empty: the first model
  // offered), loading it when needed. keep_alive_ms, when given, becomes the model's
  // keep-alive from now on (0: unload as soon as it is idle).
  Result<ModelLease> acquire(std::string_view requested,
                             std::optional<int64_t> keep_alive_ms = std::nullopt);
  // Loads without using: acquire() and let go.
  Status load(std::string_view requested, std::optional<int64_t> keep_alive_ms = std::nullopt);
  // Unloads the model now, or when its last lease goes if it is in use. A no-op for a
  // resident model or one not loaded. kNotFound / kInvalidArgument as acquire().
  Status unload(std::string_view requested);

  // Every model offered, in the order added.
  std::vector<ModelStatus> list();
  // The status of the model `requested` names, without loading it.
  Result<ModelStatus> find(std::string_view requested);
  // False while a resident engine is not ready; models loaded on demand do not count.
  bool ready() const;
  // The loaded engine used last (for the dashboard's figures); null when none is loaded.
  std::shared_ptr<Engine> most_recent() const;
  // How many times the loader has been called (loads tried).
  int64_t loads() const;

 private:
  struct Entry;
  friend struct LeaseGuard;

  Status add_entry(ModelSource source, std::shared_ptr<Engine> resident);
  // Exact names first (safe: only compared); otherwise plain names only, loosely matched.
  Result<size_t> resolve(std::string_view requested) const;  // mu_ held
  ModelStatus status_of(const Entry& e) const;               // mu_ held
  // Unloads idle models whose keep-alive has passed; their engines go into *drop.
  void expire_idle(int64_t now_ms, std::vector<std::shared_ptr<Engine>>* drop);  // mu_ held
  // The least recently used idle, non-resident loaded entry other than `except`; or none.
  std::optional<size_t> eviction_candidate(size_t except) const;  // mu_ held
  int loaded_count(size_t except) const;                          // mu_ held
  // Loads entry `i` (already marked loading and admitted) with the lock released; evicts
  // and retries when the loader says memory is short.
  Status load_entry(size_t i, std::unique_lock<std::mutex>& lock);
  ModelLease lease(size_t i);  // mu_ held; the entry is loaded
  void release(size_t i);      // a lease has gone

  ModelRegistryOptions options_;
  ModelLoader loader_;
  mutable std::mutex mu_;
  std::condition_variable changed_;  // an entry's state or lease count changed
  std::vector<std::unique_ptr<Entry>> entries_;
  int64_t loads_ = 0;
  int64_t use_clock_ = 0;  // orders uses when the wall clock does not tell them apart
};

}  // namespace cohort::runtime
