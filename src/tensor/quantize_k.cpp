// Reference conversions for the K-quants (super-blocks of 256, quant_blocks.h) and their
// activation type Q8_K. The dequantizers are the specification of each layout and decode
// exactly as ggml does; the quantizers fit each sub-block with a small least-squares search
// (not ggml's exact search: any valid block decodes the same everywhere).
//
// Element order inside a super-block (the part of the format that is easy to get wrong):
//  - Q4_K/Q5_K: chunk c (0..3) of 64 elements uses qs[32c .. 32c+31]: element 64c + l is the
//    low nibble of qs[32c + l] (sub-block 2c), element 64c + 32 + l the high nibble
//    (sub-block 2c + 1). Q5_K's 5th bit of element e is bit e / 32 of qh[e % 32].
//  - Q2_K/Q3_K: half h (0..1) of 128 elements uses qs[32h .. 32h+31]: element
//    128h + 32j + l is bits 2j..2j+1 of qs[32h + l]. Q3_K's high bit of element e is bit
//    e / 32 of hmask[e % 32]. Sub-block of element e is e / 16.
//  - Q6_K: half h of 128 elements uses ql[64h ..], qh[32h ..]; element 128h + 32k + l
//    (l < 32) takes its low 4 bits from ql[64h + l + 32 * (k & 1)] (low nibble for k < 2,
//    high nibble for k >= 2) and its high 2 bits from bits 2k..2k+1 of qh[32h + l].
//    Sub-block of element e is e / 16.
#include <cmath>
#include <cstring>

#include "core/fp16.h"
#include "tensor/quant_blocks.h"
#include "tensor/quantize.h"

