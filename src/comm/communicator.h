// The only view of "other nodes" that model/ has. A group of size() ranks; collectives are
// called by every rank in the same order. Every blocking call takes a timeout and returns
// kTimeout/kUnavailable instead of hanging when a peer is slow or gone.
//
// Thread-safety: one thread drives a communicator at a time (the engine loop).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"

namespace cohort::comm {

inline constexpr int64_t kDefaultTimeoutMs = 30'000;

class Communicator {
 public:
  virtual ~Communicator() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual std::string name() const = 0;  // backend name: "local", "tcp", "shm", ...

  virtual Status send(int peer, const void* data, size_t bytes, int64_t timeout_ms) = 0;
  virtual Status recv(int peer, void* data, size_t bytes, int64_t timeout_ms) = 0;
  // Element-wise sum of n floats across all ranks, result on every rank, in place.
  virtual Status all_reduce_sum(float* data, size_t n, int64_t timeout_ms) = 0;
  // Each rank contributes bytes_per_rank bytes from in; out receives size() blocks in rank
  // order.
  virtual Status all_gather(const void* in, void* out, size_t bytes_per_rank,
                            int64_t timeout_ms) = 0;
  // root's bytes are copied to every rank, in place.
  virtual Status broadcast(void* data, size_t bytes, int root, int64_t timeout_ms) = 0;
  virtual Status barrier(int64_t timeout_ms) = 0;
};

// A group of one: collectives are no-ops (all_gather copies), point-to-point is an error.
std::unique_ptr<Communicator> make_local_communicator();

}  // namespace cohort::comm
