// AVX2+FMA+F16C batched products (TypeOps::gemm) for F16, Q4_0 and Q8_0 weights: the
// prefill path. A tile of R rows x T tokens walks the blocks once: each weight block is
// decoded once for T tokens, each activation block is loaded once for R rows, and the
// R x T accumulators stay in registers.
//
// Determinism: every (row, token) pair has one accumulator of 8 lanes, updated block by
// block in order, then summed horizontally the same way. A pair's bits therefore do not
// depend on the tile it falls in (edge tiles are the same template with smaller R or T), so
// any split of rows or tokens between threads gives the same output. They differ from
// vec_dot's (which alternates two accumulators) only in float summation order.
#include <algorithm>
#include <vector>

#include "kernels/registry.h"
#include "kernels/x86/simd_avx2.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

template <typename Block>
inline const Block* row_ptr(const GemmArgs& g, int64_t r) {
  return reinterpret_cast<const Block*>(static_cast<const uint8_t*>(g.w) + r * g.w_stride);
}

template <typename Block>
inline const Block* token_ptr(const GemmArgs& g, int64_t t) {
  return reinterpret_cast<const Block*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
}

inline __m256i load32(const int8_t* p) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
}

inline __m256 broadcast_f16(uint16_t h) { return _mm256_set1_ps(avx2::f16_to_f32(h)); }

// Software prefetch of the next row tile: the byte at offset `ahead` past p, into L1. When
// one token is multiplied (decode), the kernel is bound by how early weight bytes arrive;
// the hardware prefetchers lose track of R short interleaved row streams, and prefetching
// the same position one tile of rows ahead (R row strides, 2-12 KiB) doubled the streamed
// bandwidth of a 500 MB Q4_0 matrix-vector product on this machine. A prefetch never
// faults, so the last tile may point past the matrix.
inline void prefetch_ahead(const void* p, size_t ahead) {
  _mm_prefetch(static_cast<const char*>(p) + ahead, _MM_HINT_T0);
}

// Rows [r0, r1) x tokens [t0, t1) in tiles of R x T; the edges take the R x 1, 1 x T and
// 1 x 1 instances of the same tile, which compute each pair exactly as the full tile does.
template <int R, int T, typename Tile>
void tiles(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1, Tile tile) {
  int64_t r = r0;
  for (; r + R <= r1; r += R) {
    int64_t t = t0;
    for (; t + T <= t1; t += T) tile.template operator()<R, T>(g, r, t);
    for (; t < t1; ++t) tile.template operator()<R, 1>(g, r, t);
  }
  for (; r < r1; ++r) {
    int64_t t = t0;
    for (; t + T <= t1; t += T) tile.template operator()<1, T>(g, r, t);
    for (; t < t1; ++t) tile.template operator()<1, 1>(g, r, t);
  }
}

template <int R, int T>
inline void store(const GemmArgs& g, int64_t r, int64_t t, __m256 (&acc)[R][T]) {
#pragma GCC unroll 4
  for (int j = 0; j < T; ++j) {
#pragma GCC unroll 4
    for (int i = 0; i < R; ++i) g.y[(t + j) * g.y_stride + r + i] = avx2::hsum(acc[i][j]);
  }
}

// Where a quantized tile takes its blocks' scales (f16 in the blocks): converted on the spot
// (kFloatScales false), or read as floats converted beforehand: a row's from ws (row r at
// ws + (r - ws_row0) * blocks), a token's from as (token t at as + (t - as_tok0) * blocks). Either
// way the same float values, so a pair's bits do not depend on which.
template <bool kFloatScales>
struct ScaleSource {
  // Block b's scale: its f16 d, or (kFloatScales) f[b], f being the row's or token's
  // converted scales (row_scales / token_scales).
  static __m256 scale(const uint16_t& d, const float*, int64_t) { return broadcast_f16(d); }
  const float* row_scales(int64_t) const { return nullptr; }
  const float* token_scales(int64_t) const { return nullptr; }
};

template <>
struct ScaleSource<true> {
  const float* ws = nullptr;
  const float* as = nullptr;
  int64_t ws_row0 = 0, as_tok0 = 0, blocks = 0;  // blocks: per row and per token
  static __m256 scale(const uint16_t&, const float* f, int64_t b) {
    return _mm256_broadcast_ss(f + b);
  }
  const float* row_scales(int64_t r) const { return ws + (r - ws_row0) * blocks; }
  const float* token_scales(int64_t t) const { return as + (t - as_tok0) * blocks; }
};

