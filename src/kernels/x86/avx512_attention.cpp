// AVX-512 single-query attention (KernelTable::attention) for head dims that are multiples of
// 16 up to 256; other head dims take the AVX2 table's kernel (x86/avx2_ops.cpp). The walk is
// the AVX2 kernel's: tiles of up to 64 positions outside, KV heads inside, every query head of
// a KV head (a GQA group, or the rows of a prompt chunk) in one pass over its keys and values,
// online softmax per head. What differs is how the scores are formed.
//
// Scores, 4 query heads at a time (a quad), 16 dims of 4 positions per step. The quad's
// queries are laid out once per call rotated (quad_scores): vector 4c + r holds, in lane group
// g, 4 dims of head (g + r) mod 4, so a key vector of 16 dims meets all four heads in the 4
// FMAs r = 0..3 with no broadcast; the accumulators, rotated back and added, hold each head's
// sums over dims d = l (mod 4), and 8 positions' 32 scores finish in in-lane shuffles and
// adds. The AVX2 kernel takes 8 FMAs of one head per 8-lane K load and a horizontal sum per 8
// scores. A KV head with one quad (a decode step's GQA group) reads its keys straight from
// the cache; with several (a prompt's rows) they share the keys staged once as floats.
//
// On the Zen 5 VM of stop 35, one thread, a decode step of the 1B shape as the model lays its
// cache out (kernels_bench attention_model_f16/avx512_vnni, medians of 3, four interleaved
// runs): 24.6-29.4 GB/s with the cache in L2 (512 positions) and 14.4-21.0 from memory (16384
// positions x 4 layers), against 15.9-18.2 and 12.5-13.1 for this file's first form (a
// broadcast of 4 staged key values per FMA, 8 positions at a time) and, in an earlier run,
// 15.5 and 9.8 for the AVX2 table. A Q8_0 cache gains less (attention_q8_0 about 7 GB/s in
// either table in kernels_bench's position-major layout): each 16 values of it take a widen,
// a convert and a scale multiply, in the keys and again in the weighted sum.
//
// Then, per head, the tile's scores update the running max and sum (exp over 16 lanes), and
// out += sum_t p_t v_t for up to 4 heads x 64 dims in 16 registers, each V vector converted
// once for the quad.
//
// Exactness: a (head, position) score adds its products in an order fixed by the head dim
// alone (quad_scores), whatever the other heads of its quad, its slot there and whether the
// keys are read in place or staged; so a head's result does not depend on the heads beside it,
// and a head with a limit (AttentionArgs::n_kv_of_head) gets the bits of a call for it alone,
// as the contract asks (tests/kernels/ops_test.cpp PerHeadLimitsEqualSingleHeadCalls compares
// a 10-head call, its keys staged, with one-head calls, in place, bit for bit). The bits
// differ from the AVX2 kernel's (another summation order); both are tested against the scalar
// reference.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/registry.h"
#include "kernels/x86/attention_cache.h"
#include "kernels/x86/simd_avx512.h"

namespace cohort::kernels {
namespace {

using AttentionFn = void (*)(const AttentionArgs&, int64_t, int64_t, float*);

// The AVX2 table's kernel, for head dims this file does not take (set by the fill).
AttentionFn g_avx2_attention = nullptr;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();
constexpr int64_t kMaxHeadDim = 256;
constexpr int64_t kMaxTile = 64;       // positions per tile
constexpr int64_t kKBufFloats = 8192;  // a tile's keys as floats: 32 KiB
constexpr int64_t kMaxHeads = 256;     // query heads in one sweep over the cache
constexpr int64_t kQuad = 4;           // query heads whose scores share the FMAs
constexpr int64_t kPositionBlock = 8;  // positions whose scores finish together
constexpr int kRotPositions = 4;       // positions quad_scores multiplies at once

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
    uint16_t bits;
    std::memcpy(&bits, block, sizeof bits);
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2 + d % kQ8Block));
    return _mm512_mul_ps(_mm512_set1_ps(_cvtsh_ss(bits)),
                         _mm512_cvtepi32_ps(_mm512_cvtepi8_epi32(q)));
  }
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

