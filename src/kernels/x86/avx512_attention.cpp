// AVX-512 single-query attention (KernelTable::attention) for head dims that are multiples of
// 16 up to 256; other head dims take the AVX2 table's kernel (x86/avx2_ops.cpp). The
// walk (tiles, quads of query heads, online softmax, the weighted sum of values) is
// attention_walk.h's; this file brings its 16-lane operations and how a quad's scores are
// formed.
//
// Scores, 4 query heads at a time (a quad), 16 dims of 4 positions per step. The quad's
// queries are rotated (attention_walk.h rotate_quad_queries): vector 4c + r holds, in lane
// group g, 4 dims of head (g + r) mod 4, so a key vector of 16 dims meets all four heads in
// the 4 FMAs r = 0..3 with no broadcast; the accumulators, rotated back and added, hold each
// head's sums over dims d = l (mod 4), and 8 positions' 32 scores finish in in-lane shuffles
// and adds.
//
// On the Zen 5 VM of stop 35, one thread, a decode step of the 1B shape as the model lays its
// cache out (kernels_bench attention_model_f16/avx512_vnni, medians of 3, four interleaved
// runs): 24.6-29.4 GB/s with the cache in L2 (512 positions) and 14.4-21.0 from memory (16384
// positions x 4 layers), against 15.9-18.2 and 12.5-13.1 for this file's first form (a
// broadcast of 4 staged key values per FMA, 8 positions at a time). A Q8_0 cache gains less:
// each 16 values of it take a widen and a convert, and in the weighted sum a scale multiply.
// Its blocked keys' scales multiply a 32-dim group's part of a score rather than each value
// (block_pass16_q8, stop 50: attention_model_q8_0 from memory 13.7 -> 17.3 GB/s a thread,
// docs/PERFORMANCE.md).
//
// Blocked keys (kernels.h AttentionArgs::keys_blocked: the model's F16 and F32 caches since
// stop 37, Q8_0 since stop 42) take block_scores16 instead: a block's 64 positions in 4
// vectors, a query value broadcast per FMA, no rotations or sums across lanes; a decode step's
// attention in L2 read 41.0 GB/s against the rotated scores' 33.2 (kernels_bench
// attention_model_f16, one thread), and a Q8_0 cache's 32.0-33.9 us against 38.3-38.9 with its
// keys in rows (attention_model_q8_0, docs/PERFORMANCE.md stop 42).
#include <cstdint>
#include <cstring>

#include "kernels/registry.h"
#include "kernels/x86/attention_walk.h"
#include "kernels/x86/simd_avx512.h"

namespace cohort::kernels {
namespace {

using AttentionFn = void (*)(const AttentionArgs&, int64_t, int64_t, float*);

// The AVX2 table's kernel, for head dims this file does not take (set by the fill).
AttentionFn g_avx2_attention = nullptr;

constexpr int64_t kMaxHeadDim = 256;
constexpr int kRotPositions = 4;  // positions quad_scores multiplies at once

// A Q8_0 block's f16 scale (its first two bytes) in every lane.
inline __m512 q8_scale16(const char* block) {
  uint16_t bits;
  std::memcpy(&bits, block, sizeof bits);
  return _mm512_set1_ps(_cvtsh_ss(bits));
}

// 16 int8 at p as floats.
inline __m512 i8x16_to_ps(const char* p) {
  return _mm512_cvtepi32_ps(
      _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p))));
}

// Values d .. d + 15 of a cache row (one position of one KV head) as floats; d a multiple of
// 16, so one Q8_0 block holds them all.
template <Kv kKind>
inline __m512 load16(const char* row, int64_t d) {
  if constexpr (kKind == Kv::kF16) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(row + 2 * d)));
  } else if constexpr (kKind == Kv::kF32) {
    return _mm512_loadu_ps(reinterpret_cast<const float*>(row) + d);
  } else {
    const char* block = row + d / kQ8Block * kQ8BlockBytes;
    return _mm512_mul_ps(q8_scale16(block), i8x16_to_ps(block + 2 + d % kQ8Block));
  }
}

// Values d .. d + 31 of a Q8_0 cache row (one block: d a multiple of 32) as two vectors of
// floats, lo and hi: load16<Kv::kQ8> at d and d + 16, with the block's scale read and widened
// once for both instead of once each (a scale takes a load, a move to a vector register, a
// conversion and a broadcast: as much as the 16 values' own widening).
inline void load32_q8(const char* row, int64_t d, __m512& lo, __m512& hi) {
  const char* block = row + d / kQ8Block * kQ8BlockBytes;
  const __m512 scale = q8_scale16(block);
  lo = _mm512_mul_ps(scale, i8x16_to_ps(block + 2));
  hi = _mm512_mul_ps(scale, i8x16_to_ps(block + 2 + 16));
}