// Rows [r0, r1) x tokens [t0, t1) of a quantized type (blocks of kQK with an f16 scale d
// first) as tiles() does, with the scales converted once instead of once per tile: the
// tokens' for the whole call, each row tile's just before its token tiles (which then find
// those rows in cache). Converting them inside the tiles (a scalar F16C conversion and a
// broadcast per row and per token of every block) cost ~15% of the Q4_0 tile's time in
// cache. Worth it only when a row tile meets several token tiles (prompts).
template <int R, int T, typename TokenBlock, template <bool> class Tile>
void tiles_float_scales(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const int64_t nb = g.n / kQK;
  // Per thread, grown to the largest call seen: no allocation once warm.
  thread_local std::vector<float> token_scales, row_scales;
  if (token_scales.size() < static_cast<size_t>((t1 - t0) * nb)) {
    token_scales.resize(static_cast<size_t>((t1 - t0) * nb));
  }
  if (row_scales.size() < static_cast<size_t>(R * nb))
    row_scales.resize(static_cast<size_t>(R * nb));
  for (int64_t t = t0; t < t1; ++t) {
    const TokenBlock* blk = token_ptr<TokenBlock>(g, t);
    for (int64_t b = 0; b < nb; ++b) token_scales[(t - t0) * nb + b] = avx2::f16_to_f32(blk[b].d);
  }
  Tile<true> tile;
  tile.as = token_scales.data();
  tile.as_tok0 = t0;
  tile.ws = row_scales.data();
  tile.blocks = nb;
  for (int64_t r = r0; r < r1;) {
    const int64_t rows = r + R <= r1 ? R : 1;
    for (int64_t i = 0; i < rows; ++i) {
      const auto* blk = row_ptr<typename Tile<true>::WeightBlock>(g, r + i);
      for (int64_t b = 0; b < nb; ++b) row_scales[i * nb + b] = avx2::f16_to_f32(blk[b].d);
    }
    tile.ws_row0 = r;
    int64_t t = t0;
    if (rows == R) {
      for (; t + T <= t1; t += T) tile.template operator()<R, T>(g, r, t);
      for (; t < t1; ++t) tile.template operator()<R, 1>(g, r, t);
    } else {
      for (; t + T <= t1; t += T) tile.template operator()<1, T>(g, r, t);
      for (; t < t1; ++t) tile.template operator()<1, 1>(g, r, t);
    }
    r += rows;
  }
}

// ---- F16 weights, f32 activations: 8 elements per step, a scalar tail summed after.

// A (row, token) pair's result from its 8-lane accumulator over elements [0, k): the
// horizontal sum plus the scalar products of elements [k, n). The whole-row and the blocked
// F16 forms both end here, which is what keeps their bits equal.
inline float finish_f16_pair(__m256 acc, const uint16_t* w, const float* a, int64_t k, int64_t n) {
  float tail = 0.0f;
  for (int64_t kk = k; kk < n; ++kk) tail += avx2::f16_to_f32(w[kk]) * a[kk];
  return avx2::hsum(acc) + tail;
}
struct TileF16 {
  template <int R, int T>
  void operator()(const GemmArgs& g, int64_t r, int64_t t) const {
    const uint16_t* w[R];
    const float* a[T];
    for (int i = 0; i < R; ++i) w[i] = row_ptr<uint16_t>(g, r + i);
    for (int j = 0; j < T; ++j) a[j] = token_ptr<float>(g, t + j);
    __m256 acc[R][T];
#pragma GCC unroll 4
    for (int i = 0; i < R; ++i) {
#pragma GCC unroll 4
      for (int j = 0; j < T; ++j) acc[i][j] = _mm256_setzero_ps();
    }
    int64_t k = 0;
    const size_t ahead = R * g.w_stride;
    for (; k + 8 <= g.n; k += 8) {
      __m256 wv[R];
      if ((k & 31) == 0) {  // one prefetch per 64-byte line of each row
#pragma GCC unroll 4
        for (int i = 0; i < R; ++i) prefetch_ahead(w[i] + k, ahead);
      }
#pragma GCC unroll 4
      for (int i = 0; i < R; ++i) wv[i] = avx2::load_f16x8(w[i] + k);
#pragma GCC unroll 4
      for (int j = 0; j < T; ++j) {
        const __m256 av = _mm256_loadu_ps(a[j] + k);
#pragma GCC unroll 4
        for (int i = 0; i < R; ++i) acc[i][j] = _mm256_fmadd_ps(wv[i], av, acc[i][j]);
      }
    }
    for (int j = 0; j < T; ++j) {
      for (int i = 0; i < R; ++i) {
        g.y[(t + j) * g.y_stride + r + i] = finish_f16_pair(acc[i][j], w[i], a[j], k, g.n);
      }
    }
  }
};

