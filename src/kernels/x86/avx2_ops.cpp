// AVX2+FMA+F16C versions of the non-matmul ops. rope stays scalar (it touches a few KB per
// token; the reference is fast enough), so this file does not override it.
//
// Attention is tiled and single-pass (online softmax). Tiles of up to 64 positions are the
// outer loop and KV heads the inner one, so the cache is walked in address order, and the
// query heads sharing a KV head are processed together, so each K/V tile is read once per
// group. Per tile and KV head:
//   - K rows are staged as floats (F16 through _mm256_cvtph_ps, a Q8_0 block as its scale
//     times its int8 widened to floats) while this tile's V and the next tile's K are
//     prefetched (rows of one KV head lie kv_stride apart);
//   - scores s = scale * q.k for every query head of the group, 8 positions at a time;
//   - the running max m and sum l per head are updated, and the accumulator (the out row
//     itself) is rescaled by exp(m_old - m_new) when the max grows;
//   - out += sum_t p_t v_t, 16 dims x up to 4 heads in registers, each V vector converted
//     once (Q8_0: 16 int8 of one block and its scale) and used by all heads.
// Q8_0 is decoded to floats rather than multiplied as int8 with a quantized q: the scores
// and the weighted sum then keep float precision, and at long contexts the kernel waits on
// memory, where Q8_0 already reads about half the bytes of F16.
// At the end out is divided by l. head_dim not a multiple of 8 (or above 512) takes a
// simpler two-pass path through scratch with scalar tails.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/registry.h"
#include "kernels/x86/attention_cache.h"
#include "kernels/x86/simd_avx2.h"

namespace cohort::kernels {
namespace {

using avx2::exp_ps;
using avx2::hmax;
using avx2::hsum;

constexpr float kNegInf = -std::numeric_limits<float>::infinity();

void rmsnorm_avx2(const float* x, const float* w, float* y, int64_t n, float eps) {
  __m256 s0 = _mm256_setzero_ps();
  __m256 s1 = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256 a = _mm256_loadu_ps(x + i);
    const __m256 b = _mm256_loadu_ps(x + i + 8);
    s0 = _mm256_fmadd_ps(a, a, s0);
    s1 = _mm256_fmadd_ps(b, b, s1);
  }
  for (; i + 8 <= n; i += 8) {
    const __m256 a = _mm256_loadu_ps(x + i);
    s0 = _mm256_fmadd_ps(a, a, s0);
  }
  float sum = hsum(_mm256_add_ps(s0, s1));
  for (; i < n; ++i) sum += x[i] * x[i];
  const float scale = 1.0f / std::sqrt(sum / static_cast<float>(n) + eps);
  const __m256 vs = _mm256_set1_ps(scale);
  i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(
        y + i, _mm256_mul_ps(_mm256_mul_ps(_mm256_loadu_ps(x + i), vs), _mm256_loadu_ps(w + i)));
  }
  for (; i < n; ++i) y[i] = x[i] * scale * w[i];
}

void softmax_avx2(float* x, int64_t n) {
  __m256 vmx = _mm256_set1_ps(x[0]);
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) vmx = _mm256_max_ps(vmx, _mm256_loadu_ps(x + i));
  float mx = hmax(vmx);
  for (; i < n; ++i) mx = x[i] > mx ? x[i] : mx;

  const __m256 vm = _mm256_set1_ps(mx);
  __m256 vsum = _mm256_setzero_ps();
  i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_loadu_ps(x + i), vm));
    _mm256_storeu_ps(x + i, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  float sum = hsum(vsum);
  if (i < n) {  // tail through a padded block so every element sees the same exp
    alignas(32) float buf[8];
    const int64_t r = n - i;
    for (int64_t j = 0; j < 8; ++j) buf[j] = j < r ? x[i + j] - mx : kNegInf;
    _mm256_store_ps(buf, exp_ps(_mm256_load_ps(buf)));
    for (int64_t j = 0; j < r; ++j) {
      x[i + j] = buf[j];
      sum += buf[j];
    }
  }

  const __m256 vinv = _mm256_set1_ps(1.0f / sum);
  const float inv = 1.0f / sum;
  i = 0;
  for (; i + 8 <= n; i += 8) _mm256_storeu_ps(x + i, _mm256_mul_ps(_mm256_loadu_ps(x + i), vinv));
  for (; i < n; ++i) x[i] *= inv;
}

inline __m256 silu_mul8(__m256 g, __m256 u) {
  const __m256 e = exp_ps(_mm256_xor_ps(g, _mm256_set1_ps(-0.0f)));
  return _mm256_mul_ps(_mm256_div_ps(g, _mm256_add_ps(_mm256_set1_ps(1.0f), e)), u);
}