// e^x for 16 floats: the AVX2 exp_ps's range reduction and polynomial (simd_avx2.h), with
// 2^n applied by vscalefps, which rounds a subnormal result once. x < -104 (-inf included)
// gives 0, x > 88.73 +inf, NaN stays NaN.
inline __m512 exp16(__m512 x) {
  // min/max return their second operand when one is NaN, so NaN passes through.
  x = _mm512_max_ps(_mm512_set1_ps(-104.0f), _mm512_min_ps(_mm512_set1_ps(89.0f), x));
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  const __m512 y = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  return _mm512_scalef_ps(y, n);
}

// Lanes 4i + l of a and b: [a0 + a1, a2 + a3, b0 + b1, b2 + b3] in each 128-bit lane.
inline __m512 pair_sums(__m512 a, __m512 b) {
  return _mm512_add_ps(_mm512_shuffle_ps(a, b, 0x88), _mm512_shuffle_ps(a, b, 0xDD));
}

// Group i of 4 lanes of x moved to group i + r (mod 4).
template <int r>
inline __m512 rotate_groups(__m512 x) {
  if constexpr (r == 0) return x;
  if constexpr (r == 1) return _mm512_shuffle_f32x4(x, x, _MM_SHUFFLE(2, 1, 0, 3));
  if constexpr (r == 2) return _mm512_shuffle_f32x4(x, x, _MM_SHUFFLE(1, 0, 3, 2));
  return _mm512_shuffle_f32x4(x, x, _MM_SHUFFLE(0, 3, 2, 1));
}

// Scales and stores the 32 scores of positions [j, j + 8) of a quad's n heads: x[p / 2] holds
// positions j + p and j + p + 1 summed in pairs of lanes (pair_sums of two positions whose
// lane 4i + l holds head i's sum over its dims d = l (mod 4)).
inline void store_quad_scores(const __m512 x[kPositionBlock / 2], __m512 vscale, int64_t n,
                              float* s, int64_t s_stride, int64_t j) {
  // Head 0 then head 1 (lo), head 2 then head 3 (hi): each as [positions 0-3 | 4-7].
  const __m512i lo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i hi =
      _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  // Lane 4i + p: head i's score at position j + p (y0) and j + 4 + p (y1).
  const __m512 y0 = _mm512_mul_ps(pair_sums(x[0], x[1]), vscale);
  const __m512 y1 = _mm512_mul_ps(pair_sums(x[2], x[3]), vscale);
  const __m512 h01 = _mm512_permutex2var_ps(y0, lo, y1);
  const __m512 h23 = _mm512_permutex2var_ps(y0, hi, y1);
  const __m256 rows[kQuad] = {_mm512_castps512_ps256(h01),
                              _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(h01), 1)),
                              _mm512_castps512_ps256(h23),
                              _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(h23), 1))};
  for (int64_t i = 0; i < n; ++i) _mm256_store_ps(s + i * s_stride + j, rows[i]);
}