// ---- F16 weights for prompts: the same arithmetic as TileF16, cache-blocked.
//
// TileF16 walks whole rows, so a 4-token tile's activations (16 bytes per column) come from
// L2 for every row tile, and each weight vector is converted from f16 again for every token
// tile: at 2048-8192 columns the tile is bound by L2 bandwidth and the conversions, not by
// its FMAs. Here a block of kRowBlock rows is converted to f32 once per chunk of kKChunk
// columns (24 KiB), and every token tile multiplies that chunk from L1 with its own
// activation chunk (4 KiB); the 8-lane accumulators of each (row, token) pair wait in a
// buffer between chunks. Each lane still receives the same products in the same order
// (f16 -> f32 is exact, a stored and reloaded vector is unchanged), then the same
// horizontal sum and scalar tail, so every pair's bits equal TileF16's: prompts and single
// tokens give the same results.
constexpr int64_t kRowBlock = 24;
constexpr int64_t kKChunk = 256;
// Rows at least this long take the blocked form: below it TileF16's whole-row walk was as
// fast or faster in kernels_bench (256 x 2048 x 128: 92 vs 85 GFLOP/s per CPU second;
// 256 x 8192 x 128: 41 vs 71).
constexpr int64_t kBlockedMinCols = 4096;

// One buffered 8-lane accumulator.
struct alignas(32) Lanes {
  float v[8];
};

// Accumulates columns [k0, k0 + kl) of rows rb + i0 .. rb + i0 + R - 1 (panel rows i0..) and
// tokens t .. t + T - 1 into their buffered accumulators (acc + row * tokens + token).
template <int R, int T>
__attribute__((always_inline)) inline void f16_chunk_tile(const float* panel, const GemmArgs& g,
                                                          int64_t i0, int64_t t, int64_t t0,
                                                          int64_t k0, int64_t kl, Lanes* accbuf,
                                                          int64_t tokens) {
  const float* w[R];
  const float* a[T];
  for (int i = 0; i < R; ++i) w[i] = panel + (i0 + i) * kKChunk;
  for (int j = 0; j < T; ++j) a[j] = token_ptr<float>(g, t + j) + k0;
  __m256 acc[R][T];
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i) {
#pragma GCC unroll 4
    for (int j = 0; j < T; ++j)
      acc[i][j] = _mm256_load_ps(accbuf[(i0 + i) * tokens + (t - t0 + j)].v);
  }
  for (int64_t k = 0; k < kl; k += 8) {
    __m256 wv[R];
#pragma GCC unroll 4
    for (int i = 0; i < R; ++i) wv[i] = _mm256_load_ps(w[i] + k);
#pragma GCC unroll 4
    for (int j = 0; j < T; ++j) {
      const __m256 av = _mm256_loadu_ps(a[j] + k);
#pragma GCC unroll 4
      for (int i = 0; i < R; ++i) acc[i][j] = _mm256_fmadd_ps(wv[i], av, acc[i][j]);
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < R; ++i) {
#pragma GCC unroll 4
    for (int j = 0; j < T; ++j)
      _mm256_store_ps(accbuf[(i0 + i) * tokens + (t - t0 + j)].v, acc[i][j]);
  }
}

// Every row tile of the block (rows of them) for tokens t .. t + T - 1.
template <int R, int T>
inline void chunk_token_tile(const float* panel, const GemmArgs& g, int64_t rows, int64_t t,
                             int64_t t0, int64_t k0, int64_t kl, Lanes* accbuf, int64_t tokens) {
  int64_t i0 = 0;
  for (; i0 + R <= rows; i0 += R) f16_chunk_tile<R, T>(panel, g, i0, t, t0, k0, kl, accbuf, tokens);
  for (; i0 < rows; ++i0) f16_chunk_tile<1, T>(panel, g, i0, t, t0, k0, kl, accbuf, tokens);
}

