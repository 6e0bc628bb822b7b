// Microbenchmarks of the kernel table: one row-times-vector dot per weight type (the decode
// inner loop), activation quantization, attention over a long F16 or Q8_0 cache (a decode
// step's and a prompt's) for every ISA this CPU runs, and the batched prefill product (gemm)
// against one vec_dot per (row, token) pair. Bytes/s counts weight (or cache) bytes read, to
// compare with the machine's memory bandwidth; a prompt's attention counts GFLOP/s.
//   build/release/bench/kernels_bench --benchmark_filter=vec_dot
#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "core/fp16.h"
#include "core/huge_page_buffer.h"
#include "core/rng.h"
#include "kernels/kernels.h"
#include "tensor/quantize.h"

namespace cohort {
namespace {

// A weight matrix of `rows` rows of 4096 elements: bigger than the caches when rows is large.
void bm_vec_dot(benchmark::State& state, const kernels::KernelTable* kt, DType type) {
  const int64_t cols = 4096, rows = state.range(0);
  const kernels::TypeOps& ops = kt->types[static_cast<uint32_t>(type)];
  const size_t rb = row_bytes(type, cols);
  Rng rng(1);
  std::vector<float> row(cols);
  std::vector<uint8_t> w(rb * rows);
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : row) v = rng.normal();
    quantize_row(type, row.data(), w.data() + r * rb, cols);
  }
  for (float& v : row) v = rng.normal();
  std::vector<uint8_t> act(row_bytes(ops.vec_dot_type, cols));
  kt->types[static_cast<uint32_t>(ops.vec_dot_type)].from_float(row.data(), act.data(), cols);
  float sink = 0;
  for (auto _ : state) {
    for (int64_t r = 0; r < rows; ++r) sink += ops.vec_dot(cols, w.data() + r * rb, act.data());
    benchmark::DoNotOptimize(sink);
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(w.size()));
}