// The scores of a quad's n (<= 4) heads against positions [0, cnt8) (cnt8 a multiple of 8)
// of key rows of kind kKind, key_stride bytes apart (in the cache, or staged as floats):
// s[i * s_stride + j] = scale * q_i . k_j; ask says what to prefetch per row. qr holds the
// quad's queries rotated: vector 4c + r, lane m = q_i[16c + m] of head i = (m / 4 + r) mod 4
// (zero for i >= n). A key vector k[16c .. 16c + 15] times vector 4c + r adds in lane group g
// head (g + r) mod 4's products of dims 16c + 4g + l (lane l): accumulator r holds, for each
// head i, G[i - r][l] = the FMA chain over c of those products with g = i - r. Rotated by r
// groups, accumulator r has head i's G[i - r] in group i, and (r0 + r2) + (r1 + r3) adds
// (G[i] + G[i + 2]) + (G[i + 1] + G[i + 3]), the same as (G[0] + G[2]) + (G[1] + G[3]) in
// every slot i (float addition commutes): so a head's bits do not depend on its slot in the
// quad, its quad's other heads or its position's place in the block. pair_sums then adds
// each head's 4 lanes as (l0 + l1) + (l2 + l3). Four positions at a time: 16 accumulators,
// each query vector loaded once for the four.
template <Kv kKind>
inline void quad_scores16(const float* qr, const char* keys, int64_t key_stride, int64_t hd,
                          int64_t cnt8, float scale, int64_t n, float* s, int64_t s_stride,
                          const TileAsk& ask) {
  const __m512 vscale = _mm512_set1_ps(scale);
  for (int64_t j = 0; j < cnt8; j += kPositionBlock) {
    __m512 x[kPositionBlock / 2];
#pragma GCC unroll 4
    for (int p = 0; p < kPositionBlock; p += kRotPositions) {
      __m512 acc[kRotPositions][kQuad];
#pragma GCC unroll 4
      for (int u = 0; u < kRotPositions; ++u) {
#pragma GCC unroll 4
        for (int r = 0; r < kQuad; ++r) acc[u][r] = _mm512_setzero_ps();
      }
      const char* k0 = keys + (j + p) * key_stride;
#pragma GCC unroll 4
      for (int u = 0; u < kRotPositions; ++u) ask.rows(j + p + u);
      // Q8_0 keys a block (two vectors of dims) at a time; each accumulator still takes the
      // vectors in order, so the same bits.
      constexpr int kStep = kKind == Kv::kQ8 ? 2 : 1;
      for (int64_t c = 0; c < hd / 16; c += kStep) {
        __m512 kv[kStep][kRotPositions];
#pragma GCC unroll 4
        for (int u = 0; u < kRotPositions; ++u) {
          if constexpr (kKind == Kv::kQ8) {
            load32_q8(k0 + u * key_stride, 16 * c, kv[0][u], kv[1][u]);
          } else {
            kv[0][u] = load16<kKind>(k0 + u * key_stride, 16 * c);
          }
        }
#pragma GCC unroll 2
        for (int e = 0; e < kStep; ++e) {
#pragma GCC unroll 4
          for (int r = 0; r < kQuad; ++r) {
            const __m512 q = _mm512_loadu_ps(qr + 16 * (4 * (c + e) + r));
#pragma GCC unroll 4
            for (int u = 0; u < kRotPositions; ++u) {
              acc[u][r] = _mm512_fmadd_ps(kv[e][u], q, acc[u][r]);
            }
          }
        }
      }
      __m512 pos[kRotPositions];
#pragma GCC unroll 4
      for (int u = 0; u < kRotPositions; ++u) {
        pos[u] =
            _mm512_add_ps(_mm512_add_ps(acc[u][0], rotate_groups<2>(acc[u][2])),
                          _mm512_add_ps(rotate_groups<1>(acc[u][1]), rotate_groups<3>(acc[u][3])));
      }
#pragma GCC unroll 2
      for (int u = 0; u < kRotPositions; u += 2) x[(p + u) / 2] = pair_sums(pos[u], pos[u + 1]);
    }
    store_quad_scores(x, vscale, n, s, s_stride, j);
  }
}

// The first 16 NB positions of a key block of F16 or F32 keys, one dim at a time as NB vectors
// of floats.
template <Kv kKind, int NB>
inline void load_block_dim16(const char* kblk, int64_t d, __m512 k[NB]) {
#pragma GCC unroll 4
  for (int b = 0; b < NB; ++b) k[b] = load16<kKind>(kblk, kKeyBlock * d + 16 * b);
}

// The first 16 NB positions of a block of Q8_0 keys (kQ8: kernels.h q8_key_value_offset) or of
// such a block staged as floats (kQ8Floats: attention_cache.h), a 32-dim group at a time:
// scale(b) the positions' scales of vector b as floats, load(d) dim d's int8 as floats (exact).
template <Kv kKind, int NB>
struct Q8BlockGroup16 {
  const char* group;  // q8_group
  __m512 scale(int b) const {
    if constexpr (kKind == Kv::kQ8) {
      return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(group + 32 * b)));
    } else {
      return _mm512_loadu_ps(reinterpret_cast<const float*>(group) + 16 * b);
    }
  }
  void load(int64_t d, __m512 k[NB]) const {
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) {
      const char* values = q8_group_values<kKind>(group, d, 16 * b);
      if constexpr (kKind == Kv::kQ8) {
        k[b] = i8x16_to_ps(values);
      } else {
        k[b] = _mm512_loadu_ps(reinterpret_cast<const float*>(values));
      }
    }
  }
};

