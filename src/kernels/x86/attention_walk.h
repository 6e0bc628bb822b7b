// The single-query attention walk (KernelTable::attention) that the AVX2 and AVX-512 kernels
// (x86/avx2_ops.cpp, x86/avx512_attention.cpp) share, written once over a lane policy L
// (8 or 16 float lanes) that brings the vector operations and the one step that differs in
// shape between the widths: how a quad's scores are formed (L::quad_scores).
//
// The walk: tiles of up to 64 positions outside, KV heads inside, so the cache is read in
// address order; every query head of a KV head (a GQA group, or the rows of a prompt chunk)
// in one pass over its keys and values; online softmax per head. Per tile and KV head:
//   - the heads' scores, a quad (4 query heads) at a time (L::quad_scores). Where
//     L::kRotatedScores, the quad's queries are laid out once per call rotated
//     (rotate_quad_queries): lane group g of vector 4c + r holds 4 dims of head (g + r) mod
//     4, so one key vector meets all four heads in 4 FMAs with no broadcast, and a KV head
//     with one quad (a decode step's GQA group) reads its keys straight from the cache.
//     Otherwise the queries stay as they are and the keys are always staged as floats.
//     With several quads (a prompt's rows) the keys are staged once for all of them;
//   - per head, the running max m and sum l (exp over a vector of lanes), the accumulator
//     (the out row itself) rescaled by exp(m_old - m_new) when the max grows;
//   - out += sum_t p_t v_t for up to 4 heads, each V vector converted once for the quad (for
//     a run of whole quads that take the whole tile, a prompt's rows, six heads: pv_run).
// At the end out is divided by l.
//
// Blocked keys (kernels.h AttentionArgs::keys_blocked, the model's caches): every quad reads
// the tile's key blocks in place (L::block_scores: lanes hold positions, one FMA chain a score
// over the head dim, no sums across lanes; Q8_0 keys one chain a 32-dim group, times the
// group's scale), the queries as they are; with several quads (a prompt's rows) F16 and Q8_0
// blocks are converted to floats once per tile first (F16 to the F32 layout, Q8_0 to
// Kv::kQ8Floats: its scales and int8 as floats, scored as the block in place is).
//
// Exactness: L::quad_scores adds a (head, position) score's products in an order fixed by
// the head dim alone, whatever the other heads of its quad, its slot there and whether the
// keys are read in place or staged; so a head with a limit (AttentionArgs::n_kv_of_head) gets
// the bits of a call for it alone, as the contract asks (tests/kernels/ops_test.cpp
// PerHeadLimitsEqualSingleHeadCalls). The two widths add in different orders, so their bits
// differ; both are tested against the scalar reference.
//
// The lane policy L (a struct of static members, internal to each file):
//   V, kLanes, kPvVectors (V accumulators per head in pv: dims of a pv pass / kLanes),
//   kRotatedScores (the query layout quad_scores takes, above);
//   zero, set1, load (aligned), loadu, store, storeu, add, sub, mul, max, fmadd(a, b, c) =
//   a * b + c, exp, reduce_max, reduce_add;
//   load_kv<kKind, C>(row, d, V out[C]): values d .. d + C * kLanes of a cache row as floats;
//   i8_to_ps(p), f16_to_ps(p): kLanes int8 or f16 at p as floats;
//   block_scores<kKind, NQ>(q, kblk, hd, cnt, scale, s, s_stride, ask): the scores of NQ heads
//   against positions [0, cnt) of a key block;
//   quad_scores<kKind>(q, keys, key_stride, hd, cnt8, scale, n, s, s_stride, ask): s[i *
//   s_stride + j] = scale * q_i . k_j for the quad's n heads and positions j < cnt8 (a
//   multiple of 8) of key rows key_stride bytes apart, asking for rows ahead as ask says.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>

#include "kernels/kernels.h"
#include "kernels/x86/attention_cache.h"
#include "kernels/x86/grow_array.h"

