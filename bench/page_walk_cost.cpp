// What a load that lands on a page the TLB does not hold costs on this host, against one that
// misses the caches but not the TLB: the part of a jump's wait that is address translation.
//   build/release/bench/kernels_bench --benchmark_filter=page_walk_cost
//     --benchmark_repetitions=3 --benchmark_report_aggregates_only=true  (one line)
// A chain of dependent loads through a 1 GiB buffer (each line holds the next line's address):
// "jump" reads one line of each 4 KiB page, pages in a shuffled order, so every load needs a
// new translation; "in_page" reads all 64 lines of a page (in a shuffled order, so the
// prefetchers do not help much) before jumping to the next, so 63 of 64 loads find theirs in
// the TLB. Both miss the caches. Reported as ns a load, in 2 MiB pages and in 4 KiB pages.
//
// Stop 34's host (the Zen 5 VM of stops 32-33, a PVM guest: `dmesg` says "Hypervisor
// detected: PVM", so the TLB is filled from page tables the hypervisor keeps for the guest's),
// three runs: jump 358-421 ns in huge pages and 329-438 in 4 KiB ones, in_page 105-113.
// A translation there costs 2-3 times a memory read, which is what the F16 prompt's
// converting tile waits on (docs/PERFORMANCE.md, stop 34).
//
// The second argument is how many chains run at once (the same cycle entered at evenly spaced
// points, each step one load of each): whether the walks of independent loads overlap or
// queue behind each other. Stop 48 (the same host): jump_4k with 1 / 2 / 4 / 8 chains 413 /
// 200 / 90 / 42 ns a load, jump_huge 365 / - / - / 32: they overlap, 8 deep at least.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <optional>
#include <random>
#include <vector>

#include "core/huge_page_buffer.h"
#include "probe_buffer.h"

namespace cohort {
namespace walk_probe {
namespace {

constexpr size_t kPage = 4096;
constexpr size_t kLine = 64;
constexpr size_t kLinesPerPage = kPage / kLine;
constexpr size_t kLoadsPerIteration = size_t{1} << 20;

// Links the lines of `base` (bytes long) into one cycle: pages in a shuffled order, and in
// each page either one line (jump) or all of them in a shuffled order. Returns the cycle's
// lines in its order.
std::vector<uint8_t*> link_chain(uint8_t* base, size_t bytes, bool jump) {
  std::mt19937 rng(34);
  std::vector<uint32_t> pages(bytes / kPage);
  std::iota(pages.begin(), pages.end(), 0u);
  std::shuffle(pages.begin(), pages.end(), rng);
  std::vector<uint32_t> lines(kLinesPerPage);
  std::iota(lines.begin(), lines.end(), 0u);
  std::shuffle(lines.begin(), lines.end(), rng);
  std::vector<uint8_t*> order;
  order.reserve(jump ? pages.size() : pages.size() * kLinesPerPage);
  for (size_t i = 0; i < pages.size(); ++i) {
    uint8_t* page = base + size_t{pages[i]} * kPage;
    if (jump) {
      order.push_back(page + lines[i % kLinesPerPage] * kLine);
    } else {
      for (uint32_t l : lines) order.push_back(page + l * kLine);
    }
  }
  for (size_t i = 0; i < order.size(); ++i) {
    std::memcpy(order[i], &order[(i + 1) % order.size()], sizeof(uint8_t*));
  }
  return order;
}

constexpr int kMaxChains = 8;

void bm_page_walk_cost(benchmark::State& state, bool jump, bool huge) {
  std::optional<HugePageBuffer> buffer =
      bench::probe_buffer(state, static_cast<size_t>(state.range(0)), huge);
  if (!buffer) return;
  const int chains = static_cast<int>(state.range(1));
  if (chains < 1 || chains > kMaxChains) {
    state.SkipWithError("1 to 8 chains");
    return;
  }
  const std::vector<uint8_t*> order = link_chain(buffer->data(), buffer->size(), jump);
  void* p[kMaxChains];
  for (int c = 0; c < chains; ++c) p[c] = order[order.size() / chains * c];
  for (auto _ : state) {
    for (size_t i = 0; i < kLoadsPerIteration / chains; ++i) {
      for (int c = 0; c < chains; ++c) std::memcpy(&p[c], p[c], sizeof(void*));
    }
    benchmark::DoNotOptimize(p);
  }
  state.counters["s_per_load"] = benchmark::Counter(
      static_cast<double>(kLoadsPerIteration) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
}

#define COHORT_WALK_CASE(name, jump, huge)               \
  BENCHMARK_CAPTURE(bm_page_walk_cost, name, jump, huge) \
      ->Unit(benchmark::kMillisecond)                    \
      ->ArgNames({"gib", "chains"})

COHORT_WALK_CASE(jump_huge, true, true)->Args({1, 1})->Args({1, 8});
COHORT_WALK_CASE(in_page_huge, false, true)->Args({1, 1});
COHORT_WALK_CASE(jump_4k, true, false)->Args({1, 1})->Args({1, 2})->Args({1, 4})->Args({1, 8});
COHORT_WALK_CASE(in_page_4k, false, false)->Args({1, 1});

}  // namespace
}  // namespace walk_probe
}  // namespace cohort

#undef COHORT_WALK_CASE