namespace cohort {
namespace {

// Rounds to nearest (ties to even) and clamps to [lo, hi]; safe for huge values.
inline int round_clamp(float v, int lo, int hi) {
  if (!(v > static_cast<float>(lo))) return lo;  // also maps NaN to lo
  if (v > static_cast<float>(hi)) return hi;
  const int r = static_cast<int>(std::nearbyint(v));
  return r < lo ? lo : (r > hi ? hi : r);
}

// 6-bit scale and min of sub-block j (0..7) from the 12 packed bytes of Q4_K/Q5_K:
// bytes 0..3 hold scales 0..3 in their low 6 bits and the top 2 bits of scales 4..7;
// bytes 4..7 the same for the mins; bytes 8..11 the low 4 bits of scale (low nibble) and
// min (high nibble) of sub-blocks 4..7.
inline void get_scale_min_k4(int j, const uint8_t* q, int* sc, int* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

void pack_scale_min_k4(const int* sc, const int* m, uint8_t* q) {
  std::memset(q, 0, kKScaleBytes);
  for (int j = 0; j < 4; ++j) {
    q[j] = static_cast<uint8_t>(sc[j] & 63);
    q[j + 4] = static_cast<uint8_t>(m[j] & 63);
  }
  for (int j = 4; j < 8; ++j) {
    q[j + 4] = static_cast<uint8_t>((sc[j] & 0xF) | ((m[j] & 0xF) << 4));
    q[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
    q[j] |= static_cast<uint8_t>((m[j] >> 4) << 6);
  }
}

// Unsigned 6-bit scale j (0..15) of Q3_K, before the -32 offset: low 4 bits in the low
// (j < 8) or high (j >= 8) nibble of byte j % 8, high 2 bits in bits 2*(j/4) of byte
// 8 + j % 4.
inline int q3k_scale(const uint8_t* s, int j) {
  const int lo = j < 8 ? (s[j] & 0xF) : (s[j - 8] >> 4);
  const int hi = (s[8 + j % 4] >> (2 * (j / 4))) & 3;
  return lo | (hi << 4);
}

void pack_q3k_scales(const int* u, uint8_t* s) {  // u[j] in [0, 63]
  std::memset(s, 0, kKScaleBytes);
  for (int j = 0; j < 16; ++j) {
    if (j < 8) {
      s[j] |= static_cast<uint8_t>(u[j] & 0xF);
    } else {
      s[j - 8] |= static_cast<uint8_t>((u[j] & 0xF) << 4);
    }
    s[8 + j % 4] |= static_cast<uint8_t>((u[j] >> 4) << (2 * (j / 4)));
  }
}

// Fits x[i] ~ scale * L[i] - m with L in [0, nmax], m >= 0 (the minimum is never above 0):
// tries a range of grid spacings and solves least squares for scale and offset on each
// assignment, keeping the one with the smallest squared error. Returns scale, sets *m.
float fit_scale_min(int n, int nmax, const float* x, uint8_t* L, float* m_out) {
  float lo = x[0], hi = x[0];
  for (int i = 1; i < n; ++i) {
    lo = std::fmin(lo, x[i]);
    hi = std::fmax(hi, x[i]);
  }
  if (lo > 0) lo = 0;
  if (!(hi > lo)) {
    for (int i = 0; i < n; ++i) L[i] = 0;
    *m_out = -lo;
    return 0.0f;
  }
  float best_scale = (hi - lo) / static_cast<float>(nmax);
  float best_min = lo;
  {
    const float iscale = 1.0f / best_scale;
    for (int i = 0; i < n; ++i) {
      L[i] = static_cast<uint8_t>(round_clamp(iscale * (x[i] - lo), 0, nmax));
    }
  }
  auto error_of = [&](float s, float b, const uint8_t* l) {
    float e = 0;
    for (int i = 0; i < n; ++i) {
      const float d = s * static_cast<float>(l[i]) + b - x[i];
      e += d * d;
    }
    return e;
  };
  float best_err = error_of(best_scale, best_min, L);
  uint8_t aux[32];
  for (int step = -10; step <= 10; ++step) {
    const float iscale = (static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / (hi - lo);
    float sl = 0, sl2 = 0, sx = 0, sxl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = round_clamp(iscale * (x[i] - lo), 0, nmax);
      aux[i] = static_cast<uint8_t>(l);
      const float fl = static_cast<float>(l);
      sl += fl;
      sl2 += fl * fl;
      sx += x[i];
      sxl += x[i] * fl;
    }
    const float nf = static_cast<float>(n);
    const float det = nf * sl2 - sl * sl;
    if (!(det > 0)) continue;
    float s = (nf * sxl - sx * sl) / det;
    float b = (sl2 * sx - sl * sxl) / det;
    if (b > 0) {
      b = 0;
      s = sxl / sl2;
    }
    if (!(s > 0)) continue;
    const float e = error_of(s, b, aux);
    if (e < best_err) {
      best_err = e;
      best_scale = s;
      best_min = b;
      std::memcpy(L, aux, static_cast<size_t>(n));
    }
  }
  *m_out = -best_min;
  return best_scale;
}

// Fits x[i] ~ scale * L[i] with L in [-nmax, nmax - 1]: the element of largest magnitude
// goes near -nmax (so the asymmetric range is used fully), then a few grid spacings are
// tried with the least-squares scale for each. Returns the (signed) scale.
float fit_scale_sym(int n, int nmax, const float* x) {
  float amax = 0, vmax = 0;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      vmax = x[i];
    }
  }
  if (amax < 1e-30f) return 0.0f;
  float best_scale = 0, best_score = -1;
  for (int step = -9; step <= 9; ++step) {
    const float iscale = -(static_cast<float>(nmax) + 0.1f * static_cast<float>(step)) / vmax;
    float sxl = 0, sl2 = 0;
    for (int i = 0; i < n; ++i) {
      const float l = static_cast<float>(round_clamp(iscale * x[i], -nmax, nmax - 1));
      sxl += x[i] * l;
      sl2 += l * l;
    }
    if (!(sl2 > 0)) continue;
    // Squared error with the optimal scale is sum(x^2) - sxl^2 / sl2.
    const float score = sxl * sxl / sl2;
    if (score > best_score) {
      best_score = score;
      best_scale = sxl / sl2;
    }
  }
  return best_scale;
}

// Quantizes super-block scales (all >= 0) to [0, qmax] with one half-precision factor.
// Returns the stored factor bits; q receives the integer scales.
uint16_t quantize_unsigned_scales(const float* v, int n, int qmax, int* q) {
  float vmax = 0;
  for (int j = 0; j < n; ++j) vmax = std::fmax(vmax, v[j]);
  const uint16_t bits = f32_to_fp16(vmax / static_cast<float>(qmax));
  const float d = fp16_to_f32(bits);
  for (int j = 0; j < n; ++j) q[j] = d > 0 ? round_clamp(v[j] / d, 0, qmax) : 0;
  return bits;
}

// Quantizes signed scales to [-qmin, qmin - 1] with one half-precision factor chosen so the
// scale of largest magnitude maps to -qmin.
uint16_t quantize_signed_scales(const float* v, int n, int qmin, int* q) {
  float amax = 0, vmax = 0;
  for (int j = 0; j < n; ++j) {
    if (std::fabs(v[j]) > amax) {
      amax = std::fabs(v[j]);
      vmax = v[j];
    }
  }
  const uint16_t bits = f32_to_fp16(amax > 0 ? vmax / -static_cast<float>(qmin) : 0.0f);
  const float d = fp16_to_f32(bits);
  for (int j = 0; j < n; ++j) q[j] = d != 0 ? round_clamp(v[j] / d, -qmin, qmin - 1) : 0;
  return bits;
}

// Shared by Q4_K (nbits 4) and Q5_K (nbits 5): per sub-block of 32 scale/min fits, 6-bit
// scales and mins, then the quants re-derived from the stored (rounded) parameters.
void quantize_q45_k(const float* x, int nbits, uint16_t* d_out, uint16_t* dmin_out,
                    uint8_t* scales_out, uint8_t* L) {
  const int nmax = (1 << nbits) - 1;
  float scale[8], mn[8];
  for (int j = 0; j < 8; ++j) scale[j] = fit_scale_min(32, nmax, x + 32 * j, L + 32 * j, &mn[j]);
  int ls[8], lm[8];
  *d_out = quantize_unsigned_scales(scale, 8, 63, ls);
  *dmin_out = quantize_unsigned_scales(mn, 8, 63, lm);
  pack_scale_min_k4(ls, lm, scales_out);
  const float d = fp16_to_f32(*d_out), dmin = fp16_to_f32(*dmin_out);
  for (int j = 0; j < 8; ++j) {
    const float s = d * static_cast<float>(ls[j]);
    const float m = dmin * static_cast<float>(lm[j]);
    for (int i = 0; i < 32; ++i) {
      L[32 * j + i] =
          s > 0 ? static_cast<uint8_t>(round_clamp((x[32 * j + i] + m) / s, 0, nmax)) : 0;
    }
  }
}

}  // namespace

// ---------------------------------------------------------------------------------- Q2_K

void quantize_row_q2_k(const float* x, void* y, int64_t n) {
  auto* b = static_cast<BlockQ2_K*>(y);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    uint8_t L[kQK_K];
    float scale[16], mn[16];
    for (int j = 0; j < 16; ++j) scale[j] = fit_scale_min(16, 3, x + 16 * j, L + 16 * j, &mn[j]);
    int ls[16], lm[16];
    b[i].d = quantize_unsigned_scales(scale, 16, 15, ls);
    b[i].dmin = quantize_unsigned_scales(mn, 16, 15, lm);
    const float d = fp16_to_f32(b[i].d), dmin = fp16_to_f32(b[i].dmin);
    for (int j = 0; j < 16; ++j) {
      b[i].scales[j] = static_cast<uint8_t>(ls[j] | (lm[j] << 4));
      const float s = d * static_cast<float>(ls[j]);
      const float m = dmin * static_cast<float>(lm[j]);
      for (int l = 0; l < 16; ++l) {
        L[16 * j + l] =
            s > 0 ? static_cast<uint8_t>(round_clamp((x[16 * j + l] + m) / s, 0, 3)) : 0;
      }
    }
    for (int h = 0; h < 2; ++h) {
      for (int l = 0; l < 32; ++l) {
        const uint8_t* q = L + 128 * h + l;
        b[i].qs[32 * h + l] =
            static_cast<uint8_t>(q[0] | (q[32] << 2) | (q[64] << 4) | (q[96] << 6));
      }
    }
  }
}