namespace cohort::kernels {
namespace {

constexpr int64_t kWalkMaxTile = 64;       // positions per tile
constexpr int64_t kWalkKBufFloats = 8192;  // a tile's keys as floats: 32 KiB
constexpr int64_t kWalkMaxHeads = 256;     // query heads in one sweep over the cache
constexpr int64_t kQuad = 4;               // query heads whose scores share the FMAs
constexpr int64_t kPositionBlock = 8;      // positions whose scores finish together

// What to ask for while reading key row j of a tile in place (none where v is null): value
// row j of the tile, and key row j of the next tile where j < next_cnt (ask_for_rows). Rows
// of values are v_stride_b bytes apart, of keys k_stride_b (row_b: blocked keys, whose tile is
// one run of bytes), and the next tile's keys next_b bytes after this one's.
struct TileAsk {
  const char* v = nullptr;
  const char* k = nullptr;
  int64_t v_stride_b = 0, k_stride_b = 0, row_b = 0, next_b = 0, next_cnt = 0;
  void rows(int64_t j) const {
    if (v == nullptr) return;
    const char* krow = k + j * k_stride_b;
    ask_for_rows(v + j * v_stride_b, j < next_cnt ? krow + next_b : nullptr, row_b);
  }
};

// Heads [h, h + n) of q (hd floats each, n <= 4) laid out for quad_scores at dst (4 * hd
// floats): vector 4c + r, lane m = q_i[kLanes * c + m] of head i = (m / 4 + r) mod 4, zero
// for i >= n.
template <class L>
void rotate_quad_queries(const float* q, int64_t h, int64_t n, int64_t hd, float* dst) {
  constexpr int64_t w = L::kLanes;
  for (int64_t c = 0; c < hd / w; ++c) {
    for (int64_t r = 0; r < kQuad; ++r) {
      for (int64_t g = 0; g < w / 4; ++g) {
        const int64_t i = (g + r) % kQuad;
        float* d = dst + w * (4 * c + r) + 4 * g;
        if (i >= n) {
          std::fill(d, d + 4, 0.0f);
        } else {
          std::copy_n(q + (h + i) * hd + w * c + 4 * g, 4, d);
        }
      }
    }
  }
}

// Online-softmax update of one head for one tile: s holds its scores (-inf past its
// positions, up to cnt_v, a multiple of kLanes) and becomes exp(s - m_new); the running max
// m and the running sum's lanes l (lane i: the sum of the exps that lane i of a tile's vectors
// held, added across lanes once, at the end) are updated and the accumulator row (out, hd
// floats) rescaled when the max grows. Keeping the sum in lanes spares a sum across lanes per
// head and tile (a decode step's perf samples put ~10% of the walk's own on that sum, stop 53);
// the lanes' sums are one head's alone, so its bits do not depend on the heads beside it.
template <class L>
inline void online_softmax(float* s, int64_t cnt_v, float& m, typename L::V& l, float* out,
                           int64_t hd, bool first) {
  using V = typename L::V;
  constexpr int64_t w = L::kLanes;
  V vmx = L::set1(-std::numeric_limits<float>::infinity());
  for (int64_t j = 0; j < cnt_v; j += w) vmx = L::max(vmx, L::load(s + j));
  const float m_new = std::max(m, L::reduce_max(vmx));
  const V vm = L::set1(m_new);
  V vsum = L::zero();
  for (int64_t j = 0; j < cnt_v; j += w) {
    const V e = L::exp(L::sub(L::load(s + j), vm));
    L::store(s + j, e);
    vsum = L::add(vsum, e);
  }
  if (m_new > m) {
    const float corr = std::exp(m - m_new);  // 0 on the first tile (m = -inf)
    const V vc = L::set1(corr);
    l = L::mul(l, vc);
    if (!first) {
      for (int64_t d = 0; d < hd; d += w) L::storeu(out + d, L::mul(L::loadu(out + d), vc));
    }
    m = m_new;
  }
  l = L::add(l, vsum);
}

// out_i[d0 .. d0 + C * kLanes) += sum_{t < cnt} p_i[t] v_t for NQ heads (up to a quad, or six
// for pv_run; out rows hd apart, p rows p_stride apart); v_t at v + t * stride_b.
template <class L, int NQ, int C, Kv kKind>
inline void pv_block(const char* v, int64_t stride_b, int64_t cnt, int64_t d0, const float* p,
                     int64_t p_stride, float* out, int64_t hd) {
  using V = typename L::V;
  constexpr int64_t w = L::kLanes;
  V acc[NQ][C];
#pragma GCC unroll 8
  for (int i = 0; i < NQ; ++i) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) acc[i][c] = L::loadu(out + i * hd + d0 + w * c);
  }
  for (int64_t t = 0; t < cnt; ++t) {
    V vv[C];
    L::template load_kv<kKind, C>(v + t * stride_b, d0, vv);
#pragma GCC unroll 8
    for (int i = 0; i < NQ; ++i) {
      const V b = L::set1(p[i * p_stride + t]);
#pragma GCC unroll 4
      for (int c = 0; c < C; ++c) acc[i][c] = L::fmadd(b, vv[c], acc[i][c]);
    }
  }
#pragma GCC unroll 8
  for (int i = 0; i < NQ; ++i) {
#pragma GCC unroll 4
    for (int c = 0; c < C; ++c) L::storeu(out + i * hd + d0 + w * c, acc[i][c]);
  }
}

