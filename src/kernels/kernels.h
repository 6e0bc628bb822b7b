// The one kernel table. Every op has a scalar reference (kernels/ref/, the specification)
// and, where it pays, SIMD variants (kernels/x86/ for AVX2+FMA+F16C) chosen once at start
// from CPU detection. Kernels do not allocate, lock, log or fail: callers have checked
// shapes already. Threading is the caller's: kernels take a range of rows or heads.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "tensor/dtype.h"

namespace cohort::kernels {

// A block of a matrix product: y[t * y_stride + r] = dot(weight row r, activations of
// token t) over n elements, for the rows and tokens a gemm call is given. Weights are in
// the TypeOps' own type, activations already converted to its vec_dot_type. Non-owning.
struct GemmArgs {
  int64_t n = 0;            // elements per row: a multiple of the weight type's block size
  const void* w = nullptr;  // row r starts at w + r * w_stride bytes
  size_t w_stride = 0;
  const void* a = nullptr;  // token t starts at a + t * a_stride bytes
  size_t a_stride = 0;
  float* y = nullptr;  // y[t * y_stride + r]; y_stride in floats
  int64_t y_stride = 0;
  // Non-zero: the bytes at a are the same in every call that carries this version (matmul
  // gives each product a fresh one), so a gemm may reuse what it derived from them in an
  // earlier call on the same thread (per-token scales and sums), as a product cut into many
  // chunks calls it once per chunk. Zero: nothing is reused.
  uint64_t a_version = 0;
  // A packed gemm whose type has Packed::accumulates: each (row, token) sum starts from the
  // value y holds instead of zero and goes on with the same operations in the same order, so
  // a product over columns [0, n) taken as slices [0, c) then [c, n) (the second with
  // accumulate) gives the bits of one call over [0, n).
  bool accumulate = false;
  // Optional: the activations of tokens [0, a_layout_tokens) as the type's
  // Packed::prompt_layout laid them out for its prompt tiles (each product's threads lay them
  // out once together instead of each its own copy); a packed gemm over exactly those tokens
  // reads them from here.
  const float* a_layout = nullptr;
  int64_t a_layout_tokens = 0;
};

// How one weight type is multiplied with activations. A matvec converts the activation
// vector once to vec_dot_type (from_float of that type), then calls vec_dot per row.
struct TypeOps {
  DType vec_dot_type = DType::kF32;
  // n floats -> n elements of this type (n a multiple of the block size).
  void (*from_float)(const float* x, void* y, int64_t n) = nullptr;
  // n elements of this type -> n floats.
  void (*to_float)(const void* x, float* y, int64_t n) = nullptr;
  // sum_i w[i] * a[i] over n elements: w in this type, a in vec_dot_type.
  float (*vec_dot)(int64_t n, const void* w, const void* a) = nullptr;
  // Optional (null when the type has none): the batched product for several tokens, rows
  // [r0, r1) x tokens [t0, t1) of g. A SIMD gemm decodes each weight block once for a tile
  // of tokens and reads each activation block once for a tile of rows. The reference gemm
  // is vec_dot of the reference table per (row, token) pair: the specification. Each
  // result depends only on its own row and token, never on the ranges or the tiling, so
  // every thread split gives the same bits.
  void (*gemm)(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) = nullptr;

