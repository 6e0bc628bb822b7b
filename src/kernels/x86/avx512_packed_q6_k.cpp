// AVX-512 product of packed Q6_K panels of 16 rows (kernels/packed_layouts.h "Q6_Kx16", the
// 16 rows in the 16 int32 lanes) with Q8_K activations, decode and prefill alike: the
// avx512_vnni table's Q6_K. Per chunk of 32 columns a group's 6-bit codes are put together
// once (low 4 bits from ql, top 2 from qh, by a bit select) for 16 rows; each token's 4
// activation bytes meet them, broadcast to every lane, in one vpdpbusd. A sub-block's sum
// takes the -32 of the codes (sum (q - 32) a = sum q a - 32 sum a, the file's bsums) and then
// its scale by an int32 multiply. The AVX2 tile (avx2_packed_k.cpp) needs maddubs, an int16
// add and a madd per group and token for 8 rows; in L2 on the Zen 4 VM it computed slower
// (32 GB/s on one thread) than memory streams (35).
//
// Exactness: a sub-block's integer dot is at most 16 * 63 * 128 in magnitude, times a scale
// of |s| <= 128, summed over 16 sub-blocks: < 2^31. The super-block's integer is the same
// exact one as the AVX2 tile's (there the -32 term is taken once per super-block), then the
// same float operations (fma(float(dot), d_w * d_a, acc) per super-block in order), so the
// same bits.
//
// Compiled with AVX-512 flags: nothing here has external or vague linkage but the fill_
// function (x86/simd_avx512.h says why).
#include <cstdint>

#include "kernels/packed_layouts.h"
#include "kernels/registry.h"
#include "kernels/terms_key.h"
#include "kernels/x86/packed_tiles.h"
#include "kernels/x86/simd_avx512.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

constexpr int kGroupBytes = 64;

// Tokens per prefill tile: each keeps a sub-block's two sums, the super-block's sum and its
// float accumulator in registers.
constexpr int kTokenTile = 6;

// How far ahead a one-token tile asks for its lines where decode_prefetch(): two
// super-blocks, as the AVX2 tile (kQ6_KDecodeAhead).
constexpr int64_t kPrefetchAhead = 2 * kQ6_Kx16BlockBytes;

// Per token super-block, what the tiles take from the activations besides their codes: the
// block's scale and 32 x the sums of its 16 sub-blocks' codes. Per-thread storage grown to
// the largest call seen, reused while a call reads the same activations.
class TokenTerms {
 public:
  // Terms of tokens [t0, t1) of g (token t's super-blocks from (t - t0) * nb on).
  void make(const GemmArgs& g, int64_t t0, int64_t t1) {
    if (!key_.fresh(g, t0, t1)) return;
    const int64_t nb = g.n / kQK_K;
    const size_t need = static_cast<size_t>((t1 - t0) * nb);
    float* d = d_.reserve(need);
    int32_t* sums32 = sums32_.reserve(16 * need);
    for (int64_t t = t0; t < t1; ++t) {
      const auto* a =
          reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
      for (int64_t b = 0; b < nb; ++b) {
        const size_t i = static_cast<size_t>((t - t0) * nb + b);
        d[i] = a[b].d;
        const __m512i s =
            _mm512_cvtepi16_epi32(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(a[b].bsums)));
        _mm512_storeu_si512(sums32 + 16 * i, _mm512_slli_epi32(s, 5));
      }
    }
  }

  const float* d() const { return d_.data(); }
  const int32_t* sums32() const { return sums32_.data(); }

 private:
  GrowArray<float> d_;
  GrowArray<int32_t> sums32_;
  TermsKey key_;
};

// The 6-bit codes of group grp of a chunk (ql and qh its bytes) for 16 rows: the low-nibble
// columns in lo, the high-nibble ones in hi, each code in a byte.
inline void codes(const uint8_t* ql, const uint8_t* qh, int grp, __m512i& lo, __m512i& hi) {
  const __m512i low = _mm512_set1_epi8(0x0F), top = _mm512_set1_epi8(0x30);
  const __m512i v = _mm512_loadu_si512(ql + kGroupBytes * grp);
  const __m512i h = _mm512_loadu_si512(qh + kGroupBytes * (grp / 2));
  // The plane's 2-bit fields of this group at bits 4..5 of each byte.
  const __m512i h_lo = grp % 2 ? h : _mm512_slli_epi16(h, 4);
  const __m512i h_hi = grp % 2 ? _mm512_srli_epi16(h, 2) : _mm512_slli_epi16(h, 2);
  // 0xCA: low ? v : h (a bit select), then keep bits 0..5.
  lo = _mm512_ternarylogic_epi32(low, v, _mm512_and_si512(h_lo, top), 0xCA);
  hi = _mm512_ternarylogic_epi32(low, _mm512_srli_epi16(v, 4), _mm512_and_si512(h_hi, top), 0xCA);
}