// pv_block over all hd dims (a multiple of kLanes): kPvVectors vectors at a time, then
// halves of that.
template <class L, int NQ, Kv kKind>
void pv_quad(const char* v, int64_t stride_b, int64_t cnt, const float* p, int64_t p_stride,
             float* out, int64_t hd) {
  constexpr int C = L::kPvVectors;
  static_assert(C == 2 || C == 4);
  constexpr int64_t w = L::kLanes;
  int64_t d0 = 0;
  for (; d0 + C * w <= hd; d0 += C * w) {
    pv_block<L, NQ, C, kKind>(v, stride_b, cnt, d0, p, p_stride, out, hd);
  }
  if constexpr (C == 4) {
    if (d0 + 2 * w <= hd) {
      pv_block<L, NQ, 2, kKind>(v, stride_b, cnt, d0, p, p_stride, out, hd);
      d0 += 2 * w;
    }
  }
  if (d0 < hd) pv_block<L, NQ, 1, kKind>(v, stride_b, cnt, d0, p, p_stride, out, hd);
}

template <class L, Kv kKind>
void pv_heads(int64_t n, const char* v, int64_t stride_b, int64_t cnt, const float* p,
              int64_t p_stride, float* out, int64_t hd) {
  switch (n) {
    case 4:
      pv_quad<L, 4, kKind>(v, stride_b, cnt, p, p_stride, out, hd);
      break;
    case 3:
      pv_quad<L, 3, kKind>(v, stride_b, cnt, p, p_stride, out, hd);
      break;
    case 2:
      pv_quad<L, 2, kKind>(v, stride_b, cnt, p, p_stride, out, hd);
      break;
    default:
      pv_quad<L, 1, kKind>(v, stride_b, cnt, p, p_stride, out, hd);
      break;
  }
}

// pv_heads for `heads` consecutive heads of one KV head that all take cnt positions (a run of
// whole quads of a prompt's rows, off the causal diagonal: their rows of p p_stride apart, of
// out hd apart): six heads a pass, then the rest (2 or 4) as pv_heads. Six heads' accumulators
// and a pass's value vectors and broadcast still fit the registers (29 of 32 on AVX-512, 15 of
// 16 on AVX2), and a value vector, loaded and converted once a position, meets six heads
// instead of four. Each (head, dim) still adds its products in position order, so the bits are
// pv_heads'. kernels_bench attention_prompt_*/4096, one thread, six interleaved pairs with a
// throwaway switch (stop 53): avx2 F16 76.2-80.8 -> 80.3-92.2 GFLOP/s (5 of 6 pairs up), Q8_0
// 76.4-85.7 -> 81.6-89.8 (4 of 6); avx512_vnni F16 164.6-178.3 -> 173.0-179.6 (5 of 6), Q8_0
// even (3 of 6).
template <class L, Kv kKind>
void pv_run(int64_t heads, const char* v, int64_t stride_b, int64_t cnt, const float* p,
            int64_t p_stride, float* out, int64_t hd) {
  constexpr int kSix = 6;
  int64_t j = 0;
  for (; j + kSix <= heads; j += kSix) {
    pv_quad<L, kSix, kKind>(v, stride_b, cnt, p + j * p_stride, p_stride, out + j * hd, hd);
  }
  if (j < heads) {
    pv_heads<L, kKind>(heads - j, v, stride_b, cnt, p + j * p_stride, p_stride, out + j * hd, hd);
  }
}