// What to ask for while reading key row j of a tile in place (none where v is null): value
// row j of the tile, and key row j of the next tile where j < next_cnt (ask_for_rows).
struct TileAsk {
  const char* v = nullptr;
  const char* k = nullptr;
  int64_t stride_b = 0, row_b = 0, next_b = 0, next_cnt = 0;
  void rows(int64_t j) const {
    if (v == nullptr) return;
    const char* krow = k + j * stride_b;
    ask_for_rows(v + j * stride_b, j < next_cnt ? krow + next_b : nullptr, row_b);
  }
};

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
inline void quad_scores(const float* qr, const char* keys, int64_t key_stride, int64_t hd,
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
      for (int64_t c = 0; c < hd / 16; ++c) {
        __m512 kv[kRotPositions];
#pragma GCC unroll 4
        for (int u = 0; u < kRotPositions; ++u) kv[u] = load16<kKind>(k0 + u * key_stride, 16 * c);
#pragma GCC unroll 4
        for (int r = 0; r < kQuad; ++r) {
          const __m512 q = _mm512_loadu_ps(qr + 16 * (4 * c + r));
#pragma GCC unroll 4
          for (int u = 0; u < kRotPositions; ++u) acc[u][r] = _mm512_fmadd_ps(kv[u], q, acc[u][r]);
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

// Online-softmax update of one head for one tile: s holds its scores (-inf past its
// positions, up to cnt16, a multiple of 16) and becomes exp(s - m_new); the running max m and
// sum l are updated and the accumulator row (out, hd floats) rescaled when the max grows.
inline void online_softmax16(float* s, int64_t cnt16, float& m, float& l, float* out, int64_t hd,
                             bool first) {
  __m512 vmx = _mm512_set1_ps(kNegInf);
  for (int64_t j = 0; j < cnt16; j += 16) vmx = _mm512_max_ps(vmx, _mm512_load_ps(s + j));
  const float m_new = std::max(m, _mm512_reduce_max_ps(vmx));
  const __m512 vm = _mm512_set1_ps(m_new);
  __m512 vsum = _mm512_setzero_ps();
  for (int64_t j = 0; j < cnt16; j += 16) {
    const __m512 e = exp16(_mm512_sub_ps(_mm512_load_ps(s + j), vm));
    _mm512_store_ps(s + j, e);
    vsum = _mm512_add_ps(vsum, e);
  }
  if (m_new > m) {
    const float corr = std::exp(m - m_new);  // 0 on the first tile (m = -inf)
    l *= corr;
    if (!first) {
      const __m512 vc = _mm512_set1_ps(corr);
      for (int64_t d = 0; d < hd; d += 16) {
        _mm512_storeu_ps(out + d, _mm512_mul_ps(_mm512_loadu_ps(out + d), vc));
      }
    }
    m = m_new;
  }
  l += _mm512_reduce_add_ps(vsum);
}

// out_i[d0 .. d0 + 16C) += sum_{t < cnt} p_i[t] v_t for the NQ heads of a quad (out rows hd
// apart, p rows p_stride apart); v_t at v + t * stride_b.
template <int NQ, int C, Kv kKind>
inline void pv_block(const char* v, int64_t stride_b, int64_t cnt, int64_t d0, const float* p,
                     int64_t p_stride, float* out, int64_t hd) {
  __m512 acc[NQ][C];
#pragma GCC unroll 4
  for (int i = 0; i < NQ; ++i) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) acc[i][c] = _mm512_loadu_ps(out + i * hd + d0 + 16 * c);
  }
  for (int64_t t = 0; t < cnt; ++t) {
    const char* row = v + t * stride_b;
    __m512 vv[C];
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) vv[c] = load16<kKind>(row, d0 + 16 * c);
#pragma GCC unroll 4
    for (int i = 0; i < NQ; ++i) {
      const __m512 b = _mm512_set1_ps(p[i * p_stride + t]);
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) acc[i][c] = _mm512_fmadd_ps(b, vv[c], acc[i][c]);
    }
  }
#pragma GCC unroll 4
  for (int i = 0; i < NQ; ++i) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) _mm512_storeu_ps(out + i * hd + d0 + 16 * c, acc[i][c]);
  }
}

// pv_block over all hd dims: 64 at a time, then 32, then 16.
template <int NQ, Kv kKind>
void pv_quad(const char* v, int64_t stride_b, int64_t cnt, const float* p, int64_t p_stride,
             float* out, int64_t hd) {
  int64_t d0 = 0;
  for (; d0 + 64 <= hd; d0 += 64)
    pv_block<NQ, 4, kKind>(v, stride_b, cnt, d0, p, p_stride, out, hd);
  if (d0 + 32 <= hd) {
    pv_block<NQ, 2, kKind>(v, stride_b, cnt, d0, p, p_stride, out, hd);
    d0 += 32;
  }
  if (d0 < hd) pv_block<NQ, 1, kKind>(v, stride_b, cnt, d0, p, p_stride, out, hd);
}