// One decode step of the 1B shape's attention (32 query heads over 8 KV heads of 64) over
// n_kv cached positions of type (kF16 or kQ8_0), position-major.
void bm_attention(benchmark::State& state, const kernels::KernelTable* kt, DType type) {
  const int64_t n_kv = state.range(0), n_heads = 32, n_kv_heads = 8, hd = 64;
  Rng rng(2);
  std::vector<float> q(n_heads * hd), out(n_heads * hd), scratch(n_kv);
  std::vector<float> kf(n_kv * n_kv_heads * hd), vf(kf.size());
  for (float& x : q) x = rng.normal();
  for (float& x : kf) x = rng.normal();
  for (float& x : vf) x = rng.normal();
  const int64_t n = static_cast<int64_t>(kf.size());
  std::vector<uint8_t> k(row_bytes(type, n)), v(k.size());
  quantize_row(type, kf.data(), k.data(), n);
  quantize_row(type, vf.data(), v.data(), n);
  kernels::AttentionArgs a;
  a.q = q.data();
  a.k = k.data();
  a.v = v.data();
  a.kv_type = type;
  a.n_kv = n_kv;
  a.n_heads = n_heads;
  a.n_kv_heads = n_kv_heads;
  a.head_dim = hd;
  a.kv_stride = n_kv_heads * hd;
  a.scale = 0.125f;
  a.out = out.data();
  for (auto _ : state) {
    kt->attention(a, 0, n_heads, scratch.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(2 * k.size()));
}

// `heads` KV heads' caches of n_kv positions each (keys then values, head_bytes apart in k and
// v), laid out as the model lays them (model/kv_cache.h): F16 and Q8_0 keys blocked
// (AttentionArgs::keys_blocked) when n_kv is a multiple of a key block, the values in rows;
// in huge pages, so that a long cache comes from memory, not L3. Sets a's cache fields (one
// KV head a call, its positions contiguous) but for k and v.
struct ModelCache {
  HugePageBuffer k, v;
  size_t head_bytes = 0;
};
bool fill_model_cache(benchmark::State& state, DType type, int64_t n_kv, int64_t heads, Rng& rng,
                      kernels::AttentionArgs& a, ModelCache& c) {
  const int64_t hd = 64, head_elems = n_kv * hd;
  std::vector<float> one(head_elems);
  c.head_bytes = row_bytes(type, head_elems);
  const bool blocked =
      (type == DType::kF16 || type == DType::kQ8_0) && n_kv % kernels::kKeyBlock == 0;
  Result<HugePageBuffer> kb = HugePageBuffer::allocate(c.head_bytes * heads);
  Result<HugePageBuffer> vb = HugePageBuffer::allocate(c.head_bytes * heads);
  if (!kb.is_ok() || !vb.is_ok()) {
    state.SkipWithError("no memory for the cache");
    return false;
  }
  c.k = std::move(*kb);
  c.v = std::move(*vb);
  a.keys_blocked = blocked;
  a.k_head_stride = head_elems;
  a.kv_type = type;
  a.n_kv = n_kv;
  a.n_kv_heads = 1;
  a.head_dim = hd;
  a.kv_stride = hd;
  a.scale = 0.125f;
  std::vector<float> blocks(one.size());
  for (size_t h = 0; h < static_cast<size_t>(heads); ++h) {
    uint8_t* k = c.k.data() + h * c.head_bytes;
    for (float& x : one) x = rng.normal();
    if (blocked && type == DType::kQ8_0) {  // each position's key where the kernels read it
      for (int64_t t = 0; t < n_kv; ++t) {
        kernels::store_q8_blocked_key(&one[static_cast<size_t>(t * hd)], hd, t, k);
      }
    } else if (blocked) {  // each key element where the kernels read it
      for (int64_t t = 0; t < n_kv; ++t) {
        for (int64_t d = 0; d < hd; ++d) {
          blocks[static_cast<size_t>(kernels::key_index(a, t, 0, d))] =
              one[static_cast<size_t>(t * hd + d)];
        }
      }
    }
    if (!blocked || type != DType::kQ8_0) {
      quantize_row(type, blocked ? blocks.data() : one.data(), k, head_elems);
    }
    for (float& x : one) x = rng.normal();
    quantize_row(type, one.data(), c.v.data() + h * c.head_bytes, head_elems);
  }
  return true;
}

// The same step as the model lays its cache out and calls the kernel (model/transformer.cpp,
// kv_cache.h): one call per KV head with its 4 query heads, over `layers` layers' caches in
// turn, so that from 4096 positions on the cache comes from memory, not L3.
void bm_attention_model(benchmark::State& state, const kernels::KernelTable* kt, DType type) {
  const int64_t n_kv = state.range(0), layers = state.range(1), group = 4, n_kv_heads = 8;
  const int64_t hd = 64;
  Rng rng(3);
  std::vector<float> q(group * n_kv_heads * hd), out(q.size()), scratch(n_kv);
  for (float& x : q) x = rng.normal();
  kernels::AttentionArgs a;
  ModelCache c;
  if (!fill_model_cache(state, type, n_kv, n_kv_heads * layers, rng, a, c)) return;
  a.n_heads = group;
  const size_t head_bytes = c.head_bytes;
  uint8_t* k = c.k.data();
  uint8_t* v = c.v.data();
  for (auto _ : state) {
    for (int64_t h = 0; h < n_kv_heads * layers; ++h) {
      a.k = k + h * head_bytes;
      a.v = v + h * head_bytes;
      a.q = q.data() + (h % n_kv_heads) * group * hd;
      a.out = out.data() + (h % n_kv_heads) * group * hd;
      kt->attention(a, 0, group, scratch.data());
    }
    benchmark::DoNotOptimize(out.data());
  }
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(2 * c.k.size()));
}