template <int R, int T>
void gemm_f16_blocked(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const int64_t tokens = t1 - t0, n8 = g.n & ~int64_t{7};
  // Per thread, grown to the largest call seen: no allocation once warm.
  struct alignas(32) Panel {
    float v[kRowBlock * kKChunk];
  };
  thread_local Panel panel;
  thread_local std::vector<Lanes> accbuf;
  if (accbuf.size() < static_cast<size_t>(kRowBlock * tokens)) {
    accbuf.resize(static_cast<size_t>(kRowBlock * tokens));
  }
  for (int64_t rb = r0; rb < r1; rb += kRowBlock) {
    const int64_t rows = std::min(kRowBlock, r1 - rb);
    std::fill(accbuf.begin(), accbuf.begin() + rows * tokens, Lanes{});
    for (int64_t k0 = 0; k0 < n8; k0 += kKChunk) {
      const int64_t kl = std::min(kKChunk, n8 - k0);
      for (int64_t i = 0; i < rows; ++i) {
        const uint16_t* src = row_ptr<uint16_t>(g, rb + i) + k0;
        float* dst = panel.v + i * kKChunk;
        for (int64_t k = 0; k < kl; k += 8) _mm256_store_ps(dst + k, avx2::load_f16x8(src + k));
      }
      // Token tiles outside, row tiles inside: a token tile's activation chunk is read from
      // L2 once and then from L1 by every row tile of the block.
      int64_t t = t0;
      for (; t + T <= t1; t += T)
        chunk_token_tile<R, T>(panel.v, g, rows, t, t0, k0, kl, accbuf.data(), tokens);
      for (; t < t1; ++t)
        chunk_token_tile<R, 1>(panel.v, g, rows, t, t0, k0, kl, accbuf.data(), tokens);
    }
    for (int64_t i = 0; i < rows; ++i) {
      const uint16_t* w = row_ptr<uint16_t>(g, rb + i);
      for (int64_t t = t0; t < t1; ++t) {
        const float* a = token_ptr<float>(g, t);
        g.y[t * g.y_stride + rb + i] =
            finish_f16_pair(_mm256_load_ps(accbuf[i * tokens + (t - t0)].v), w, a, n8, g.n);
      }
    }
  }
}

// ---- Q4_0 weights, Q8_0 activations. sum_j (q_j - 8) a_j = maddubs(q, a) - maddubs(8, a)
// in int16 pairs (each at most 15 * 127 * 2), the second term once per token block.
template <bool kFloatScales>
struct TileQ4_0 : ScaleSource<kFloatScales> {
  using WeightBlock = BlockQ4_0;
  template <int R, int T>
  void operator()(const GemmArgs& g, int64_t r, int64_t t) const {
    const BlockQ4_0* w[R];
    const BlockQ8_0* a[T];
    const float* wsc[R];
    const float* asc[T];
    for (int i = 0; i < R; ++i) {
      w[i] = row_ptr<BlockQ4_0>(g, r + i);
      wsc[i] = this->row_scales(r + i);
    }
    for (int j = 0; j < T; ++j) {
      a[j] = token_ptr<BlockQ8_0>(g, t + j);
      asc[j] = this->token_scales(t + j);
    }
    __m256 acc[R][T];
#pragma GCC unroll 4
    for (int i = 0; i < R; ++i) {
#pragma GCC unroll 4
      for (int j = 0; j < T; ++j) acc[i][j] = _mm256_setzero_ps();
    }
    const __m256i ones = _mm256_set1_epi16(1), eights = _mm256_set1_epi8(8);
    const int64_t nb = g.n / kQK;
    const size_t ahead = R * g.w_stride;
    for (int64_t b = 0; b < nb; ++b) {
      __m256i q[R];
      __m256 dw[R];
#pragma GCC unroll 4
      for (int i = 0; i < R; ++i) {
        if ((b & 1) == 0) prefetch_ahead(&w[i][b], ahead);  // 2 blocks of 18 bytes < a line
        q[i] = avx2::unpack_nibbles32(w[i][b].qs);
        dw[i] = this->scale(w[i][b].d, wsc[i], b);
      }
#pragma GCC unroll 4
      for (int j = 0; j < T; ++j) {
        const __m256i av = load32(a[j][b].qs);
        const __m256i off = _mm256_maddubs_epi16(eights, av);
        const __m256 da = this->scale(a[j][b].d, asc[j], b);
#pragma GCC unroll 4
        for (int i = 0; i < R; ++i) {
          const __m256i p16 = _mm256_sub_epi16(_mm256_maddubs_epi16(q[i], av), off);
          const __m256 p = _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, ones));
          acc[i][j] = _mm256_fmadd_ps(_mm256_mul_ps(dw[i], da), p, acc[i][j]);
        }
      }
    }
    store<R, T>(g, r, t, acc);
  }
};

