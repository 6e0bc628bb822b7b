// What a decode token's products read per second when they run as a model runs them, against
// the same bytes read other ways: the question behind issue 6's decode gap. `cohort bench`
// on the Zen 4 VM of stops 19-24 found a one-thread 1B q4_0 token reading ~73% of a plain
// read of the same bytes made right after it (`--paired`), where one large product
// (gemm_packed .../32768/4096/1) reads near the plain stream.
//
// One buffer of packed weights of the 1B shape (16 layers of q/k/v 2048/512/512 x 2048, o
// 2048 x 2048, gate and up 8192 x 2048, down 2048 x 8192, then the output 32000 x 2048), in
// huge pages as the model keeps them, read these ways per round:
//   layers: a token's products in the model's order and grouping (q/k/v and gate/up as one
//           fork-join each: kernels::matmul_shared_input), on a pool of `threads`, the down
//           projection in column slices (kernels::pack_slice_cols);
//   layers, whole rows: the same from a second copy packed without slices;
//   one:    the whole buffer as one 2048-column product (the same panels' bytes, one
//           fork-join and no product boundaries);
//   one in N products: the same in as many equal products as layers' fork-joins;
//   own halves in N steps: as many fork-joins, each thread reading the next piece of its own
//           half of the buffer in each (one stream a thread through the token);
//   own halves in N calls: the same gemm calls, each thread's all in one fork-join;
//   plain:  the probe's read-and-sum of the same bytes in 64 MiB windows, each split over
//           the threads (runtime/roofline.h's pass);
//   and layers with the decode prefetch setting flipped from this CPU's default, layers with
//   the other decode width (kernels::decode_wide: the AVX-512 table's Q4_0, Q8_0 and F16),
//   layers and one with the other split of rows between threads (kernels::split_stealing).
// Attention, norms and the rest of a token are left out: at one thread they are ~2% of it.
// Each round runs every way once, in a shuffled order, within a fraction of a second; the
// report gives each way's median GB/s and the median over rounds of its GB/s over the plain
// read's in the same round. On a shared VM whose memory speed moves from second to second,
// those paired ratios are what compare; a way's own GB/s moves with the machine. --min-plain
// keeps the rounds of one memory state (those whose plain read reached it).
//   build/release/bench/decode_layers_bench --type q4_0 --threads 1 --rounds 30
//   build/release/bench/decode_layers_bench --type q8_0 -t 2 --rounds 30 --min-plain 45
#include <CLI/CLI.hpp>

#include <algorithm>
#include <cstdio>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "core/clock.h"
#include "core/huge_page_buffer.h"
#include "core/rng.h"
#include "core/stats.h"
#include "core/thread_pool.h"
#include "kernels/kernels.h"
#include "kernels/matmul.h"
#include "tensor/dtype.h"
#include "tensor/quantize.h"