// One panel (16 rows at r, stored up to r1) x token t (terms at td, ts) where decode_wide():
// panel_tile<1>'s integers and float operations, so its bits, with a block's 8 steps one
// unrolled stretch of code between two prefetch asks (x86/simd_avx512.h kDecodeRunBytes says
// why that pays on the Zen 5 VM): decode_layers_bench -t 2 read 86.6% and 95.1% of the plain
// read against panel_tile<1>'s 71.5% and 82.2% (stop 39; in L2 the two compute alike). A
// function of its own so the prompt tiles keep their code: unrolling the steps in panel_tile
// for every T took pp128 from 282, 262 to 177, 216 tok/s (stop 38).
void decode_panel(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                  const float* td, const int32_t* ts, int64_t nb, bool prefetch) {
  const auto* a =
      reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
  float* y = g.y + t * g.y_stride + r;
  const __mmask16 m = row_mask(r1 - r);
  __m512 acc = start_rows_x16(g, y, m);
  StreamPrefetcher ahead(panel, prefetch, kPrefetchAhead);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = panel + b * kQ6_Kx16BlockBytes;
    ahead.upto(blk + kQ6_Kx16BlockBytes);
    const int8_t* q = a[b].qs;
    const int32_t* s = ts + 16 * b;
    __m512i sumi = _mm512_setzero_si512();
    unrolled<8>([&](auto chunk) __attribute__((always_inline)) {
      constexpr int c = decltype(chunk)::value;
      const uint8_t* step = blk + q6_kx16_step(c);
      const uint8_t* ql = step + kQ6_Kx16QlInStep;
      const uint8_t* qh = step + kQ6_Kx16QhInStep;
#pragma GCC unroll 2
      for (int half = 0; half < 2; ++half) {
        __m512i plo = _mm512_setzero_si512(), phi = _mm512_setzero_si512();
#pragma GCC unroll 2
        for (int grp = 2 * half; grp < 2 * half + 2; ++grp) {
          __m512i lo, hi;
          codes(ql, qh, grp, lo, hi);
          plo = _mm512_dpbusd_epi32(plo, lo, broadcast4_x16(q + 32 * c + 8 * grp));
          phi = _mm512_dpbusd_epi32(phi, hi, broadcast4_x16(q + 32 * c + 8 * grp + 4));
        }
        const __m512i sc = _mm512_cvtepi8_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(step + 16 * half)));
        const __m512i dot =
            _mm512_sub_epi32(_mm512_add_epi32(plo, phi), _mm512_set1_epi32(s[2 * c + half]));
        sumi = _mm512_add_epi32(sumi, _mm512_mullo_epi32(dot, sc));
        // Each sub-block's product added here, in this order: else GCC 12 reassociates the 16
        // adds, keeps the sub-blocks' sums and scales in flight at once and spills 20 of them
        // a block (the steps' scale loads all rose to the block's start).
        asm("" : "+v"(sumi));
      }
    });
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk)));
    acc = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sumi), _mm512_mul_ps(dw, _mm512_set1_ps(td[b])), acc);
  }
  _mm512_mask_storeu_ps(y, m, acc);
}

