// AVX-512 prompt product of packed F16 panels (kernels/packed_layouts.h F16x64, the layout the
// AVX2 table packs too): a sub-panel column's 16 rows in one 512-bit register, so a token's
// a[k] multiplies all of them in one vfmadd231ps with its operand broadcast from memory
// ({1to16}): 17 instructions per column for 16 tokens x 16 rows, where the AVX2 tile takes 20
// for 6 x 16. One-token products (decode, bound by memory) stay the AVX2 table's.
//
// A prompt walks chunks of columns of two sub-panels at once (32 rows: a panel's sub-panels 0
// and 1, then 2 and 3) with tiles of up to kPromptTokens tokens x 32 rows (two accumulators
// per token, one broadcast of the token's activation for both), or of a lone last sub-panel
// with tiles of 16 rows. The first tile converts the chunk's halves to f32 as it goes, into a
// buffer the later tiles read from L1. Why pairs: on the Zen 5 VM of stop 32 (two 512-bit FMA
// pipes) an L1 loop of one broadcast per FMA (16 rows x 16 tokens) ran 182 of the probe's 260
// GFLOP/s, one broadcast per two FMAs (32 rows x 14 tokens) 238. The activations are rearranged
// once per thread and product (TileActivations), column-major within each tile ([column][token]),
// so that a tile's broadcasts are one pointer plus constant offsets: 16 token pointers would not
// fit the 16 general registers.
//
// On the Zen 4 VM (512-bit FMAs at half the rate of 256-bit ones, so the same FLOP a cycle)
// the 16-row tiles were 1-10% ahead of the AVX2 tile on 1B F16 pp128 (docs/PERFORMANCE.md,
// stop 29).
//
// Exactness: every (row, token) pair has one float accumulator, starting at +0.0 and updated
// k = 0, 1, ..., n-1 in order with fma(w[k], a[k], acc), as the AVX2 tiles do; so the bits are
// the AVX2 table's, and do not depend on the tiling, the batch or the thread split.
#include <utility>

#include "kernels/packed_layouts.h"
#include "kernels/registry.h"
#include "kernels/terms_key.h"
#include "kernels/x86/f16x64_prompt.h"
#include "kernels/x86/simd_avx512.h"

