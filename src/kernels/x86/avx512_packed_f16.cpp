// AVX-512 prompt product of packed F16 or BF16 panels (kernels/packed_layouts.h F16x64, the
// layout the AVX2 table packs too; each path written once over the halves' kind, F16Halves or
// BF16Halves): a sub-panel column's 16 rows in one 512-bit register, so a token's
// a[k], broadcast once, multiplies the 64 rows of a panel's 4 sub-panels in 4 vfmadd231ps.
// One-token products (decode, bound by memory) are the AVX2 table's, or where
// kernels::decode_wide() the same sums in 512-bit registers (decode_panel_512).
//
// A prompt walks chunks of columns of a whole panel (its 4 sub-panels) with tiles of up to
// kPromptTokens tokens x 64 rows (four accumulators per token), or of one sub-panel of a last
// panel that the matrix's rows end in (16 rows). The first tile converts the chunk's halves to
// f32 as it goes, into a buffer the later tiles read from L1. Why whole panels: on the Zen 5 VM
// of stop 32 (two 512-bit FMA pipes, 260 GFLOP/s a core by the probe) an L1 loop of 16 rows x 16
// tokens (one broadcast per FMA, the tile of stops 29-31) ran 182 GFLOP/s, 32 rows x 14 tokens
// 238-240, 64 rows x 6 tokens 248; in kernels_bench the 8192 x 2048 x 128 product went 194-199
// -> 210-218 (32 rows) -> 228-234 GFLOP/s (64 rows: also 22 token tiles share each conversion
// instead of 10). The activations are rearranged once per product, by all its threads together
// (Packed::prompt_layout, before the product's fork; a gemm called without it does its own,
// TileActivations), column-major within each tile ([column][token]), so that a tile's
// broadcasts are one pointer plus constant offsets. (Reading them in place through 6 row
// pointers instead read 1B pp128 on one thread at 107-111 tok/s against 114.)
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

// Columns of a panel converted at once: 128 x 64 floats = 32 KiB, beside a tile's activations
// (kPromptTokens x 128 floats, 3 KiB) in a 48 KiB L1 (Zen 5; 32 KiB on Zen 4, where the tile's
// activations then come from L2).
constexpr int64_t kChunkCols = 128;

// Tokens of one tile: in a whole panel's tile 24 accumulators, four weight vectors and the
// broadcast of the 32 registers (one more token would spill). The 16-row tiles of a lone
// sub-panel take as many, as the activations are laid out per tile (TileActivations) for both.
constexpr int kPromptTokens = 6;

// Tokens taken through the weights at once; a chunk of their activations (128 KiB at most)
// stays in L2. Longer prompts pass over the weights once per block.
constexpr int64_t kTokenBlock = 256;

inline int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