// One panel (16 rows at r, stored up to r1) x tokens t .. t + T - 1 (terms of token t at
// td, ts). One token (decode) keeps the low and high columns' products in two chains.
template <int T>
void panel_tile(const GemmArgs& g, const uint8_t* panel, int64_t r, int64_t r1, int64_t t,
                const float* td, const int32_t* ts, int64_t nb, bool prefetch) {
  const BlockQ8_K* a[T];
  __m512 acc[T];
  const __mmask16 m = row_mask(r1 - r);
  for (int j = 0; j < T; ++j) {
    a[j] =
        reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(g.a) + (t + j) * g.a_stride);
    acc[j] = start_rows_x16(g, g.y + (t + j) * g.y_stride + r, m);
  }
  StreamPrefetcher ahead(panel, prefetch, kPrefetchAhead);
  for (int64_t b = 0; b < nb; ++b) {
    const uint8_t* blk = panel + b * kQ6_Kx16BlockBytes;
    // A whole block's lines asked for at once (one ask a step: 79-86% of a plain read against
    // 94-107%, decode_layers_bench -t 1, stop 38; x86/simd_avx512.h kDecodeRunBytes).
    ahead.upto(blk + kQ6_Kx16BlockBytes);
    __m512i sumi[T];
    for (int j = 0; j < T; ++j) sumi[j] = _mm512_setzero_si512();
    for (int c = 0; c < 8; ++c) {
      const uint8_t* step = blk + q6_kx16_step(c);
      const uint8_t* ql = step + kQ6_Kx16QlInStep;
      const uint8_t* qh = step + kQ6_Kx16QhInStep;
#pragma GCC unroll 2
      for (int half = 0; half < 2; ++half) {  // sub-block 2c + half: groups 2 half, 2 half + 1
        const int sb = 2 * c + half;          // its scales at step + 16 half
        __m512i plo[T], phi[T];
        for (int j = 0; j < T; ++j) plo[j] = phi[j] = _mm512_setzero_si512();
#pragma GCC unroll 2
        for (int grp = 2 * half; grp < 2 * half + 2; ++grp) {
          __m512i lo, hi;
          codes(ql, qh, grp, lo, hi);
#pragma GCC unroll 8
          for (int j = 0; j < T; ++j) {
            const int8_t* q = a[j][b].qs + 32 * c + 8 * grp;
            plo[j] = _mm512_dpbusd_epi32(plo[j], lo, broadcast4_x16(q));
            phi[j] = _mm512_dpbusd_epi32(phi[j], hi, broadcast4_x16(q + 4));
          }
        }
        const __m512i sc = _mm512_cvtepi8_epi32(
            _mm_loadu_si128(reinterpret_cast<const __m128i*>(step + 16 * half)));
#pragma GCC unroll 8
        for (int j = 0; j < T; ++j) {
          __m512i dot = _mm512_add_epi32(plo[j], phi[j]);
          dot = _mm512_sub_epi32(dot, _mm512_set1_epi32(ts[16 * (j * nb + b) + sb]));
          sumi[j] = _mm512_add_epi32(sumi[j], _mm512_mullo_epi32(dot, sc));
        }
      }
    }
    const __m512 dw = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(blk)));
#pragma GCC unroll 8
    for (int j = 0; j < T; ++j) {
      const __m512 scale = _mm512_mul_ps(dw, _mm512_set1_ps(td[j * nb + b]));
      acc[j] = _mm512_fmadd_ps(_mm512_cvtepi32_ps(sumi[j]), scale, acc[j]);
    }
  }
  for (int j = 0; j < T; ++j) _mm512_mask_storeu_ps(g.y + (t + j) * g.y_stride + r, m, acc[j]);
}

void gemm_packed_q6_kx16(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  static thread_local TokenTerms terms;
  terms.make(g, t0, t1);
  const int64_t nb = g.n / kQK_K;
  const bool prefetch = t1 - t0 == 1 && decode_prefetch();
  const bool wide = decode_wide();
  avx2::for_each_panel_tile<kQ6_Kx16PanelRows, kTokenTile>(
      g, r0, r1, t0, t1, [&]<int T>(const uint8_t* panel, int64_t r, int64_t t) {
        const int64_t k = (t - t0) * nb;
        if (T == 1 && wide) {
          decode_panel(g, panel, r, r1, t, terms.d() + k, terms.sums32() + 16 * k, nb, prefetch);
        } else {
          panel_tile<T>(g, panel, r, r1, t, terms.d() + k, terms.sums32() + 16 * k, nb, prefetch);
        }
      });
}

}  // namespace

void fill_avx512_packed_q6_k(KernelTable& t) {
  TypeOps::Packed& p = t.types[static_cast<uint32_t>(DType::kQ6_K)].packed;
  p.panel_rows = kQ6_Kx16PanelRows;
  p.panel_bytes = q6_kx16_panel_bytes;
  p.pack_panel = pack_q6_kx16;
  p.gemm = gemm_packed_q6_kx16;
  p.accumulates = true;
}

}  // namespace cohort::kernels