// A key row (krow) as floats at dst (hd floats), C vectors at a time.
template <class L, Kv kKind, int C>
inline void stage_row(const char* krow, int64_t hd, float* dst) {
  using V = typename L::V;
  constexpr int64_t w = L::kLanes;
  for (int64_t d = 0; d < hd; d += C * w) {
    V x[C];
    L::template load_kv<kKind, C>(krow, d, x);
#pragma GCC unroll 2
    for (int c = 0; c < C; ++c) L::store(dst + d + c * w, x[c]);
  }
}

// L::block_scores for a quad of n <= 4 heads (the head count a template argument).
template <class L, Kv kKind>
void quad_block_scores(const float* q, const char* kblk, int64_t hd, int64_t cnt, float scale,
                       int64_t n, float* s, int64_t s_stride, const TileAsk& ask) {
  switch (n) {
    case 4:
      L::template block_scores<kKind, 4>(q, kblk, hd, cnt, scale, s, s_stride, ask);
      break;
    case 3:
      L::template block_scores<kKind, 3>(q, kblk, hd, cnt, scale, s, s_stride, ask);
      break;
    case 2:
      L::template block_scores<kKind, 2>(q, kblk, hd, cnt, scale, s, s_stride, ask);
      break;
    default:
      L::template block_scores<kKind, 1>(q, kblk, hd, cnt, scale, s, s_stride, ask);
      break;
  }
}

// A quad: heads [h, h + n) of one KV head, n <= 4, their queries laid out for
// L::quad_scores at q.
struct Quad {
  int64_t h = 0, n = 0;
  const float* q = nullptr;
};