void dequantize_row_q2_k(const void* x, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ2_K*>(x);
  for (int64_t i = 0; i < n / kQK_K; ++i, y += kQK_K) {
    const float d = fp16_to_f32(b[i].d), dmin = fp16_to_f32(b[i].dmin);
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, j = (e % 128) / 32, l = e % 32;
      const int q = (b[i].qs[32 * h + l] >> (2 * j)) & 3;
      const uint8_t sc = b[i].scales[e / 16];
      y[e] = d * static_cast<float>(sc & 0xF) * static_cast<float>(q) -
             dmin * static_cast<float>(sc >> 4);
    }
  }
}

// ---------------------------------------------------------------------------------- Q3_K

void quantize_row_q3_k(const float* x, void* y, int64_t n) {
  auto* b = static_cast<BlockQ3_K*>(y);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    float scale[16];
    for (int j = 0; j < 16; ++j) scale[j] = fit_scale_sym(16, 4, x + 16 * j);
    int ls[16];
    b[i].d = quantize_signed_scales(scale, 16, 32, ls);
    int u[16];
    for (int j = 0; j < 16; ++j) u[j] = ls[j] + 32;
    pack_q3k_scales(u, b[i].scales);
    const float d = fp16_to_f32(b[i].d);
    uint8_t L[kQK_K];  // 0..7, i.e. q + 4
    for (int j = 0; j < 16; ++j) {
      const float s = d * static_cast<float>(ls[j]);
      for (int l = 0; l < 16; ++l) {
        L[16 * j + l] =
            static_cast<uint8_t>((s != 0 ? round_clamp(x[16 * j + l] / s, -4, 3) : 0) + 4);
      }
    }
    std::memset(b[i].hmask, 0, sizeof(b[i].hmask));
    std::memset(b[i].qs, 0, sizeof(b[i].qs));
    for (int e = 0; e < kQK_K; ++e) {
      if (L[e] > 3) b[i].hmask[e % 32] |= static_cast<uint8_t>(1u << (e / 32));
      const int h = e / 128, j = (e % 128) / 32, l = e % 32;
      b[i].qs[32 * h + l] |= static_cast<uint8_t>((L[e] & 3) << (2 * j));
    }
  }
}

