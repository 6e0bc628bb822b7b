// What every packed AVX2 gemm shares (only kernels/x86 files include it): the decode prefetch
// (which the read probe of avx2_probes.cpp takes too), and the loops over the panels of a
// packed matrix: in pairs for one token, or each in tiles of kTile tokens and one tile of the
// rest. The AVX-512 tiles (avx512_*.cpp) take its distance and for_each_panel_tile too: only
// templates instantiated on their own internal lambdas, so nothing AVX-512-compiled is shared.
#pragma once

#include <immintrin.h>

#include <cstdint>
#include <utility>

#include "kernels/kernels.h"
#include "kernels/terms_key.h"

namespace cohort::kernels::avx2 {

// Decode streams each panel once, and on some CPUs a one-token tile does too little work per
// byte for the hardware prefetchers alone to keep memory busy: there (decode_prefetch(),
// kernels/kernels.h) the packed gemms' one-token tiles ask for the bytes
// decode_prefetch_bytes() ahead of those they multiply (Q6_K takes two whole blocks instead:
// kQ6_KDecodeAhead, measured when its blocks were read at two places at once).

// Asks for each 64-byte line of a stream once, `ahead` bytes before it is read: upto(p) asks
// for the lines up to p + ahead not yet asked for (a prefetch never faults, so p may be near
// the end of the weights). A fixed count of lines asked for per block asks for some twice when
// a block is not a whole number of lines (Q4_0's 144 bytes, Q8_0's 272). On the Zen 4 VM of stop 19
// those repeated requests cost more than the prefetching gained: one panel at a time, 1B q4_0 tg64
// on 2 threads read 27-36 tok/s with 3 lines per block and 53-59 with no prefetch at all (one
// round, interleaved). Every packed one-token tile takes this (Q6_K since its blocks became one
// stream, Q4_K since stop 20, F16 and the read probe since stop 46; the AVX-512 tiles since stop
// 47, which had a twin of it).
class LinePrefetcher {
 public:
  LinePrefetcher() = default;
  // Asks for nothing unless on: by default the decode_prefetch() setting (kernels/kernels.h);
  // the AVX-512 tiles that also serve prompts pass false for them.
  LinePrefetcher(const void* start, int64_t ahead, bool on = decode_prefetch())
      : next_(static_cast<const char*>(start) + ahead), ahead_(ahead), on_(on) {}
  void upto(const void* p) {
    if (!on_) return;
    const char* end = static_cast<const char*>(p) + ahead_;
    for (; next_ < end; next_ += 64) _mm_prefetch(next_, _MM_HINT_T0);
  }

 private:
  const char* next_ = nullptr;
  int64_t ahead_ = 0;
  bool on_ = false;
};

// How many bytes of a panel a one-token tile multiplies between two prefetch asks. The run's
// loop asks GCC to unroll it 16 times, which GCC 12 does only for short blocks: a pair of
// AVX2 Q4_0 panels' block (95 instructions) stays one turn a block (stop 47's disassembly). On the
// Zen 5 VM of stop 38 (one thread, from memory, huge pages), streams of 288-byte Q4_0 blocks read
// 20-25 GB/s with the prefetch asked and the loop turned once a block, 28-30 with one ask and one
// turn per 8 or 16 blocks (Q4_K's 2368-byte blocks read so already: 29-33); a plain read of 512-bit
// loads 22-25 in runs of 2 KiB, 27.5-30 in runs of 4 or 8 KiB. On 2 threads (decode_layers_bench)
// runs of 4 KiB against 2 KiB: plain reads 44-49 -> 50-61 GB/s, the token's products 48-49 ->
// 50-62. The 256-bit tiles (stop 46, 1B tg64 on 2 threads, --isa avx2): F16 read 70-86% of the
// paired plain reads with an ask every 256-byte column pair, 110-111% in runs.
inline constexpr size_t kDecodeRunBytes = 4096;

// The distance a one-token tile that asks for its lines a piece at a time (a sub-block, a block
// or two), `distance` bytes ahead, takes instead where decode_wide(): the run-wise tiles
// (for_each_block_run) ask up to a run's end plus their distance, so each line is asked for up to
// a run more than the distance ahead of its read; a piece-wise tile whose own distance is no more
// than a run asks a run further to match. Stop 52 (Zen 5 VM, 1B tg64 `--paired` on 2 threads,
// interleaved pairs, prefetch only so the same bits): the AVX-512 Q4_K tile (4 KiB) 83.2-91.5 ->
// 92.1-99.5 tok/s over 8 pairs, Q2_K's two 1344-byte blocks (2.6 KiB) 112.7, 126.0, 127.9 ->
// 137.1, 134.9, 134.9, Q3_K's two 1824-byte blocks 108.7, 100.8, 104.6 -> 113.2, 110.0, 113.3;
// Q6_K's two 3360-byte blocks (6.6 KiB) keep theirs.
constexpr int64_t wide_piece_ahead(int64_t distance) {
  constexpr auto kRun = static_cast<int64_t>(kDecodeRunBytes);
  return distance <= kRun ? distance + kRun : distance;
}

// Calls block(b) for b = 0 .. nb - 1 (blocks of kBlockBytes) in runs of ceil(kDecodeRunBytes /
// kBlockBytes) blocks: before each run ask(e), e the block the run ends before (so that the
// lines up to block e, then the prefetch distance, are asked for); the last blocks one at a
// time.
template <size_t kBlockBytes, typename Ask, typename Block>
inline void for_each_block_run(int64_t nb, const Ask& ask, const Block& block) {
  constexpr int64_t kRun = (kDecodeRunBytes + kBlockBytes - 1) / kBlockBytes;
  int64_t b = 0;
  for (; b + kRun <= nb; b += kRun) {
    ask(b + kRun);
#pragma GCC unroll 16
    for (int64_t k = 0; k < kRun; ++k) block(b + k);
  }
  for (; b < nb; ++b) {
    ask(b + 1);
    block(b);
  }
}

// A LinePrefetcher for each of P panels w_stride bytes apart from the first: what a P-panel
// one-token tile streams.
template <int P>
class PanelPrefetchers {
 public:
  PanelPrefetchers(const uint8_t* panel, size_t w_stride, int64_t ahead = decode_prefetch_bytes()) {
    for (int p = 0; p < P; ++p) line_[p] = LinePrefetcher(panel + p * w_stride, ahead);
  }
  // Panel p's lines up to at + the distance.
  void upto(int p, const void* at) { line_[p].upto(at); }

