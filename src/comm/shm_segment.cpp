#include "comm/shm_segment.h"

#include <fcntl.h>
#include <linux/futex.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <climits>
#include <cstdio>
#include <cstring>
#include <new>
#include <thread>

#include "comm/deadline.h"

namespace cohort::comm::shm {
namespace {

constexpr uint32_t kMagic = 0x4d485343;  // "CSHM"
constexpr uint32_t kVersion = 2;
constexpr size_t kPage = 4096;

size_t round_up(size_t v, size_t to) { return (v + to - 1) / to * to; }

std::string errno_text() { return std::strerror(errno); }

// False once the process has exited: gone entirely, or a zombie its parent has not reaped
// yet (kill() still succeeds on a zombie, so /proc is asked too).
bool process_alive(pid_t pid) {
  if (pid <= 0 || pid == ::getpid()) return true;
  if (::kill(pid, 0) != 0 && errno == ESRCH) return false;
  char path[64];
  std::snprintf(path, sizeof(path), "/proc/%d/stat", static_cast<int>(pid));
  FILE* f = std::fopen(path, "r");
  if (f == nullptr) return errno != ENOENT;
  char buf[512];
  const size_t n = std::fread(buf, 1, sizeof(buf) - 1, f);
  std::fclose(f);
  buf[n] = '\0';
  const char* close_paren = std::strrchr(buf, ')');  // the command name may contain ')'
  if (close_paren == nullptr || close_paren[1] != ' ') return true;
  const char state = close_paren[2];
  return state != 'Z' && state != 'X' && state != 'x';
}

void nap(std::chrono::microseconds us) { std::this_thread::sleep_for(us); }

}  // namespace

struct alignas(64) Slot {
  std::atomic<int32_t> state;
  std::atomic<int32_t> pid;
  // The rank's doorbell: a futex word bumped by a peer that moved data the rank may be
  // waiting for, while `sleeping` says the rank is about to wait on it.
  std::atomic<uint32_t> doorbell;
  std::atomic<uint32_t> sleeping;
};
static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t));

struct Segment::Header {
  uint32_t magic;
  uint32_t version;
  uint32_t size;
  uint32_t reserved;
  uint64_t ring_bytes;
  uint64_t total_bytes;
  std::atomic<uint32_t> ready;
  std::atomic<uint32_t> joined;
  Slot slots[kMaxRanks];
};

namespace {

struct Layout {
  size_t control_offset;
  size_t data_offset;
  size_t total;
};

template <typename H>
Layout layout_of(int size, uint64_t ring_bytes) {
  Layout l{};
  const auto pairs = static_cast<size_t>(size) * static_cast<size_t>(size);
  l.control_offset = round_up(sizeof(H), kPage);
  l.data_offset = round_up(l.control_offset + pairs * sizeof(RingControl), kPage);
  l.total = l.data_offset + pairs * ring_bytes;
  return l;
}

}  // namespace

void Ring::write(const void* src, uint64_t bytes) {
  const uint64_t head = control_->head.load(std::memory_order_relaxed);
  const uint64_t pos = head & mask_;
  const uint64_t first = std::min(bytes, capacity_ - pos);
  const auto* s = static_cast<const uint8_t*>(src);
  std::memcpy(data_ + pos, s, first);
  if (bytes > first) std::memcpy(data_, s + first, bytes - first);
  control_->head.store(head + bytes, std::memory_order_release);
}

void Ring::read(void* dst, uint64_t bytes) {
  const uint64_t tail = control_->tail.load(std::memory_order_relaxed);
  const uint64_t pos = tail & mask_;
  const uint64_t first = std::min(bytes, capacity_ - pos);
  auto* d = static_cast<uint8_t*>(dst);
  std::memcpy(d, data_ + pos, first);
  if (bytes > first) std::memcpy(d + first, data_, bytes - first);
  control_->tail.store(tail + bytes, std::memory_order_release);
}

