// P2PCommunicator: collectives built on a communicator's own point-to-point messages, so a
// transport (tcp, shm) or a decorator (delay, subgroup) implements only send/recv and gets
// all_reduce_sum, all_gather, broadcast and barrier that behave the same on every transport.
//
// Algorithms (n = size()):
//  - all_reduce_sum of <= kOneStepMaxBytes: one-step exchange. Every rank sends its whole
//    vector to every other rank and sums the n vectors in rank order (0 + v0 + v1 + ...).
//  - larger: reduce-scatter + all-gather in n-1 pairwise rounds each (round k: send to
//    rank+k, receive from rank-k). Chunk c is reduced by its owner, rank c, in rank order,
//    and then distributed as the owner's bytes. Each rank moves the same bytes as a ring
//    ((n-1)/n of the vector each way), but the sum is in rank order, so every size and every
//    transport gives the result bit-identical to the one-step path and to the in-process
//    reference group, on every rank.
//  - all_gather: one-step exchange up to kOneStepMaxBytes per rank, else n-1 pairwise rounds.
//  - broadcast: the root sends to every other rank.
//  - barrier: one-step exchange of one-byte messages.
//
// Timeouts: each collective's timeout_ms bounds the whole call (every step shares one
// deadline). Errors of the steps are returned as they are (kTimeout, kUnavailable,
// kCorrupt), so the message names the transport and the peer.
//
// Ordering contract: collectives and point-to-point messages share the transport's per-pair
// streams, so every rank must call them in the same order (as for any Communicator); a
// point-to-point message still unreceived when a collective starts would be read by it.
//
// Thread-safety: as Communicator (one driving thread at a time).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "comm/communicator.h"

namespace cohort::comm {

// Up to this many bytes per message, collectives use one step in which every rank sends
// before it receives; a transport must be able to buffer that much per pair without the
// receiver reading (socket buffers, shared-memory rings), or override exchange().
inline constexpr size_t kOneStepMaxBytes = 64 * 1024;

// One message of an exchange().
struct SendSpec {
  int peer;
  const void* data;
  size_t bytes;
};
struct RecvSpec {
  int peer;
  void* data;
  size_t bytes;
};

class P2PCommunicator : public Communicator {
 public:
  Status all_reduce_sum(float* data, size_t n, int64_t timeout_ms) override;
  Status all_gather(const void* in, void* out, size_t bytes_per_rank, int64_t timeout_ms) override;
  Status broadcast(void* data, size_t bytes, int root, int64_t timeout_ms) override;
  Status barrier(int64_t timeout_ms) override;

  // Sends `sbytes` to `to` while receiving `rbytes` from `from` (to may equal from). Must not
  // deadlock when every rank of a permutation calls it at once, whatever the message sizes.
  // Default: ordered_send_recv() over this communicator's send/recv. Transports that can
  // overlap the two directions override it.
  virtual Status send_recv(int to, const void* sdata, size_t sbytes, int from, void* rdata,
                           size_t rbytes, int64_t timeout_ms);

  // Performs every send and every receive (at most one of each per peer), in any
  // interleaving; returns when all are done or one failed. Only used with messages of at
  // most kOneStepMaxBytes. Default: exchange_in_order() over this communicator's send/recv.
  virtual Status exchange(std::span<const SendSpec> sends, std::span<const RecvSpec> recvs,
                          int64_t timeout_ms);
};

// The default send_recv over any communicator: a rank sends first when its rank is lower than
// `from`'s and receives first otherwise. In every cycle of a permutation the lowest rank
// sends first and the highest receives first, so blocking sends cannot deadlock.
Status ordered_send_recv(Communicator& c, int to, const void* sdata, size_t sbytes, int from,
                         void* rdata, size_t rbytes, int64_t timeout_ms);

// The default exchange over any communicator: all sends in order, then all receives (relies on
// sends of at most kOneStepMaxBytes completing without the receiver).
Status exchange_in_order(Communicator& c, std::span<const SendSpec> sends,
                         std::span<const RecvSpec> recvs, int64_t timeout_ms);

}  // namespace cohort::comm
