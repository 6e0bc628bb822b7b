// The roofline probes of every kernel table: read_sum is a correct sum (its speed is
// measured by `cohort bench --roofline`, not here) and fma_loop does the work it reports.
//
// read_sum tolerance: n * 2^-24 * sum |x_i|, the worst case of recursive float summation
// over at most n terms per partial sum (the tables differ only in how many partial sums
// they keep and in what order they add them).
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/rng.h"
#include "kernel_test_util.h"
#include "kernels/kernels.h"

namespace cohort::kernels {
namespace {

using testing::tables;

// Both decode widths (kernels::decode_wide: the AVX-512 probe reads 256-byte blocks in runs of
// 16), with the prefetches on and off; lengths around blocks and runs.
TEST(Probes, ReadSumMatchesDoubleSum) {
  const bool wide = decode_wide(), prefetch = decode_prefetch();
  for (const int mode : {0, 1, 2, 3}) {
    set_decode_wide(mode & 1);
    set_decode_prefetch(mode & 2);
    for (const KernelTable* k : tables()) {
      for (int64_t n : {0, 1, 7, 31, 32, 33, 63, 64, 100, 1023, 1024, 1100, 4099}) {
        Rng rng(static_cast<uint64_t>(n) + 3);
        std::vector<float> x(static_cast<size_t>(n) + 1);
        double want = 0, magnitude = 0;
        for (int64_t i = 0; i < n; ++i) {
          x[i] = rng.normal();
          want += x[i];
          magnitude += std::fabs(x[i]);
        }
        // The element past n is NaN: a probe that read it would return NaN.
        x[static_cast<size_t>(n)] = NAN;
        EXPECT_NEAR(k->read_sum(x.data(), n), want, n * 0x1p-24 * magnitude + 1e-30)
            << k->isa << " n=" << n << " mode=" << mode;
      }
    }
  }
  set_decode_wide(wide);
  set_decode_prefetch(prefetch);
}

TEST(Probes, FmaLoopReportsItsWork) {
  for (const KernelTable* k : tables()) {
    float sink = 0;
    const double flops = k->fma_loop(1000, &sink);
    // Two FLOP per lane per chain per iteration: a whole number of chains of >= 1 lane.
    EXPECT_GT(flops, 0) << k->isa;
    EXPECT_EQ(std::fmod(flops, 2000.0), 0.0) << k->isa;
    EXPECT_TRUE(std::isfinite(sink)) << k->isa;
    EXPECT_EQ(k->fma_loop(0, &sink), 0.0) << k->isa;
  }
}

// The FMA peak is that of the widest FMA a table's kernels use: a table with 512-bit tiles
// probes with 16-lane chains (on cores with 512-bit FMA pipes, 8-lane ones measure half the
// peak, and prompt tiles would read above 100% of it).
TEST(Probes, Avx512TableProbesSixteenLanes) {
  int checked = 0;
  for (const KernelTable* k : tables()) {
    if (std::string(k->isa).rfind("avx512", 0) != 0) continue;
    ++checked;
    float sink = 0;
    const double flops = k->fma_loop(1000, &sink);
    EXPECT_EQ(std::fmod(flops, 2.0 * 16 * 1000), 0.0) << k->isa;
    EXPECT_GE(flops, 2.0 * 16 * 8 * 1000) << k->isa << ": at least 8 chains of 16 lanes";
  }
  if (checked == 0) GTEST_SKIP() << "no AVX-512 table on this CPU";
}

}  // namespace
}  // namespace cohort::kernels