void silu_mul_avx2(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, silu_mul8(_mm256_loadu_ps(gate + i), _mm256_loadu_ps(up + i)));
  }
  if (i < n) {
    alignas(32) float g[8] = {};
    alignas(32) float u[8] = {};
    const int64_t r = n - i;
    for (int64_t j = 0; j < r; ++j) {
      g[j] = gate[i + j];
      u[j] = up[i + j];
    }
    _mm256_store_ps(g, silu_mul8(_mm256_load_ps(g), _mm256_load_ps(u)));
    for (int64_t j = 0; j < r; ++j) out[i + j] = g[j];
  }
}

void add_avx2(const float* a, const float* b, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_add_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i)));
  }
  for (; i < n; ++i) out[i] = a[i] + b[i];
}

// ---------------------------------------------------------------------------------------
// Attention

constexpr int64_t kKBufFloats = 4096;  // one tile of K as floats (16 KB)
constexpr int64_t kMaxTile = 64;       // positions per tile
constexpr int64_t kMaxHeads = 256;     // query heads handled in one sweep over the cache
constexpr int64_t kMaxHeadDim = kKBufFloats / 8;

// A Q8_0 block's scale, in every lane.
inline __m256 q8_scale(const char* block) {
  uint16_t bits;
  std::memcpy(&bits, block, sizeof bits);
  return _mm256_broadcastss_ps(_mm_cvtph_ps(_mm_cvtsi32_si128(bits)));
}

// 8 int8 at p -> 8 floats.
inline __m256 i8x8_to_ps(const char* p) {
  return _mm256_cvtepi32_ps(
      _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(p))));
}

// Values d..d+7 of the cache row starting at row (a position of one KV head); d is a
// multiple of 8.
template <Kv kKind>
inline __m256 load_kv8(const char* row, int64_t d) {
  if constexpr (kKind == Kv::kF16) {
    return avx2::load_f16x8(reinterpret_cast<const uint16_t*>(row) + d);
  } else if constexpr (kKind == Kv::kF32) {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(row) + d);
  } else {
    const char* block = row + d / kQ8Block * kQ8BlockBytes;
    return _mm256_mul_ps(q8_scale(block), i8x8_to_ps(block + 2 + d % kQ8Block));
  }
}

// Values d..d+15 of a cache row; d is a multiple of 16 (so one Q8_0 block holds them all
// and its scale is read once).
template <Kv kKind>
inline void load_kv16(const char* row, int64_t d, __m256& lo, __m256& hi) {
  if constexpr (kKind == Kv::kQ8) {
    const char* block = row + d / kQ8Block * kQ8BlockBytes;
    const __m256 scale = q8_scale(block);
    const __m128i q = _mm_loadu_si128(reinterpret_cast<const __m128i*>(block + 2 + d % kQ8Block));
    lo = _mm256_mul_ps(scale, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(q)));
    hi = _mm256_mul_ps(scale, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_srli_si128(q, 8))));
  } else {
    lo = load_kv8<kKind>(row, d);
    hi = load_kv8<kKind>(row, d + 8);
  }
}

// The hd values of one cache row as floats into dst (32-byte aligned); hd a multiple of 8
// (of 32 for kQ8, whose blocks are decoded with one scale each).
template <Kv kKind>
inline void row_to_floats(const char* row, int64_t hd, float* dst) {
  if constexpr (kKind == Kv::kQ8) {
    for (int64_t b = 0; b < hd / kQ8Block; ++b) {
      const char* block = row + b * kQ8BlockBytes;
      const __m256 scale = q8_scale(block);
#pragma GCC unroll 4
      for (int64_t i = 0; i < kQ8Block; i += 8) {
        _mm256_store_ps(dst + b * kQ8Block + i, _mm256_mul_ps(scale, i8x8_to_ps(block + 2 + i)));
      }
    }
  } else {
    for (int64_t d = 0; d < hd; d += 8) _mm256_store_ps(dst + d, load_kv8<kKind>(row, d));
  }
}

