// Scalar reference versions of the non-matmul ops: the specification every SIMD variant is
// tested against. Sums and dot products accumulate in float, in index order.
#include <cmath>
#include <cstdint>
#include <limits>

#include "core/fp16.h"
#include "kernels/registry.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

void rmsnorm_ref(const float* x, const float* w, float* y, int64_t n, float eps) {
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) sum += x[i] * x[i];
  const float scale = 1.0f / std::sqrt(sum / static_cast<float>(n) + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * scale * w[i];
}

void rope_ref(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos,
              const float* sin, RopeStyle style) {
  const int64_t half = n_rot / 2;
  for (int64_t h = 0; h < n_heads; ++h) {
    float* xh = x + h * head_dim;
    for (int64_t i = 0; i < half; ++i) {
      const int64_t i0 = style == RopeStyle::kNormal ? 2 * i : i;
      const int64_t i1 = style == RopeStyle::kNormal ? 2 * i + 1 : i + half;
      const float x0 = xh[i0];
      const float x1 = xh[i1];
      xh[i0] = x0 * cos[i] - x1 * sin[i];
      xh[i1] = x0 * sin[i] + x1 * cos[i];
    }
  }
}

void softmax_ref(float* x, int64_t n) {
  float mx = x[0];
  for (int64_t i = 1; i < n; ++i) mx = x[i] > mx ? x[i] : mx;
  float sum = 0.0f;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    sum += x[i];
  }
  const float inv = 1.0f / sum;
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

void silu_mul_ref(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    const float u = up[i];
    out[i] = g / (1.0f + std::exp(-g)) * u;
  }
}

void add_ref(const float* a, const float* b, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) out[i] = a[i] + b[i];
}

inline float kv_at(const void* base, DType type, int64_t index) {
  if (type == DType::kF16) return fp16_to_f32(static_cast<const uint16_t*>(base)[index]);
  if (type == DType::kQ8_0) {
    const BlockQ8_0& b = static_cast<const BlockQ8_0*>(base)[index / kQK];
    return fp16_to_f32(b.d) * static_cast<float>(b.qs[index % kQK]);
  }
  return static_cast<const float*>(base)[index];
}

// Key element (t, kv_head, d) in any layout (AttentionArgs::keys_blocked).
inline float key_at(const AttentionArgs& a, int64_t t, int64_t kvh, int64_t d) {
  if (!a.keys_blocked || a.kv_type != DType::kQ8_0) {
    return kv_at(a.k, a.kv_type, key_index(a, t, kvh, d));
  }
  return q8_blocked_key(a, t, kvh, d);
}

void attention_ref(const AttentionArgs& a, int64_t head_begin, int64_t head_end, float* scratch) {
  const int64_t group = a.n_heads / a.n_kv_heads;
  const int64_t hd = a.head_dim;
  for (int64_t h = head_begin; h < head_end; ++h) {
    const float* q = a.q + h * hd;
    float* out = a.out + h * hd;
    const int64_t kvh = h / group;
    const int64_t kv_off = kvh * hd;
    for (int64_t d = 0; d < hd; ++d) out[d] = 0.0f;
    const int64_t n_kv = a.n_kv_of_head ? a.n_kv_of_head[h] : a.n_kv;
    if (n_kv <= 0) continue;

    float mx = -std::numeric_limits<float>::infinity();
    for (int64_t t = 0; t < n_kv; ++t) {
      float dot = 0.0f;
      for (int64_t d = 0; d < hd; ++d) dot += q[d] * key_at(a, t, kvh, d);
      scratch[t] = a.scale * dot;
      mx = scratch[t] > mx ? scratch[t] : mx;
    }
    float sum = 0.0f;
    for (int64_t t = 0; t < n_kv; ++t) {
      scratch[t] = std::exp(scratch[t] - mx);
      sum += scratch[t];
    }
    const float inv = 1.0f / sum;
    for (int64_t t = 0; t < n_kv; ++t) {
      const float p = scratch[t] * inv;
      const int64_t row = t * a.kv_stride + kv_off;
      for (int64_t d = 0; d < hd; ++d) out[d] += p * kv_at(a.v, a.kv_type, row + d);
    }
  }
}

}  // namespace

void fill_ref_ops(KernelTable& t) {
  t.rmsnorm = rmsnorm_ref;
  t.rope = rope_ref;
  t.softmax = softmax_ref;
  t.silu_mul = silu_mul_ref;
  t.add = add_ref;
  t.attention = attention_ref;
}

}  // namespace cohort::kernels
