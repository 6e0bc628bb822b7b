// AVX2 product of packed F16 panels (kernels/packed_layouts.h: 16 rows, a column of the
// panel in one 32-byte load) with f32 activations. The rows sit in the lanes of two 8-float
// vectors, so a token's a[k] is broadcast once against 16 rows and no horizontal sum is left
// at the end.
//
// Decode (one token) streams the panels from memory: several panels at once, each column
// converted (vcvtph2ps) and multiplied as it arrives, with software prefetch ahead. A prompt
// converts a chunk of columns of a panel to f32 once, into a buffer that stays in L1, and a
// register-blocked tile of 6 tokens x 16 rows (12 accumulators) walks it for every token
// tile, so the conversion is paid once per panel chunk instead of once per token tile.
//
// Exactness and determinism: every (row, token) pair has ONE float accumulator, starting at
// +0.0 and updated k = 0, 1, ..., n-1 in order with fma(w[k], a[k], acc), w[k] the half
// converted exactly to f32. Both paths do exactly that sequence (the prompt path parks the
// accumulators in memory between chunks, which keeps their bits), so a row's result does not
// depend on its panel's other rows, the token tile, the batch or the split between threads.
#include <algorithm>
#include <cstring>
#include <vector>

#include "kernels/packed_layouts.h"
#include "kernels/registry.h"
#include "kernels/x86/packed_tiles.h"
#include "kernels/x86/simd_avx2.h"

namespace cohort::kernels {
namespace {

constexpr int64_t kColBytes = kF16PanelRows * sizeof(uint16_t);  // one column of a panel

// Panels the decode tile multiplies at once: 2 accumulator chains each, so 4 panels keep 8
// FMAs in flight against the FMA latency.
constexpr int kDecodePanels = 4;

// Columns of a panel the prompt path converts at once: 256 x 16 floats = 16 KiB, which leaves
// room in a 48 KiB L1 for the 6 activation streams of a tile.
constexpr int64_t kChunkCols = 256;

// Tokens of the prompt tile: 12 accumulators + 2 weight vectors + 1 broadcast in 16 registers.
constexpr int kPromptTokens = 6;

// Tokens the prompt path takes through the weights at once: a chunk of their activations
// (256 KiB) stays in L2. Longer prompts pass over the weights once per block.
constexpr int64_t kTokenBlock = 256;

inline __m256 load_halves8(const uint8_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

// Stores the 16 rows held in lo/hi at y (rows [r, r1) of a panel starting at r).
inline void store_rows(float* y, __m256 lo, __m256 hi, int64_t rows) {
  if (rows == kF16PanelRows) {
    _mm256_storeu_ps(y, lo);
    _mm256_storeu_ps(y + 8, hi);
    return;
  }
  alignas(32) float lanes[kF16PanelRows];
  _mm256_store_ps(lanes, lo);
  _mm256_store_ps(lanes + 8, hi);
  std::copy(lanes, lanes + rows, y);
}

// Column c of P panels (w[p]) times the token's a[c], into each panel's 16 row sums.
template <int P>
inline void decode_column(const uint8_t* const* w, const float* a, int64_t c, __m256* lo,
                          __m256* hi) {
  const __m256 ac = _mm256_broadcast_ss(a + c);
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) {
    lo[p] = _mm256_fmadd_ps(load_halves8(w[p] + c * kColBytes), ac, lo[p]);
    hi[p] = _mm256_fmadd_ps(load_halves8(w[p] + c * kColBytes + 16), ac, hi[p]);
  }
}

// Token t x the P panels from panel index p0 on; rows from r1 on are not stored.
template <int P>
void decode_tile(const GemmArgs& g, int64_t p0, int64_t r1, int64_t t) {
  const uint8_t* w[P];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) w[p] = static_cast<const uint8_t*>(g.w) + (p0 + p) * g.w_stride;
  const float* a =
      reinterpret_cast<const float*>(static_cast<const uint8_t*>(g.a) + t * g.a_stride);
  __m256 lo[P], hi[P];
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) lo[p] = hi[p] = _mm256_setzero_ps();
  int64_t k = 0;
  // Two columns (one 64-byte line of each panel) per step, one prefetch per panel and line.
  for (; k + 2 <= g.n; k += 2) {
#pragma GCC unroll 8
    for (int p = 0; p < P; ++p) {
      avx2::prefetch_stream(w[p] + k * kColBytes, 1);
    }
    decode_column<P>(w, a, k, lo, hi);
    decode_column<P>(w, a, k + 1, lo, hi);
  }
  if (k < g.n) decode_column<P>(w, a, k, lo, hi);
#pragma GCC unroll 8
  for (int p = 0; p < P; ++p) {
    const int64_t r = (p0 + p) * kF16PanelRows;
    store_rows(g.y + t * g.y_stride + r, lo[p], hi[p], std::min(kF16PanelRows, r1 - r));
  }
}

