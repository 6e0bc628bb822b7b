// AVX2+FMA+F16C versions of the non-matmul ops. rope stays scalar (it touches a few KB per
// token; the reference is fast enough), so this file does not override it.
//
// Attention (head dims that are multiples of 8 up to 512) is attention_walk.h's tiled,
// single-pass walk over 8-lane vectors: this file brings the 8-lane operations and how a
// quad's scores are formed (head_scores8: each head on its own over keys staged as floats).
// Other head dims take a simpler two-pass path through scratch with scalar tails. A Q8_0
// cache is read as floats (its int8 widened and converted) rather than multiplied as int8
// with a quantized q: the scores and the weighted sum then keep float precision. Its values
// are each scaled (the scale times the int8), its blocked keys a 32-dim group's sum at a time
// (block_scores8_q8).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>

#include "kernels/registry.h"
#include "kernels/x86/attention_walk.h"
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

constexpr int64_t kMaxHeadDim = 512;  // the walk's; the generic path above it

// The scores of a quad's n (<= 4) heads, each on its own, against positions [0, cnt8) (cnt8 a
// multiple of 8) of key rows of kind kKind key_stride bytes apart: s[i * s_stride + j] =
// scale * q_i . k_j, q_i at q + i * hd as it is. 8 positions at a time, one accumulator
// each over the head dim, then the 8 sums at once (hsum8x8): a score's order depends on the
// head dim alone. (The rotated form of the AVX-512 kernel, 4 heads per key vector, was
// slower here for prompts and no faster for a decode step: docs/PERFORMANCE.md, stop 36.)
template <Kv kKind>
inline void head_scores8(const float* q, const char* keys, int64_t key_stride, int64_t hd,
                         int64_t cnt8, float scale, int64_t n, float* s, int64_t s_stride) {
  const __m256 vscale = _mm256_set1_ps(scale);
  for (int64_t i = 0; i < n; ++i) {
    const float* qi = q + i * hd;
    for (int64_t j = 0; j < cnt8; j += 8) {
      __m256 acc[8];
#pragma GCC unroll 8
      for (int r = 0; r < 8; ++r) acc[r] = _mm256_setzero_ps();
      const char* kj = keys + j * key_stride;
      for (int64_t d = 0; d < hd; d += 8) {
        const __m256 qv = _mm256_loadu_ps(qi + d);
#pragma GCC unroll 8
        for (int r = 0; r < 8; ++r) {
          acc[r] = _mm256_fmadd_ps(qv, load_kv8<kKind>(kj + r * key_stride, d), acc[r]);
        }
      }
      _mm256_store_ps(s + i * s_stride + j, _mm256_mul_ps(avx2::hsum8x8(acc), vscale));
    }
  }
}

// Blocked keys (kernels.h AttentionArgs::keys_blocked): scores of NQ heads (queries as they
// are, hd floats apart) against positions [0, cnt) of the key block at kblk (a tile, cnt <=
// kKeyBlock), 16 positions (two vectors) a pass: s[i * s_stride + p] = scale * q_i . k_p for p
// up to cnt rounded up to 16. One FMA chain a score over d = 0 .. hd - 1; asks for the rows
// ahead, one position a dim.
template <Kv kKind, int NQ>
inline void block_scores8(const float* q, const char* kblk, int64_t hd, int64_t cnt, float scale,
                          float* s, int64_t s_stride, const TileAsk& ask) {
  const __m256 vscale = _mm256_set1_ps(scale);
  for (int64_t j0 = 0; j0 < cnt; j0 += 16) {
    const int64_t n_ask = std::min<int64_t>(16, cnt - j0);
    __m256 acc[NQ][2];
#pragma GCC unroll 4
    for (int i = 0; i < NQ; ++i) acc[i][0] = acc[i][1] = _mm256_setzero_ps();
    for (int64_t d = 0; d < hd; ++d) {
      if (d < n_ask) ask.rows(j0 + d);
      const __m256 k0 = load_kv8<kKind>(kblk, kKeyBlock * d + j0);
      const __m256 k1 = load_kv8<kKind>(kblk, kKeyBlock * d + j0 + 8);
#pragma GCC unroll 4
      for (int i = 0; i < NQ; ++i) {
        const __m256 qb = _mm256_set1_ps(q[i * hd + d]);
        acc[i][0] = _mm256_fmadd_ps(qb, k0, acc[i][0]);
        acc[i][1] = _mm256_fmadd_ps(qb, k1, acc[i][1]);
      }
    }
    for (int64_t u = hd; u < n_ask; ++u) ask.rows(j0 + u);
#pragma GCC unroll 4
    for (int i = 0; i < NQ; ++i) {
      _mm256_store_ps(s + i * s_stride + j0, _mm256_mul_ps(acc[i][0], vscale));
      _mm256_store_ps(s + i * s_stride + j0 + 8, _mm256_mul_ps(acc[i][1], vscale));
    }
  }
}