void dequantize_row_q3_k(const void* x, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ3_K*>(x);
  for (int64_t i = 0; i < n / kQK_K; ++i, y += kQK_K) {
    const float d = fp16_to_f32(b[i].d);
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, j = (e % 128) / 32, l = e % 32;
      const int low = (b[i].qs[32 * h + l] >> (2 * j)) & 3;
      const int high = (b[i].hmask[e % 32] >> (e / 32)) & 1;
      const int q = low - (high ? 0 : 4);
      const int sc = q3k_scale(b[i].scales, e / 16) - 32;
      y[e] = d * static_cast<float>(sc) * static_cast<float>(q);
    }
  }
}

// ---------------------------------------------------------------------------------- Q4_K

void quantize_row_q4_k(const float* x, void* y, int64_t n) {
  auto* b = static_cast<BlockQ4_K*>(y);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    uint8_t L[kQK_K];
    quantize_q45_k(x, 4, &b[i].d, &b[i].dmin, b[i].scales, L);
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        b[i].qs[32 * c + l] = static_cast<uint8_t>(L[64 * c + l] | (L[64 * c + 32 + l] << 4));
      }
    }
  }
}

void dequantize_row_q4_k(const void* x, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ4_K*>(x);
  for (int64_t i = 0; i < n / kQK_K; ++i, y += kQK_K) {
    const float d = fp16_to_f32(b[i].d), dmin = fp16_to_f32(b[i].dmin);
    for (int e = 0; e < kQK_K; ++e) {
      const int c = e / 64, l = e % 32;
      const int q = (e % 64) < 32 ? (b[i].qs[32 * c + l] & 0xF) : (b[i].qs[32 * c + l] >> 4);
      int sc, m;
      get_scale_min_k4(e / 32, b[i].scales, &sc, &m);
      y[e] = d * static_cast<float>(sc) * static_cast<float>(q) - dmin * static_cast<float>(m);
    }
  }
}

// ---------------------------------------------------------------------------------- Q5_K

void quantize_row_q5_k(const float* x, void* y, int64_t n) {
  auto* b = static_cast<BlockQ5_K*>(y);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    uint8_t L[kQK_K];
    quantize_q45_k(x, 5, &b[i].d, &b[i].dmin, b[i].scales, L);
    std::memset(b[i].qh, 0, sizeof(b[i].qh));
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        const int lo = L[64 * c + l], hi = L[64 * c + 32 + l];
        b[i].qs[32 * c + l] = static_cast<uint8_t>((lo & 0xF) | ((hi & 0xF) << 4));
      }
    }
    for (int e = 0; e < kQK_K; ++e) {
      if (L[e] & 16) b[i].qh[e % 32] |= static_cast<uint8_t>(1u << (e / 32));
    }
  }
}

