// AVX-512 single-query attention (KernelTable::attention) for head dims that are multiples of
// 16 up to 256; other head dims take the AVX2 table's kernel (x86/avx2_ops.cpp). The walk is
// the AVX2 kernel's: tiles of up to 64 positions outside, KV heads inside, every query head of
// a KV head (a GQA group, or the rows of a prompt chunk) in one pass over its keys and values,
// online softmax per head. What differs is how the scores are formed.
//
// Scores, 4 query heads at a time (a quad). Each position's key row is staged as floats
// (kbuf); the quad's queries are interleaved once per call, so that vector e holds q_i[4e ..
// 4e + 3] of head i in lanes 4i .. 4i + 3. One broadcast of k[4e .. 4e + 3] to all four
// 128-bit lanes then meets all four heads in one FMA, and after hd / 4 of them lane 4i + l
// holds head i's partial dot product over the dims d = l (mod 4). Eight positions' sums
// finish in two rounds of in-lane shuffles and adds (18 instructions for 32 scores), where
// the AVX2 kernel takes 8 FMAs of one head per 8-lane K load and a horizontal sum per 8
// scores. On the Zen 5 VM of stop 35, one thread, a decode step of the 1B shape as the model
// lays its cache out (kernels_bench attention_model_f16, medians of 3, same run): 18.6 GB/s
// against the AVX2 table's 15.5 with the cache in L2 (512 positions), 12.5 against 9.8 from
// memory (16384 positions x 4 layers). In cache a tile's scores took ~236 ns and its
// weighted sum ~144 (a throwaway copy of both loops, 1024 FMAs each), against ~128 for the
// FMAs alone: the broadcasts cost the scores a quarter. A Q8_0 cache gains nothing yet
// (attention_q8_0 6.8-7.4 GB/s in either table): each 16 values of it take a widen, a
// convert and a scale multiply, in the staging and again in the weighted sum.
//
// Then, per head, the tile's scores update the running max and sum (exp over 16 lanes), and
// out += sum_t p_t v_t for up to 4 heads x 64 dims in 16 registers, each V vector converted
// once for the quad.
//
// Exactness: the dot product of (head, position) adds its 4 lanes' FMA chains (in order of e)
// in a fixed tree, whatever the other heads of its quad and the position's place in its block
// of 8; so a head's result does not depend on the heads beside it, and a head with a limit
// (AttentionArgs::n_kv_of_head) gets the bits of a call for it alone, as the contract asks.
// The bits differ from the AVX2 kernel's (another summation order); both are tested against
// the scalar reference (tests/kernels/ops_test.cpp).
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

// The scores of the n (<= 4) heads of a quad against positions [0, cnt8) of kbuf (rows hd
// floats; cnt8 a multiple of 8): s[i * s_stride + j] = scale * q_i . k_j. qt holds the quad's
// queries interleaved (hd / 4 vectors, lane 4i + l of vector e = q_i[4e + l]; zero for i >=
// n).
inline void quad_scores(const float* qt, const float* kbuf, int64_t hd, int64_t cnt8, float scale,
                        int64_t n, float* s, int64_t s_stride) {
  const __m512 vscale = _mm512_set1_ps(scale);
  // Head 0 then head 1 (lo), head 2 then head 3 (hi): each as [positions 0-3 | 4-7].
  const __m512i lo = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
  const __m512i hi =
      _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
  for (int64_t j = 0; j < cnt8; j += kPositionBlock) {
    __m512 acc[kPositionBlock];
#pragma GCC unroll 8
    for (int r = 0; r < kPositionBlock; ++r) acc[r] = _mm512_setzero_ps();
    const float* k = kbuf + j * hd;
    for (int64_t e = 0; e < hd / 4; ++e) {
      const __m512 qv = _mm512_loadu_ps(qt + 16 * e);
#pragma GCC unroll 8
      for (int r = 0; r < kPositionBlock; ++r) {
        acc[r] =
            _mm512_fmadd_ps(_mm512_broadcast_f32x4(_mm_load_ps(k + r * hd + 4 * e)), qv, acc[r]);
      }
    }
    // Lane 4i + p: head i's score at position j + p (y0) and j + 4 + p (y1).
    const __m512 y0 =
        _mm512_mul_ps(pair_sums(pair_sums(acc[0], acc[1]), pair_sums(acc[2], acc[3])), vscale);
    const __m512 y1 =
        _mm512_mul_ps(pair_sums(pair_sums(acc[4], acc[5]), pair_sums(acc[6], acc[7])), vscale);
    const __m512 h01 = _mm512_permutex2var_ps(y0, lo, y1);
    const __m512 h23 = _mm512_permutex2var_ps(y0, hi, y1);
    const __m256 rows[kQuad] = {_mm512_castps512_ps256(h01),
                                _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(h01), 1)),
                                _mm512_castps512_ps256(h23),
                                _mm256_castpd_ps(_mm512_extractf64x4_pd(_mm512_castps_pd(h23), 1))};
    for (int64_t i = 0; i < n; ++i) _mm256_store_ps(s + i * s_stride + j, rows[i]);
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

