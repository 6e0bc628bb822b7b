// Internal to the shm backend: the shared segment of one group (layout, creation, joining,
// liveness of the ranks) and the byte rings inside it. See shm_communicator.h for the
// protocol; nothing here is for use outside comm/.
#pragma once

#include <sys/types.h>

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/status.h"

namespace cohort::comm::shm {

inline constexpr int kMaxRanks = 64;

// One ordered pair's ring: head = bytes ever written (producer's), tail = bytes ever read
// (consumer's); both only grow. head - tail <= capacity.
struct RingControl {
  alignas(64) std::atomic<uint64_t> head;
  alignas(64) std::atomic<uint64_t> tail;
};
static_assert(std::atomic<uint64_t>::is_always_lock_free);
static_assert(sizeof(RingControl) == 128);

// Producer or consumer view of one ring.
class Ring {
 public:
  Ring() = default;
  Ring(RingControl* control, uint8_t* data, uint64_t capacity)
      : control_(control), data_(data), mask_(capacity - 1), capacity_(capacity) {}

  // Producer: bytes that can be written now; write() then publishes them.
  uint64_t writable() const {
    const uint64_t head = control_->head.load(std::memory_order_relaxed);
    return capacity_ - (head - control_->tail.load(std::memory_order_acquire));
  }
  void write(const void* src, uint64_t bytes);

  // Consumer: bytes that can be read now; read() then consumes them.
  uint64_t readable() const {
    const uint64_t tail = control_->tail.load(std::memory_order_relaxed);
    return control_->head.load(std::memory_order_acquire) - tail;
  }
  void read(void* dst, uint64_t bytes);

 private:
  RingControl* control_ = nullptr;
  uint8_t* data_ = nullptr;
  uint64_t mask_ = 0;
  uint64_t capacity_ = 0;
};

// kGaveUp: the rank timed out before the group formed (its peers then time out too).
enum class SlotState : int32_t { kEmpty = 0, kClaiming = 1, kJoined = 2, kLeft = 3, kGaveUp = 4 };

// A mapped group segment. Move-only; unmaps on destruction after marking this rank as left.
class Segment {
 public:
  // Creates or opens `name` and joins as `rank`, waiting until all `size` ranks joined.
  static Result<Segment> join(const std::string& name, int rank, int size, uint64_t ring_bytes,
                              int64_t timeout_ms);

  Segment() = default;
  Segment(Segment&& other) noexcept { *this = std::move(other); }
  Segment& operator=(Segment&& other) noexcept;
  ~Segment();
  Segment(const Segment&) = delete;
  Segment& operator=(const Segment&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  Ring ring(int from, int to) const;

  // Sleeping until a peer moves data: arm_wait() announces the wait and returns the doorbell
  // value to pass to wait(); the caller re-checks its rings in between (and calls
  // disarm_wait() instead if something arrived). wait() returns when the doorbell rings or
  // after `timeout`, whichever is first. notify(peer) rings the peer's doorbell if it sleeps
  // (one atomic read-modify-write of a shared line when it does not).
  uint32_t arm_wait();
  void wait(uint32_t seen, std::chrono::microseconds timeout);
  void disarm_wait();
  void notify(int peer);

  // Empty when `peer` is present; otherwise why not ("rank 1 left the group", "rank 1 (pid 7)
  // has exited"). check_process also asks the OS about the peer's process (a system call
  // and a /proc read: call it at most every millisecond or so).
  std::string peer_gone(int peer, bool check_process) const;

 private:
  struct Header;
  Header* header() const { return static_cast<Header*>(base_); }
  void release();

  void* base_ = nullptr;
  size_t mapped_bytes_ = 0;
  int rank_ = -1;        // >= 0 once this rank's slot is claimed
  bool formed_ = false;  // every rank joined
  int size_ = 0;
  uint64_t ring_bytes_ = 0;
};

}  // namespace cohort::comm::shm
