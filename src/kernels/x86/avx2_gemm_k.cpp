// AVX2 batched products (TypeOps::gemm) for Q4_K and Q6_K weights with Q8_K activations,
// the two types of the common Q4_K_M files. A tile of rows x tokens walks the super-blocks
// once: each 32-element chunk of a weight row is decoded once for T tokens
// (quants and the int16 lanes of its sub-block scales), each activation chunk is loaded
// once for R rows, and every (row, token) pair keeps an int32 sum per super-block and a
// float accumulator across them.
//
// Per pair and super-block: sum = int_start + sum_k madd(maddubs(q_k, a_k), scales_k), then
// acc += (d_a d_w) sum (+ for Q4_K: acc += (-d_a dmin_w) sum_j min_j bsum_j). Q6_K's
// stored values are q + 32; int_start = -32 sum_j sc_j bsums_j removes the offset, as in
// the dot product (avx2_vec_dot_k.cpp, whose element order this follows).
//
// Determinism, as avx2_gemm.cpp: a pair's bits do not depend on the tile it falls in or on
// the row and token ranges of the call; they differ from vec_dot's in float summation order
// only. matmul uses the gemm for one token too, so batching never changes a token's bits.
#include "kernels/registry.h"
#include "kernels/x86/k_quants_avx2.h"
#include "kernels/x86/simd_avx2.h"
#include "tensor/quant_blocks.h"

namespace cohort::kernels {
namespace {

using avx2::load256;

// One weight row's current super-block, Q4_K: 8 chunks of 32 elements, chunk k holding
// the low (k even) or high (k odd) nibbles of bytes 32 (k / 2) .. 32 (k / 2) + 31, with
// scale k and min k.
struct RowQ4K {
  using Block = BlockQ4_K;
  static constexpr bool kHasMins = true;
  const BlockQ4_K* b;
  __m128i sm8;  // 8 scales, then 8 mins, as bytes
  __m256i sc;   // the 8 scales as int16, in both 128-bit halves
  float d, dmin;

  void start(const BlockQ4_K* blk) {
    b = blk;
    sm8 = avx2::unpack_scale_min_k4(blk->scales);
    sc = _mm256_broadcastsi128_si256(_mm_cvtepu8_epi16(sm8));
    d = avx2::half_to_f32(blk->d);
    dmin = avx2::half_to_f32(blk->dmin);
  }
  __m256i quants(int k) const {
    const __m256i v = load256(b->qs + 32 * (k / 2));
    return _mm256_and_si256(k % 2 ? _mm256_srli_epi16(v, 4) : v, _mm256_set1_epi8(0xF));
  }
  __m256i scales(int k) const { return avx2::bcast_i16(sc, k); }
  __m256i int_start(const BlockQ8_K&) const { return _mm256_setzero_si256(); }
  // sum_j min_j (bsums[2j] + bsums[2j + 1]) in the low 4 lanes, converted.
  __m256 mins(const BlockQ8_K& a) const {
    return _mm256_cvtepi32_ps(_mm256_zextsi128_si256(avx2::mins_dot_bsums(sm8, a.bsums)));
  }
};

// Q6_K: chunk k = 4h + j covers elements 128h + 32j .. + 31; its low 4 bits are the low
// (j < 2) or high (j >= 2) nibbles of ql[64h + 32 (j % 2) ..], its high 2 bits are bits
// 2j, 2j + 1 of qh[32h ..]; sub-block scales 2k and 2k + 1 (16 elements each).
struct RowQ6K {
  using Block = BlockQ6_K;
  static constexpr bool kHasMins = false;
  const BlockQ6_K* b;
  __m128i sc8;  // 16 int8 scales
  float d, dmin;

