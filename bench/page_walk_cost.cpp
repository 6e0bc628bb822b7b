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
// first line.
void* link_chain(uint8_t* base, size_t bytes, bool jump) {
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
  return order.front();
}

void bm_page_walk_cost(benchmark::State& state, bool jump, bool huge) {
  std::optional<HugePageBuffer> buffer =
      bench::probe_buffer(state, static_cast<size_t>(state.range(0)), huge);
  if (!buffer) return;
  const size_t bytes = buffer->size();
  void* p = link_chain(buffer->data(), bytes, jump);
  for (auto _ : state) {
    for (size_t i = 0; i < kLoadsPerIteration; ++i) {
      void* next;
      std::memcpy(&next, p, sizeof(next));
      p = next;
    }
    benchmark::DoNotOptimize(p);
  }
  state.counters["s_per_load"] = benchmark::Counter(
      static_cast<double>(kLoadsPerIteration) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate | benchmark::Counter::kInvert, benchmark::Counter::kIs1000);
}

#define COHORT_WALK_CASE(name, jump, huge) \
  BENCHMARK_CAPTURE(bm_page_walk_cost, name, jump, huge)->Unit(benchmark::kMillisecond)->Arg(1)

COHORT_WALK_CASE(jump_huge, true, true);
COHORT_WALK_CASE(in_page_huge, false, true);
COHORT_WALK_CASE(jump_4k, true, false);
COHORT_WALK_CASE(in_page_4k, false, false);

}  // namespace
}  // namespace walk_probe
}  // namespace cohort

#undef COHORT_WALK_CASE