template <Kv kKind>
void pv_heads(int64_t n, const char* v, int64_t stride_b, int64_t cnt, const float* p,
              int64_t p_stride, float* out, int64_t hd) {
  switch (n) {
    case 4:
      pv_quad<4, kKind>(v, stride_b, cnt, p, p_stride, out, hd);
      break;
    case 3:
      pv_quad<3, kKind>(v, stride_b, cnt, p, p_stride, out, hd);
      break;
    case 2:
      pv_quad<2, kKind>(v, stride_b, cnt, p, p_stride, out, hd);
      break;
    default:
      pv_quad<1, kKind>(v, stride_b, cnt, p, p_stride, out, hd);
      break;
  }
}

// A quad: heads [h, h + n) of one KV head, n <= 4, their queries rotated at q (quad_scores).
struct Quad {
  int64_t h = 0, n = 0;
  const float* q = nullptr;
};

// Per thread: the quads of a call and their queries laid out for them.
thread_local GrowArray<float> t_qr;
thread_local GrowArray<Quad> t_quads;

// Heads [hb, he), he - hb <= kMaxHeads; hd a multiple of 16, at most kMaxHeadDim.
template <Kv kKind>
void attend_heads(const AttentionArgs& a, int64_t hb, int64_t he) {
  const int64_t hd = a.head_dim;
  const int64_t group = a.n_heads / a.n_kv_heads;
  const int64_t tile = std::min(kMaxTile, kKBufFloats / hd) / 16 * 16;
  const int64_t stride_b = kv_bytes<kKind>(a.kv_stride);
  const int64_t row_b = kv_bytes<kKind>(hd);  // one position of one KV head
  alignas(64) float kbuf[kKBufFloats];
  alignas(64) float s[kMaxHeads * kMaxTile];
  float m[kMaxHeads];
  float l[kMaxHeads];
  for (int64_t i = hb * hd; i < he * hd; ++i) a.out[i] = 0.0f;
  for (int64_t h = 0; h < he - hb; ++h) {
    m[h] = kNegInf;
    l[h] = 0.0f;
  }

  // The quads, group by group, and their queries laid out.
  const int64_t max_quads = (he - hb) / kQuad + (he - hb) / group + 2;
  Quad* quads = t_quads.reserve(static_cast<size_t>(max_quads));
  float* qr = t_qr.reserve(static_cast<size_t>(max_quads * kQuad * hd));
  int64_t n_quads = 0;
  for (int64_t gh0 = hb; gh0 < he;) {
    const int64_t gh1 = std::min(he, (gh0 / group + 1) * group);
    for (int64_t h = gh0; h < gh1; h += kQuad, ++n_quads) {
      Quad& qd = quads[n_quads];
      qd.h = h;
      qd.n = std::min(kQuad, gh1 - h);
      float* dst = qr + n_quads * kQuad * hd;
      for (int64_t c = 0; c < hd / 16; ++c) {
        for (int64_t r = 0; r < kQuad; ++r) {
          for (int64_t lane = 0; lane < 16; ++lane) {
            const int64_t i = (lane / 4 + r) % kQuad;
            const int64_t d = 16 * c + lane;
            dst[16 * (4 * c + r) + lane] = i < qd.n ? a.q[(h + i) * hd + d] : 0.0f;
          }
        }
      }
      qd.q = dst;
    }
    gh0 = gh1;
  }

  for (int64_t t0 = 0; t0 < a.n_kv; t0 += tile) {
    const int64_t cnt = std::min(tile, a.n_kv - t0);
    const int64_t cnt8 = (cnt + 7) / 8 * 8;
    const int64_t cnt16 = (cnt + 15) / 16 * 16;
    const int64_t next_cnt = std::min(tile, a.n_kv - t0 - tile);  // <= 0 on the last tile
    for (int64_t qi = 0; qi < n_quads;) {
      const int64_t gh0 = quads[qi].h;
      const int64_t kvh = gh0 / group;
      const int64_t row0_b = kv_bytes<kKind>(t0 * a.kv_stride + kvh * hd);
      const char* k_tile = static_cast<const char*>(a.k) + row0_b;
      const char* v_tile = static_cast<const char*>(a.v) + row0_b;

      int64_t qe = qi;
      while (qe < n_quads && quads[qe].h / group == kvh) ++qe;
      // One quad (a decode step's GQA group) reads the keys in place, a block of 8 at a time
      // and asking for the rows ahead as it goes, but for a last part block, which is staged
      // with the zeros after it; several (a prompt's rows) share the keys staged as floats.
      const bool in_place = qe - qi == 1;
      const int64_t staged_from = in_place ? cnt / kPositionBlock * kPositionBlock : 0;
      TileAsk ask;
      if (in_place) {
        ask = {v_tile, k_tile, stride_b, row_b, tile * stride_b, next_cnt};
      }

      // Stage K (from staged_from) as floats; meanwhile ask for those rows' V and next K.
      for (int64_t j = staged_from; j < cnt; ++j) {
        const char* krow = k_tile + j * stride_b;
        const char* vrow = v_tile + j * stride_b;
        ask_for_rows(vrow, j < next_cnt ? krow + tile * stride_b : nullptr, row_b);
        for (int64_t d = 0; d < hd; d += 16) {
          _mm512_store_ps(kbuf + (j - staged_from) * hd + d, load16<kKind>(krow, d));
        }
      }
      // Rows up to the block of 8 are scored too (and masked below): zeros, not stale data.
      std::fill(kbuf + (cnt - staged_from) * hd, kbuf + (cnt8 - staged_from) * hd, 0.0f);

      // The quads of this KV head: scores, then each head's softmax update.
      for (int64_t k = qi; k < qe; ++k) {
        const Quad& qd = quads[k];
        float* sq = s + (qd.h - gh0) * tile;
        if (a.n_kv_of_head &&
            *std::max_element(a.n_kv_of_head + qd.h, a.n_kv_of_head + qd.h + qd.n) <= t0) {
          for (int64_t i = 0; i < qd.n; ++i) std::fill(sq + i * tile, sq + i * tile + cnt16, 0.0f);
          continue;  // every head of the quad is past its positions: nothing to add
        }
        // Positions [0, staged_from) in place, the rest from the staged rows.
        quad_scores<kKind>(qd.q, k_tile, stride_b, hd, staged_from, a.scale, qd.n, sq, tile, ask);
        quad_scores<Kv::kF32>(qd.q, reinterpret_cast<const char*>(kbuf), hd * 4, hd,
                              cnt8 - staged_from, a.scale, qd.n, sq + staged_from, tile, TileAsk{});
        for (int64_t i = 0; i < qd.n; ++i) {
          const int64_t h = qd.h + i;
          float* sh = sq + i * tile;
          // A head with its own limit keeps only its positions (-inf: weight 0); one past
          // its limit in this whole tile adds nothing.
          const int64_t own = a.n_kv_of_head ? std::min(cnt, a.n_kv_of_head[h] - t0) : cnt;
          if (own <= 0) {
            std::fill(sh, sh + cnt16, 0.0f);
            continue;
          }
          std::fill(sh + own, sh + cnt16, kNegInf);
          online_softmax16(sh, cnt16, m[h - hb], l[h - hb], a.out + h * hd, hd, t0 == 0);
        }
      }
      for (int64_t k = qi; k < qe; ++k) {
        const Quad& qd = quads[k];
        pv_heads<kKind>(qd.n, v_tile, stride_b, cnt, s + (qd.h - gh0) * tile, tile,
                        a.out + qd.h * hd, hd);
      }
      qi = qe;
    }
  }

  for (int64_t h = hb; h < he; ++h) {
    const __m512 vinv = _mm512_set1_ps(1.0f / l[h - hb]);
    float* oh = a.out + h * hd;
    for (int64_t d = 0; d < hd; d += 16) {
      _mm512_storeu_ps(oh + d, _mm512_mul_ps(_mm512_loadu_ps(oh + d), vinv));
    }
  }
}

template <Kv kKind>
void attention_of_kind(const AttentionArgs& a, int64_t head_begin, int64_t head_end) {
  for (int64_t hb = head_begin; hb < head_end; hb += kMaxHeads) {
    attend_heads<kKind>(a, hb, std::min(head_end, hb + kMaxHeads));
  }
}

void attention_avx512(const AttentionArgs& a, int64_t head_begin, int64_t head_end,
                      float* scratch) {
  if (a.n_kv <= 0 || a.head_dim % 16 != 0 || a.head_dim > kMaxHeadDim) {
    g_avx2_attention(a, head_begin, head_end, scratch);
    return;
  }
  switch (a.kv_type) {
    case DType::kF16:
      attention_of_kind<Kv::kF16>(a, head_begin, head_end);
      break;
    case DType::kQ8_0:
      attention_of_kind<Kv::kQ8>(a, head_begin, head_end);
      break;
    default:
      attention_of_kind<Kv::kF32>(a, head_begin, head_end);
      break;
  }
}

}  // namespace

void fill_avx512_attention(KernelTable& t) {
  g_avx2_attention = t.attention;
  t.attention = attention_avx512;
}

}  // namespace cohort::kernels