// s[j] = scale * q.k_j for j < cnt, k_j at k + j*k_stride; s padded with -inf up to a
// multiple of 8. hd is a multiple of 8.
void qk_scores(const float* q, const float* k, int64_t k_stride, int64_t cnt, int64_t hd,
               float scale, float* s) {
  const __m256 vscale = _mm256_set1_ps(scale);
  int64_t j = 0;
  for (; j + 8 <= cnt; j += 8) {
    __m256 acc[8];
#pragma GCC unroll 8
    for (int r = 0; r < 8; ++r) acc[r] = _mm256_setzero_ps();
    const float* kj = k + j * k_stride;
    for (int64_t d = 0; d < hd; d += 8) {
      const __m256 qv = _mm256_loadu_ps(q + d);
#pragma GCC unroll 8
      for (int r = 0; r < 8; ++r) {
        acc[r] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(kj + r * k_stride + d), acc[r]);
      }
    }
    _mm256_storeu_ps(s + j, _mm256_mul_ps(avx2::hsum8x8(acc), vscale));
  }
  for (; j < cnt; ++j) {
    __m256 acc = _mm256_setzero_ps();
    const float* kj = k + j * k_stride;
    for (int64_t d = 0; d < hd; d += 8) {
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), _mm256_loadu_ps(kj + d), acc);
    }
    s[j] = hsum(acc) * scale;
  }
  for (; j % 8 != 0; ++j) s[j] = kNegInf;
}

// out[h] += sum_{t < cnt} p[h][t] * v_t for NH consecutive heads (out rows hd apart, p rows
// kMaxTile apart); v_t at v + t*stride_b (bytes).
template <int kNH, Kv kKind>
void pv_accum(const char* v, int64_t stride_b, int64_t cnt, int64_t hd, const float* p,
              float* out) {
  int64_t d = 0;
  for (; d + 16 <= hd; d += 16) {
    __m256 acc[kNH][2];
#pragma GCC unroll 4
    for (int h = 0; h < kNH; ++h) {
      acc[h][0] = _mm256_loadu_ps(out + h * hd + d);
      acc[h][1] = _mm256_loadu_ps(out + h * hd + d + 8);
    }
    for (int64_t t = 0; t < cnt; ++t) {
      __m256 v0, v1;
      load_kv16<kKind>(v + t * stride_b, d, v0, v1);
#pragma GCC unroll 4
      for (int h = 0; h < kNH; ++h) {
        const __m256 b = _mm256_broadcast_ss(p + h * kMaxTile + t);
        acc[h][0] = _mm256_fmadd_ps(b, v0, acc[h][0]);
        acc[h][1] = _mm256_fmadd_ps(b, v1, acc[h][1]);
      }
    }
#pragma GCC unroll 4
    for (int h = 0; h < kNH; ++h) {
      _mm256_storeu_ps(out + h * hd + d, acc[h][0]);
      _mm256_storeu_ps(out + h * hd + d + 8, acc[h][1]);
    }
  }
  if (d < hd) {  // hd % 16 == 8: one last vector (never for kQ8, hd % 32 == 0)
    __m256 acc[kNH];
#pragma GCC unroll 4
    for (int h = 0; h < kNH; ++h) acc[h] = _mm256_loadu_ps(out + h * hd + d);
    for (int64_t t = 0; t < cnt; ++t) {
      const __m256 v0 = load_kv8<kKind>(v + t * stride_b, d);
#pragma GCC unroll 4
      for (int h = 0; h < kNH; ++h) {
        acc[h] = _mm256_fmadd_ps(_mm256_broadcast_ss(p + h * kMaxTile + t), v0, acc[h]);
      }
    }
#pragma GCC unroll 4
    for (int h = 0; h < kNH; ++h) _mm256_storeu_ps(out + h * hd + d, acc[h]);
  }
}

template <Kv kKind>
void pv_heads(const char* v, int64_t stride_b, int64_t cnt, int64_t hd, int64_t nh, const float* p,
              float* out) {
  int64_t h = 0;
  for (; h + 4 <= nh; h += 4) {
    pv_accum<4, kKind>(v, stride_b, cnt, hd, p + h * kMaxTile, out + h * hd);
  }
  const float* pr = p + h * kMaxTile;
  float* o = out + h * hd;
  switch (nh - h) {
    case 3:
      pv_accum<3, kKind>(v, stride_b, cnt, hd, pr, o);
      break;
    case 2:
      pv_accum<2, kKind>(v, stride_b, cnt, hd, pr, o);
      break;
    case 1:
      pv_accum<1, kKind>(v, stride_b, cnt, hd, pr, o);
      break;
    default:
      break;
  }
}