Result<Segment> Segment::join(const std::string& name, int rank, int size, uint64_t ring_bytes,
                              int64_t timeout_ms) {
  const std::string shm_name = (!name.empty() && name[0] == '/') ? name : "/" + name;
  if (shm_name.size() < 2 || shm_name.size() > 255 || shm_name.find('/', 1) != std::string::npos) {
    return Status::invalid_argument("shm: bad segment name '" + name + "'");
  }
  if (size < 1 || size > kMaxRanks || rank < 0 || rank >= size) {
    return Status::invalid_argument("shm: rank " + std::to_string(rank) + " of size " +
                                    std::to_string(size) + " (at most " +
                                    std::to_string(kMaxRanks) + " ranks)");
  }
  if (ring_bytes < kPage || ring_bytes > (uint64_t{1} << 30) ||
      (ring_bytes & (ring_bytes - 1)) != 0) {
    return Status::invalid_argument("shm: ring size " + std::to_string(ring_bytes) +
                                    " must be a power of two in 4 KiB..1 GiB");
  }
  const std::string who = "shm: rank " + std::to_string(rank) + " of '" + shm_name + "': ";
  const Layout layout = layout_of<Header>(size, ring_bytes);
  Deadline deadline(timeout_ms);

  // Create (first rank) or open (the others).
  int fd = -1;
  bool created = false;
  for (;;) {
    fd = ::shm_open(shm_name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd >= 0) {
      created = true;
      break;
    }
    if (errno != EEXIST) return Status::io_error(who + "shm_open: " + errno_text());
    fd = ::shm_open(shm_name.c_str(), O_RDWR, 0);
    if (fd >= 0) break;
    if (errno != ENOENT) return Status::io_error(who + "shm_open: " + errno_text());
    if (deadline.expired()) return Status::timeout(who + "timed out opening the segment");
  }
  if (created && ::ftruncate(fd, static_cast<off_t>(layout.total)) != 0) {
    const std::string err = errno_text();
    ::close(fd);
    ::shm_unlink(shm_name.c_str());
    return Status::io_error(who + "ftruncate to " + std::to_string(layout.total) +
                            " bytes: " + err);
  }
  // An opener may get there before the creator's ftruncate: wait for the size to appear.
  size_t bytes = layout.total;
  while (!created) {
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      const std::string err = errno_text();
      ::close(fd);
      return Status::io_error(who + "fstat: " + err);
    }
    if (st.st_size > 0) {
      bytes = static_cast<size_t>(st.st_size);
      break;
    }
    if (deadline.expired()) {
      ::close(fd);
      return Status::timeout(who + "timed out waiting for the creator to size the segment");
    }
    nap(std::chrono::microseconds(100));
  }
  if (bytes != layout.total) {
    ::close(fd);
    return Status::invalid_argument(who + "the segment has " + std::to_string(bytes) +
                                    " bytes, expected " + std::to_string(layout.total) +
                                    " (a different group size or ring size?)");
  }
  void* base = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int mmap_errno = errno;
  ::close(fd);
  if (base == MAP_FAILED) {
    if (created) ::shm_unlink(shm_name.c_str());
    return Status::io_error(who + "mmap: " + std::strerror(mmap_errno));
  }

  Segment seg;
  seg.base_ = base;
  seg.mapped_bytes_ = bytes;
  seg.size_ = size;
  seg.ring_bytes_ = ring_bytes;
  Header* h = seg.header();
  if (created) {
    new (h) Header{};
    h->magic = kMagic;
    h->version = kVersion;
    h->size = static_cast<uint32_t>(size);
    h->ring_bytes = ring_bytes;
    h->total_bytes = bytes;
    auto* controls =
        reinterpret_cast<RingControl*>(static_cast<uint8_t*>(base) + layout.control_offset);
    for (int i = 0; i < size * size; ++i) new (&controls[i]) RingControl{};
    h->ready.store(1, std::memory_order_release);
  } else {
    while (h->ready.load(std::memory_order_acquire) != 1) {
      if (deadline.expired()) return Status::timeout(who + "timed out waiting for the creator");
      nap(std::chrono::microseconds(100));
    }
    if (h->magic != kMagic || h->version != kVersion) {
      return Status::invalid_argument(who + "not a cohort shm segment of version " +
                                      std::to_string(kVersion));
    }
    if (h->size != static_cast<uint32_t>(size) || h->ring_bytes != ring_bytes ||
        h->total_bytes != bytes) {
      return Status::invalid_argument(who + "the segment is for " + std::to_string(h->size) +
                                      " ranks with " + std::to_string(h->ring_bytes) +
                                      "-byte rings, expected " + std::to_string(size) + " with " +
                                      std::to_string(ring_bytes));
    }
  }

  Slot& mine = h->slots[rank];
  int32_t expected = static_cast<int32_t>(SlotState::kEmpty);
  if (!mine.state.compare_exchange_strong(expected, static_cast<int32_t>(SlotState::kClaiming),
                                          std::memory_order_acq_rel)) {
    return Status::invalid_argument(
        who + "the rank is already taken (pid " + std::to_string(mine.pid.load()) +
        "); a crashed earlier run may have left the segment: use a fresh name");
  }
  mine.pid.store(static_cast<int32_t>(::getpid()), std::memory_order_relaxed);
  mine.state.store(static_cast<int32_t>(SlotState::kJoined), std::memory_order_release);
  seg.rank_ = rank;
  if (h->joined.fetch_add(1, std::memory_order_acq_rel) + 1 == static_cast<uint32_t>(size)) {
    ::shm_unlink(shm_name.c_str());  // everyone has it mapped: the name is no longer needed
  }

  // Wait for the others.
  auto check_process_at = Deadline::Clock::now();
  auto sleep = std::chrono::microseconds(20);
  for (;;) {
    const bool check_process = Deadline::Clock::now() >= check_process_at;
    if (check_process) check_process_at = Deadline::Clock::now() + std::chrono::milliseconds(1);
    std::string missing;
    int gave_up = -1;
    for (int r = 0; r < size; ++r) {
      const auto state = static_cast<SlotState>(h->slots[r].state.load(std::memory_order_acquire));
      if (state == SlotState::kLeft) {
        return Status::unavailable(who + "rank " + std::to_string(r) +
                                   " left before the group formed");
      }
      if (state == SlotState::kGaveUp) gave_up = r;
      if (state == SlotState::kEmpty || state == SlotState::kClaiming) {
        missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      }
      if (state != SlotState::kJoined) continue;
      std::string gone = seg.peer_gone(r, check_process);
      if (!gone.empty()) return Status::unavailable(who + gone + " before the group formed");
    }
    if (missing.empty() && gave_up < 0) {
      seg.formed_ = true;
      return seg;
    }
    if (gave_up >= 0 || deadline.expired()) {
      if (created && h->joined.load() < static_cast<uint32_t>(size)) {
        ::shm_unlink(shm_name.c_str());
      }
      return Status::timeout(
          who + "rank(s) " + missing + " did not join within " + std::to_string(timeout_ms) +
          " ms" + (gave_up >= 0 ? " (rank " + std::to_string(gave_up) + " gave up waiting)" : ""));
    }
    nap(sleep);
    sleep = std::min(sleep * 2, std::chrono::microseconds(1000));
  }
}