// A quad: heads [h, h + n) of one KV head, n <= 4, their queries interleaved at qt.
struct Quad {
  int64_t h = 0, n = 0;
  const float* qt = nullptr;
};

// Per thread: the quads of a call and their interleaved queries.
thread_local GrowArray<float> t_qt;
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

  // The quads, group by group, and their queries interleaved.
  const int64_t max_quads = (he - hb) / kQuad + (he - hb) / group + 2;
  Quad* quads = t_quads.reserve(static_cast<size_t>(max_quads));
  float* qt = t_qt.reserve(static_cast<size_t>(max_quads * kQuad * hd));
  int64_t n_quads = 0;
  for (int64_t gh0 = hb; gh0 < he;) {
    const int64_t gh1 = std::min(he, (gh0 / group + 1) * group);
    for (int64_t h = gh0; h < gh1; h += kQuad, ++n_quads) {
      Quad& qd = quads[n_quads];
      qd.h = h;
      qd.n = std::min(kQuad, gh1 - h);
      float* dst = qt + n_quads * kQuad * hd;
      for (int64_t e = 0; e < hd / 4; ++e) {
        for (int64_t i = 0; i < kQuad; ++i) {
          float* lane = dst + 16 * e + 4 * i;
          if (i < qd.n) {
            std::memcpy(lane, a.q + (h + i) * hd + 4 * e, 4 * sizeof(float));
          } else {
            std::fill(lane, lane + 4, 0.0f);
          }
        }
      }
      qd.qt = dst;
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

      // Stage this tile's K as floats; meanwhile ask for this tile's V and the next tile's K.
      for (int64_t j = 0; j < cnt; ++j) {
        const char* krow = k_tile + j * stride_b;
        const char* vrow = v_tile + j * stride_b;
        ask_for_rows(vrow, j < next_cnt ? krow + tile * stride_b : nullptr, row_b);
        for (int64_t d = 0; d < hd; d += 16) {
          _mm512_store_ps(kbuf + j * hd + d, load16<kKind>(krow, d));
        }
      }
      // Rows up to the block of 8 are scored too (and masked below): zeros, not stale data.
      std::fill(kbuf + cnt * hd, kbuf + cnt8 * hd, 0.0f);

      // The quads of this KV head: scores, then each head's softmax update.
      int64_t qe = qi;
      for (; qe < n_quads && quads[qe].h / group == kvh; ++qe) {
        const Quad& qd = quads[qe];
        float* sq = s + (qd.h - gh0) * tile;
        if (a.n_kv_of_head &&
            *std::max_element(a.n_kv_of_head + qd.h, a.n_kv_of_head + qd.h + qd.n) <= t0) {
          for (int64_t i = 0; i < qd.n; ++i) std::fill(sq + i * tile, sq + i * tile + cnt16, 0.0f);
          continue;  // every head of the quad is past its positions: nothing to add
        }
        quad_scores(qd.qt, kbuf, hd, cnt8, a.scale, qd.n, sq, tile);
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