void dequantize_row_q5_k(const void* x, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ5_K*>(x);
  for (int64_t i = 0; i < n / kQK_K; ++i, y += kQK_K) {
    const float d = fp16_to_f32(b[i].d), dmin = fp16_to_f32(b[i].dmin);
    for (int e = 0; e < kQK_K; ++e) {
      const int c = e / 64, l = e % 32;
      const int low = (e % 64) < 32 ? (b[i].qs[32 * c + l] & 0xF) : (b[i].qs[32 * c + l] >> 4);
      const int q = low | (((b[i].qh[l] >> (e / 32)) & 1) << 4);
      int sc, m;
      get_scale_min_k4(e / 32, b[i].scales, &sc, &m);
      y[e] = d * static_cast<float>(sc) * static_cast<float>(q) - dmin * static_cast<float>(m);
    }
  }
}

// ---------------------------------------------------------------------------------- Q6_K

void quantize_row_q6_k(const float* x, void* y, int64_t n) {
  auto* b = static_cast<BlockQ6_K*>(y);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    float scale[16];
    for (int j = 0; j < 16; ++j) scale[j] = fit_scale_sym(16, 32, x + 16 * j);
    int ls[16];
    b[i].d = quantize_signed_scales(scale, 16, 128, ls);
    const float d = fp16_to_f32(b[i].d);
    uint8_t L[kQK_K];  // 0..63, i.e. q + 32
    for (int j = 0; j < 16; ++j) {
      b[i].scales[j] = static_cast<int8_t>(ls[j]);
      const float s = d * static_cast<float>(ls[j]);
      for (int l = 0; l < 16; ++l) {
        L[16 * j + l] =
            static_cast<uint8_t>((s != 0 ? round_clamp(x[16 * j + l] / s, -32, 31) : 0) + 32);
      }
    }
    std::memset(b[i].ql, 0, sizeof(b[i].ql));
    std::memset(b[i].qh, 0, sizeof(b[i].qh));
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, k = (e % 128) / 32, l = e % 32;
      const int ql_index = 64 * h + l + 32 * (k & 1);
      b[i].ql[ql_index] |= static_cast<uint8_t>((L[e] & 0xF) << (k >= 2 ? 4 : 0));
      b[i].qh[32 * h + l] |= static_cast<uint8_t>((L[e] >> 4) << (2 * k));
    }
  }
}

void dequantize_row_q6_k(const void* x, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ6_K*>(x);
  for (int64_t i = 0; i < n / kQK_K; ++i, y += kQK_K) {
    const float d = fp16_to_f32(b[i].d);
    for (int e = 0; e < kQK_K; ++e) {
      const int h = e / 128, k = (e % 128) / 32, l = e % 32;
      const uint8_t lbyte = b[i].ql[64 * h + l + 32 * (k & 1)];
      const int low = k >= 2 ? (lbyte >> 4) : (lbyte & 0xF);
      const int high = (b[i].qh[32 * h + l] >> (2 * k)) & 3;
      const int q = (low | (high << 4)) - 32;
      y[e] = d * static_cast<float>(b[i].scales[e / 16]) * static_cast<float>(q);
    }
  }
}

// ---------------------------------------------------------------------------------- Q8_K

void quantize_row_q8_k(const float* x, void* y, int64_t n) {
  auto* b = static_cast<BlockQ8_K*>(y);
  for (int64_t i = 0; i < n / kQK_K; ++i, x += kQK_K) {
    float amax = 0;
    for (int e = 0; e < kQK_K; ++e) amax = std::fmax(amax, std::fabs(x[e]));
    if (!(amax > 0)) {
      b[i].d = 0;
      std::memset(b[i].qs, 0, sizeof(b[i].qs));
      std::memset(b[i].bsums, 0, sizeof(b[i].bsums));
      continue;
    }
    const float iscale = 127.0f / amax;
    b[i].d = amax / 127.0f;
    for (int e = 0; e < kQK_K; ++e) {
      b[i].qs[e] = static_cast<int8_t>(round_clamp(x[e] * iscale, -127, 127));
    }
    for (int g = 0; g < kQK_K / 16; ++g) {
      int s = 0;
      for (int l = 0; l < 16; ++l) s += b[i].qs[16 * g + l];
      b[i].bsums[g] = static_cast<int16_t>(s);
    }
  }
}

void dequantize_row_q8_k(const void* x, float* y, int64_t n) {
  const auto* b = static_cast<const BlockQ8_K*>(x);
  for (int64_t i = 0; i < n / kQK_K; ++i, y += kQK_K) {
    for (int e = 0; e < kQK_K; ++e) y[e] = b[i].d * static_cast<float>(b[i].qs[e]);
  }
}

}  // namespace cohort