// Blocked keys (kernels.h AttentionArgs::keys_blocked): scores of NQ heads (queries as they
// are, hd floats apart) against the first 16 NB positions of the key block at kblk (a tile):
// s[i * s_stride + p] = scale * q_i . k_p. Lanes hold positions, so a score is one FMA chain
// over d = 0 .. hd - 1, the same bits whatever the heads beside it; the block is read in
// address order, a dim's row of positions after another. Asks for the rows ahead of
// positions [0, cnt), one a dim.
template <Kv kKind, int NQ, int NB>
inline void block_pass16(const float* q, const char* kblk, int64_t hd, int64_t cnt, __m512 vscale,
                         float* s, int64_t s_stride, const TileAsk& ask) {
  __m512 acc[NQ][NB];
#pragma GCC unroll 4
  for (int i = 0; i < NQ; ++i) {
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) acc[i][b] = _mm512_setzero_ps();
  }
  for (int64_t d = 0; d < hd; ++d) {
    if (d < cnt) ask.rows(d);
    __m512 k[NB];
    load_block_dim16<kKind, NB>(kblk, d, k);
#pragma GCC unroll 4
    for (int i = 0; i < NQ; ++i) {
      const __m512 qb = _mm512_set1_ps(q[i * hd + d]);
#pragma GCC unroll 4
      for (int b = 0; b < NB; ++b) acc[i][b] = _mm512_fmadd_ps(qb, k[b], acc[i][b]);
    }
  }
  for (int64_t u = hd; u < cnt; ++u) ask.rows(u);
#pragma GCC unroll 4
  for (int i = 0; i < NQ; ++i) {
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) {
      _mm512_store_ps(s + i * s_stride + 16 * b, _mm512_mul_ps(acc[i][b], vscale));
    }
  }
}

// block_pass16 for Q8_0 keys (kQ8, or kQ8Floats: the same bits). A score is q . k over the
// 32-dim groups g in order, sum_g s_g (q_g . k_g): each group's int8 times the queries in
// their own FMA chain (part), then that chain times the position's scale added to the score so
// far (kept in s between groups, as the registers hold the chains). Multiplying each value by
// its scale first (the reference's order, and this kernel's before stop 50) took a multiply a
// vector of values on the FMA pipes, a fifth of the score's arithmetic with a GQA quad.
template <Kv kKind, int NQ, int NB>
inline void block_pass16_q8(const float* q, const char* kblk, int64_t hd, int64_t cnt,
                            __m512 vscale, float* s, int64_t s_stride, const TileAsk& ask) {
  for (int64_t g0 = 0; g0 < hd; g0 += kQ8Block) {
    const Q8BlockGroup16<kKind, NB> group{q8_group<kKind>(kblk, g0)};
    __m512 part[NQ][NB];
#pragma GCC unroll 4
    for (int i = 0; i < NQ; ++i) {
#pragma GCC unroll 4
      for (int b = 0; b < NB; ++b) part[i][b] = _mm512_setzero_ps();
    }
    for (int64_t d = g0; d < g0 + kQ8Block; ++d) {
      if (d < cnt) ask.rows(d);
      __m512 k[NB];
      group.load(d, k);
#pragma GCC unroll 4
      for (int i = 0; i < NQ; ++i) {
        const __m512 qb = _mm512_set1_ps(q[i * hd + d]);
#pragma GCC unroll 4
        for (int b = 0; b < NB; ++b) part[i][b] = _mm512_fmadd_ps(qb, k[b], part[i][b]);
      }
    }
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) {
      const __m512 sc = group.scale(b);
#pragma GCC unroll 4
      for (int i = 0; i < NQ; ++i) {
        float* at = s + i * s_stride + 16 * b;
        _mm512_store_ps(at, g0 == 0 ? _mm512_mul_ps(sc, part[i][b])
                                    : _mm512_fmadd_ps(sc, part[i][b], _mm512_load_ps(at)));
      }
    }
  }
  for (int64_t u = hd; u < cnt; ++u) ask.rows(u);
#pragma GCC unroll 4
  for (int i = 0; i < NQ; ++i) {
#pragma GCC unroll 4
    for (int b = 0; b < NB; ++b) {
      float* at = s + i * s_stride + 16 * b;
      _mm512_store_ps(at, _mm512_mul_ps(_mm512_load_ps(at), vscale));
    }
  }
}