// How 16 halves at p become floats, exactly: F16 by vcvtph2ps, BF16 (an f32's top 16 bits)
// widened and shifted into place; and the AVX2 table's one-token product of the same panels.
struct F16Halves {
  static __m512 load16(const uint8_t* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  static constexpr auto avx2_decode = avx2_packed_f16_decode;
};
struct BF16Halves {
  static __m512 load16(const uint8_t* p) {
    const __m512i wide =
        _mm512_cvtepu16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
    return _mm512_castsi512_ps(_mm512_slli_epi32(wide, 16));
  }
  static constexpr auto avx2_decode = avx2_packed_bf16_decode;
};

// T tokens x S sub-panels (16 S rows) of one chunk: sub-panel s's column c is the 64 * s bytes
// after the first's in each column pair (the sub-panels of one panel), converted to wf[16 (S c
// + s) ..] by the tile with kConvert and read from there by the others. at[c * T + j] is token
// j's activation at column c; one broadcast of it meets the S weight vectors. Sub-panel s's
// sums start at +0.0 when in[s] is null, else continue token j's at in[s] + 16 j, and end at
// out[s] + j * out_stride: all 16 rows but the last sub-panel's, its first `rows_last`.
template <class H, int S, int T, bool kConvert>
inline void group_tile(const F16Chunk& ch, const float* at, const float* const* in,
                       float* const* out, int64_t out_stride, __mmask16 rows_last) {
  __m512 acc[S][T];
#pragma GCC unroll 4
  for (int s = 0; s < S; ++s) {
#pragma GCC unroll 16
    for (int j = 0; j < T; ++j) {
      acc[s][j] = in[s] ? _mm512_loadu_ps(in[s] + j * 16) : _mm512_setzero_ps();
    }
  }
  float* const wf = ch.wf;
  const int64_t cols = ch.cols;
  const uint8_t* p = ch.src;
  int64_t step = kF16ColBytes;
#pragma GCC unroll 2
  for (int64_t c = 0; c < cols; ++c, at += T) {
    __m512 w[S];
    if constexpr (kConvert) {
#pragma GCC unroll 4
      for (int s = 0; s < S; ++s) {
        w[s] = H::load16(p + 64 * s);
        _mm512_store_ps(wf + 16 * (S * c + s), w[s]);
      }
      p += step;
      step = kF16PairBytes - step;
    } else {
#pragma GCC unroll 4
      for (int s = 0; s < S; ++s) w[s] = _mm512_load_ps(wf + 16 * (S * c + s));
    }
#pragma GCC unroll 16
    for (int j = 0; j < T; ++j) {
      const __m512 a = _mm512_set1_ps(at[j]);
#pragma GCC unroll 4
      for (int s = 0; s < S; ++s) acc[s][j] = _mm512_fmadd_ps(w[s], a, acc[s][j]);
    }
  }
#pragma GCC unroll 4
  for (int s = 0; s < S; ++s) {
    const __mmask16 rows = s == S - 1 ? rows_last : row_mask(kF16SubRows);
#pragma GCC unroll 16
    for (int j = 0; j < T; ++j) _mm512_mask_storeu_ps(out[s] + j * out_stride, rows, acc[s][j]);
  }
}

using TileFn = void (*)(const F16Chunk&, const float*, const float* const*, float* const*, int64_t,
                        __mmask16);

// group_tile<H, S, t, kConvert> for t = 1..kPromptTokens.
template <class H, int S, bool kConvert, int... I>
constexpr TileFn tile_fn(int t, std::integer_sequence<int, I...>) {
  constexpr TileFn fns[] = {group_tile<H, S, I + 1, kConvert>...};
  return fns[t - 1];
}
template <class H, int S, bool kConvert>
constexpr TileFn tile_fn(int t) {
  return tile_fn<H, S, kConvert>(t, std::make_integer_sequence<int, kPromptTokens>{});
}

// The next tile's token count when `left` tokens remain: whole tiles, but a rest that would
// leave a last tile of fewer than half of one is split evenly over two (8 chains are what a
// core issuing two 4-cycle 512-bit FMAs a cycle needs to stay busy; a whole panel's tile has
// four per token, a lone sub-panel's one).
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

// dst[c * T + j] = rows[j][c] for the T rows of a tile and its chunk's `cols` columns, with
// the stores in order and T known. Against a loop per token storing every T-th float (stop 34,
// Zen 5 VM): in a throwaway copy of both loops, 0.22 against 0.56 ns a float (128 tokens,
// activations in L2); kernels_bench gemm_packed/avx512_vnni/f16/64/2048/64 156-209 -> 112-114 us
// and 256/2048/128 866-898 -> 736-774 us; in 1B pp128 on 2 threads, where the rows come from
// memory, 317 perf samples against 365-429 (of ~12,500 in the tiles).
template <int T>
void interleave_tokens(const float* const* rows, int64_t cols, float* dst) {
  for (int64_t c = 0; c < cols; ++c, dst += T) {
#pragma GCC unroll 8
    for (int j = 0; j < T; ++j) dst[j] = rows[j][c];
  }
}

using InterleaveFn = void (*)(const float* const*, int64_t, float*);

template <int... I>
constexpr InterleaveFn interleave_fn(int t, std::integer_sequence<int, I...>) {
  constexpr InterleaveFn fns[] = {interleave_tokens<I + 1>...};
  return fns[t - 1];
}
constexpr InterleaveFn interleave_fn(int t) {
  return interleave_fn(t, std::make_integer_sequence<int, kPromptTokens>{});
}

// Tokens [t0, t1) of g's activations rearranged for the tiles, at `at`, n floats a token: token
// block b (tokens [b, b + bt) from t0, bt = its size) starts at b * n; in it chunk k0's columns
// at k0 * bt; in that, the tile of tokens [s, s + take) at s * cols, token j's activation at
// column c at c * take + j. This call writes the tiles [tile_begin, tile_end) of all blocks'
// tiles counted in order (every column of each).
void lay_out_tiles(const GemmArgs& g, int64_t t0, int64_t t1, float* at, int64_t tile_begin,
                   int64_t tile_end) {
  const int64_t tokens = t1 - t0;
  int64_t tile = 0;
  for (int64_t b = 0; b < tokens && tile < tile_end; b += kTokenBlock) {
    const int64_t bt = min64(kTokenBlock, tokens - b);
    const Tiles tiles(bt);
    const int first =
        static_cast<int>(tile_begin > tile ? min64(tile_begin - tile, tiles.count) : 0);
    const int last = static_cast<int>(min64(tile_end - tile, tiles.count));
    tile += tiles.count;
    for (int64_t k0 = 0; k0 < g.n; k0 += kChunkCols) {
      const int64_t cols = min64(kChunkCols, g.n - k0);
      float* chunk = at + b * g.n + k0 * bt;
      for (int ti = first; ti < last; ++ti) {
        const int64_t s0 = tiles.start[ti];
        const int take = static_cast<int>(tiles.start[ti + 1] - s0);
        const float* rows[kPromptTokens];
        for (int j = 0; j < take; ++j) {
          rows[j] = reinterpret_cast<const float*>(static_cast<const uint8_t*>(g.a) +
                                                   (t0 + b + s0 + j) * g.a_stride) +
                    k0;
        }
        interleave_fn(take)(rows, cols, chunk + s0 * cols);
      }
    }
  }
}

// Token tiles of `tokens` tokens, all blocks together.
int64_t tile_count(int64_t tokens) {
  int64_t count = 0;
  for (int64_t b = 0; b < tokens; b += kTokenBlock)
    count += Tiles(min64(kTokenBlock, tokens - b)).count;
  return count;
}

// Packed::prompt_layout_bytes and prompt_layout: lay_out_tiles of tokens [0, tokens), the
// tiles split among the threads.
size_t prompt_layout_bytes(int64_t n, int64_t tokens) {
  return static_cast<size_t>(n * tokens) * sizeof(float);
}
void prompt_layout(const GemmArgs& g, int64_t tokens, void* dst, int ith, int nth) {
  const int64_t count = tile_count(tokens);
  const int64_t begin = count * ith / nth, end = count * (ith + 1) / nth;
  if (begin < end) lay_out_tiles(g, 0, tokens, static_cast<float*>(dst), begin, end);
}

// A call's activations (tokens [t0, t1) of g) laid out for the tiles per thread, for calls
// whose product did not lay them out once for all its threads (GemmArgs::a_layout), made again
// only when a call reads other activations (TermsKey): a product cut into many calls of one
// panel each rearranges them once per thread, not once per call.
class TileActivations {
 public:
  const float* make(const GemmArgs& g, int64_t t0, int64_t t1) {
    if (!key_.fresh(g, t0, t1)) return buf_.data();
    const int64_t tokens = t1 - t0;
    float* at = buf_.reserve(static_cast<size_t>(tokens * g.n));
    lay_out_tiles(g, t0, t1, at, 0, tile_count(tokens));
    return at;
  }