namespace cohort::kernels {
namespace {

// Columns of a sub-panel converted at once: 128 x 16 floats = 8 KiB, beside a tile's
// activations (kPromptTokens x 128 floats, 8 KiB) in a 32 KiB L1.
constexpr int64_t kChunkCols = 128;

// Tokens of one tile: in a pair tile 28 accumulators, two weight vectors and the broadcast of
// the 32 registers (one more token would spill). The 16-row tiles of a lone sub-panel take as
// many, as the activations are laid out per tile (TileActivations) for both.
constexpr int kPromptTokens = 14;

// Tokens taken through the weights at once; a chunk of their activations (128 KiB at most)
// stays in L2. Longer prompts pass over the weights once per block.
constexpr int64_t kTokenBlock = 256;

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// T tokens x the 16 rows of one chunk; at[c * T + j] is token j's activation at column c. The
// sums start at +0.0 when in is null, else continue token j's at in + 16 j; they end at out + j
// * out_stride (the first `rows` lanes of them).
template <int T, bool kConvert>
inline void prompt_tile(const F16Chunk& ch, const float* at, const float* in, float* out,
                        int64_t out_stride, __mmask16 rows) {
  __m512 acc[T];
#pragma GCC unroll 16
  for (int j = 0; j < T; ++j) acc[j] = in ? _mm512_loadu_ps(in + j * 16) : _mm512_setzero_ps();
  float* const wf = ch.wf;
  const int64_t cols = ch.cols;
  const uint8_t* p = ch.src;
  int64_t step = kF16ColBytes;
#pragma GCC unroll 2
  for (int64_t c = 0; c < cols; ++c, at += T) {
    __m512 w;
    if constexpr (kConvert) {
      w = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
      p += step;
      step = kF16PairBytes - step;
      _mm512_store_ps(wf + c * 16, w);
    } else {
      w = _mm512_load_ps(wf + c * 16);
    }
#pragma GCC unroll 16
    for (int j = 0; j < T; ++j) acc[j] = _mm512_fmadd_ps(w, _mm512_set1_ps(at[j]), acc[j]);
  }
#pragma GCC unroll 16
  for (int j = 0; j < T; ++j) _mm512_mask_storeu_ps(out + j * out_stride, rows, acc[j]);
}

// prompt_tile over two sub-panels at once: rows 0-15 from ch.src, rows 16-31 from the next 64
// bytes of each column pair (the next sub-panel of the same panel), converted to wf[32 c ..].
// Sums continue from in[0] and in[1] (token j's at + 16 j) and end at out[0] and out[1] (+ j *
// out_stride), the first 16 rows and the second's `rows1`.
template <int T, bool kConvert>
inline void pair_tile(const F16Chunk& ch, const float* at, const float* const in[2],
                      float* const out[2], int64_t out_stride, __mmask16 rows1) {
  __m512 acc0[T], acc1[T];
#pragma GCC unroll 16
  for (int j = 0; j < T; ++j) {
    acc0[j] = in[0] ? _mm512_loadu_ps(in[0] + j * 16) : _mm512_setzero_ps();
    acc1[j] = in[1] ? _mm512_loadu_ps(in[1] + j * 16) : _mm512_setzero_ps();
  }
  float* const wf = ch.wf;
  const int64_t cols = ch.cols;
  const uint8_t* p = ch.src;
  int64_t step = kF16ColBytes;
#pragma GCC unroll 2
  for (int64_t c = 0; c < cols; ++c, at += T) {
    __m512 w0, w1;
    if constexpr (kConvert) {
      w0 = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
      w1 = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p + 64)));
      p += step;
      step = kF16PairBytes - step;
      _mm512_store_ps(wf + c * 32, w0);
      _mm512_store_ps(wf + c * 32 + 16, w1);
    } else {
      w0 = _mm512_load_ps(wf + c * 32);
      w1 = _mm512_load_ps(wf + c * 32 + 16);
    }
#pragma GCC unroll 16
    for (int j = 0; j < T; ++j) {
      const __m512 a = _mm512_set1_ps(at[j]);
      acc0[j] = _mm512_fmadd_ps(w0, a, acc0[j]);
      acc1[j] = _mm512_fmadd_ps(w1, a, acc1[j]);
    }
  }
#pragma GCC unroll 16
  for (int j = 0; j < T; ++j) {
    _mm512_storeu_ps(out[0] + j * out_stride, acc0[j]);
    _mm512_mask_storeu_ps(out[1] + j * out_stride, rows1, acc1[j]);
  }
}

using TileFn = void (*)(const F16Chunk&, const float*, const float*, float*, int64_t, __mmask16);
using PairTileFn = void (*)(const F16Chunk&, const float*, const float* const[2], float* const[2],
                            int64_t, __mmask16);

// prompt_tile<t, kConvert> and pair_tile<t, kConvert> for t = 1..kPromptTokens.
template <bool kConvert, int... I>
constexpr TileFn tile_fn(int t, std::integer_sequence<int, I...>) {
  constexpr TileFn fns[] = {prompt_tile<I + 1, kConvert>...};
  return fns[t - 1];
}
template <bool kConvert>
constexpr TileFn tile_fn(int t) {
  return tile_fn<kConvert>(t, std::make_integer_sequence<int, kPromptTokens>{});
}
template <bool kConvert, int... I>
constexpr PairTileFn pair_tile_fn(int t, std::integer_sequence<int, I...>) {
  constexpr PairTileFn fns[] = {pair_tile<I + 1, kConvert>...};
  return fns[t - 1];
}
template <bool kConvert>
constexpr PairTileFn pair_tile_fn(int t) {
  return pair_tile_fn<kConvert>(t, std::make_integer_sequence<int, kPromptTokens>{});
}

// The next tile's token count when `left` tokens remain: whole tiles, but a rest that would
// leave a last tile of fewer than half of one is split evenly over two (8 chains are what a
// core issuing two 4-cycle 512-bit FMAs a cycle needs to stay busy; a pair tile has twice
// its token count).
inline int tile_tokens(int64_t left) {
  if (left > kPromptTokens && left < kPromptTokens + kPromptTokens / 2) {
    return static_cast<int>((left + 1) / 2);
  }
  return static_cast<int>(min64(left, kPromptTokens));
}