// Dim d of positions j .. j + 7 of a 32-dim group of Q8_0 keys (attention_cache.h q8_group),
// as floats.
template <Kv kKind>
inline __m256 q8_group_load8(const char* group, int64_t d, int64_t j) {
  const char* values = q8_group_values<kKind>(group, d, j);
  if constexpr (kKind == Kv::kQ8) {
    return i8x8_to_ps(values);
  } else {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(values));
  }
}

// The scales of positions j .. j + 7 of a group, as floats.
template <Kv kKind>
inline __m256 q8_group_scales8(const char* group, int64_t j) {
  if constexpr (kKind == Kv::kQ8) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(group + 2 * j)));
  } else {
    return _mm256_loadu_ps(reinterpret_cast<const float*>(group) + j);
  }
}

// block_scores8 for Q8_0 keys (kQ8, or kQ8Floats: the same bits). A score is q . k over the
// 32-dim groups g in order, sum_g s_g (q_g . k_g): each group's int8 times the queries in
// their own FMA chain, then that chain times the position's scale added to the score so far
// (kept in s between groups). Multiplying each value by its scale first (the reference's
// order, and this kernel's before stop 50) took a multiply a vector of values.
template <Kv kKind, int NQ>
inline void block_scores8_q8(const float* q, const char* kblk, int64_t hd, int64_t cnt, float scale,
                             float* s, int64_t s_stride, const TileAsk& ask) {
  const __m256 vscale = _mm256_set1_ps(scale);
  for (int64_t j0 = 0; j0 < cnt; j0 += 16) {
    const int64_t n_ask = std::min<int64_t>(16, cnt - j0);
    for (int64_t g0 = 0; g0 < hd; g0 += kQ8Block) {
      const char* group = q8_group<kKind>(kblk, g0);
      __m256 part[NQ][2];
#pragma GCC unroll 4
      for (int i = 0; i < NQ; ++i) part[i][0] = part[i][1] = _mm256_setzero_ps();
      for (int64_t d = g0; d < g0 + kQ8Block; ++d) {
        if (d < n_ask) ask.rows(j0 + d);
        const __m256 k0 = q8_group_load8<kKind>(group, d, j0);
        const __m256 k1 = q8_group_load8<kKind>(group, d, j0 + 8);
#pragma GCC unroll 4
        for (int i = 0; i < NQ; ++i) {
          const __m256 qb = _mm256_set1_ps(q[i * hd + d]);
          part[i][0] = _mm256_fmadd_ps(qb, k0, part[i][0]);
          part[i][1] = _mm256_fmadd_ps(qb, k1, part[i][1]);
        }
      }
#pragma GCC unroll 2
      for (int b = 0; b < 2; ++b) {
        const __m256 sc = q8_group_scales8<kKind>(group, j0 + 8 * b);
#pragma GCC unroll 4
        for (int i = 0; i < NQ; ++i) {
          float* at = s + i * s_stride + j0 + 8 * b;
          _mm256_store_ps(at, g0 == 0 ? _mm256_mul_ps(sc, part[i][b])
                                      : _mm256_fmadd_ps(sc, part[i][b], _mm256_load_ps(at)));
        }
      }
    }
    for (int64_t u = hd; u < n_ask; ++u) ask.rows(j0 + u);
#pragma GCC unroll 4
    for (int i = 0; i < NQ; ++i) {
#pragma GCC unroll 2
      for (int b = 0; b < 2; ++b) {
        float* at = s + i * s_stride + j0 + 8 * b;
        _mm256_store_ps(at, _mm256_mul_ps(_mm256_load_ps(at), vscale));
      }
    }
  }
}