void gemm_decode(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t) {
  const int64_t p_end = (r1 + kF16PanelRows - 1) / kF16PanelRows;
  int64_t p = r0 / kF16PanelRows;
  for (; p + kDecodePanels <= p_end; p += kDecodePanels) decode_tile<kDecodePanels>(g, p, r1, t);
  switch (p_end - p) {
    case 3:
      decode_tile<3>(g, p, r1, t);
      break;
    case 2:
      decode_tile<2>(g, p, r1, t);
      break;
    case 1:
      decode_tile<1>(g, p, r1, t);
      break;
    default:
      break;
  }
}

// Where a panel's accumulators live between chunks: token t's 16 rows at at + t * stride
// floats (t counted from the call's first token).
struct PanelAccumulators {
  float* at;
  int64_t stride;
};

// T tokens (activations a[j] at the chunk's first column) x the 16 rows of one converted
// chunk wf of `cols` columns, continuing the sums at acc (token j's rows at acc + j * stride).
template <int T>
inline void prompt_tile(const float* wf, int64_t cols, const float* const* a, float* acc,
                        int64_t stride) {
  __m256 lo[T], hi[T];
#pragma GCC unroll 8
  for (int j = 0; j < T; ++j) {
    lo[j] = _mm256_loadu_ps(acc + j * stride);
    hi[j] = _mm256_loadu_ps(acc + j * stride + 8);
  }
#pragma GCC unroll 4
  for (int64_t c = 0; c < cols; ++c) {
    const __m256 w_lo = _mm256_load_ps(wf + c * kF16PanelRows);
    const __m256 w_hi = _mm256_load_ps(wf + c * kF16PanelRows + 8);
#pragma GCC unroll 8
    for (int j = 0; j < T; ++j) {
      const __m256 ak = _mm256_broadcast_ss(a[j] + c);
      lo[j] = _mm256_fmadd_ps(w_lo, ak, lo[j]);
      hi[j] = _mm256_fmadd_ps(w_hi, ak, hi[j]);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < T; ++j) {
    _mm256_storeu_ps(acc + j * stride, lo[j]);
    _mm256_storeu_ps(acc + j * stride + 8, hi[j]);
  }
}

// Tokens [t, t + T) of the call (first token t0) over the chunk at column k0.
template <int T>
inline void prompt_tokens(const GemmArgs& g, const float* wf, int64_t k0, int64_t cols, int64_t t,
                          int64_t t0, PanelAccumulators acc) {
  const float* a[T];
#pragma GCC unroll 8
  for (int j = 0; j < T; ++j) {
    a[j] = reinterpret_cast<const float*>(static_cast<const uint8_t*>(g.a) + (t + j) * g.a_stride) +
           k0;
  }
  prompt_tile<T>(wf, cols, a, acc.at + (t - t0) * acc.stride, acc.stride);
}

// As prompt_tokens<count>, count in 1..kPromptTokens.
inline void prompt_tokens(int count, const GemmArgs& g, const float* wf, int64_t k0, int64_t cols,
                          int64_t t, int64_t t0, PanelAccumulators acc) {
  switch (count) {
    case 6:
      prompt_tokens<6>(g, wf, k0, cols, t, t0, acc);
      break;
    case 5:
      prompt_tokens<5>(g, wf, k0, cols, t, t0, acc);
      break;
    case 4:
      prompt_tokens<4>(g, wf, k0, cols, t, t0, acc);
      break;
    case 3:
      prompt_tokens<3>(g, wf, k0, cols, t, t0, acc);
      break;
    case 2:
      prompt_tokens<2>(g, wf, k0, cols, t, t0, acc);
      break;
    default:
      prompt_tokens<1>(g, wf, k0, cols, t, t0, acc);
      break;
  }
}

// The next tile's token count when `left` tokens remain: full tiles, but 7..9 split in two
// tiles of 3..5 instead of 6 + 1..3, because a tile of 1-2 tokens has too few accumulator
// chains to hide the FMA latency.
inline int tile_tokens(int64_t left) {
  if (left > kPromptTokens && left < kPromptTokens + 4) return static_cast<int>((left + 1) / 2);
  return static_cast<int>(std::min<int64_t>(left, kPromptTokens));
}

// Accumulators of a last panel that the matrix does not fill (its padding rows must not reach
// y): [token][16 rows], zeroed, per thread and grown to the largest call seen.
float* partial_panel_accumulators(int64_t tokens) {
  thread_local std::vector<float> storage;
  const auto floats = static_cast<size_t>(tokens * kF16PanelRows);
  if (storage.size() < floats) storage.resize(floats);
  std::fill(storage.begin(), storage.begin() + static_cast<std::ptrdiff_t>(floats), 0.0f);
  return storage.data();
}

// Lines of the next chunk's weights asked for per token tile (a 256-column chunk is 128 lines
// and a 128-token prompt runs 22 tiles per chunk, so the whole chunk is on its way by the 16th).
constexpr int kPrefetchLinesPerTile = 8;

// Asks for lines [line, line + count) of the `lines` of the chunk at p into L2 (not L1, which
// the tiles' activations stream through); returns the next line to ask for.
inline int64_t prefetch_chunk_lines(const uint8_t* p, int64_t line, int64_t count, int64_t lines) {
  for (const int64_t end = std::min(line + count, lines); line < end; ++line) {
    _mm_prefetch(reinterpret_cast<const char*>(p) + 64 * line, _MM_HINT_T1);
  }
  return line;
}

// Tokens [t0, t1) x panels [p_begin, p_end). Full panels sum straight in y (zeroed first: +0.0
// starts every pair's sum); a partial last panel sums in a side buffer copied out at the end.
void prompt_block(const GemmArgs& g, int64_t p_begin, int64_t p_end, int64_t r1, int64_t t0,
                  int64_t t1) {
  const int64_t r0 = p_begin * kF16PanelRows;
  const bool partial = p_end * kF16PanelRows > r1;
  const int64_t full_end = partial ? p_end - 1 : p_end;
  for (int64_t t = t0; t < t1; ++t) {
    std::fill(g.y + t * g.y_stride + r0, g.y + t * g.y_stride + full_end * kF16PanelRows, 0.0f);
  }
  float* side = partial ? partial_panel_accumulators(t1 - t0) : nullptr;
  alignas(64) float wf[kChunkCols * kF16PanelRows];
  // Chunks outside, panels inside: a chunk of every token's activations stays in L2 while the
  // panels pass.
  for (int64_t k0 = 0; k0 < g.n; k0 += kChunkCols) {
    const int64_t cols = std::min(kChunkCols, g.n - k0);
    for (int64_t p = p_begin; p < p_end; ++p) {
      const uint8_t* src = static_cast<const uint8_t*>(g.w) + p * g.w_stride + k0 * kColBytes;
      for (int64_t c = 0; c < cols; ++c) {
        _mm256_store_ps(wf + c * kF16PanelRows, load_halves8(src + c * kColBytes));
        _mm256_store_ps(wf + c * kF16PanelRows + 8, load_halves8(src + c * kColBytes + 16));
      }
      // The chunk converted next (this chunk of the next panel, else the next chunk of the
      // first) comes from memory: its lines are asked for a few per tile while this chunk's
      // tiles run, which the conversion above otherwise waited for (1B F16 pp128, 2 threads:
      // 74-77 tok/s without, 81-83 with).
      const bool next_panel = p + 1 < p_end;
      const uint8_t* next = next_panel ? src + g.w_stride
                                       : static_cast<const uint8_t*>(g.w) + p_begin * g.w_stride +
                                             (k0 + cols) * kColBytes;
      const int64_t next_cols = next_panel ? cols : std::min(kChunkCols, g.n - k0 - cols);
      const int64_t next_lines = (next_cols * kColBytes + 63) / 64;
      int64_t line = 0;
      const PanelAccumulators acc =
          p < full_end ? PanelAccumulators{g.y + t0 * g.y_stride + p * kF16PanelRows, g.y_stride}
                       : PanelAccumulators{side, kF16PanelRows};
      for (int64_t t = t0; t < t1;) {
        const int take = tile_tokens(t1 - t);
        line = prefetch_chunk_lines(next, line, kPrefetchLinesPerTile, next_lines);
        prompt_tokens(take, g, wf, k0, cols, t, t0, acc);
        t += take;
      }
    }
  }
  if (partial) {
    const int64_t r = full_end * kF16PanelRows;
    for (int64_t t = t0; t < t1; ++t) {
      const float* sums = side + (t - t0) * kF16PanelRows;
      std::copy(sums, sums + (r1 - r), g.y + t * g.y_stride + r);
    }
  }
}

void gemm_prompt(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  const int64_t p_begin = r0 / kF16PanelRows, p_end = (r1 + kF16PanelRows - 1) / kF16PanelRows;
  for (int64_t t = t0; t < t1; t += kTokenBlock) {
    prompt_block(g, p_begin, p_end, r1, t, std::min(t + kTokenBlock, t1));
  }
}

void gemm_packed_f16(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) {
  if (t1 - t0 == 1) {
    gemm_decode(g, r0, r1, t0);
  } else if (t1 > t0) {
    gemm_prompt(g, r0, r1, t0, t1);
  }
}

}  // namespace

void fill_avx2_packed_f16(KernelTable& t) {
  TypeOps::Packed& p = t.types[static_cast<uint32_t>(DType::kF16)].packed;
  p.panel_rows = kF16PanelRows;
  p.panel_bytes = f16x16_panel_bytes;
  p.pack_panel = pack_f16x16;
  p.gemm = gemm_packed_f16;
}

}  // namespace cohort::kernels