// Online-softmax update of one head for one tile: s holds the tile's scores (padded with
// -inf to a multiple of 8) and is replaced by exp(s - m_new); the running max m and sum l
// are updated and the accumulator row (out, hd floats) rescaled when the max grows.
inline void online_softmax_tile(float* s, int64_t cnt8, float& m, float& l, float* out, int64_t hd,
                                bool first) {
  __m256 vmx = _mm256_set1_ps(kNegInf);
  for (int64_t j = 0; j < cnt8; j += 8) vmx = _mm256_max_ps(vmx, _mm256_load_ps(s + j));
  const float m_new = std::max(m, hmax(vmx));
  const __m256 vm = _mm256_set1_ps(m_new);
  __m256 vsum = _mm256_setzero_ps();
  for (int64_t j = 0; j < cnt8; j += 8) {
    const __m256 e = exp_ps(_mm256_sub_ps(_mm256_load_ps(s + j), vm));
    _mm256_store_ps(s + j, e);
    vsum = _mm256_add_ps(vsum, e);
  }
  if (m_new > m) {
    const float corr = std::exp(m - m_new);  // 0 on the first tile (m = -inf)
    l *= corr;
    if (!first) {
      const __m256 vc = _mm256_set1_ps(corr);
      for (int64_t d = 0; d < hd; d += 8) {
        _mm256_storeu_ps(out + d, _mm256_mul_ps(_mm256_loadu_ps(out + d), vc));
      }
    }
    m = m_new;
  }
  l += hsum(vsum);
}

// Heads [hb, he), he - hb <= kMaxHeads; hd a multiple of 8 (of 32 for kQ8), at most
// kMaxHeadDim. Tiles of positions are the outer loop and the KV heads the inner one, so
// that memory is walked in address order (a position holds all KV heads side by side).
template <Kv kKind>
void attend_heads(const AttentionArgs& a, int64_t hb, int64_t he) {
  const int64_t hd = a.head_dim;
  const int64_t group = a.n_heads / a.n_kv_heads;
  const int64_t tile = std::min(kMaxTile, kKBufFloats / hd) / 8 * 8;
  const int64_t stride_b = kv_bytes<kKind>(a.kv_stride);
  const int64_t row_b = kv_bytes<kKind>(hd);  // one position of one KV head
  alignas(32) float kbuf[kKBufFloats];
  alignas(32) float s[kMaxHeads * kMaxTile];
  float m[kMaxHeads];
  float l[kMaxHeads];
  for (int64_t i = hb * hd; i < he * hd; ++i) a.out[i] = 0.0f;
  for (int64_t h = 0; h < he - hb; ++h) {
    m[h] = kNegInf;
    l[h] = 0.0f;
  }

  for (int64_t t0 = 0; t0 < a.n_kv; t0 += tile) {
    const int64_t cnt = std::min(tile, a.n_kv - t0);
    const int64_t cnt8 = (cnt + 7) / 8 * 8;
    const int64_t next_cnt = std::min(tile, a.n_kv - t0 - tile);  // <= 0 on the last tile
    for (int64_t gh0 = hb; gh0 < he;) {
      const int64_t kvh = gh0 / group;
      const int64_t gh1 = std::min(he, (kvh + 1) * group);
      const int64_t row0_b = kv_bytes<kKind>(t0 * a.kv_stride + kvh * hd);
      const char* k_tile = static_cast<const char*>(a.k) + row0_b;
      const char* v_tile = static_cast<const char*>(a.v) + row0_b;

      // Stage this tile's K as floats; meanwhile ask for this tile's V and the next tile's K.
      for (int64_t j = 0; j < cnt; ++j) {
        const char* krow = k_tile + j * stride_b;
        const char* vrow = v_tile + j * stride_b;
        ask_for_rows(vrow, j < next_cnt ? krow + tile * stride_b : nullptr, row_b);
        row_to_floats<kKind>(krow, hd, kbuf + j * hd);
      }

      for (int64_t h = gh0; h < gh1; ++h) {
        float* sh = s + (h - gh0) * kMaxTile;
        // A head with its own limit scores only its positions (through exactly the calls a
        // call for it alone would make), the rest of the tile is -inf: weight 0 below.
        const int64_t own = a.n_kv_of_head ? std::min(cnt, a.n_kv_of_head[h] - t0) : cnt;
        if (own <= 0) {
          for (int64_t j = 0; j < cnt8; ++j) sh[j] = 0.0f;  // past its limit: adds nothing
          continue;
        }
        qk_scores(a.q + h * hd, kbuf, hd, own, hd, a.scale, sh);
        for (int64_t j = (own + 7) / 8 * 8; j < cnt8; ++j) sh[j] = kNegInf;
        online_softmax_tile(sh, cnt8, m[h - hb], l[h - hb], a.out + h * hd, hd, t0 == 0);
      }
      pv_heads<kKind>(v_tile, stride_b, cnt, hd, gh1 - gh0, s, a.out + gh0 * hd);
      gh0 = gh1;
    }
  }

  for (int64_t h = hb; h < he; ++h) {
    const __m256 vinv = _mm256_set1_ps(1.0f / l[h - hb]);
    float* oh = a.out + h * hd;
    for (int64_t d = 0; d < hd; d += 8) {
      _mm256_storeu_ps(oh + d, _mm256_mul_ps(_mm256_loadu_ps(oh + d), vinv));
    }
  }
}