// block_pass16 over positions [0, cnt) of a block (cnt <= kKeyBlock), rounded up to vectors.
template <Kv kKind, int NQ>
inline void block_scores16(const float* q, const char* kblk, int64_t hd, int64_t cnt, float scale,
                           float* s, int64_t s_stride, const TileAsk& ask) {
  static_assert(kKeyBlock == 64);
  const __m512 vscale = _mm512_set1_ps(scale);
  constexpr bool kQ8 = kKind == Kv::kQ8 || kKind == Kv::kQ8Floats;
  const auto pass = [&]<int NB>() {
    if constexpr (kQ8) {
      block_pass16_q8<kKind, NQ, NB>(q, kblk, hd, cnt, vscale, s, s_stride, ask);
    } else {
      block_pass16<kKind, NQ, NB>(q, kblk, hd, cnt, vscale, s, s_stride, ask);
    }
  };
  switch ((cnt + 15) / 16) {
    case 4:
      pass.template operator()<4>();
      break;
    case 3:
      pass.template operator()<3>();
      break;
    case 2:
      pass.template operator()<2>();
      break;
    default:
      pass.template operator()<1>();
      break;
  }
}

// The 16-lane policy of attention_walk.h.
struct Lanes16 {
  using V = __m512;
  static constexpr int64_t kLanes = 16;
  static constexpr int kPvVectors = 4;  // 64 dims x 4 heads: 16 accumulators
  static constexpr bool kRotatedScores = true;
  static V zero() { return _mm512_setzero_ps(); }
  static V set1(float x) { return _mm512_set1_ps(x); }
  static V load(const float* p) { return _mm512_load_ps(p); }
  static V loadu(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, V x) { _mm512_store_ps(p, x); }
  static void storeu(float* p, V x) { _mm512_storeu_ps(p, x); }
  static V add(V a, V b) { return _mm512_add_ps(a, b); }
  static V sub(V a, V b) { return _mm512_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm512_mul_ps(a, b); }
  static V max(V a, V b) { return _mm512_max_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm512_fmadd_ps(a, b, c); }
  static V exp(V x) { return exp16(x); }
  static float reduce_max(V x) { return _mm512_reduce_max_ps(x); }
  static float reduce_add(V x) { return _mm512_reduce_add_ps(x); }
  // For Q8_0 and an even C, d is a multiple of 32 (pv_block's and stage_row's passes of C
  // vectors start at multiples of 16 C), so the vectors pair into blocks.
  template <Kv kKind, int C>
  static void load_kv(const char* row, int64_t d, V out[C]) {
    if constexpr (kKind == Kv::kQ8 && C % 2 == 0) {
#pragma GCC unroll 2
      for (int c = 0; c < C; c += 2) load32_q8(row, d + 16 * c, out[c], out[c + 1]);
    } else {
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) out[c] = load16<kKind>(row, d + 16 * c);
    }
  }
  static V i8_to_ps(const char* p) { return i8x16_to_ps(p); }
  static V f16_to_ps(const char* p) {
    return _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
  }
  template <Kv kKind>
  static void quad_scores(const float* qr, const char* keys, int64_t key_stride, int64_t hd,
                          int64_t cnt8, float scale, int64_t n, float* s, int64_t s_stride,
                          const TileAsk& ask) {
    quad_scores16<kKind>(qr, keys, key_stride, hd, cnt8, scale, n, s, s_stride, ask);
  }
  template <Kv kKind, int NQ>
  static void block_scores(const float* q, const char* kblk, int64_t hd, int64_t cnt, float scale,
                           float* s, int64_t s_stride, const TileAsk& ask) {
    block_scores16<kKind, NQ>(q, kblk, hd, cnt, scale, s, s_stride, ask);
  }
};

void attention_avx512(const AttentionArgs& a, int64_t head_begin, int64_t head_end,
                      float* scratch) {
  if (a.n_kv <= 0 || a.head_dim % 16 != 0 || a.head_dim > kMaxHeadDim) {
    g_avx2_attention(a, head_begin, head_end, scratch);
    return;
  }
  switch (a.kv_type) {
    case DType::kF16:
      walk_attention<Lanes16, Kv::kF16>(a, head_begin, head_end);
      break;
    case DType::kQ8_0:
      walk_attention<Lanes16, Kv::kQ8>(a, head_begin, head_end);
      break;
    default:
      walk_attention<Lanes16, Kv::kF32>(a, head_begin, head_end);
      break;
  }
}

}  // namespace

void fill_avx512_attention(KernelTable& t) {
  g_avx2_attention = t.attention;
  t.attention = attention_avx512;
}

}  // namespace cohort::kernels
