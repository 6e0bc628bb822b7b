// Ranks on one host talking through POSIX shared memory: the low-latency transport that
// stands in for RDMA on machines without it.
//
// Layout: one segment (shm_open + mmap) per group, holding a header (size, version, ring
// size, a slot per rank with its state and pid) and, per ordered pair i -> j, a
// single-producer single-consumer byte ring of fixed capacity whose head and tail are
// std::atomic<uint64_t> on their own cache lines. Each message is an 8-byte length followed
// by the payload; messages larger than the ring are streamed through it in pieces, and every
// length is checked against what the receiver expects (kCorrupt otherwise, and that stream is
// then considered broken).
//
// Forming the group: every rank calls make_shm_communicator(name, rank, size, timeout_ms).
// The first to create the segment (O_EXCL) initialises it; the others wait for its ready
// flag. Each rank claims its slot (a slot already taken, for instance by a crashed earlier
// run of the same name, is an error: use a fresh name per launch), then waits until all
// ranks have joined (kTimeout otherwise). The last rank to join shm_unlinks the name, so
// nothing is left behind in /dev/shm even if a process dies later.
//
// Waiting: a wait spins for spin_us (lowest hand-off latency when the peer is about to
// arrive), then sleeps on the rank's doorbell, a futex word in its slot that a peer rings
// (FUTEX_WAKE, shared across processes) only when it moved data this rank may be waiting for
// and this rank announced that it sleeps; so a waiter costs no CPU, wakes as fast as the
// scheduler allows, and the sender pays a system call only for a sleeping receiver. Sleeps
// last at most 1 ms, after which the wait re-checks its rings, its deadline, and its peers'
// slots: a peer whose communicator was destroyed, or whose process has exited (kill(pid, 0),
// or a zombie in /proc), gives kUnavailable
// within about a millisecond instead of a timeout-length hang.
//
// Thread-safety: as Communicator (one driving thread per rank). Ranks may be threads of one
// process or separate processes.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "comm/communicator.h"
#include "core/status.h"

namespace cohort::comm {

struct ShmOptions {
  // Capacity of each ordered pair's ring, a power of two >= 4096. All ranks must agree (the
  // creator's value is checked by the others).
  size_t ring_bytes = size_t{4} << 20;
  // How long a wait spins before it starts sleeping.
  int64_t spin_us = 50;
};

// name: a POSIX shm name ("/cohort-1234" or "cohort-1234"; a leading '/' is added), unique per
// group launch. 0 <= rank < size <= 64. name() of the result is "shm".
Result<std::unique_ptr<Communicator>> make_shm_communicator(const std::string& name, int rank,
                                                            int size, int64_t timeout_ms);
Result<std::unique_ptr<Communicator>> make_shm_communicator(const std::string& name, int rank,
                                                            int size, int64_t timeout_ms,
                                                            const ShmOptions& options);

}  // namespace cohort::comm
