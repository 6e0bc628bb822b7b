#include "comm/collectives.h"

#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "comm/deadline.h"

namespace cohort::comm {
namespace {

// The first element of chunk c when n elements are split into `parts` near-equal chunks.
size_t chunk_begin(size_t n, int parts, int c) {
  // n * c cannot overflow for any n that fits in memory as floats (n < 2^62, c < 2^31 is not
  // guaranteed), so split the product.
  const size_t q = n / static_cast<size_t>(parts);
  const size_t r = n % static_cast<size_t>(parts);
  const auto uc = static_cast<size_t>(c);
  return q * uc + (r * uc) / static_cast<size_t>(parts);
}

// acc[i] = 0 + src[0][i] + src[1][i] + ... in that order, so every caller that passes the
// same vectors in the same order gets the same bits.
void sum_in_rank_order(const std::vector<const float*>& src, size_t n, float* acc) {
  for (size_t i = 0; i < n; ++i) acc[i] = 0.0f;
  for (const float* s : src) {
    for (size_t i = 0; i < n; ++i) acc[i] += s[i];
  }
}

}  // namespace

Status ordered_send_recv(Communicator& c, int to, const void* sdata, size_t sbytes, int from,
                         void* rdata, size_t rbytes, int64_t timeout_ms) {
  Deadline deadline(timeout_ms);
  if (c.rank() < from) {
    COHORT_RETURN_IF_ERROR(c.send(to, sdata, sbytes, deadline.remaining_ms()));
    return c.recv(from, rdata, rbytes, deadline.remaining_ms());
  }
  COHORT_RETURN_IF_ERROR(c.recv(from, rdata, rbytes, deadline.remaining_ms()));
  return c.send(to, sdata, sbytes, deadline.remaining_ms());
}

Status exchange_in_order(Communicator& c, std::span<const SendSpec> sends,
                         std::span<const RecvSpec> recvs, int64_t timeout_ms) {
  Deadline deadline(timeout_ms);
  for (const SendSpec& s : sends) {
    COHORT_RETURN_IF_ERROR(c.send(s.peer, s.data, s.bytes, deadline.remaining_ms()));
  }
  for (const RecvSpec& r : recvs) {
    COHORT_RETURN_IF_ERROR(c.recv(r.peer, r.data, r.bytes, deadline.remaining_ms()));
  }
  return Status::ok();
}

Status P2PCommunicator::send_recv(int to, const void* sdata, size_t sbytes, int from, void* rdata,
                                  size_t rbytes, int64_t timeout_ms) {
  return ordered_send_recv(*this, to, sdata, sbytes, from, rdata, rbytes, timeout_ms);
}

Status P2PCommunicator::exchange(std::span<const SendSpec> sends, std::span<const RecvSpec> recvs,
                                 int64_t timeout_ms) {
  return exchange_in_order(*this, sends, recvs, timeout_ms);
}

Status P2PCommunicator::all_reduce_sum(float* data, size_t n, int64_t timeout_ms) {
  const int size = this->size();
  const int me = rank();
  if (size == 1 || n == 0) return Status::ok();
  if (n > std::numeric_limits<size_t>::max() / sizeof(float) / static_cast<size_t>(size)) {
    return Status::invalid_argument(name() + ": all_reduce_sum of " + std::to_string(n) +
                                    " floats is too large");
  }
  Deadline deadline(timeout_ms);
  const size_t bytes = n * sizeof(float);

  if (bytes <= kOneStepMaxBytes) {
    std::vector<float> others(static_cast<size_t>(size - 1) * n);
    std::vector<SendSpec> sends;
    std::vector<RecvSpec> recvs;
    std::vector<const float*> order;
    for (int p = 0, slot = 0; p < size; ++p) {
      if (p == me) {
        order.push_back(data);
        continue;
      }
      float* dst = others.data() + static_cast<size_t>(slot++) * n;
      sends.push_back({p, data, bytes});
      recvs.push_back({p, dst, bytes});
      order.push_back(dst);
    }
    COHORT_RETURN_IF_ERROR(exchange(sends, recvs, deadline.remaining_ms()));
    std::vector<float> acc(n);
    sum_in_rank_order(order, n, acc.data());
    std::memcpy(data, acc.data(), bytes);
    return Status::ok();
  }

  // Reduce-scatter: rank `me` owns chunk `me` and collects every rank's copy of it.
  const size_t my_begin = chunk_begin(n, size, me);
  const size_t my_len = chunk_begin(n, size, me + 1) - my_begin;
  std::vector<float> others(static_cast<size_t>(size) * my_len);  // slot p: rank p's chunk
  for (int k = 1; k < size; ++k) {
    const int to = (me + k) % size;
    const int from = (me - k + size) % size;
    const size_t to_begin = chunk_begin(n, size, to);
    const size_t to_len = chunk_begin(n, size, to + 1) - to_begin;
    COHORT_RETURN_IF_ERROR(send_recv(to, data + to_begin, to_len * sizeof(float), from,
                                     others.data() + static_cast<size_t>(from) * my_len,
                                     my_len * sizeof(float), deadline.remaining_ms()));
  }
  std::vector<const float*> order;
  for (int p = 0; p < size; ++p) {
    order.push_back(p == me ? data + my_begin : others.data() + static_cast<size_t>(p) * my_len);
  }
  std::vector<float> acc(my_len);
  sum_in_rank_order(order, my_len, acc.data());
  if (my_len > 0) std::memcpy(data + my_begin, acc.data(), my_len * sizeof(float));

  // All-gather: every owner's reduced chunk, as its bytes, to every rank.
  for (int k = 1; k < size; ++k) {
    const int to = (me + k) % size;
    const int from = (me - k + size) % size;
    const size_t from_begin = chunk_begin(n, size, from);
    const size_t from_len = chunk_begin(n, size, from + 1) - from_begin;
    COHORT_RETURN_IF_ERROR(send_recv(to, data + my_begin, my_len * sizeof(float), from,
                                     data + from_begin, from_len * sizeof(float),
                                     deadline.remaining_ms()));
  }
  return Status::ok();
}

Status P2PCommunicator::all_gather(const void* in, void* out, size_t bytes_per_rank,
                                   int64_t timeout_ms) {
  const int size = this->size();
  const int me = rank();
  if (bytes_per_rank > std::numeric_limits<size_t>::max() / static_cast<size_t>(size)) {
    return Status::invalid_argument(name() + ": all_gather of " + std::to_string(bytes_per_rank) +
                                    " bytes per rank is too large");
  }
  auto* base = static_cast<uint8_t*>(out);
  auto block = [&](int r) { return base + static_cast<size_t>(r) * bytes_per_rank; };
  uint8_t* mine = block(me);
  if (bytes_per_rank > 0 && in != mine) std::memmove(mine, in, bytes_per_rank);
  if (size == 1) return Status::ok();
  Deadline deadline(timeout_ms);

  if (bytes_per_rank <= kOneStepMaxBytes) {
    std::vector<SendSpec> sends;
    std::vector<RecvSpec> recvs;
    for (int p = 0; p < size; ++p) {
      if (p == me) continue;
      sends.push_back({p, mine, bytes_per_rank});
      recvs.push_back({p, block(p), bytes_per_rank});
    }
    return exchange(sends, recvs, deadline.remaining_ms());
  }
  for (int k = 1; k < size; ++k) {
    const int to = (me + k) % size;
    const int from = (me - k + size) % size;
    COHORT_RETURN_IF_ERROR(send_recv(to, mine, bytes_per_rank, from, block(from), bytes_per_rank,
                                     deadline.remaining_ms()));
  }
  return Status::ok();
}

Status P2PCommunicator::broadcast(void* data, size_t bytes, int root, int64_t timeout_ms) {
  const int size = this->size();
  const int me = rank();
  if (root < 0 || root >= size) {
    return Status::invalid_argument(name() + ": rank " + std::to_string(me) + ": broadcast root " +
                                    std::to_string(root) + " is not in a group of " +
                                    std::to_string(size));
  }
  if (size == 1) return Status::ok();
  Deadline deadline(timeout_ms);
  if (me != root) return recv(root, data, bytes, deadline.remaining_ms());
  if (bytes <= kOneStepMaxBytes) {
    std::vector<SendSpec> sends;
    for (int p = 0; p < size; ++p) {
      if (p != me) sends.push_back({p, data, bytes});
    }
    return exchange(sends, {}, deadline.remaining_ms());
  }
  for (int p = 0; p < size; ++p) {
    if (p == me) continue;
    COHORT_RETURN_IF_ERROR(send(p, data, bytes, deadline.remaining_ms()));
  }
  return Status::ok();
}

Status P2PCommunicator::barrier(int64_t timeout_ms) {
  const int size = this->size();
  const int me = rank();
  if (size == 1) return Status::ok();
  // One byte each way rather than none: some transports treat an empty message specially.
  static const uint8_t kToken = 1;
  std::vector<uint8_t> sink(static_cast<size_t>(size));
  std::vector<SendSpec> sends;
  std::vector<RecvSpec> recvs;
  for (int p = 0; p < size; ++p) {
    if (p == me) continue;
    sends.push_back({p, &kToken, 1});
    recvs.push_back({p, &sink[static_cast<size_t>(p)], 1});
  }
  return exchange(sends, recvs, timeout_ms);
}

}  // namespace cohort::comm