  // Optional (panel_rows 0 when the type has none in this table): a packed layout, made
  // once at load, in which panels of panel_rows consecutive rows are interleaved so that
  // one vector load holds the same columns of every row of a panel (rows in SIMD lanes).
  // Each row's result still depends only on its own weights and token, so a row gets the
  // same bits in any panel, any split of panels between threads and any batch of tokens;
  // they differ from gemm's (another summation order). Each type's kernel file states its
  // panel's byte layout.
  struct Packed {
    int64_t panel_rows = 0;
    // Bytes of one panel of rows of n elements (n a multiple of the block size).
    size_t (*panel_bytes)(int64_t n) = nullptr;
    // Packs n_rows <= panel_rows rows (row i at src + i * src_stride, n elements each) into
    // one panel at dst; rows n_rows.. of the panel are zero weights.
    void (*pack_panel)(const void* src, size_t src_stride, int64_t n_rows, int64_t n,
                       void* dst) = nullptr;
    // As gemm, with g.w the packed matrix and g.w_stride its panel_bytes(n): rows [r0, r1)
    // x tokens [t0, t1), r0 a multiple of panel_rows (r1 need not be: rows past r1 are
    // computed and not stored).
    void (*gemm)(const GemmArgs& g, int64_t r0, int64_t r1, int64_t t0, int64_t t1) = nullptr;
    // Whether gemm honours GemmArgs::accumulate (each row's sum one float accumulator, updated
    // block by block in column order): then a wide matrix packs as column slices
    // (kernels/matmul.h WeightMatrix::slice_cols).
    bool accumulates = false;
    // Optional (null when gemm reads the activations as they are): bytes of the layout of
    // `tokens` tokens of n elements, and share ith of nth of laying out tokens [0, tokens) of
    // g's activations (g.a, g.a_stride, g.n) into dst (the shares together write all of it
    // once, each its own bytes), for GemmArgs::a_layout.
    size_t (*prompt_layout_bytes)(int64_t n, int64_t tokens) = nullptr;
    void (*prompt_layout)(const GemmArgs& g, int64_t tokens, void* dst, int ith, int nth) = nullptr;
  } packed;
};

enum class RopeStyle {
  kNormal,  // rotate adjacent pairs (x[2i], x[2i+1]): llama, stories
  kNeox,    // rotate halves (x[i], x[i + n_rot/2]): qwen2, qwen3
};

// Single-query attention over a KV cache, grouped-query: query head h reads KV head
// h / (n_heads / n_kv_heads).
struct AttentionArgs {
  const float* q = nullptr;  // [n_heads][head_dim]
  // Element (t, kv_head, d) at index t*kv_stride + kv_head*head_dim + d (keys: unless
  // keys_blocked, below).
  const void* k = nullptr;
  const void* v = nullptr;  // same indexing as k
  // kF32, kF16 or kQ8_0. For kQ8_0 element index i is value i % 32 of block i / 32 (a
  // block: f16 scale, 32 int8), so head_dim and kv_stride are multiples of 32.
  DType kv_type = DType::kF16;
  int64_t n_kv = 0;  // positions 0..n_kv-1 are attended (causality is the caller's)
  // Optional: query head h attends positions 0..n_kv_of_head[h]-1 only (each in 1..n_kv).
  // Lets the rows of one prompt chunk (the same KV head at successive positions) share one
  // pass over the cache, each with its own causal limit. A head's result has the same bits
  // as a call for that head alone with n_kv = n_kv_of_head[h].
  const int64_t* n_kv_of_head = nullptr;
  int64_t n_heads = 0;
  int64_t n_kv_heads = 0;
  int64_t head_dim = 0;
  int64_t kv_stride = 0;  // elements between consecutive positions
  float scale = 1.0f;     // applied to q.k, usually 1/sqrt(head_dim)
  float* out = nullptr;   // [n_heads][head_dim]
  // Blocked keys (head_dim a multiple of kKeyBlockDimStep): where keys_blocked, key element
  // (t, kv_head, d) of an F16 or F32 cache is at index kv_head * k_head_stride + (t /
  // kKeyBlock) * kKeyBlock * head_dim + d * kKeyBlock + t % kKeyBlock, and k_head_stride is a
  // multiple of kKeyBlock * head_dim. A block holds its positions side by side for each dim, so
  // that vector lanes hold positions and a score is one chain of multiply-adds with no sum across
  // lanes. A Q8_0 cache's blocked keys hold the same blocks of positions, each block's 32-dim
  // groups one after another and each group its positions' scales before their int8 dim by dim
  // (q8_key_scale_offset, q8_key_value_offset). The values keep the layout above. The slots of a
  // last block's positions at or past n_kv are read (finite: zero will do) and their scores
  // discarded.
  bool keys_blocked = false;
  int64_t k_head_stride = 0;
};

// Positions in one block of blocked keys (AttentionArgs::keys_blocked).
constexpr int64_t kKeyBlock = 64;
// Blocked keys need a head dim that is a multiple of this (the AVX-512 walk's vector width).
constexpr int64_t kKeyBlockDimStep = 16;
// The largest head dim whose blocked keys the SIMD kernels read in their tiled walk; past it
// they take a path that reads a value at a time.
constexpr int64_t kKeyBlockMaxHeadDim = 256;

// Index of key element (t, kv_head, d) in AttentionArgs::k, in either layout.
inline int64_t key_index(const AttentionArgs& a, int64_t t, int64_t kv_head, int64_t d) {
  if (!a.keys_blocked) return t * a.kv_stride + kv_head * a.head_dim + d;
  return kv_head * a.k_head_stride + (t / kKeyBlock) * kKeyBlock * a.head_dim + d * kKeyBlock +
         t % kKeyBlock;
}

// Blocked Q8_0 keys (AttentionArgs::keys_blocked, kv_type kQ8_0): a block of kKeyBlock
// positions is head_dim / 32 groups of kQ8KeyGroupBytes, one for each 32 dims; a group is its
// positions' f16 scales (kKeyBlock x 2 bytes), then for each of its 32 dims the positions'
// int8 (kKeyBlock bytes, one cache line). Key element (t, d) is the scale at
// q8_key_scale_offset times the int8 at q8_key_value_offset, byte offsets from the first
// block of its KV head (kv_head * k_head_stride elements, i.e. k_head_stride / 32 * 34 bytes,
// after AttentionArgs::k). The bytes are those of the row layout: 34 for each 32 elements.
constexpr int64_t kQ8KeyGroupBytes = kKeyBlock * 34;
inline int64_t q8_key_scale_offset(int64_t head_dim, int64_t t, int64_t d) {
  return t / kKeyBlock * (head_dim / 32 * kQ8KeyGroupBytes) + d / 32 * kQ8KeyGroupBytes +
         2 * (t % kKeyBlock);
}
inline int64_t q8_key_value_offset(int64_t head_dim, int64_t t, int64_t d) {
  return t / kKeyBlock * (head_dim / 32 * kQ8KeyGroupBytes) + d / 32 * kQ8KeyGroupBytes +
         2 * kKeyBlock + d % 32 * kKeyBlock + t % kKeyBlock;
}

// Writes position t's key (head_dim floats, head_dim a multiple of 32) into one KV head's
// blocked Q8_0 keys at head: quantized as quantize_row_q8_0 quantizes a row, each scale and
// int8 where q8_key_scale_offset and q8_key_value_offset say.
void store_q8_blocked_key(const float* key, int64_t head_dim, int64_t t, void* head);
// Key element (t, kv_head, d) of a's blocked Q8_0 keys as a float: its scale times its int8
// (one value at a time: the reference's and the generic paths' read).
float q8_blocked_key(const AttentionArgs& a, int64_t t, int64_t kv_head, int64_t d);

struct KernelTable {
  const char* isa = "ref";
  std::array<TypeOps, kDTypeTableSize> types{};

