// AVX2 product of packed F16 or BF16 panels (kernels/packed_layouts.h F16x64: 64 rows in 4
// interleaved sub-panels of 16, a column of a sub-panel in one 32-byte load) with f32
// activations; every path below is written once over the halves' kind (F16Halves, BF16Halves). A
// sub-panel's rows sit in the lanes of two 8-float vectors, so a token's a[k] is broadcast once
// against 16 rows and no horizontal sum is left at the end.
//
// Decode (one token) streams a panel from memory as one sequential stream: its 4 sub-panels'
// sums at once (8 FMA chains), each column converted (vcvtph2ps) and multiplied as it
// arrives, with software prefetch ahead when decode_prefetch(). A prompt walks a chunk of
// columns of one sub-panel with a register-blocked tile of 6 tokens x 16 rows (12
// accumulators) per token tile; the first tile converts the chunk to f32 as it goes, into a
// buffer that stays in L1 for the others, so the conversion is paid once per sub-panel chunk
// instead of once per token tile.
//
// Exactness and determinism: every (row, token) pair has ONE float accumulator, starting at
// +0.0 and updated k = 0, 1, ..., n-1 in order with fma(w[k], a[k], acc), w[k] the half
// converted exactly to f32. Both paths do exactly that sequence (the prompt path parks the
// accumulators in memory between chunks, which keeps their bits), so a row's result does not
// depend on its panel's other rows, the token tile, the batch or the split between threads.
#include <algorithm>
#include <array>
#include <cstring>
#include <vector>

#include "kernels/packed_layouts.h"
#include "kernels/registry.h"
#include "kernels/x86/f16x64_prompt.h"
#include "kernels/x86/packed_tiles.h"
#include "kernels/x86/simd_avx2.h"