// One value of a float or half cache row (the generic path's tails; a Q8_0 row has none).
template <Kv kKind>
inline float kv_scalar(const char* row, int64_t d) {
  if constexpr (kKind == Kv::kF16) {
    uint16_t bits;
    std::memcpy(&bits, row + 2 * d, sizeof bits);
    return _mm_cvtss_f32(_mm_cvtph_ps(_mm_cvtsi32_si128(bits)));
  } else {
    float x;
    std::memcpy(&x, row + 4 * d, sizeof x);
    return x;
  }
}

// Two-pass fallback for any head_dim: scores into scratch, softmax, then out = sum p_t v_t.
template <Kv kKind>
void attend_head_generic(const AttentionArgs& a, int64_t h, float* scratch) {
  const int64_t hd = a.head_dim;
  const int64_t n_kv = a.n_kv_of_head ? a.n_kv_of_head[h] : a.n_kv;
  const int64_t hd8 = hd / 8 * 8;
  const int64_t kv_off = (h / (a.n_heads / a.n_kv_heads)) * hd;
  const float* q = a.q + h * hd;
  float* out = a.out + h * hd;
  const auto* k = static_cast<const char*>(a.k);
  const auto* v = static_cast<const char*>(a.v);
  for (int64_t t = 0; t < n_kv; ++t) {
    const char* row = k + kv_bytes<kKind>(t * a.kv_stride + kv_off);
    __m256 acc = _mm256_setzero_ps();
    for (int64_t d = 0; d < hd8; d += 8) {
      acc = _mm256_fmadd_ps(_mm256_loadu_ps(q + d), load_kv8<kKind>(row, d), acc);
    }
    float dot = hsum(acc);
    if constexpr (kKind != Kv::kQ8) {
      for (int64_t d = hd8; d < hd; ++d) dot += q[d] * kv_scalar<kKind>(row, d);
    }
    scratch[t] = dot * a.scale;
  }
  softmax_avx2(scratch, n_kv);
  for (int64_t d = 0; d < hd; ++d) out[d] = 0.0f;
  for (int64_t t = 0; t < n_kv; ++t) {
    const char* row = v + kv_bytes<kKind>(t * a.kv_stride + kv_off);
    const float p = scratch[t];
    const __m256 vp = _mm256_set1_ps(p);
    for (int64_t d = 0; d < hd8; d += 8) {
      _mm256_storeu_ps(out + d,
                       _mm256_fmadd_ps(vp, load_kv8<kKind>(row, d), _mm256_loadu_ps(out + d)));
    }
    if constexpr (kKind != Kv::kQ8) {
      for (int64_t d = hd8; d < hd; ++d) out[d] += p * kv_scalar<kKind>(row, d);
    }
  }
}

template <Kv kKind>
void attention_of_kind(const AttentionArgs& a, int64_t head_begin, int64_t head_end,
                       float* scratch) {
  if (a.head_dim % 8 != 0 || a.head_dim > kMaxHeadDim) {
    for (int64_t h = head_begin; h < head_end; ++h) attend_head_generic<kKind>(a, h, scratch);
    return;
  }
  for (int64_t hb = head_begin; hb < head_end; hb += kMaxHeads) {
    attend_heads<kKind>(a, hb, std::min(head_end, hb + kMaxHeads));
  }
}

void attention_avx2(const AttentionArgs& a, int64_t head_begin, int64_t head_end, float* scratch) {
  if (a.n_kv <= 0) {
    for (int64_t i = head_begin * a.head_dim; i < head_end * a.head_dim; ++i) a.out[i] = 0.0f;
    return;
  }
  switch (a.kv_type) {
    case DType::kF16:
      attention_of_kind<Kv::kF16>(a, head_begin, head_end, scratch);
      break;
    case DType::kQ8_0:
      attention_of_kind<Kv::kQ8>(a, head_begin, head_end, scratch);
      break;
    default:
      attention_of_kind<Kv::kF32>(a, head_begin, head_end, scratch);
      break;
  }
}

}  // namespace

void fill_avx2_ops(KernelTable& t) {
  t.rmsnorm = rmsnorm_avx2;
  t.softmax = softmax_avx2;
  t.silu_mul = silu_mul_avx2;
  t.add = add_avx2;
  t.attention = attention_avx2;
}

}  // namespace cohort::kernels