 private:
  GrowArray<float> buf_;
  TermsKey key_;
};

// Column pairs of the next chunk's weights asked for per token tile (a line of each of its
// sub-panels a pair; a 128-column chunk is 64 pairs, and a 128-token prompt runs 22 tiles on
// each, so the whole chunk is asked for by its 16th tile).
constexpr int kPrefetchPairsPerTile = 4;

thread_local TileActivations t_acts;
// Sums of a group's sub-panels between its chunks, [sub-panel][token][16 rows].
thread_local GrowArray<float> t_sums;

// Sub-panels [q, q + S) of a chunk of `cols` columns from k0 through every token tile: the
// first tile converts their halves, the chunk's first (k0 == 0) starts every sum at +0.0, its
// last stores them in y (the first r1 rows), and between chunks they wait in sums (sub_floats
// a sub-panel). The chunk after it (F16NextChunk::in_group) is asked for meanwhile.
template <class H, int S>
void group_chunk(const GemmArgs& g, const Tiles& tiles, const float* chunk_at, float* wf,
                 float* sums, int64_t q, int64_t q_end, int64_t k0, int64_t cols, int64_t r1,
                 int64_t t0, int64_t sub_floats) {
  const bool first = k0 == 0, last = k0 + cols == g.n;
  const F16Chunk chunk{f16_sub_panel_column(g, q, k0), wf, cols};
  F16NextChunk next = F16NextChunk::in_group(g, q, q_end, k0, cols, kChunkCols, S);
  const int64_t r = q * kF16SubRows;
  const __mmask16 rows_last =
      last ? row_mask(r1 - r - (S - 1) * kF16SubRows) : row_mask(kF16SubRows);
  const int64_t out_stride = last ? g.y_stride : kF16SubRows;
  for (int ti = 0; ti < tiles.count; ++ti) {
    const int64_t s0 = tiles.start[ti];
    const int take = static_cast<int>(tiles.start[ti + 1] - s0);
    next.ask(kPrefetchPairsPerTile);
    const float* in[S];
    float* out[S];
    for (int s = 0; s < S; ++s) {
      float* sub_sums = sums ? sums + s * sub_floats + s0 * kF16SubRows : nullptr;
      in[s] = first ? nullptr : sub_sums;
      out[s] = last ? g.y + (t0 + s0) * g.y_stride + r + s * kF16SubRows : sub_sums;
    }
    (ti == 0 ? tile_fn<H, S, true>(take) : tile_fn<H, S, false>(take))(
        chunk, chunk_at + s0 * cols, in, out, out_stride, rows_last);
  }
}

// Block tokens [t0, t1) (their rearranged activations at `at`) x sub-panels [q_begin, q_end):
// whole panels (4 sub-panels) at a time, then one by one the sub-panels of a last panel that
// the matrix's rows end in; each group through all its chunks before the next. So a group's
// sums wait between chunks in L2 (32 KiB for 128 tokens), and its weights are read in address
// order, where walking every group through one chunk at a time (until stop 51) kept a chunk
// of the activations in L2 but sent the sums of all the thread's rows (2 MiB for the 1B
// gate and up products on 2 threads) out past L2 and back once per chunk. The activations
// now come from L3 once per group: the same bytes, read in order, and no writes. Zen 5 VM,
// 1B F16 pp128, interleaved pairs' ratio medians: 1 thread 1.095 (6 pairs), 2 threads 1.008
// (20); the converting tile's perf samples 3.4 -> 2.3 plain tiles' (docs/PERFORMANCE.md, stop
// 51; stop 33 had seen kernels_bench gain so and the model not).
template <class H>
void prompt_block(const GemmArgs& g, const float* at, int64_t q_begin, int64_t q_end, int64_t r1,
                  int64_t t0, int64_t t1) {
  const int64_t tokens = t1 - t0, sub_floats = tokens * kF16SubRows;
  float* sums =
      g.n > kChunkCols ? t_sums.reserve(static_cast<size_t>(kF16SubPanels * sub_floats)) : nullptr;
  const Tiles tiles(tokens);
  alignas(64) float wf[kChunkCols * kF16SubPanels * kF16SubRows];
  const auto group = [&]<int S>(int64_t q) {
    // kChunkCols is even, so a chunk starts a column pair.
    for (int64_t k0 = 0; k0 < g.n; k0 += kChunkCols) {
      group_chunk<H, S>(g, tiles, at + k0 * tokens, wf, sums, q, q_end, k0,
                        min64(kChunkCols, g.n - k0), r1, t0, sub_floats);
    }
  };
  int64_t q = q_begin;  // starts a panel
  for (; q + kF16SubPanels <= q_end; q += kF16SubPanels)
    group.template operator()<kF16SubPanels>(q);
  for (; q < q_end; ++q) group.template operator()<1>(q);
}

// The sub-panels holding rows [r0, r1): r0 starts a panel, sub-panels wholly past r1 (a last
// panel's padding) are skipped. The activations as the product laid them out for all its
// threads (GemmArgs::a_layout) when it did for these tokens, else this thread's own layout.
template <class H>
void gemm_prompt(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const int64_t q_begin = r0 / kF16SubRows, q_end = (r1 + kF16SubRows - 1) / kF16SubRows;
  const bool shared = g.a_layout != nullptr && t0 == 0 && t1 == g.a_layout_tokens;
  const float* at = shared ? g.a_layout : t_acts.make(g, t0, t1);
  for (int64_t t = t0; t < t1; t += kTokenBlock) {
    prompt_block<H>(g, at + (t - t0) * g.n, q_begin, q_end, r1, t, min64(t + kTokenBlock, t1));
  }
}

// Token t x panel p in 512-bit registers (where kernels::decode_wide()): a sub-panel's column
// of 16 rows is one 256-bit load widened to one vector, so each row's sum is the AVX2 decode's
// FMA chain over the columns in order (the same bits); the column pairs (256 bytes, a line of
// each sub-panel) in runs of for_each_block_in_runs. Rows from r1 on are not stored.
template <class H>
void decode_panel_512(const GemmArgs& g, int64_t p, int64_t r1, int64_t t) {
  const uint8_t* w = static_cast<const uint8_t*>(g.w) + p * g.w_stride;
  const float* a =
      reinterpret_cast<const float*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
  __m512 acc[kF16SubPanels];
#pragma GCC unroll 4
  for (int s = 0; s < kF16SubPanels; ++s) acc[s] = _mm512_setzero_ps();
  const auto column = [&](const uint8_t* pair, int second, float ak) {
    const __m512 vk = _mm512_set1_ps(ak);
#pragma GCC unroll 4
    for (int s = 0; s < kF16SubPanels; ++s) {
      acc[s] = _mm512_fmadd_ps(H::load16(pair + f16x64_offset(s, second)), vk, acc[s]);
    }
  };
  avx2::LinePrefetcher ahead(w, decode_prefetch_bytes());
  for_each_block_in_runs<kF16PairBytes>(w, g.n / 2, ahead, [&](int64_t j) {
    column(w + j * kF16PairBytes, 0, a[2 * j]);
    column(w + j * kF16PairBytes, 1, a[2 * j + 1]);
  });
  if (g.n % 2 != 0) column(w + g.n / 2 * kF16PairBytes, 0, a[g.n - 1]);
#pragma GCC unroll 4
  for (int s = 0; s < kF16SubPanels; ++s) {
    const int64_t r = p * kF16PanelRows + s * kF16SubRows;
    if (r < r1) _mm512_mask_storeu_ps(g.y + t * g.y_stride + r, row_mask(r1 - r), acc[s]);
  }
}

// One token: in 512-bit registers where kernels::decode_wide(), else the AVX2 decode
// (memory-bound; its 8 FMA chains keep up with the stream).
template <class H>
void gemm_packed_half_x16(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  if (t1 - t0 == 1 && decode_wide()) {
    const int64_t p_end = (r1 + kF16PanelRows - 1) / kF16PanelRows;
    for (int64_t p = r0 / kF16PanelRows; p < p_end; ++p) decode_panel_512<H>(g, p, r1, t0);
  } else if (t1 - t0 == 1) {
    H::avx2_decode(g, r0, r1, t0);
  } else if (t1 > t0) {
    gemm_prompt<H>(g, r0, r1, t0, t1);
  }
}

}  // namespace

void fill_avx512_packed_f16(KernelTable& t) {
  for (const DType type : {DType::kF16, DType::kBF16}) {
    TypeOps::Packed& p = t.types[static_cast<uint32_t>(type)].packed;
    p.panel_rows = kF16PanelRows;
    p.panel_bytes = f16x64_panel_bytes;
    p.pack_panel = pack_f16x64;
    p.gemm =
        type == DType::kF16 ? gemm_packed_half_x16<F16Halves> : gemm_packed_half_x16<BF16Halves>;
    p.prompt_layout_bytes = prompt_layout_bytes;
    p.prompt_layout = prompt_layout;
  }
}

}  // namespace cohort::kernels
