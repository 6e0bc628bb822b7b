// AVX2 product of packed F16 panels (kernels/packed_layouts.h: 16 rows, a column of the
// panel in one 32-byte load) with f32 activations. The rows sit in the lanes of two 8-float
// vectors, so a token's a[k] is broadcast once against 16 rows and no horizontal sum is left
// at the end.
//
// Decode (one token) streams the panels from memory: several panels at once, each column
// converted (vcvtph2ps) and multiplied as it arrives, with software prefetch ahead. A prompt
// walks a chunk of columns of a panel with a register-blocked tile of 6 tokens x 16 rows (12
// accumulators) per token tile; the first tile converts the chunk to f32 as it goes, into a
// buffer that stays in L1 for the others, so the conversion is paid once per panel chunk
// instead of once per token tile.
//
// Exactness and determinism: every (row, token) pair has ONE float accumulator, starting at
// +0.0 and updated k = 0, 1, ..., n-1 in order with fma(w[k], a[k], acc), w[k] the half
// converted exactly to f32. Both paths do exactly that sequence (the prompt path parks the
// accumulators in memory between chunks, which keeps their bits), so a row's result does not
// depend on its panel's other rows, the token tile, the batch or the split between threads.
#include <algorithm>
#include <array>
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
  // Two columns (one 64-byte line of each panel) per step, one prefetch per panel and line
  // when decode_prefetch().
  const bool ahead = decode_prefetch();
  for (; k + 2 <= g.n; k += 2) {
    if (ahead) {
#pragma GCC unroll 8
      for (int p = 0; p < P; ++p) avx2::prefetch_stream(w[p] + k * kColBytes, 1);
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

// One chunk of a panel: `cols` columns from src (halves), converted to f32 at wf by the first
// token tile that runs on it (kConvert) and read from there by the others.
struct Chunk {
  const uint8_t* src;
  float* wf;
  int64_t cols;
};

// T tokens (activations a[j] at the chunk's first column) x the 16 rows of one chunk. The
// sums start at +0.0 when `in` is null, else continue token j's sums at in + j * in_stride;
// they end at out + j * out_stride, of which only the first `rows` rows are stored (a last
// panel's padding rows never reach y). Converting inside the first tile rather than in a loop
// of its own lets the conversion's loads (from L2 at best: the chunk was only prefetched)
// overlap with that tile's FMAs instead of stalling in front of them.
template <int T, bool kConvert>
inline void prompt_tile(const Chunk& ch, const float* const* a, const float* in, int64_t in_stride,
                        float* out, int64_t out_stride, int64_t rows) {
  __m256 lo[T], hi[T];
#pragma GCC unroll 8
  for (int j = 0; j < T; ++j) {
    lo[j] = in ? _mm256_loadu_ps(in + j * in_stride) : _mm256_setzero_ps();
    hi[j] = in ? _mm256_loadu_ps(in + j * in_stride + 8) : _mm256_setzero_ps();
  }
  float* wf = ch.wf;
#pragma GCC unroll 4
  for (int64_t c = 0; c < ch.cols; ++c) {
    __m256 w_lo, w_hi;
    if constexpr (kConvert) {
      w_lo = load_halves8(ch.src + c * kColBytes);
      w_hi = load_halves8(ch.src + c * kColBytes + 16);
      _mm256_store_ps(wf + c * kF16PanelRows, w_lo);
      _mm256_store_ps(wf + c * kF16PanelRows + 8, w_hi);
    } else {
      w_lo = _mm256_load_ps(wf + c * kF16PanelRows);
      w_hi = _mm256_load_ps(wf + c * kF16PanelRows + 8);
    }
#pragma GCC unroll 8
    for (int j = 0; j < T; ++j) {
      const __m256 ak = _mm256_broadcast_ss(a[j] + c);
      lo[j] = _mm256_fmadd_ps(w_lo, ak, lo[j]);
      hi[j] = _mm256_fmadd_ps(w_hi, ak, hi[j]);
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < T; ++j) store_rows(out + j * out_stride, lo[j], hi[j], rows);
}

// Where one panel's sums come from and go to for a chunk: token i of the block (i counted
// from the block's first token) reads in + i * in_stride (nothing when in is null: the first
// chunk) and writes out + i * out_stride, rows of them.
struct PanelSums {
  const float* in;
  int64_t in_stride;
  float* out;
  int64_t out_stride;
  int64_t rows;
};

// Block tokens [i, i + T) over the chunk: their activations at act + i * act_stride floats.
template <int T, bool kConvert>
void prompt_tokens(const Chunk& ch, const float* act, int64_t act_stride, int64_t i,
                   const PanelSums& s) {
  const float* a[T];
#pragma GCC unroll 8
  for (int j = 0; j < T; ++j) a[j] = act + (i + j) * act_stride;
  prompt_tile<T, kConvert>(ch, a, s.in ? s.in + i * s.in_stride : nullptr, s.in_stride,
                           s.out + i * s.out_stride, s.out_stride, s.rows);
}

using PromptTokensFn = void (*)(const Chunk&, const float*, int64_t, int64_t, const PanelSums&);

// prompt_tokens by [kConvert][token count - 1], counts 1..kPromptTokens.
template <bool kConvert>
constexpr std::array<PromptTokensFn, kPromptTokens> kPromptTiles = {
    prompt_tokens<1, kConvert>, prompt_tokens<2, kConvert>, prompt_tokens<3, kConvert>,
    prompt_tokens<4, kConvert>, prompt_tokens<5, kConvert>, prompt_tokens<6, kConvert>};

// The next tile's token count when `left` tokens remain: full tiles, but 7..9 split in two
// tiles of 3..5 instead of 6 + 1..3, because a tile of 1-2 tokens has too few accumulator
// chains to hide the FMA latency.
inline int tile_tokens(int64_t left) {
  if (left > kPromptTokens && left < kPromptTokens + 4) return static_cast<int>((left + 1) / 2);
  return static_cast<int>(std::min<int64_t>(left, kPromptTokens));
}

// Sums of the panels between chunks, [panel][token][16 rows]: per thread, grown to the
// largest call seen. In y a panel's tokens lie y_stride apart (64 KiB for a 16384-row
// output), which puts all of them in the same few L1 and L2 sets; here they are consecutive
// lines that the tiles walk in order.
float* chunk_sums(int64_t floats) {
  thread_local std::vector<float> storage;
  if (storage.size() < static_cast<size_t>(floats)) storage.resize(static_cast<size_t>(floats));
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

// Tokens [t0, t1) x panels [p_begin, p_end). The first chunk starts every pair's sum at +0.0,
// the last one stores the sums in y (a last panel's padding rows never reach it), and between
// chunks they wait in chunk_sums.
void prompt_block(const GemmArgs& g, int64_t p_begin, int64_t p_end, int64_t r1, int64_t t0,
                  int64_t t1) {
  const int64_t tokens = t1 - t0, panel_floats = tokens * kF16PanelRows;
  float* sums = g.n > kChunkCols ? chunk_sums((p_end - p_begin) * panel_floats) : nullptr;
  const float* act =
      reinterpret_cast<const float*>(static_cast<const uint8_t*>(g.a) + t0 * g.a_stride);
  const auto act_stride = static_cast<int64_t>(g.a_stride / sizeof(float));
  alignas(64) float wf[kChunkCols * kF16PanelRows];
  // Chunks outside, panels inside: a chunk of every token's activations stays in L2 while the
  // panels pass.
  for (int64_t k0 = 0; k0 < g.n; k0 += kChunkCols) {
    const int64_t cols = std::min(kChunkCols, g.n - k0);
    const bool first = k0 == 0, last = k0 + cols == g.n;
    for (int64_t p = p_begin; p < p_end; ++p) {
      const uint8_t* src = static_cast<const uint8_t*>(g.w) + p * g.w_stride + k0 * kColBytes;
      const Chunk chunk{src, wf, cols};
      // The chunk converted next (this chunk of the next panel, else the next chunk of the
      // first) comes from memory: its lines are asked for a few per tile while this chunk's
      // tiles run, which the first tile's conversion otherwise waits for (stop 17, 1B F16
      // pp128, 2 threads: 74-77 tok/s without, 81-83 with).
      const bool next_panel = p + 1 < p_end;
      const uint8_t* next = next_panel ? src + g.w_stride
                                       : static_cast<const uint8_t*>(g.w) + p_begin * g.w_stride +
                                             (k0 + cols) * kColBytes;
      const int64_t next_cols = next_panel ? cols : std::min(kChunkCols, g.n - k0 - cols);
      const int64_t next_lines = (next_cols * kColBytes + 63) / 64;
      int64_t line = 0;
      float* panel_sums = sums ? sums + (p - p_begin) * panel_floats : nullptr;
      const PanelSums s{first ? nullptr : panel_sums, kF16PanelRows,
                        last ? g.y + t0 * g.y_stride + p * kF16PanelRows : panel_sums,
                        last ? g.y_stride : kF16PanelRows,
                        last ? std::min(kF16PanelRows, r1 - p * kF16PanelRows) : kF16PanelRows};
      for (int64_t i = 0; i < tokens;) {
        const int take = tile_tokens(tokens - i);
        line = prefetch_chunk_lines(next, line, kPrefetchLinesPerTile, next_lines);
        (i == 0 ? kPromptTiles<true> : kPromptTiles<false>)[take - 1](chunk, act + k0, act_stride,
                                                                      i, s);
        i += take;
      }
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