Segment& Segment::operator=(Segment&& other) noexcept {
  if (this != &other) {
    release();
    base_ = std::exchange(other.base_, nullptr);
    mapped_bytes_ = std::exchange(other.mapped_bytes_, 0);
    rank_ = std::exchange(other.rank_, -1);
    formed_ = std::exchange(other.formed_, false);
    size_ = std::exchange(other.size_, 0);
    ring_bytes_ = std::exchange(other.ring_bytes_, 0);
  }
  return *this;
}

Segment::~Segment() { release(); }

void Segment::release() {
  if (base_ == nullptr) return;
  if (rank_ >= 0) {
    const SlotState state = formed_ ? SlotState::kLeft : SlotState::kGaveUp;
    header()->slots[rank_].state.store(static_cast<int32_t>(state), std::memory_order_release);
  }
  ::munmap(base_, mapped_bytes_);
  base_ = nullptr;
}

Ring Segment::ring(int from, int to) const {
  const Layout layout = layout_of<Header>(size_, ring_bytes_);
  auto* bytes = static_cast<uint8_t*>(base_);
  const auto index =
      static_cast<size_t>(from) * static_cast<size_t>(size_) + static_cast<size_t>(to);
  auto* controls = reinterpret_cast<RingControl*>(bytes + layout.control_offset);
  return Ring(&controls[index], bytes + layout.data_offset + index * ring_bytes_, ring_bytes_);
}

uint32_t Segment::arm_wait() {
  Slot& mine = header()->slots[rank_];
  const uint32_t seen = mine.doorbell.load(std::memory_order_acquire);
  // Pairs with the read-modify-write in notify(): both are RMWs on `sleeping`, so one comes
  // first in its modification order. Either the peer's comes later and sees 1 (it rings), or
  // ours reads what the peer's wrote and so acquires the data the peer published before it
  // (the re-check that follows this call sees it). RMWs, not fences, because
  // ThreadSanitizer models these and not std::atomic_thread_fence.
  mine.sleeping.exchange(1, std::memory_order_seq_cst);
  return seen;
}

void Segment::wait(uint32_t seen, std::chrono::microseconds timeout) {
  Slot& mine = header()->slots[rank_];
  const auto us = timeout.count();
  timespec ts{static_cast<time_t>(us / 1'000'000), static_cast<long>(us % 1'000'000) * 1000};
  // Shared (not FUTEX_PRIVATE) so that other processes' wakes reach it. EAGAIN (the doorbell
  // already rang), EINTR and ETIMEDOUT all just return to the caller's re-check.
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&mine.doorbell), FUTEX_WAIT, seen, &ts, nullptr,
            0);
  mine.sleeping.store(0, std::memory_order_relaxed);
}

void Segment::disarm_wait() { header()->slots[rank_].sleeping.store(0, std::memory_order_relaxed); }

void Segment::notify(int peer) {
  Slot& slot = header()->slots[peer];
  // An RMW, not a plain load: see arm_wait().
  if (slot.sleeping.fetch_add(0, std::memory_order_seq_cst) == 0) return;
  slot.doorbell.fetch_add(1, std::memory_order_release);
  ::syscall(SYS_futex, reinterpret_cast<uint32_t*>(&slot.doorbell), FUTEX_WAKE, INT_MAX, nullptr,
            nullptr, 0);
}

std::string Segment::peer_gone(int peer, bool check_process) const {
  const Slot& slot = header()->slots[peer];
  const auto state = static_cast<SlotState>(slot.state.load(std::memory_order_acquire));
  if (state == SlotState::kLeft || state == SlotState::kGaveUp) {
    return "rank " + std::to_string(peer) + " left the group";
  }
  if (check_process && state == SlotState::kJoined) {
    const pid_t pid = slot.pid.load(std::memory_order_relaxed);
    if (!process_alive(pid)) {
      return "rank " + std::to_string(peer) + " (pid " + std::to_string(pid) + ") has exited";
    }
  }
  return "";
}

}  // namespace cohort::comm::shm