// The 8-lane policy of attention_walk.h.
struct Lanes8 {
  using V = __m256;
  static constexpr int64_t kLanes = 8;
  static constexpr int kPvVectors = 2;  // 16 dims x 4 heads: 8 accumulators
  static V zero() { return _mm256_setzero_ps(); }
  static V set1(float x) { return _mm256_set1_ps(x); }
  static V load(const float* p) { return _mm256_load_ps(p); }
  static V loadu(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, V x) { _mm256_store_ps(p, x); }
  static void storeu(float* p, V x) { _mm256_storeu_ps(p, x); }
  static V add(V a, V b) { return _mm256_add_ps(a, b); }
  static V sub(V a, V b) { return _mm256_sub_ps(a, b); }
  static V mul(V a, V b) { return _mm256_mul_ps(a, b); }
  static V max(V a, V b) { return _mm256_max_ps(a, b); }
  static V fmadd(V a, V b, V c) { return _mm256_fmadd_ps(a, b, c); }
  static V exp(V x) { return exp_ps(x); }
  static float reduce_max(V x) { return hmax(x); }
  static float reduce_add(V x) { return hsum(x); }
  // Values d .. d + 8C of a cache row as C vectors; two at a time share one Q8_0 scale (d
  // then a multiple of 16).
  template <Kv kKind, int C>
  static void load_kv(const char* row, int64_t d, V out[C]) {
    if constexpr (C % 2 == 0) {
#pragma GCC unroll 2
      for (int c = 0; c < C; c += 2) load_kv16<kKind>(row, d + 8 * c, out[c], out[c + 1]);
    } else {
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) out[c] = load_kv8<kKind>(row, d + 8 * c);
    }
  }
  // Queries as they are, keys staged as floats (attention_walk.h).
  static constexpr bool kRotatedScores = false;
  template <Kv kKind>
  static void quad_scores(const float* q, const char* keys, int64_t key_stride, int64_t hd,
                          int64_t cnt8, float scale, int64_t n, float* s, int64_t s_stride,
                          const TileAsk&) {
    head_scores8<kKind>(q, keys, key_stride, hd, cnt8, scale, n, s, s_stride);
  }
  template <Kv kKind, int NQ>
  static void block_scores(const float* q, const char* kblk, int64_t hd, int64_t cnt, float scale,
                           float* s, int64_t s_stride, const TileAsk& ask) {
    if constexpr (kKind == Kv::kQ8 || kKind == Kv::kQ8Floats) {
      block_scores8_q8<kKind, NQ>(q, kblk, hd, cnt, scale, s, s_stride, ask);
    } else {
      block_scores8<kKind, NQ>(q, kblk, hd, cnt, scale, s, s_stride, ask);
    }
  }
  static V i8_to_ps(const char* p) { return i8x8_to_ps(p); }
  static V f16_to_ps(const char* p) {
    return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  }
};

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

// Key element (t, kvh, d) of blocked keys (kernels.h AttentionArgs::keys_blocked).
template <Kv kKind>
inline float blocked_key(const AttentionArgs& a, int64_t t, int64_t kvh, int64_t d) {
  if constexpr (kKind == Kv::kQ8) {
    return q8_blocked_key(a, t, kvh, d);
  } else {
    return kv_scalar<kKind>(static_cast<const char*>(a.k), key_index(a, t, kvh, d));
  }
}

// Two-pass fallback for any head_dim: scores into scratch, softmax, then out = sum p_t v_t.
template <Kv kKind>
void attend_head_generic(const AttentionArgs& a, int64_t h, float* scratch) {
  const int64_t hd = a.head_dim;
  const int64_t n_kv = a.n_kv_of_head ? a.n_kv_of_head[h] : a.n_kv;
  const int64_t hd8 = hd / 8 * 8;
  const int64_t kvh = h / (a.n_heads / a.n_kv_heads);
  const int64_t kv_off = kvh * hd;
  const float* q = a.q + h * hd;
  float* out = a.out + h * hd;
  const auto* k = static_cast<const char*>(a.k);
  const auto* v = static_cast<const char*>(a.v);
  for (int64_t t = 0; t < n_kv; ++t) {
    if (a.keys_blocked) {  // one value at a time: this path is for unusual head dims
      float dot = 0.0f;
      for (int64_t d = 0; d < hd; ++d) dot += q[d] * blocked_key<kKind>(a, t, kvh, d);
      scratch[t] = dot * a.scale;
      continue;
    }
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
  walk_attention<Lanes8, kKind>(a, head_begin, head_end);
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