// Where the token tiles of a block of `tokens` start: tile i is [start[i], start[i + 1]).
struct Tiles {
  int64_t start[kTokenBlock + 1];
  int count = 0;
  explicit Tiles(int64_t tokens) {
    start[0] = 0;
    for (int64_t i = 0; i < tokens; ++count) start[count + 1] = i += tile_tokens(tokens - i);
  }
};

// A call's activations (tokens [t0, t1) of g) rearranged for the tiles, per thread, made
// again only when a call reads other activations (TermsKey): a product cut into many calls
// of one panel each (matmul's stealing chunks) rearranges them once per thread, not once per
// call. Token block b (tokens [b, b + bt) from t0, bt = its size) starts at b * n; in it
// chunk k0's columns at k0 * bt; in that, the tile of tokens [s, s + take) at s * cols, token
// j's activation at column c at c * take + j.
class TileActivations {
 public:
  const float* make(const GemmArgs& g, int64_t t0, int64_t t1) {
    if (!key_.fresh(g, t0, t1)) return buf_.data();
    const int64_t tokens = t1 - t0;
    float* at = buf_.reserve(static_cast<size_t>(tokens * g.n));
    for (int64_t b = 0; b < tokens; b += kTokenBlock) {
      const int64_t bt = min64(kTokenBlock, tokens - b);
      const Tiles tiles(bt);
      for (int64_t k0 = 0; k0 < g.n; k0 += kChunkCols) {
        const int64_t cols = min64(kChunkCols, g.n - k0);
        float* chunk = at + b * g.n + k0 * bt;
        for (int ti = 0; ti < tiles.count; ++ti) {
          const int64_t s0 = tiles.start[ti], take = tiles.start[ti + 1] - s0;
          for (int64_t j = 0; j < take; ++j) {
            const float* a = reinterpret_cast<const float*>(static_cast<const uint8_t*>(g.a) +
                                                            (t0 + b + s0 + j) * g.a_stride);
            float* dst = chunk + s0 * cols + j;
            for (int64_t c = 0; c < cols; ++c) dst[c * take] = a[k0 + c];
          }
        }
      }
    }
    return at;
  }

 private:
  GrowArray<float> buf_;
  TermsKey key_;
};

// Lines of the next chunk's weights asked for per token tile (a 128-column chunk is 64 lines;
// a 128-token prompt runs 8 tiles on each, so the whole chunk is asked for by its last tile).
constexpr int kPrefetchLinesPerTile = 8;

thread_local TileActivations t_acts;
// Sums of the sub-panels between chunks, [sub-panel][token][16 rows].
thread_local GrowArray<float> t_sums;