namespace cohort {
namespace {

constexpr int64_t kDim = 2048, kKv = 512, kFfn = 8192, kNumLayers = 16, kVocab = 32000;
constexpr int64_t kWindowFloats = int64_t{16} << 20;  // the probe's 64 MiB pass

struct Layer {
  kernels::WeightMatrix q, k, v, o, gate, up, down;
};

// The packed weights of one type, and the matrices that view them.
struct Weights {
  HugePageBuffer buffer;
  size_t bytes = 0;
  std::vector<Layer> layers;
  kernels::WeightMatrix output, one;
};

ThreadPool& pool_of(int threads) {
  static std::map<int, std::unique_ptr<ThreadPool>> pools;
  std::unique_ptr<ThreadPool>& p = pools[threads];
  if (!p) p = std::make_unique<ThreadPool>(threads);
  return *p;
}

// rows x cols of type, every row the same quantized random row (the speed of a product does
// not depend on its values), packed at dst; returns the packed matrix.
kernels::WeightMatrix packed_matrix(const kernels::KernelTable& kt, ThreadPool& pool, DType type,
                                    int64_t rows, int64_t cols, uint8_t* dst) {
  Rng rng(static_cast<uint64_t>(rows * 31 + cols));
  std::vector<float> row(static_cast<size_t>(cols));
  for (float& x : row) x = rng.normal();
  const size_t rb = row_bytes(type, cols);
  std::vector<uint8_t> file(rb * static_cast<size_t>(rows));
  quantize_row(type, row.data(), file.data(), cols);
  for (int64_t r = 1; r < rows; ++r) std::copy_n(file.data(), rb, file.data() + r * rb);
  kernels::WeightMatrix w;
  w.data = file.data();
  w.type = type;
  w.rows = rows;
  w.cols = cols;
  w.row_stride = rb;
  kernels::WeightMatrix p = kernels::pack(kt, pool, w, dst);
  p.data = nullptr;  // the file layout goes; the products read the packed panels only
  return p;
}

// The 1B shape's weights of type, packed with the wide matrices in column slices of
// slice_cols (kernels::pack_slice_cols; 0: whole).
std::unique_ptr<Weights> weights_of(const kernels::KernelTable& kt, DType type,
                                    int64_t slice_cols) {
  const int64_t saved = kernels::pack_slice_cols();
  kernels::set_pack_slice_cols(slice_cols);
  auto w = std::make_unique<Weights>();
  ThreadPool& pool = pool_of(0);
  auto shape_bytes = [&](int64_t rows, int64_t cols) {
    kernels::WeightMatrix m;
    m.type = type;
    m.rows = rows;
    m.cols = cols;
    m.row_stride = row_bytes(type, cols);
    return kernels::packed_bytes(kt, m);
  };
  const size_t layer = 2 * shape_bytes(kDim, kDim) + 2 * shape_bytes(kKv, kDim) +
                       2 * shape_bytes(kFfn, kDim) + shape_bytes(kDim, kFfn);
  w->bytes = kNumLayers * layer + shape_bytes(kVocab, kDim);
  w->buffer = std::move(HugePageBuffer::allocate(w->bytes)).value();
  uint8_t* at = w->buffer.data();
  auto next = [&](int64_t rows, int64_t cols) {
    kernels::WeightMatrix m = packed_matrix(kt, pool, type, rows, cols, at);
    at += shape_bytes(rows, cols);
    return m;
  };
  for (int64_t l = 0; l < kNumLayers; ++l) {
    Layer y;
    y.q = next(kDim, kDim);
    y.k = next(kKv, kDim);
    y.v = next(kKv, kDim);
    y.o = next(kDim, kDim);
    y.gate = next(kFfn, kDim);
    y.up = next(kFfn, kDim);
    y.down = next(kDim, kFfn);
    w->layers.push_back(y);
  }
  w->output = next(kVocab, kDim);
  // The whole buffer as panels of a 2048-column matrix (the panels' contents are not that
  // matrix's, which no reader of the result minds).
  const kernels::TypeOps::Packed& pk = kt.types[static_cast<uint32_t>(type)].packed;
  const size_t panel = pk.panel_bytes(kDim);
  w->one = w->output;
  w->one.packed = w->buffer.data();
  w->one.rows = static_cast<int64_t>(w->bytes / panel) * pk.panel_rows;
  kernels::set_pack_slice_cols(saved);
  return w;
}

// One way of reading the weights: a name and a run of it.
struct Way {
  std::string name;
  std::function<void()> run;
  size_t bytes = 0;  // what one run reads
};

int run(DType type, int threads, int rounds, double min_plain, const kernels::KernelTable& kt) {
  if (kt.types[static_cast<uint32_t>(type)].packed.panel_rows == 0) {
    std::fprintf(stderr, "error: %s kernels have no packed %s layout\n", kt.isa,
                 std::string(dtype_name(type)).c_str());
    return 2;
  }
  ThreadPool& pool = pool_of(threads);
  std::fprintf(stderr, "packing the 1B shape's %s weights...\n",
               std::string(dtype_name(type)).c_str());
  const std::unique_ptr<Weights> sliced = weights_of(kt, type, kernels::pack_slice_cols());
  const std::unique_ptr<Weights> whole = weights_of(kt, type, 0);
  const Weights& w = *sliced;
  Rng rng(5);
  std::vector<float> x(kFfn), y(static_cast<size_t>(std::max(w.one.rows, kVocab)));
  for (float& v : x) v = rng.normal();
  std::vector<float> q(kDim), k(kKv), v(kKv), gate(kFfn), up(kFfn);
  const size_t ws = std::max(kernels::matmul_workspace_bytes(kt, w.one, 1),
                             kernels::matmul_workspace_bytes(kt, w.layers[0].down, 1));
  std::vector<uint8_t> workspace(ws);
  std::vector<float> sums(static_cast<size_t>(pool.size()));
  auto layers_of = [&](const Weights& m) {
    for (const Layer& l : m.layers) {
      const kernels::MatmulOutput qkv[] = {{&l.q, q.data()}, {&l.k, k.data()}, {&l.v, v.data()}};
      kernels::matmul_shared_input(kt, pool, qkv, x.data(), kDim, 1, workspace.data());
      kernels::matmul(kt, pool, l.o, x.data(), kDim, 1, y.data(), workspace.data());
      const kernels::MatmulOutput ffn[] = {{&l.gate, gate.data()}, {&l.up, up.data()}};
      kernels::matmul_shared_input(kt, pool, ffn, x.data(), kDim, 1, workspace.data());
      kernels::matmul(kt, pool, l.down, x.data(), kFfn, 1, y.data(), workspace.data());
    }
    kernels::matmul(kt, pool, m.output, x.data(), kDim, 1, y.data(), workspace.data());
  };
  auto layers = [&] { layers_of(w); };
  auto one = [&] {
    kernels::matmul(kt, pool, w.one, x.data(), kDim, 1, y.data(), workspace.data());
  };
  // The same buffer as as many products (fork-joins) as layers makes: what the products'
  // boundaries cost, apart from the layers' own shapes.
  const kernels::WeightMatrix& down = w.layers[0].down;
  const int64_t down_slices = down.slice_cols > 0 ? down.cols / down.slice_cols : 1;
  const int64_t n_products = kNumLayers * (3 + down_slices) + 1;
  const int64_t panel_rows = kt.types[static_cast<uint32_t>(type)].packed.panel_rows;
  auto products = [&] {
    const int64_t panels = w.one.rows / panel_rows;
    for (int64_t i = 0; i < n_products; ++i) {
      const int64_t p0 = panels * i / n_products, p1 = panels * (i + 1) / n_products;
      kernels::WeightMatrix m = w.one;
      m.packed = static_cast<const uint8_t*>(w.one.packed) + p0 * w.one.panel_stride;
      m.rows = (p1 - p0) * panel_rows;
      kernels::matmul(kt, pool, m, x.data(), kDim, 1, y.data(), workspace.data());
    }
  };
  // The same steps, but each thread's bytes one stream through them: in step i a thread reads
  // piece i of its own half of the buffer (a fixed split, as "one, static split" reads in one
  // step). What a layout storing each thread's share of every product after its share of the
  // last would give: the steps' joins without a thread's jump to a new place at each. Its
  // gemm calls carry no activation version, so each remakes the token's terms (a few hundred
  // ns), as each of "one in N products"' products does once a thread.
  const kernels::TypeOps& ops = kt.types[static_cast<uint32_t>(type)];
  std::vector<uint8_t> act(row_bytes(ops.vec_dot_type, kDim));
  if (ops.vec_dot_type == DType::kF32) {
    std::copy_n(reinterpret_cast<const uint8_t*>(x.data()), act.size(), act.data());
  } else {
    kt.types[static_cast<uint32_t>(ops.vec_dot_type)].from_float(x.data(), act.data(), kDim);
  }
  // The whole buffer as one product's arguments, for gemm calls on pieces of it.
  auto own_args = [&] {
    kernels::GemmArgs g;
    g.n = kDim;
    g.w = w.one.packed;
    g.w_stride = w.one.panel_stride;
    g.a = act.data();
    g.a_stride = act.size();
    g.y = y.data();
    g.y_stride = w.one.rows;
    return g;
  };
  auto own_streams = [&] {
    const int64_t panels = w.one.rows / panel_rows;
    const kernels::GemmArgs g = own_args();
    for (int64_t i = 0; i < n_products; ++i) {
      pool.run([&](int ith, int nth) {
        int64_t b, e;
        ThreadPool::split(panels, ith, nth, &b, &e);
        const int64_t p0 = b + (e - b) * i / n_products, p1 = b + (e - b) * (i + 1) / n_products;
        if (p0 < p1) ops.packed.gemm(g, p0 * panel_rows, p1 * panel_rows, 0, 1);
      });
    }
  };
  // The same pieces, each thread's all in one step: its gemm calls as in own_streams, none of
  // the steps' joins between them. Against own_streams, what the joins cost; against one,
  // what each call's fresh start (its prefetchers, the token's terms) costs.
  auto own_calls = [&] {
    const int64_t panels = w.one.rows / panel_rows;
    const kernels::GemmArgs g = own_args();
    pool.run([&](int ith, int nth) {
      int64_t b, e;
      ThreadPool::split(panels, ith, nth, &b, &e);
      for (int64_t i = 0; i < n_products; ++i) {
        const int64_t p0 = b + (e - b) * i / n_products, p1 = b + (e - b) * (i + 1) / n_products;
        if (p0 < p1) ops.packed.gemm(g, p0 * panel_rows, p1 * panel_rows, 0, 1);
      }
    });
  };
  auto plain = [&] {
    const auto* f = reinterpret_cast<const float*>(w.buffer.data());
    const int64_t floats = static_cast<int64_t>(w.bytes / sizeof(float));
    for (int64_t at = 0; at < floats; at += kWindowFloats) {
      const int64_t n = std::min(kWindowFloats, floats - at);
      pool.run([&](int ith, int nth) {
        int64_t b, e;
        ThreadPool::split(n, ith, nth, &b, &e);
        sums[ith] += kt.read_sum(f + at + b, e - b);
      });
    }
  };
  // fn run with a process-wide kernel setting (its setter, its value now) flipped: the
  // decode prefetch (from this CPU's default) and the split of rows between threads.
  auto flipped = [](void (*set)(bool), bool now, std::function<void()> fn) {
    return [set, now, fn] {
      set(!now);
      fn();
      set(now);
    };
  };
  const bool prefetch = kernels::decode_prefetch(), stealing = kernels::split_stealing();
  const bool wide = kernels::decode_wide();
  const std::string flip = prefetch ? " no-prefetch" : " prefetch";
  const std::string width = wide ? ", 256-bit decode" : ", 512-bit decode";
  const std::string split = stealing ? ", static split" : ", stealing";
  auto other_prefetch = [&](auto fn) {
    return flipped(kernels::set_decode_prefetch, prefetch, fn);
  };
  auto other_split = [&](auto fn) { return flipped(kernels::set_split_stealing, stealing, fn); };
  auto other_width = [&](auto fn) { return flipped(kernels::set_decode_wide, wide, fn); };
  std::vector<Way> ways = {
      {"plain", plain, w.bytes},
      {"layers", layers, w.bytes},
      {"layers, whole rows", [&] { layers_of(*whole); }, whole->bytes},
      {"one", one, w.bytes},
      {"one in " + std::to_string(n_products) + " products", products, w.bytes},
      {"own halves in " + std::to_string(n_products) + " steps", own_streams, w.bytes},
      {"own halves in " + std::to_string(n_products) + " calls", own_calls, w.bytes},
      {"layers" + flip, other_prefetch(layers), w.bytes},
      {"layers" + width, other_width(layers), w.bytes},
      {"layers" + split, other_split(layers), w.bytes},
      {"one" + split, other_split(one), w.bytes}};
  std::vector<std::vector<double>> gbps(ways.size()), ratio(ways.size());
  std::vector<size_t> order(ways.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  for (Way& way : ways) way.run();  // warm-up: pages, pools, per-thread terms
  for (int r = 0; r < rounds; ++r) {
    for (size_t i = order.size() - 1; i > 0; --i) {
      std::swap(order[i], order[rng.next_u64() % (i + 1)]);
    }
    std::vector<double> round(ways.size());
    for (size_t i : order) {
      const double t0 = now_s();
      ways[i].run();
      round[i] = static_cast<double>(ways[i].bytes) / (now_s() - t0) / 1e9;
    }
    if (round[0] < min_plain) continue;  // another memory state than the one asked for
    for (size_t i = 0; i < ways.size(); ++i) {
      gbps[i].push_back(round[i]);
      ratio[i].push_back(round[i] / round[0]);
    }
  }
  const size_t kept = gbps[0].size();
  std::printf("1B shape, %s, %.1f MB of packed weights, %s kernels, %d thread%s, %d rounds",
              std::string(dtype_name(type)).c_str(), static_cast<double>(w.bytes) / 1e6, kt.isa,
              pool.size(), pool.size() == 1 ? "" : "s", rounds);
  if (min_plain > 0) std::printf(", %zu with plain >= %.1f GB/s", kept, min_plain);
  std::printf("\n");
  if (kept == 0) return 0;
  std::printf("%-28s %10s %12s %16s\n", "way", "GB/s", "of plain", "(ratio range)");
  for (size_t i = 0; i < ways.size(); ++i) {
    const auto [lo, hi] = std::minmax_element(ratio[i].begin(), ratio[i].end());
    std::printf("%-28s %10.1f %11.1f%% %7.0f%% - %3.0f%%\n", ways[i].name.c_str(), median(gbps[i]),
                100 * median(ratio[i]), 100 * *lo, 100 * *hi);
  }
  volatile float keep = 0;
  for (float s : sums) keep = keep + s;
  return 0;
}

}  // namespace
}  // namespace cohort

int main(int argc, char** argv) {
  CLI::App app{"Read speed of a 1B-shape decode token's products against plain reads"};
  std::string type = "q4_0";
  int threads = 1, rounds = 20;
  std::string isa;
  app.add_option("--type", type,
                 "Weight type with a packed form: q4_0, q4_1, q5_0, q5_1, q8_0, q3_K, q4_K, q5_K, "
                 "q6_K, f16 or bf16")
      ->capture_default_str();
  app.add_option("-t,--threads", threads, "Threads")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  app.add_option("--rounds", rounds, "Rounds of every way")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--isa", isa, "Kernel table by name (default: the best for this CPU)");
  double min_plain = 0;
  app.add_option("--min-plain", min_plain,
                 "Keep only rounds whose plain read reached this many GB/s (one memory state of a "
                 "VM whose speed flips)")
      ->check(CLI::NonNegativeNumber);
  CLI11_PARSE(app, argc, argv);
  const cohort::kernels::KernelTable* kt = &cohort::kernels::best();
  if (!isa.empty()) {
    std::string names;
    kt = cohort::kernels::table_named(isa, &names);
    if (kt == nullptr) {
      std::fprintf(stderr, "error: no %s kernels on this CPU (it runs %s)\n", isa.c_str(),
                   names.c_str());
      return 2;
    }
  }
  const auto t = cohort::dtype_from_name(type);
  if (!t) {
    std::fprintf(stderr, "error: unknown type %s\n", type.c_str());
    return 2;
  }
  return cohort::run(*t, threads, rounds, min_plain, *kt);
}