// A prompt's attention as the model calls it (model/transformer.cpp): the last `rows` rows of
// a cache of n_kv positions, the 4 query heads of one KV head each, in one call (the rows as
// heads, each with its causal limit). GFLOP/s counts 4 FLOP a (row, head, position, dim): a
// score's and a value's multiply-add.
void bm_attention_prompt(benchmark::State& state, const kernels::KernelTable* kt, DType type) {
  const int64_t n_kv = state.range(0), rows = 128, group = 4, hd = 64;
  Rng rng(5);
  std::vector<float> q(rows * group * hd), out(q.size()), scratch(n_kv);
  for (float& x : q) x = rng.normal();
  std::vector<int64_t> limits(static_cast<size_t>(rows * group));
  double flop = 0;
  for (int64_t i = 0; i < rows; ++i) {
    const int64_t limit = n_kv - rows + i + 1;  // row i's causal limit
    for (int64_t g = 0; g < group; ++g) limits[i * group + g] = limit;
    flop += 4.0 * static_cast<double>(group * limit * hd);
  }
  kernels::AttentionArgs a;
  ModelCache c;
  if (!fill_model_cache(state, type, n_kv, 1, rng, a, c)) return;
  a.k = c.k.data();
  a.v = c.v.data();
  a.q = q.data();
  a.out = out.data();
  a.n_heads = rows * group;
  a.n_kv_of_head = limits.data();
  for (auto _ : state) {
    kt->attention(a, 0, a.n_heads, scratch.data());
    benchmark::DoNotOptimize(out.data());
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(flop * static_cast<double>(state.iterations()),
                         benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
}

// How bm_gemm multiplies: the type's gemm, a vec_dot per (row, token) as matmul did before
// gemm, or the packed gemm on the weights packed first (TypeOps::Packed).
enum class GemmPath { kGemm, kPerPair, kPacked };

// A product on one thread. Counts 2 FLOP per multiply-add, and the weight bytes it reads
// (the file's layout: the packed one is the same size but for padding). Arguments: rows,
// columns, tokens. 64 x 2048 x 64 keeps the weights in L2 (compute alone); 256 x 8192 x
// 128 is one thread's share of a 1B model's FFN down projection for a 128-token prompt
// (4 MiB of F16 weights, 4 MiB of activations: what a real prompt meets); 8192 x 2048 x 128
// is one thread's share of its fused FFN gate and up (4 MiB of sums, more than L2); 32768 x
// 4096 x 1 is a decode step streaming weights from memory (bytes/s against `cohort bench
// --roofline`), and 256 x 2048 x 1 (packed only) the same tile on weights in L2: the most a
// decode tile could read per second if memory kept up.
void bm_gemm(benchmark::State& state, const kernels::KernelTable* kt, DType type, GemmPath path) {
  const int64_t rows = state.range(0), cols = state.range(1), tokens = state.range(2);
  const kernels::TypeOps& ops = kt->types[static_cast<uint32_t>(type)];
  const size_t rb = row_bytes(type, cols), ab = row_bytes(ops.vec_dot_type, cols);
  Rng rng(3);
  std::vector<float> row(cols);
  std::vector<uint8_t> w(rb * rows), act(ab * tokens);
  for (int64_t r = 0; r < rows; ++r) {
    for (float& v : row) v = rng.normal();
    quantize_row(type, row.data(), w.data() + r * rb, cols);
  }
  for (int64_t t = 0; t < tokens; ++t) {
    for (float& v : row) v = rng.normal();
    kt->types[static_cast<uint32_t>(ops.vec_dot_type)].from_float(row.data(), act.data() + t * ab,
                                                                  cols);
  }
  std::vector<float> y(rows * tokens);
  kernels::GemmArgs g;
  g.n = cols;
  g.w = w.data();
  g.w_stride = rb;
  g.a = act.data();
  g.a_stride = ab;
  g.y = y.data();
  g.y_stride = rows;
  // Packed weights in huge pages, as the model keeps them (model/packed_weights.h).
  HugePageBuffer panels;
  if (path == GemmPath::kPacked) {
    const int64_t pr = ops.packed.panel_rows, n_panels = (rows + pr - 1) / pr;
    const size_t pb = ops.packed.panel_bytes(cols);
    Result<HugePageBuffer> buf = HugePageBuffer::allocate(pb * n_panels);
    if (!buf.is_ok()) {
      state.SkipWithError("no memory for the packed weights");
      return;
    }
    panels = *std::move(buf);
    for (int64_t p = 0; p < n_panels; ++p) {
      ops.packed.pack_panel(w.data() + p * pr * rb, rb, std::min(pr, rows - p * pr), cols,
                            panels.data() + p * pb);
    }
    std::vector<uint8_t>().swap(w);
    g.w = panels.data();
    g.w_stride = pb;
  }
  for (auto _ : state) {
    if (path == GemmPath::kPerPair) {
      for (int64_t t = 0; t < tokens; ++t) {
        for (int64_t r = 0; r < rows; ++r) {
          y[t * rows + r] = ops.vec_dot(cols, w.data() + r * rb, act.data() + t * ab);
        }
      }
    } else if (path == GemmPath::kPacked) {
      ops.packed.gemm(g, 0, rows, 0, tokens);
    } else {
      ops.gemm(g, 0, rows, 0, tokens);
    }
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["GFLOP/s"] = benchmark::Counter(
      static_cast<double>(2 * rows * cols * tokens) * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate, benchmark::Counter::kIs1000);
  state.SetBytesProcessed(state.iterations() * static_cast<int64_t>(rb * rows));
}

int register_all() {
  for (const kernels::KernelTable* kt : kernels::available()) {
    if (!kt) continue;
    for (DType t : kWeightTypes) {
      const std::string name = std::string("vec_dot/") + kt->isa + "/" + std::string(dtype_name(t));
      benchmark::RegisterBenchmark(name.c_str(), bm_vec_dot, kt, t)->Arg(16)->Arg(4096);
    }
    // Row-major gemms (F16, Q4_0, Q8_0, Q4_K, Q6_K) with their per-pair baseline; packed
    // products of every weight type that has them.
    for (DType t : kWeightTypes) {
      const std::string suffix = std::string(kt->isa) + "/" + std::string(dtype_name(t));
      if (kt->types[static_cast<uint32_t>(t)].gemm != nullptr) {
        benchmark::RegisterBenchmark(("gemm/" + suffix).c_str(), bm_gemm, kt, t, GemmPath::kGemm)
            ->Args({64, 2048, 64})
            ->Args({256, 2048, 128})
            ->Args({256, 8192, 128})
            ->Args({32768, 4096, 1});
        benchmark::RegisterBenchmark(("gemm_per_pair/" + suffix).c_str(), bm_gemm, kt, t,
                                     GemmPath::kPerPair)
            ->Args({64, 2048, 64});
      }
      if (kt->types[static_cast<uint32_t>(t)].packed.panel_rows == 0) continue;
      benchmark::RegisterBenchmark(("gemm_packed/" + suffix).c_str(), bm_gemm, kt, t,
                                   GemmPath::kPacked)
          ->Args({64, 2048, 64})
          ->Args({256, 2048, 128})
          ->Args({256, 8192, 128})
          ->Args({8192, 2048, 128})
          ->Args({32768, 4096, 1})
          ->Args({256, 2048, 1});
    }
    for (DType t : {DType::kF16, DType::kQ8_0}) {
      const std::string name = "attention_" + std::string(dtype_name(t)) + "/" + kt->isa;
      benchmark::RegisterBenchmark(name.c_str(), bm_attention, kt, t)
          ->Arg(512)
          ->Arg(4096)
          ->Arg(16384);
      const std::string model = "attention_model_" + std::string(dtype_name(t)) + "/" + kt->isa;
      benchmark::RegisterBenchmark(model.c_str(), bm_attention_model, kt, t)
          ->Args({512, 1})
          ->Args({16384, 4});
      const std::string prompt = "attention_prompt_" + std::string(dtype_name(t)) + "/" + kt->isa;
      benchmark::RegisterBenchmark(prompt.c_str(), bm_attention_prompt, kt, t)->Arg(4096);
    }
  }
  return 0;
}
const int kRegistered = register_all();

}  // namespace
}  // namespace cohort

#if COHORT_BENCH_CODE_PAD > 0
// COHORT_BENCH_CODE_PAD bytes of code that never runs (bench/CMakeLists.txt), its ret included:
// every function linked after this file, the kernel library's among them, moves by that many
// bytes.
#define COHORT_PAD_STR(x) #x
#define COHORT_PAD_BYTES(x) COHORT_PAD_STR(x)
extern "C" __attribute__((used, noinline)) void cohort_bench_code_pad() {
  __asm__ volatile(".skip " COHORT_PAD_BYTES(COHORT_BENCH_CODE_PAD) " - 1, 0x90");
}
#endif