  // y = x / rms(x) * w, rms(x) = sqrt(mean(x^2) + eps). y may alias x.
  void (*rmsnorm)(const float* x, const float* w, float* y, int64_t n, float eps) = nullptr;
  // Rotates n_heads consecutive heads of head_dim floats in place; only the first n_rot
  // dims of each head rotate. cos/sin hold n_rot/2 values for this position.
  void (*rope)(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos,
               const float* sin, RopeStyle style) = nullptr;
  // In place: x = exp(x - max) / sum. n >= 1.
  void (*softmax)(float* x, int64_t n) = nullptr;
  // out = silu(gate) * up, silu(g) = g / (1 + exp(-g)). out may alias gate or up.
  void (*silu_mul)(const float* gate, const float* up, float* out, int64_t n) = nullptr;
  // out = a + b. out may alias a or b.
  void (*add)(const float* a, const float* b, float* out, int64_t n) = nullptr;
  // Computes heads [head_begin, head_end) of args.out. scratch holds >= args.n_kv floats.
  void (*attention)(const AttentionArgs& args, int64_t head_begin, int64_t head_end,
                    float* scratch) = nullptr;

  // Machine probes for the roofline of `cohort bench` (models never call these).
  // The sum of x[0..n), reading each float once in order: a memory-bandwidth loop.
  float (*read_sum)(const float* x, int64_t n) = nullptr;
  // iters rounds of independent multiply-add chains held in registers, as fast as this ISA
  // issues them. Returns the floating-point operations done (2 per multiply-add lane); the
  // chains' final values (bounded, never denormal) are summed into *sink to keep the work.
  double (*fma_loop)(int64_t iters, float* sink) = nullptr;
};

// The table for this CPU (best ISA available), built on first use.
const KernelTable& best();
// The scalar reference table: the specification every variant is tested against.
const KernelTable& reference();
// Tables for every ISA this CPU can run, reference first (for tests and benchmarks): ref,
// avx2, avx2_vnni or avx2_vnni_evex (the avx2 table with vpdpbusd products, in the VEX or the
// EVEX form: kernels/x86/simd_avx2.h Dot), avx512_vnni (avx2_vnni_evex with 512-bit packed
// tiles where they pay, in their own layouts); null where the CPU lacks the ISA.
std::array<const KernelTable*, 4> available();
// The table named `isa` among available()'s, or null; then *names (when given) lists the names
// this CPU runs, comma-separated.
const KernelTable* table_named(std::string_view isa, std::string* names = nullptr);

// Whether the packed one-token (decode) products take two panels per pass or one
// (kernels/x86/packed_tiles.h for_each_panel_pair): the results are the same bits either way,
// only the order of the reads changes. By default on where the CPU is Intel's (measured faster
// there), off elsewhere (one sequential stream: faster on AMD's Zen 4); tests and `cohort bench
// --decode-pairs` set it.
bool decode_in_pairs();
void set_decode_in_pairs(bool on);

// Whether the packed one-token products (and the roofline's read probe, which reads the way
// they do) ask for their weight lines ahead of the loads with prefetch instructions, or leave
// it to the hardware prefetchers: the same bits either way. By default on where the CPU is
// Intel's (the Xeon VM of stop 18 read 15.0 GB/s on one thread with plain loads, 18.7 with
// prefetches) or AMD's family 17h (the Zen 1 EPYC VM of stop 26: 1B tg64 on 2 threads +11-28%
// on all five packed types), off elsewhere (the Zen 4 VM of stops 19-20: 36 against 32, and
// the Q4_K decode tile 24 GB/s against 18-19); tests and `cohort bench --decode-prefetch` set
// it.
// On AMD's family 1Ah (Zen 5) too: there, 4096 bytes ahead, the one-token Q4_K tile read 97%
// of a plain read against 66% without (decode_layers_bench, stop 32).
bool decode_prefetch();
void set_decode_prefetch(bool on);

// Whether the AVX-512 table's one-token Q4_0, Q8_0 and F16 tiles (and its read probe) work in
// 512-bit registers, a run of blocks (~4 KiB) between two prefetch asks
// (x86/simd_avx512.h for_each_block_in_runs), or as the 256-bit tiles and the AVX2 probe do
// (in 256-bit registers, in the same runs since stop 46); and whether its one-token Q6_K tile
// unrolls a super-block's steps (a 3360-byte block of 16 rows between two asks): the same bits
// either way. By default on where the CPU is AMD's family 1Ah (Zen 5, full-width 512-bit units):
// there, one thread from memory against the old read probe, Q4_0 read 83% of it in halves and 125%
// wide, Q8_0 88% and 117%, F16 92% and 118% (decode_layers_bench, stop 38). Off elsewhere: on the
// Zen 4 VM of stop 29 (512-bit operations in two halves) the Q4_0 halves read 94-99% of a plain
// read, 512-bit registers 90-94%. Tests and `cohort bench --decode-width` set it.
bool decode_wide();
void set_decode_wide(bool on);

// How many bytes ahead of its reads a one-token tile (but Q6_K's, two of its blocks) and the
// read probe ask for lines where decode_prefetch(): 4096 on AMD's family 1Ah, 1024 elsewhere.
// Stop 17 swept 1024 bytes into L1 against 4096, 6144 and 8192 into L2 on the Xeon VM (every
// setting within 5% of the others); on the Zen 5 VM of stop 32, 1024 bytes ahead cost q4_0 4
// points of a plain read and q8_0 7 against no prefetching, 4096 bytes gained q4_0 4 and f16
// 4 (decode_layers_bench -t 2). Tests and `cohort bench --decode-prefetch-bytes` set it.
int64_t decode_prefetch_bytes();
void set_decode_prefetch_bytes(int64_t bytes);

// Whether the threads of a matrix product (and of the model's attention over KV heads)
// balance their work (ThreadPool::run_stealing_runs over chunks of panels, or of heads: one
// that finishes its share takes the back half of another's) or each runs one fixed share
// (ThreadPool::split). The same bits either way: every output row is computed the same
// whichever thread computes it. On by default; `cohort bench --split` sets it.
bool split_stealing();
void set_split_stealing(bool on);

}  // namespace cohort::kernels
