// Helpers for the comm tests: groups of every backend with ranks as threads of this process,
// and a runner that drives one function per rank on its own thread.
#pragma once

#include <unistd.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "comm/communicator.h"
#include "comm/delay_communicator.h"
#include "comm/in_process_group.h"
#include "comm/shm_communicator.h"
#include "comm/tcp_communicator.h"
#include "core/status.h"
#include "net/cluster_key.h"

namespace cohort::comm::testing {

using Group = std::vector<std::unique_ptr<Communicator>>;

// Milliseconds of the steady clock since t.
inline int64_t ms_since(std::chrono::steady_clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t)
      .count();
}

// Runs fn(rank) for every rank on its own thread; returns each rank's Status.
inline std::vector<Status> run_ranks(int n, const std::function<Status(int)>& fn) {
  std::vector<Status> out(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] { out[static_cast<size_t>(r)] = fn(r); });
  }
  for (auto& t : threads) t.join();
  return out;
}

// A shm segment name no other test or process uses.
inline std::string unique_shm_name() {
  static std::atomic<int> counter{0};
  return "/cohort-comm-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
}

inline const net::ClusterKey& test_key() {
  static const net::ClusterKey key = [] {
    net::ClusterKey k;
    for (size_t i = 0; i < k.bytes.size(); ++i) k.bytes[i] = static_cast<uint8_t>(i * 7 + 1);
    return k;
  }();
  return key;
}

// Listeners on 127.0.0.1, one per rank, and their endpoints.
struct TcpSetup {
  std::vector<TcpMeshListener> listeners;
  std::vector<net::HostPort> endpoints;
};

inline Result<TcpSetup> tcp_listen(int n) {
  TcpSetup s;
  for (int r = 0; r < n; ++r) {
    COHORT_ASSIGN_OR_RETURN(TcpMeshListener l, TcpMeshListener::listen({"127.0.0.1", 0}));
    s.endpoints.push_back({"127.0.0.1", l.port()});
    s.listeners.push_back(std::move(l));
  }
  return s;
}

// sealed: every link encrypted (--encrypt).
inline Result<Group> make_tcp_group(int n, bool busy_poll = false, bool sealed = false) {
  COHORT_ASSIGN_OR_RETURN(TcpSetup setup, tcp_listen(n));
  Group group(static_cast<size_t>(n));
  TcpOptions opts;
  opts.key = test_key();
  opts.key.encrypt_traffic = sealed;
  opts.busy_poll = busy_poll;
  opts.connect_timeout_ms = 10000;
  std::vector<Status> st = run_ranks(n, [&](int r) -> Status {
    auto c = std::move(setup.listeners[static_cast<size_t>(r)]).connect(r, setup.endpoints, opts);
    if (!c.is_ok()) return c.status();
    group[static_cast<size_t>(r)] = std::move(c).value();
    return Status::ok();
  });
  for (const Status& s : st) COHORT_RETURN_IF_ERROR(s);
  return group;
}

inline Result<Group> make_shm_group(int n, const ShmOptions& options = {}) {
  const std::string name = unique_shm_name();
  Group group(static_cast<size_t>(n));
  std::vector<Status> st = run_ranks(n, [&](int r) -> Status {
    auto c = make_shm_communicator(name, r, n, 10000, options);
    if (!c.is_ok()) return c.status();
    group[static_cast<size_t>(r)] = std::move(c).value();
    return Status::ok();
  });
  for (const Status& s : st) COHORT_RETURN_IF_ERROR(s);
  return group;
}

// "in_process", "tcp", "tcp_busy", "tcp_sealed" (encrypted links), "shm", "shm_tiny_ring"
// (4 KiB rings: every message streams and wraps), "delay_tcp" (50 us per hop),
// "delay_in_process".
inline Result<Group> make_group(const std::string& backend, int n) {
  if (backend == "in_process") return make_in_process_group(n);
  if (backend == "tcp") return make_tcp_group(n, false);
  if (backend == "tcp_sealed") return make_tcp_group(n, false, true);
  if (backend == "tcp_busy") return make_tcp_group(n, true);
  if (backend == "shm") return make_shm_group(n);
  if (backend == "shm_tiny_ring") {
    ShmOptions o;
    o.ring_bytes = 4096;
    return make_shm_group(n, o);
  }
  if (backend == "delay_tcp" || backend == "delay_in_process") {
    Group inner;
    if (backend == "delay_tcp") {
      COHORT_ASSIGN_OR_RETURN(inner, make_tcp_group(n));
    } else {
      inner = make_in_process_group(n);
    }
    Group group;
    for (auto& c : inner) group.push_back(make_delay_communicator(std::move(c), 50));
    return group;
  }
  return Status::invalid_argument("test: unknown backend " + backend);
}

}  // namespace cohort::comm::testing