 private:
  LinePrefetcher line_[P];
};

// Calls tile.template operator()<P>(panel, r) over the panels of rows [r0, r1) (r0 at a panel's
// first row). With decode_in_pairs() (kernels/kernels.h): P = 2 for the panel holding row r
// and the next (at panel + g.w_stride) while the next starts before r1, then P = 1 for a last
// lone panel; else P = 1 for every panel, in order. Two panels at once give two independent
// sums and two weight streams in flight: on the Xeon VM of stop 18, 1B Q4_0 tg64 +7% and 8B
// +20%. One panel at a time reads the weights as one sequential stream: on the Zen 4 VM of
// stop 19, where two short streams read in parallel cost the hardware prefetchers dearly (a
// read test of 18 KiB panels: 34 GB/s one at a time, 20 two at a time), 1B tg64 on 2 threads
// went from 44-47 to 53-59 tok/s (q4_0) and 42 to 63-65 (q4_K).
template <int kPanelRows, typename Tile>
void for_each_panel_pair(const GemmArgs& g, int64_t r0, int64_t r1, const Tile& tile) {
  const auto* w = static_cast<const uint8_t*>(g.w);
  int64_t r = r0;
  if (decode_in_pairs()) {
    for (; r + kPanelRows < r1; r += 2 * kPanelRows) {
      tile.template operator()<2>(w + (r / kPanelRows) * g.w_stride, r);
    }
  }
  for (; r < r1; r += kPanelRows) tile.template operator()<1>(w + (r / kPanelRows) * g.w_stride, r);
}

// Calls tile.template operator()<T>(panel, r, t) for the panel holding rows r .. r +
// kPanelRows - 1 (r0 <= r < r1) and tokens t .. t + T - 1, over tokens [t0, t1): T = kTile
// while whole tiles fit, then T = the count left (1 .. kTile - 1), as its own instance.
template <int kPanelRows, int kTile, typename Tile>
void for_each_panel_tile(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1,
                         const Tile& tile) {
  for (int64_t r = r0; r < r1; r += kPanelRows) {
    const uint8_t* panel = static_cast<const uint8_t*>(g.w) + (r / kPanelRows) * g.w_stride;
    int64_t t = t0;
    for (; t + kTile <= t1; t += kTile) tile.template operator()<kTile>(panel, r, t);
    [&]<int... T>(std::integer_sequence<int, T...>) {
      ((t1 - t == T + 1 ? tile.template operator()<T + 1>(panel, r, t) : void()), ...);
    }
    (std::make_integer_sequence<int, kTile - 1>{});
  }
}

}  // namespace cohort::kernels::avx2
