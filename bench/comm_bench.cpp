// Latency of all-reduces on 2 ranks (threads of this process) per transport: the figure that
// decides whether tensor parallelism pays (DESIGN.md). Rank 1 runs on a helper thread; rank 0
// is timed call by call, and the median and p99 are reported as counters (microseconds).
// The *_sealed tcp variants run with --encrypt's sealed links (net/secure_channel.h), so the
// cost of encryption is the difference to the plain tcp line of the same size.
//
//   comm_bench --benchmark_filter=8KiB
//   comm_bench --benchmark_filter='tcp.*(8KiB|16MiB)'
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "comm/delay_communicator.h"
#include "comm/in_process_group.h"
#include "comm/shm_communicator.h"
#include "comm/tcp_communicator.h"

namespace cohort::comm {
namespace {

using Group = std::vector<std::unique_ptr<Communicator>>;
constexpr int64_t kTimeoutMs = 30000;

Result<Group> tcp_group(bool busy_poll, bool sealed = false) {
  std::vector<TcpMeshListener> listeners;
  std::vector<net::HostPort> endpoints;
  for (int r = 0; r < 2; ++r) {
    COHORT_ASSIGN_OR_RETURN(TcpMeshListener l, TcpMeshListener::listen({"127.0.0.1", 0}));
    endpoints.push_back({"127.0.0.1", l.port()});
    listeners.push_back(std::move(l));
  }
  TcpOptions opts;
  opts.busy_poll = busy_poll;
  opts.key.encrypt_traffic = sealed;
  Group g(2);
  Status peer_status;
  std::thread peer([&] {
    auto c = std::move(listeners[1]).connect(1, endpoints, opts);
    if (c.is_ok()) g[1] = std::move(c).value();
    peer_status = c.status();
  });
  auto c = std::move(listeners[0]).connect(0, endpoints, opts);
  peer.join();
  if (!c.is_ok()) return c.status();
  COHORT_RETURN_IF_ERROR(peer_status);
  g[0] = std::move(c).value();
  return g;
}

Result<Group> shm_group(int64_t spin_us = ShmOptions{}.spin_us) {
  ShmOptions options;
  options.spin_us = spin_us;
  static std::atomic<int> counter{0};
  const std::string name =
      "/cohort-comm-bench-" + std::to_string(::getpid()) + "-" + std::to_string(counter++);
  Group g(2);
  Status peer_status;
  std::thread peer([&] {
    auto c = make_shm_communicator(name, 1, 2, kTimeoutMs, options);
    if (c.is_ok()) g[1] = std::move(c).value();
    peer_status = c.status();
  });
  auto c = make_shm_communicator(name, 0, 2, kTimeoutMs, options);
  peer.join();
  if (!c.is_ok()) return c.status();
  COHORT_RETURN_IF_ERROR(peer_status);
  g[0] = std::move(c).value();
  return g;
}

Result<Group> make_group(const std::string& backend) {
  if (backend == "in_process") return make_in_process_group(2);
  if (backend == "tcp") return tcp_group(false);
  if (backend == "tcp_busy_poll") return tcp_group(true);
  if (backend == "tcp_sealed") return tcp_group(false, true);
  if (backend == "tcp_busy_poll_sealed") return tcp_group(true, true);
  if (backend == "shm") return shm_group();
  if (backend == "shm_nospin") return shm_group(0);
  if (backend == "shm_spin500us") return shm_group(500);
  if (backend == "delay5us_shm") {
    COHORT_ASSIGN_OR_RETURN(Group inner, shm_group());
    Group g;
    for (auto& c : inner) g.push_back(make_delay_communicator(std::move(c), 5));
    return g;
  }
  return Status::invalid_argument("bench: unknown backend " + backend);
}

void BM_AllReduce(benchmark::State& state, const std::string& backend, size_t bytes) {
  auto g = make_group(backend);
  if (!g.is_ok()) {
    state.SkipWithError(g.status().message().c_str());
    return;
  }
  Group& group = g.value();
  const size_t n = bytes / sizeof(float);
  const auto iterations = static_cast<int64_t>(state.max_iterations);
  std::vector<float> peer_data(n, 1.0f);
  Status peer_status;
  std::thread peer([&] {
    for (int64_t i = 0; i < iterations && peer_status.is_ok(); ++i) {
      peer_status = group[1]->all_reduce_sum(peer_data.data(), n, kTimeoutMs);
    }
  });
  std::vector<float> data(n, 1.0f);
  std::vector<double> us;
  us.reserve(static_cast<size_t>(iterations));
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    const Status st = group[0]->all_reduce_sum(data.data(), n, kTimeoutMs);
    us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start)
                     .count());
    if (!st.is_ok()) {
      state.SkipWithError(st.message().c_str());
      break;
    }
  }
  peer.join();
  if (!peer_status.is_ok()) state.SkipWithError(peer_status.message().c_str());
  std::sort(us.begin(), us.end());
  if (!us.empty()) {
    state.counters["p50_us"] = us[us.size() / 2];
    state.counters["p99_us"] = us[std::min(us.size() - 1, us.size() * 99 / 100)];
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(bytes));
}

constexpr size_t k8KiB = 8 * 1024;
constexpr size_t k1MiB = 1024 * 1024;
constexpr size_t k16MiB = 16 * k1MiB;

BENCHMARK_CAPTURE(BM_AllReduce, in_process_8KiB, std::string("in_process"), k8KiB)
    ->Iterations(20000)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, tcp_8KiB, std::string("tcp"), k8KiB)
    ->Iterations(5000)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, tcp_busy_poll_8KiB, std::string("tcp_busy_poll"), k8KiB)
    ->Iterations(20000)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, tcp_sealed_8KiB, std::string("tcp_sealed"), k8KiB)
    ->Iterations(5000)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, tcp_busy_poll_sealed_8KiB, std::string("tcp_busy_poll_sealed"),
                  k8KiB)
    ->Iterations(20000)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, shm_8KiB, std::string("shm"), k8KiB)
    ->Iterations(20000)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, shm_nospin_8KiB, std::string("shm_nospin"), k8KiB)
    ->Iterations(20000)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, shm_spin500us_8KiB, std::string("shm_spin500us"), k8KiB)
    ->Iterations(20000)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, delay5us_shm_8KiB, std::string("delay5us_shm"), k8KiB)
    ->Iterations(20000)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, in_process_1MiB, std::string("in_process"), k1MiB)
    ->Iterations(500)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, tcp_1MiB, std::string("tcp"), k1MiB)
    ->Iterations(500)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, tcp_busy_poll_1MiB, std::string("tcp_busy_poll"), k1MiB)
    ->Iterations(500)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, tcp_sealed_1MiB, std::string("tcp_sealed"), k1MiB)
    ->Iterations(500)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, tcp_busy_poll_sealed_1MiB, std::string("tcp_busy_poll_sealed"),
                  k1MiB)
    ->Iterations(500)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, tcp_16MiB, std::string("tcp"), k16MiB)
    ->Iterations(40)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, tcp_sealed_16MiB, std::string("tcp_sealed"), k16MiB)
    ->Iterations(40)
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_AllReduce, shm_1MiB, std::string("shm"), k1MiB)
    ->Iterations(500)
    ->UseRealTime();

}  // namespace
}  // namespace cohort::comm