// Block tokens [t0, t1) (their rearranged activations at at) x sub-panels [q_begin, q_end).
// The first chunk starts every sum at +0.0, the last stores them in y (the first r1 rows), and
// between chunks they wait in t_sums.
void prompt_block(const GemmArgs& g, const float* at, int64_t q_begin, int64_t q_end, int64_t r1,
                  int64_t t0, int64_t t1) {
  const int64_t tokens = t1 - t0, sub_floats = tokens * kF16SubRows;
  float* sums = g.n > kChunkCols
                    ? t_sums.reserve(static_cast<size_t>((q_end - q_begin) * sub_floats))
                    : nullptr;
  const Tiles tiles(tokens);
  alignas(64) float wf[kChunkCols * 2 * kF16SubRows];
  // Chunks outside, sub-panels inside: a chunk of the block's activations stays in L2 while
  // the sub-panels pass. kChunkCols is even, so a chunk starts a column pair.
  for (int64_t k0 = 0; k0 < g.n; k0 += kChunkCols) {
    const int64_t cols = min64(kChunkCols, g.n - k0);
    const bool first = k0 == 0, last = k0 + cols == g.n;
    const float* chunk_at = at + k0 * tokens;
    // Pairs of sub-panels (q_begin starts a panel, so q is even and q + 1 in its panel).
    int64_t q = q_begin;
    for (; q + 1 < q_end; q += 2) {
      const F16Chunk chunk{f16_sub_panel_column(g, q, k0), wf, cols};
      F16NextChunk next(g, q + 1, q_begin, q_end, k0, cols, kChunkCols, 2);
      float* sub_sums[2] = {sums ? sums + (q - q_begin) * sub_floats : nullptr,
                            sums ? sums + (q + 1 - q_begin) * sub_floats : nullptr};
      const int64_t r = q * kF16SubRows;
      const __mmask16 rows1 = last ? row_mask(r1 - r - kF16SubRows) : row_mask(kF16SubRows);
      for (int ti = 0; ti < tiles.count; ++ti) {
        const int64_t s0 = tiles.start[ti];
        const int take = static_cast<int>(tiles.start[ti + 1] - s0);
        next.ask(kPrefetchLinesPerTile);
        const float* in[2] = {nullptr, nullptr};
        float* out[2];
        for (int h = 0; h < 2; ++h) {
          if (!first) in[h] = sub_sums[h] + s0 * kF16SubRows;
          out[h] = last ? g.y + (t0 + s0) * g.y_stride + r + h * kF16SubRows
                        : sub_sums[h] + s0 * kF16SubRows;
        }
        const int64_t out_stride = last ? g.y_stride : kF16SubRows;
        (ti == 0 ? pair_tile_fn<true>(take) : pair_tile_fn<false>(take))(
            chunk, chunk_at + s0 * cols, in, out, out_stride, rows1);
      }
    }
    // A lone last sub-panel (the matrix's rows end in its panel's first or third).
    for (; q < q_end; ++q) {
      const F16Chunk chunk{f16_sub_panel_column(g, q, k0), wf, cols};
      F16NextChunk next(g, q, q_begin, q_end, k0, cols, kChunkCols);
      float* sub_sums = sums ? sums + (q - q_begin) * sub_floats : nullptr;
      const int64_t r = q * kF16SubRows;
      const __mmask16 rows = last ? row_mask(r1 - r) : row_mask(kF16SubRows);
      for (int ti = 0; ti < tiles.count; ++ti) {
        const int64_t s0 = tiles.start[ti];
        const int take = static_cast<int>(tiles.start[ti + 1] - s0);
        next.ask(kPrefetchLinesPerTile);
        const float* in = first ? nullptr : sub_sums + s0 * kF16SubRows;
        float* out = last ? g.y + (t0 + s0) * g.y_stride + r : sub_sums + s0 * kF16SubRows;
        const int64_t out_stride = last ? g.y_stride : kF16SubRows;
        (ti == 0 ? tile_fn<true>(take) : tile_fn<false>(take))(chunk, chunk_at + s0 * cols, in, out,
                                                               out_stride, rows);
      }
    }
  }
}

// The sub-panels holding rows [r0, r1): r0 starts a panel, sub-panels wholly past r1 (a last
// panel's padding) are skipped.
void gemm_prompt(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const int64_t q_begin = r0 / kF16SubRows, q_end = (r1 + kF16SubRows - 1) / kF16SubRows;
  const float* at = t_acts.make(g, t0, t1);
  for (int64_t t = t0; t < t1; t += kTokenBlock) {
    prompt_block(g, at + (t - t0) * g.n, q_begin, q_end, r1, t, min64(t + kTokenBlock, t1));
  }
}

// One token: the AVX2 decode (memory-bound; its 8 FMA chains keep up with the stream).
void gemm_packed_f16_x16(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  if (t1 - t0 == 1) {
    avx2_packed_f16_decode(g, r0, r1, t0);
  } else if (t1 > t0) {
    gemm_prompt(g, r0, r1, t0, t1);
  }
}

}  // namespace

void fill_avx512_packed_f16(KernelTable& t) {
  TypeOps::Packed& p = t.types[static_cast<uint32_t>(DType::kF16)].packed;
  p.panel_rows = kF16PanelRows;
  p.panel_bytes = f16x64_panel_bytes;
  p.pack_panel = pack_f16x64;
  p.gemm = gemm_packed_f16_x16;
}

}  // namespace cohort::kernels
