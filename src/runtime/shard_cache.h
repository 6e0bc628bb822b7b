// Shard files a worker received from a head, kept on disk by shard key
// (model::shard_key: source model + shard + layout version), so a worker serving the same
// model again, or restarting, needs no transfer. Beside each <key>.gguf sits <key>.xxh128,
// the content hash verified when it arrived; the file is hashed again in full before it is
// used, so a truncated or damaged file is never loaded (it is deleted and shipped again).
// Files arrive as <key>.gguf.partial and are renamed only once complete and verified.
#pragma once

#include <cstdint>
#include <string>

#include "core/status.h"

namespace cohort::runtime {

struct ContentHash {
  uint64_t lo = 0, hi = 0;  // XXH3-128
  bool operator==(const ContentHash&) const = default;
  std::string hex() const;
};

// Incremental XXH3-128 over a stream of bytes.
class ContentHasher {
 public:
  ContentHasher();
  ~ContentHasher();
  ContentHasher(ContentHasher&& o) noexcept : state_(o.state_) { o.state_ = nullptr; }
  ContentHasher(const ContentHasher&) = delete;
  ContentHasher& operator=(const ContentHasher&) = delete;
  void update(const void* p, size_t n);
  ContentHash digest() const;

 private:
  void* state_;
};

// XXH3-128 of a whole file, read in blocks.
Result<ContentHash> hash_file(const std::string& path);

class ShardCache {
 public:
  // dir is created (with parents) on first use.
  explicit ShardCache(std::string dir) : dir_(std::move(dir)) {}
  // $XDG_CACHE_HOME/cohort/shards, else $HOME/.cache/cohort/shards, else /tmp/cohort-shards.
  static std::string default_dir();

  const std::string& dir() const { return dir_; }
  std::string path(const std::string& key) const { return dir_ + "/" + key + ".gguf"; }

  // The path of a complete, verified shard; kNotFound when absent; kCorrupt (and the files
  // are removed) when the content no longer matches its recorded hash.
  Result<std::string> find(const std::string& key) const;

  // Receiving one shard.
  class Incoming {
   public:
    ~Incoming();
    Incoming(Incoming&&) noexcept;
    Incoming& operator=(Incoming&&) = delete;
    Status append(const void* p, size_t n);
    uint64_t received() const { return received_; }
    // Checks the size and hash, then publishes the file; returns its path.
    Result<std::string> finish(const ContentHash& expected);

   private:
    friend class ShardCache;
    Incoming(const ShardCache& c, std::string key, uint64_t total, int fd);
    const ShardCache* cache_;
    std::string key_;
    uint64_t total_, received_ = 0;
    int fd_;
    ContentHasher hasher_;
  };
  // Opens <key>.gguf.partial for total bytes; kUnavailable when the disk lacks the space.
  Result<Incoming> begin(const std::string& key, uint64_t total) const;

 private:
  Status ensure_dir() const;
  std::string dir_;
};

}  // namespace cohort::runtime