  void start(const BlockQ6_K* blk) {
    b = blk;
    sc8 = _mm_loadu_si128(reinterpret_cast<const __m128i*>(blk->scales));
    d = avx2::half_to_f32(blk->d);
    dmin = 0.0f;
  }
  __m256i quants(int k) const {
    const int h = k / 4, j = k % 4;
    const __m256i ql = load256(b->ql + 64 * h + 32 * (j % 2));
    const __m256i qh = load256(b->qh + 32 * h);
    const __m256i lo =
        _mm256_and_si256(j < 2 ? ql : _mm256_srli_epi16(ql, 4), _mm256_set1_epi8(0xF));
    // Bits 2j, 2j + 1 of each qh byte moved to bits 4, 5 (shifts of 16-bit lanes: bits that
    // cross from the neighbour byte are masked off).
    const __m256i hi_bits = j == 0   ? _mm256_slli_epi16(qh, 4)
                            : j == 1 ? _mm256_slli_epi16(qh, 2)
                            : j == 2 ? qh
                                     : _mm256_srli_epi16(qh, 2);
    return _mm256_or_si256(lo, _mm256_and_si256(hi_bits, _mm256_set1_epi8(0x30)));
  }
  __m256i scales(int k) const { return avx2::scale_pair_i16(sc8, 2 * k); }
  __m256i int_start(const BlockQ8_K& a) const {
    const __m256i bias = _mm256_madd_epi16(_mm256_cvtepi8_epi16(sc8), load256(a.bsums));
    return _mm256_sub_epi32(_mm256_setzero_si256(), _mm256_slli_epi32(bias, 5));
  }
  __m256 mins(const BlockQ8_K&) const { return _mm256_setzero_ps(); }
};

template <typename Row, int R, int T>
void tile(const GemmArgs& g, int64_t r, int64_t t) {
  using Block = typename Row::Block;
  const Block* w[R];
  const BlockQ8_K* a[T];
  for (int i = 0; i < R; ++i) {
    w[i] = reinterpret_cast<const Block*>(static_cast<const uint8_t*>(g.w) + (r + i) * g.w_stride);
  }
  for (int j = 0; j < T; ++j) {
    a[j] =
        reinterpret_cast<const BlockQ8_K*>(static_cast<const uint8_t*>(g.a) + (t + j) * g.a_stride);
  }
  __m256 acc[R][T];
  for (int i = 0; i < R; ++i) {
    for (int j = 0; j < T; ++j) acc[i][j] = _mm256_setzero_ps();
  }
  // The same bytes one tile of rows ahead (see avx2_gemm.cpp: decode is bound by how early
  // weight bytes arrive). A prefetch never faults, so the last tile may point past the end.
  const size_t ahead = R * g.w_stride;
  const int64_t nb = g.n / kQK_K;
  for (int64_t s = 0; s < nb; ++s) {
    Row row[R];
    __m256i sum[R][T];
#pragma GCC unroll 4
    for (int i = 0; i < R; ++i) {
      const char* p = reinterpret_cast<const char*>(&w[i][s]);
      for (size_t off = 0; off < sizeof(Block); off += 64) {
        _mm_prefetch(p + off + ahead, _MM_HINT_T0);
      }
      row[i].start(&w[i][s]);
#pragma GCC unroll 4
      for (int j = 0; j < T; ++j) sum[i][j] = row[i].int_start(a[j][s]);
    }
#pragma GCC unroll 8
    for (int k = 0; k < 8; ++k) {
      __m256i q[R], sc[R];
#pragma GCC unroll 4
      for (int i = 0; i < R; ++i) {
        q[i] = row[i].quants(k);
        sc[i] = row[i].scales(k);
      }
#pragma GCC unroll 4
      for (int j = 0; j < T; ++j) {
        const __m256i av = load256(a[j][s].qs + 32 * k);
#pragma GCC unroll 4
        for (int i = 0; i < R; ++i) {
          const __m256i p = _mm256_madd_epi16(_mm256_maddubs_epi16(q[i], av), sc[i]);
          sum[i][j] = _mm256_add_epi32(sum[i][j], p);
        }
      }
    }
#pragma GCC unroll 4
    for (int i = 0; i < R; ++i) {
#pragma GCC unroll 4
      for (int j = 0; j < T; ++j) {
        acc[i][j] = _mm256_fmadd_ps(_mm256_set1_ps(a[j][s].d * row[i].d),
                                    _mm256_cvtepi32_ps(sum[i][j]), acc[i][j]);
        if constexpr (Row::kHasMins) {
          acc[i][j] = _mm256_fmadd_ps(_mm256_set1_ps(-a[j][s].d * row[i].dmin),
                                      row[i].mins(a[j][s]), acc[i][j]);
        }
      }
    }
  }
  for (int j = 0; j < T; ++j) {
    for (int i = 0; i < R; ++i) g.y[(t + j) * g.y_stride + r + i] = avx2::hsum(acc[i][j]);
  }
}

// Rows [r0, r1) x tokens [t0, t1) in tiles of 1 row x 4 tokens; the token edge takes the
// 1 x 1 instance, which computes each pair exactly as the full tile does. 1 x 4 keeps 4
// float accumulators, 4 int32 sums, one decoded chunk with its scales and one activation
// vector in registers; in cache (kernels_bench gemm, 64 x 2048 x 64, one thread, load 11-15)
// it beat 2 x 2, 3 x 2, 2 x 3, 1 x 5 and 1 x 6 (96 GFLOP/s per CPU second for both types,
// against 71 / 64 for a vec_dot per pair).
template <typename Row>
void gemm(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  constexpr int T = 4;
  for (int64_t r = r0; r < r1; ++r) {
    int64_t t = t0;
    for (; t + T <= t1; t += T) tile<Row, 1, T>(g, r, t);
    for (; t < t1; ++t) tile<Row, 1, 1>(g, r, t);
  }
}

}  // namespace

void fill_avx2_gemm_k(KernelTable& t) {
  t.types[static_cast<uint32_t>(DType::kQ4_K)].gemm = gemm<RowQ4K>;
  t.types[static_cast<uint32_t>(DType::kQ6_K)].gemm = gemm<RowQ6K>;
}

}  // namespace cohort::kernels