namespace cohort::kernels {
namespace {

// Columns of a sub-panel the prompt path converts at once: 256 x 16 floats = 16 KiB, which leaves
// room in a 48 KiB L1 for the 6 activation streams of a tile.
constexpr int64_t kChunkCols = 256;

// Tokens of the prompt tile: 12 accumulators + 2 weight vectors + 1 broadcast in 16 registers.
constexpr int kPromptTokens = 6;

// Tokens the prompt path takes through the weights at once: a chunk of their activations
// (256 KiB) stays in L2. Longer prompts pass over the weights once per block.
constexpr int64_t kTokenBlock = 256;

// How 8 halves at p become floats, exactly: F16 by vcvtph2ps, BF16 (an f32's top 16 bits)
// widened and shifted into place. The panels hold either (pack_f16x64 copies 16-bit values).
struct F16Halves {
  static __m256 load8(const uint8_t* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
};
struct BF16Halves {
  static __m256 load8(const uint8_t* p) {
    const __m256i wide =
        _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
    return _mm256_castsi256_ps(_mm256_slli_epi32(wide, 16));
  }
};

// Stores the first `rows` of the 16 rows held in lo/hi at y.
inline void store_rows(float* y, __m256 lo, __m256 hi, int64_t rows) {
  if (rows == kF16SubRows) {
    _mm256_storeu_ps(y, lo);
    _mm256_storeu_ps(y + 8, hi);
    return;
  }
  alignas(32) float lanes[kF16SubRows];
  _mm256_store_ps(lanes, lo);
  _mm256_store_ps(lanes + 8, hi);
  std::copy(lanes, lanes + rows, y);
}

// Column k (kSecond: the second of its pair) of the 4 sub-panels of one column pair (at
// pair) times the token's a[k], into each sub-panel's 16 row sums.
template <class H, int kSecond>
inline void decode_column(const uint8_t* pair, __m256 ak, __m256* lo, __m256* hi) {
#pragma GCC unroll 4
  for (int s = 0; s < kF16SubPanels; ++s) {
    const uint8_t* col = pair + f16x64_offset(s, kSecond);
    lo[s] = _mm256_fmadd_ps(H::load8(col), ak, lo[s]);
    hi[s] = _mm256_fmadd_ps(H::load8(col + 16), ak, hi[s]);
  }
}

// Token t x panel p; rows from r1 on are not stored.
template <class H>
void decode_panel(const GemmArgs& g, int64_t p, int64_t r1, int64_t t) {
  const uint8_t* w = static_cast<const uint8_t*>(g.w) + p * g.w_stride;
  const float* a =
      reinterpret_cast<const float*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
  __m256 lo[kF16SubPanels], hi[kF16SubPanels];
#pragma GCC unroll 4
  for (int s = 0; s < kF16SubPanels; ++s) lo[s] = hi[s] = _mm256_setzero_ps();
  // Column pairs (4 lines, one per sub-panel) in runs (for_each_block_run): with
  // decode_prefetch() the lines up to decode_prefetch_bytes() past a run's end are asked for
  // before it, and the run is one unrolled stretch of code.
  avx2::LinePrefetcher ahead(w, decode_prefetch_bytes());
  const int64_t pairs = g.n / 2;
  avx2::for_each_block_run<kF16PairBytes>(
      pairs, [&](int64_t end) { ahead.upto(w + end * kF16PairBytes); },
      [&](int64_t j) __attribute__((always_inline)) {
        decode_column<H, 0>(w + j * kF16PairBytes, _mm256_broadcast_ss(a + 2 * j), lo, hi);
        decode_column<H, 1>(w + j * kF16PairBytes, _mm256_broadcast_ss(a + 2 * j + 1), lo, hi);
      });
  if (g.n % 2 != 0) {
    decode_column<H, 0>(w + pairs * kF16PairBytes, _mm256_broadcast_ss(a + g.n - 1), lo, hi);
  }
#pragma GCC unroll 4
  for (int s = 0; s < kF16SubPanels; ++s) {
    const int64_t r = p * kF16PanelRows + s * kF16SubRows;
    if (r < r1) store_rows(g.y + t * g.y_stride + r, lo[s], hi[s], std::min(kF16SubRows, r1 - r));
  }
}

template <class H>
void gemm_decode(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t) {
  const int64_t p_end = (r1 + kF16PanelRows - 1) / kF16PanelRows;
  for (int64_t p = r0 / kF16PanelRows; p < p_end; ++p) decode_panel<H>(g, p, r1, t);
}

// T tokens (activations a[j] at the chunk's first column) x the 16 rows of one chunk. The
// sums start at +0.0 when `in` is null, else continue token j's sums at in + j * in_stride;
// they end at out + j * out_stride, of which only the first `rows` rows are stored (a last
// panel's padding rows never reach y). Converting inside the first tile rather than in a loop
// of its own lets the conversion's loads (from L2 at best: the chunk was only prefetched)
// overlap with that tile's FMAs instead of stalling in front of them.
template <class H, int T, bool kConvert>
inline void prompt_tile(const F16Chunk& ch, const float* const* a, const float* in,
                        int64_t in_stride, float* out, int64_t out_stride, int64_t rows) {
  __m256 lo[T], hi[T];
#pragma GCC unroll 8
  for (int j = 0; j < T; ++j) {
    lo[j] = in ? _mm256_loadu_ps(in + j * in_stride) : _mm256_setzero_ps();
    hi[j] = in ? _mm256_loadu_ps(in + j * in_stride + 8) : _mm256_setzero_ps();
  }
  // Column c's 16 weights (w_lo, w_hi) times the T tokens' a[j][c].
  const auto column = [&](int64_t c, __m256 w_lo, __m256 w_hi) {
#pragma GCC unroll 8
    for (int j = 0; j < T; ++j) {
      const __m256 ak = _mm256_broadcast_ss(a[j] + c);
      lo[j] = _mm256_fmadd_ps(w_lo, ak, lo[j]);
      hi[j] = _mm256_fmadd_ps(w_hi, ak, hi[j]);
    }
  };
  float* const wf = ch.wf;
  const int64_t cols = ch.cols;
  if constexpr (kConvert) {
    // The column's address walked (+32 bytes to a pair's second column, +224 to the next
    // pair's first) rather than computed: GCC recomputes f16x64_offset's halving per column
    // otherwise, and a loop over whole pairs has it hold 4 weight vectors and spill sums.
    const uint8_t* p = ch.src;
    int64_t step = kF16ColBytes;
#pragma GCC unroll 4
    for (int64_t c = 0; c < cols; ++c) {
      const __m256 w_lo = H::load8(p), w_hi = H::load8(p + 16);
      p += step;
      step = kF16PairBytes - step;
      _mm256_store_ps(wf + c * kF16SubRows, w_lo);
      _mm256_store_ps(wf + c * kF16SubRows + 8, w_hi);
      column(c, w_lo, w_hi);
    }
  } else {
#pragma GCC unroll 4
    for (int64_t c = 0; c < cols; ++c) {
      column(c, _mm256_load_ps(wf + c * kF16SubRows), _mm256_load_ps(wf + c * kF16SubRows + 8));
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < T; ++j) store_rows(out + j * out_stride, lo[j], hi[j], rows);
}

// Where one sub-panel's sums come from and go to for a chunk: token i of the block (i counted
// from the block's first token) reads in + i * in_stride (nothing when in is null: the first
// chunk) and writes out + i * out_stride, rows of them.
struct PanelSums {
  const float* in;
  int64_t in_stride;
  float* out;
  int64_t out_stride;
  int64_t rows;
};

// Block tokens [i, i + T) over the chunk: their activations at act + i * act_stride floats.
template <class H, int T, bool kConvert>
void prompt_tokens(const F16Chunk& ch, const float* act, int64_t act_stride, int64_t i,
                   const PanelSums& s) {
  const float* a[T];
#pragma GCC unroll 8
  for (int j = 0; j < T; ++j) a[j] = act + (i + j) * act_stride;
  prompt_tile<H, T, kConvert>(ch, a, s.in ? s.in + i * s.in_stride : nullptr, s.in_stride,
                              s.out + i * s.out_stride, s.out_stride, s.rows);
}

using PromptTokensFn = void (*)(const F16Chunk&, const float*, int64_t, int64_t, const PanelSums&);

// prompt_tokens by [kConvert][token count - 1], counts 1..kPromptTokens.
template <class H, bool kConvert>
constexpr std::array<PromptTokensFn, kPromptTokens> kPromptTiles = {
    prompt_tokens<H, 1, kConvert>, prompt_tokens<H, 2, kConvert>, prompt_tokens<H, 3, kConvert>,
    prompt_tokens<H, 4, kConvert>, prompt_tokens<H, 5, kConvert>, prompt_tokens<H, 6, kConvert>};

// The next tile's token count when `left` tokens remain: full tiles, but 7..9 split in two
// tiles of 3..5 instead of 6 + 1..3, because a tile of 1-2 tokens has too few accumulator
// chains to hide the FMA latency.
inline int tile_tokens(int64_t left) {
  if (left > kPromptTokens && left < kPromptTokens + 4) return static_cast<int>((left + 1) / 2);
  return static_cast<int>(std::min<int64_t>(left, kPromptTokens));
}

// Sums of the sub-panels between chunks, [sub-panel][token][16 rows]: per thread, grown to
// the largest call seen. In y a sub-panel's tokens lie y_stride apart (64 KiB for a 16384-row
// output), which puts all of them in the same few L1 and L2 sets; here they are consecutive
// lines that the tiles walk in order.
float* chunk_sums(int64_t floats) {
  thread_local std::vector<float> storage;
  if (storage.size() < static_cast<size_t>(floats)) storage.resize(static_cast<size_t>(floats));
  return storage.data();
}

// Lines of the next chunk's weights asked for per token tile (a 256-column chunk is 128 lines
// and a 128-token prompt runs 22 tiles per chunk, so the whole chunk is on its way by the 16th).
constexpr int kPrefetchLinesPerTile = 8;

// Tokens [t0, t1) x sub-panels [q_begin, q_end). The first chunk starts every pair's sum at
// +0.0, the last one stores the sums in y (a last sub-panel's padding rows never reach it), and
// between chunks they wait in chunk_sums.
template <class H>
void prompt_block(const GemmArgs& g, int64_t q_begin, int64_t q_end, int64_t r1, int64_t t0,
                  int64_t t1) {
  const int64_t tokens = t1 - t0, sub_floats = tokens * kF16SubRows;
  float* sums = g.n > kChunkCols ? chunk_sums((q_end - q_begin) * sub_floats) : nullptr;
  const float* act =
      reinterpret_cast<const float*>(static_cast<const uint8_t*>(g.a) + t0 * g.a_stride);
  const auto act_stride = static_cast<int64_t>(g.a_stride / sizeof(float));
  alignas(64) float wf[kChunkCols * kF16SubRows];
  // Chunks outside, sub-panels inside: a chunk of every token's activations stays in L2 while
  // the sub-panels pass. kChunkCols is even, so a chunk starts a column pair.
  for (int64_t k0 = 0; k0 < g.n; k0 += kChunkCols) {
    const int64_t cols = std::min(kChunkCols, g.n - k0);
    const bool first = k0 == 0, last = k0 + cols == g.n;
    for (int64_t q = q_begin; q < q_end; ++q) {
      const F16Chunk chunk{f16_sub_panel_column(g, q, k0), wf, cols};
      F16NextChunk next(g, q, q_begin, q_end, k0, cols, kChunkCols);
      float* sub_sums = sums ? sums + (q - q_begin) * sub_floats : nullptr;
      const int64_t r = q * kF16SubRows;
      const PanelSums s{
          first ? nullptr : sub_sums, kF16SubRows, last ? g.y + t0 * g.y_stride + r : sub_sums,
          last ? g.y_stride : kF16SubRows, last ? std::min(kF16SubRows, r1 - r) : kF16SubRows};
      for (int64_t i = 0; i < tokens;) {
        const int take = tile_tokens(tokens - i);
        next.ask(kPrefetchLinesPerTile);
        (i == 0 ? kPromptTiles<H, true> : kPromptTiles<H, false>)[take - 1](chunk, act + k0,
                                                                            act_stride, i, s);
        i += take;
      }
    }
  }
}

// The sub-panels holding rows [r0, r1): r0 starts a panel, sub-panels wholly past r1 (a last
// panel's padding) are skipped.
template <class H>
void gemm_prompt(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const int64_t q_begin = r0 / kF16SubRows, q_end = (r1 + kF16SubRows - 1) / kF16SubRows;
  for (int64_t t = t0; t < t1; t += kTokenBlock) {
    prompt_block<H>(g, q_begin, q_end, r1, t, std::min(t + kTokenBlock, t1));
  }
}

template <class H>
void gemm_packed_half(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  if (t1 - t0 == 1) {
    gemm_decode<H>(g, r0, r1, t0);
  } else if (t1 > t0) {
    gemm_prompt<H>(g, r0, r1, t0, t1);
  }
}

}  // namespace

void avx2_packed_f16_decode(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t) {
  gemm_decode<F16Halves>(g, r0, r1, t);
}

void avx2_packed_bf16_decode(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t) {
  gemm_decode<BF16Halves>(g, r0, r1, t);
}

void fill_avx2_packed_f16(KernelTable& t) {
  for (const DType type : {DType::kF16, DType::kBF16}) {
    TypeOps::Packed& p = t.types[static_cast<uint32_t>(type)].packed;
    p.panel_rows = kF16PanelRows;
    p.panel_bytes = f16x64_panel_bytes;
    p.pack_panel = pack_f16x64;
    p.gemm = type == DType::kF16 ? gemm_packed_half<F16Halves> : gemm_packed_half<BF16Halves>;
  }
}

}  // namespace cohort::kernels