// ---- Q8_0 weights, Q8_0 activations: maddubs(|w|, sign(a, w)); |w| once per weight block
// (a weight of -128 gives 128, which maddubs takes as unsigned; activations never hold
// -128, so each int16 pair sum is at most 2 * 128 * 127).
template <bool kFloatScales>
struct TileQ8_0 : ScaleSource<kFloatScales> {
  using WeightBlock = BlockQ8_0;
  template <int R, int T>
  void operator()(const GemmArgs& g, int64_t r, int64_t t) const {
    const BlockQ8_0* w[R];
    const BlockQ8_0* a[T];
    const float* wsc[R];
    const float* asc[T];
    for (int i = 0; i < R; ++i) {
      w[i] = row_ptr<BlockQ8_0>(g, r + i);
      wsc[i] = this->row_scales(r + i);
    }
    for (int j = 0; j < T; ++j) {
      a[j] = token_ptr<BlockQ8_0>(g, t + j);
      asc[j] = this->token_scales(t + j);
    }
    __m256 acc[R][T];
#pragma GCC unroll 4
    for (int i = 0; i < R; ++i) {
#pragma GCC unroll 4
      for (int j = 0; j < T; ++j) acc[i][j] = _mm256_setzero_ps();
    }
    const __m256i ones = _mm256_set1_epi16(1);
    const int64_t nb = g.n / kQK;
    const size_t ahead = R * g.w_stride;
    for (int64_t b = 0; b < nb; ++b) {
      __m256i q[R], aq[R];
      __m256 dw[R];
#pragma GCC unroll 4
      for (int i = 0; i < R; ++i) {
        prefetch_ahead(&w[i][b], ahead);  // blocks of 34 bytes: every line is touched
        q[i] = load32(w[i][b].qs);
        aq[i] = _mm256_sign_epi8(q[i], q[i]);
        dw[i] = this->scale(w[i][b].d, wsc[i], b);
      }
#pragma GCC unroll 4
      for (int j = 0; j < T; ++j) {
        const __m256i av = load32(a[j][b].qs);
        const __m256 da = this->scale(a[j][b].d, asc[j], b);
#pragma GCC unroll 4
        for (int i = 0; i < R; ++i) {
          const __m256i p16 = _mm256_maddubs_epi16(aq[i], _mm256_sign_epi8(av, q[i]));
          const __m256 p = _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, ones));
          acc[i][j] = _mm256_fmadd_ps(_mm256_mul_ps(dw[i], da), p, acc[i][j]);
        }
      }
    }
    store<R, T>(g, r, t, acc);
  }
};

// Tile shapes: F16 keeps 12 accumulators + 3 weight vectors + 1 activation in the 16 ymm
// registers; the quantized tiles need room for the decoded blocks and scales as well.
// Long rows and more than one token tile (prompts): the cache-blocked form of the same tile.
void gemm_f16(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  if (t1 - t0 <= 4 || g.n < kBlockedMinCols) {
    tiles<3, 4>(g, r0, r1, t0, t1, TileF16{});
  } else {
    gemm_f16_blocked<3, 4>(g, r0, r1, t0, t1);
  }
}

// One token tile or less (decode): the scales converted in the tiles, which stream each
// weight once; the conversion pass of tiles_float_scales would only add instructions.
void gemm_q4_0(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  if (t1 - t0 <= 4) {
    tiles<2, 4>(g, r0, r1, t0, t1, TileQ4_0<false>{});
  } else {
    tiles_float_scales<2, 4, BlockQ8_0, TileQ4_0>(g, r0, r1, t0, t1);
  }
}

void gemm_q8_0(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  if (t1 - t0 <= 4) {
    tiles<2, 4>(g, r0, r1, t0, t1, TileQ8_0<false>{});
  } else {
    tiles_float_scales<2, 4, BlockQ8_0, TileQ8_0>(g, r0, r1, t0, t1);
  }
}

}  // namespace

void fill_avx2_gemm(KernelTable& t) {
  t.types[static_cast<uint32_t>(DType::kF16)].gemm = gemm_f16;
  t.types[static_cast<uint32_t>(DType::kQ4_0)].gemm = gemm_q4_0;
  t.types[static_cast<uint32_t>(DType::kQ8_0)].gemm = gemm_q8_0;
}

}  // namespace cohort::kernels