// Heads [hb, he), he - hb <= kWalkMaxHeads; hd a multiple of kLanes (of 32 for kQ8), at
// most kWalkKBufFloats / kLanes (a tile of one vector of positions). qr_store and
// quad_store: per-thread storage for the call's quads.
template <class L, Kv kKind, bool kBlocked>
void attend_heads(const AttentionArgs& a, int64_t hb, int64_t he, GrowArray<float>& qr_store,
                  GrowArray<Quad>& quad_store) {
  using V = typename L::V;
  constexpr int64_t w = L::kLanes;
  constexpr float kNegInf = -std::numeric_limits<float>::infinity();
  const int64_t hd = a.head_dim;
  const int64_t group = a.n_heads / a.n_kv_heads;
  // A tile is whole vectors of positions; with blocked keys, one block.
  static_assert(kKeyBlock == kWalkMaxTile);
  const int64_t tile = kBlocked ? kKeyBlock : std::min(kWalkMaxTile, kWalkKBufFloats / hd) / w * w;
  const int64_t stride_b = kv_bytes<kKind>(a.kv_stride);
  const int64_t row_b = kv_bytes<kKind>(hd);  // one position of one KV head
  // A tile's keys as floats; staged Q8_0 blocks (kQ8Floats, at most kWalkKBufFloats values:
  // blocks_staged below) take a float a scale too, one a 32-dim group and position.
  alignas(64) float kbuf[kWalkKBufFloats / kQ8Block * (kQ8Block + 1)];
  // Q8_0 values staged as floats for a tile's several quads (below); one float elsewhere.
  constexpr bool kStageValues = kKind == Kv::kQ8;
  alignas(64) float vbuf[kStageValues ? kWalkKBufFloats : 1];
  alignas(64) float s[kWalkMaxHeads * kWalkMaxTile];
  float m[kWalkMaxHeads];
  V l[kWalkMaxHeads];  // each head's running sum, in lanes (online_softmax)
  for (int64_t i = hb * hd; i < he * hd; ++i) a.out[i] = 0.0f;
  for (int64_t h = 0; h < he - hb; ++h) {
    m[h] = kNegInf;
    l[h] = L::zero();
  }

  // The quads, group by group, and their queries laid out.
  const int64_t max_quads = (he - hb) / kQuad + (he - hb) / group + 2;
  Quad* quads = quad_store.reserve(static_cast<size_t>(max_quads));
  float* qr = qr_store.reserve(static_cast<size_t>(max_quads * kQuad * hd));
  int64_t n_quads = 0;
  for (int64_t gh0 = hb; gh0 < he;) {
    const int64_t gh1 = std::min(he, (gh0 / group + 1) * group);
    for (int64_t h = gh0; h < gh1; h += kQuad, ++n_quads) {
      Quad& qd = quads[n_quads];
      qd.h = h;
      qd.n = std::min(kQuad, gh1 - h);
      float* dst = qr + n_quads * kQuad * hd;
      if constexpr (L::kRotatedScores && !kBlocked) {
        rotate_quad_queries<L>(a.q, h, qd.n, hd, dst);
      } else {
        std::copy_n(a.q + h * hd, qd.n * hd, dst);
      }
      qd.q = dst;
    }
    gh0 = gh1;
  }

  for (int64_t t0 = 0; t0 < a.n_kv; t0 += tile) {
    const int64_t cnt = std::min(tile, a.n_kv - t0);
    const int64_t cnt8 = (cnt + kPositionBlock - 1) / kPositionBlock * kPositionBlock;
    const int64_t cnt_v = (cnt + w - 1) / w * w;
    const int64_t next_cnt = std::min(tile, a.n_kv - t0 - tile);  // <= 0 on the last tile
    for (int64_t qi = 0; qi < n_quads;) {
      const int64_t gh0 = quads[qi].h;
      const int64_t kvh = gh0 / group;
      const int64_t row0_b = kv_bytes<kKind>(t0 * a.kv_stride + kvh * hd);
      const char* v_tile = static_cast<const char*>(a.v) + row0_b;
      // Blocked keys: the tile's blocks are one run (t0 is a multiple of the block).
      const char* k_tile = static_cast<const char*>(a.k) +
                           (kBlocked ? kv_bytes<kKind>(kvh * a.k_head_stride + t0 * hd) : row0_b);

      int64_t qe = qi;
      while (qe < n_quads && quads[qe].h / group == kvh) ++qe;
      // With rotated scores one quad (a decode step's GQA group) reads the keys in place, a
      // block of 8 at a time and asking for the rows ahead as it goes, but for a last part
      // block, which is staged with the zeros after it; otherwise the keys are staged as
      // floats.
      // Blocked keys are always read in place (staged_from = cnt: nothing staged).
      const bool in_place = kBlocked || (L::kRotatedScores && qe - qi == 1);
      const int64_t staged_from =
          kBlocked ? cnt : (in_place ? cnt / kPositionBlock * kPositionBlock : 0);
      TileAsk ask;
      if (kBlocked) {
        ask = {v_tile, k_tile, stride_b, row_b, row_b, tile * row_b, next_cnt};
      } else if (in_place) {
        ask = {v_tile, k_tile, stride_b, stride_b, row_b, tile * stride_b, next_cnt};
      }

      // Stage K (from staged_from) as floats; meanwhile ask for those rows' V and next K.
      for (int64_t j = staged_from; j < cnt; ++j) {
        const char* krow = k_tile + j * stride_b;
        const char* vrow = v_tile + j * stride_b;
        ask_for_rows(vrow, j < next_cnt ? krow + tile * stride_b : nullptr, row_b);
        // Two vectors at a time where the head dim allows (a Q8_0 block's scale read once for
        // them).
        if (hd % (2 * w) == 0) {
          stage_row<L, kKind, 2>(krow, hd, kbuf + (j - staged_from) * hd);
        } else {
          stage_row<L, kKind, 1>(krow, hd, kbuf + (j - staged_from) * hd);
        }
      }
      // Rows up to the block of 8 are scored too (and masked below): zeros, not stale data.
      if constexpr (!kBlocked) {
        std::fill(kbuf + (cnt - staged_from) * hd, kbuf + (cnt8 - staged_from) * hd, 0.0f);
      }
      // Blocked F16 or Q8_0 keys that several quads read (a prompt's rows) are converted
      // once, to floats in the F32 blocked layout: the same values in the same order, so the
      // same bits. (Head dims up to kWalkKBufFloats / kKeyBlock: a block fits kbuf.)
      const bool blocks_staged =
          kBlocked && kKind != Kv::kF32 && qe - qi > 1 && kKeyBlock * hd <= kWalkKBufFloats;
      if (blocks_staged) {
        if constexpr (kKind == Kv::kQ8) {
          // Group by group: its kKeyBlock scales, then its dims' rows of kKeyBlock values.
          for (int64_t d0 = 0; d0 < hd; d0 += kQ8Block) {
            const char* src = q8_group<Kv::kQ8>(k_tile, d0);
            char* dst = q8_group<Kv::kQ8Floats>(reinterpret_cast<char*>(kbuf), d0);
            for (int64_t j = 0; j < kKeyBlock; j += w) {
              L::store(reinterpret_cast<float*>(dst) + j, L::f16_to_ps(src + 2 * j));
            }
            for (int64_t d = d0; d < d0 + kQ8Block; ++d) {
              for (int64_t j = 0; j < kKeyBlock; j += w) {
                L::store(reinterpret_cast<float*>(q8_group_values<Kv::kQ8Floats>(dst, d, j)),
                         L::i8_to_ps(q8_group_values<Kv::kQ8>(src, d, j)));
              }
            }
          }
        } else {
          for (int64_t i = 0; i < kKeyBlock * hd; i += w) {
            V x[1];
            L::template load_kv<kKind, 1>(k_tile, i, x);
            L::store(kbuf + i, x[0]);
          }
        }
      }

      // The quads of this KV head: scores, then each head's softmax update. qcnt[k - qi]:
      // the positions of the tile that quad k's heads reach (0: none, nothing to add).
      int64_t qcnt[kWalkMaxHeads / kQuad + 2];
      for (int64_t k = qi; k < qe; ++k) {
        const Quad& qd = quads[k];
        float* sq = s + (qd.h - gh0) * tile;
        int64_t& reach = qcnt[k - qi];
        reach = cnt;
        if (a.n_kv_of_head) {
          const int64_t most =
              *std::max_element(a.n_kv_of_head + qd.h, a.n_kv_of_head + qd.h + qd.n);
          reach = std::clamp<int64_t>(most - t0, 0, cnt);
        }
        if (reach == 0) continue;  // every head of the quad is past its positions
        // Positions [0, staged_from) in place (rotated scores only; else staged_from is 0),
        // the rest from the staged rows.
        if constexpr (kBlocked) {
          // The first quad of the KV head asks for the rows ahead.
          const TileAsk& quad_ask = k == qi ? ask : TileAsk{};
          if (blocks_staged) {
            constexpr Kv kStaged = kKind == Kv::kQ8 ? Kv::kQ8Floats : Kv::kF32;
            quad_block_scores<L, kStaged>(qd.q, reinterpret_cast<const char*>(kbuf), hd, cnt,
                                          a.scale, qd.n, sq, tile, quad_ask);
          } else {
            quad_block_scores<L, kKind>(qd.q, k_tile, hd, cnt, a.scale, qd.n, sq, tile, quad_ask);
          }
        } else {
          if constexpr (L::kRotatedScores) {
            L::template quad_scores<kKind>(qd.q, k_tile, stride_b, hd, staged_from, a.scale, qd.n,
                                           sq, tile, ask);
          }
          L::template quad_scores<Kv::kF32>(qd.q, reinterpret_cast<const char*>(kbuf), hd * 4, hd,
                                            cnt8 - staged_from, a.scale, qd.n, sq + staged_from,
                                            tile, TileAsk{});
        }
        for (int64_t i = 0; i < qd.n; ++i) {
          const int64_t h = qd.h + i;
          float* sh = sq + i * tile;
          // A head with its own limit keeps only its positions (-inf: weight 0); one past
          // its limit in this whole tile adds nothing.
          const int64_t own = a.n_kv_of_head ? std::min(cnt, a.n_kv_of_head[h] - t0) : cnt;
          if (own <= 0) {
            std::fill(sh, sh + cnt_v, 0.0f);
            continue;
          }
          std::fill(sh + own, sh + cnt_v, kNegInf);
          online_softmax<L>(sh, cnt_v, m[h - hb], l[h - hb], a.out + h * hd, hd, t0 == 0);
        }
      }
      // Then the quads' weighted sums of values (after all their scores: a prompt's attention
      // took 4-6% more of the products' time with each quad's sum right after its scores,
      // stop 36).
      // Q8_0 values that several quads read (a prompt's rows) are converted once, to floats
      // in rows of hd: the same values in the same order, so the same bits. (A prompt at depth
      // 16384 with a Q8_0 cache: pp128 85.6-94.9 -> 93.9-100.0 tok/s; F16 values, whose
      // conversion is one instruction, lost 6-8% so, and are read in place: stop 42.)
      bool values_staged = false;
      if constexpr (kStageValues) {
        values_staged = qe - qi > 1 && cnt * hd <= kWalkKBufFloats;
        for (int64_t j = 0; values_staged && j < cnt; ++j) {
          if (hd % (2 * w) == 0) {
            stage_row<L, kKind, 2>(v_tile + j * stride_b, hd, vbuf + j * hd);
          } else {
            stage_row<L, kKind, 1>(v_tile + j * stride_b, hd, vbuf + j * hd);
          }
        }
      }
      for (int64_t k = qi; k < qe; ++k) {
        const Quad& qd = quads[k];
        const int64_t reach = qcnt[k - qi];
        if (reach == 0) continue;
        float* out = a.out + qd.h * hd;
        const float* p = s + (qd.h - gh0) * tile;
        // Whole quads that take the whole tile, their heads consecutive: together (pv_run).
        int64_t e = k;
        while (e < qe && quads[e].n == kQuad && qcnt[e - qi] == cnt &&
               quads[e].h == qd.h + (e - k) * kQuad) {
          ++e;
        }
        if (e - k >= 2) {
          if (values_staged) {
            pv_run<L, Kv::kF32>((e - k) * kQuad, reinterpret_cast<const char*>(vbuf), hd * 4, cnt,
                                p, tile, out, hd);
          } else {
            pv_run<L, kKind>((e - k) * kQuad, v_tile, stride_b, cnt, p, tile, out, hd);
          }
          k = e - 1;
          continue;
        }
        if (values_staged) {
          pv_heads<L, Kv::kF32>(qd.n, reinterpret_cast<const char*>(vbuf), hd * 4, reach, p, tile,
                                out, hd);
        } else {
          pv_heads<L, kKind>(qd.n, v_tile, stride_b, reach, p, tile, out, hd);
        }
      }
      qi = qe;
    }
  }

  for (int64_t h = hb; h < he; ++h) {
    const V vinv = L::set1(1.0f / L::reduce_add(l[h - hb]));
    float* oh = a.out + h * hd;
    for (int64_t d = 0; d < hd; d += w) L::storeu(oh + d, L::mul(L::loadu(oh + d), vinv));
  }
}

// Heads [head_begin, head_end) by the walk, kWalkMaxHeads at a time (the same preconditions
// as attend_heads).
template <class L, Kv kKind>
void walk_attention(const AttentionArgs& a, int64_t head_begin, int64_t head_end) {
  thread_local GrowArray<float> qr_store;
  thread_local GrowArray<Quad> quad_store;
  for (int64_t hb = head_begin; hb < head_end; hb += kWalkMaxHeads) {
    const int64_t he = std::min(head_end, hb + kWalkMaxHeads);
    if (a.keys_blocked) {
      attend_heads<L, kKind, true>(a, hb, he, qr_store, quad_store);
      continue;
    }
    attend_heads<L, kKind, false>(a, hb, he, qr_store, quad_store);
  }
}

}  // namespace
}  // namespace cohort::kernels
