#include "kernels/matmul.h"

#include <algorithm>
#include <atomic>

#include "core/check.h"

namespace cohort::kernels {

WeightMatrix WeightMatrix::row_slice(int64_t r0, int64_t r1) const {
  COHORT_CHECK(0 <= r0 && r0 <= r1 && r1 <= rows);
  WeightMatrix s = *this;
  s.data = static_cast<const uint8_t*>(data) + static_cast<size_t>(r0) * row_stride;
  s.rows = r1 - r0;
  s.packed = nullptr;
  return s;
}

WeightMatrix WeightMatrix::col_slice(int64_t c0, int64_t c1) const {
  const int64_t block = dtype_info(type).block_elems;
  COHORT_CHECK(0 <= c0 && c0 <= c1 && c1 <= cols && c0 % block == 0 && c1 % block == 0);
  WeightMatrix s = *this;
  s.data = static_cast<const uint8_t*>(data) + row_bytes(type, c0);
  s.cols = c1 - c0;
  s.packed = nullptr;
  return s;
}

namespace {

// Rows this far ahead of the one being multiplied are prefetched: a decode step streams each
// weight row once, and the hardware prefetchers do not run far enough ahead of a kernel
// that also computes (see avx2_gemm.cpp, which does the same inside its tiles).
constexpr int64_t kPrefetchRows = 2;

// Asks for every 64-byte line of [p, p + n) into cache. A prefetch never faults, so p may
// point past the end of the matrix.
inline void prefetch_bytes(const uint8_t* p, size_t n) {
  for (size_t off = 0; off < n; off += 64) __builtin_prefetch(p + off, 0, 3);
}

// Where the prompt layout (Packed::prompt_layout) starts in a workspace: after the converted
// activations, on a line.
size_t layout_offset(const TypeOps& ops, int64_t cols, int64_t n_tokens) {
  const size_t act = row_bytes(ops.vec_dot_type, cols) * static_cast<size_t>(n_tokens);
  return (act + 63) / 64 * 64;
}

}  // namespace

size_t matmul_workspace_bytes(const KernelTable& k, const WeightMatrix& w, int64_t n_tokens) {
  const TypeOps& ops = k.types[static_cast<uint32_t>(w.type)];
  const size_t act = row_bytes(ops.vec_dot_type, w.cols) * static_cast<size_t>(n_tokens);
  if (ops.packed.prompt_layout_bytes == nullptr || n_tokens < 2) return act;
  return layout_offset(ops, w.cols, n_tokens) + ops.packed.prompt_layout_bytes(w.cols, n_tokens);
}

namespace {

std::atomic<int64_t>& pack_slice_setting() {
  static std::atomic<int64_t> cols{2048};
  return cols;
}

// Columns of each slice w packs as: pack_slice_cols() where it applies, else all of them.
int64_t slice_cols_for(const TypeOps::Packed& p, const WeightMatrix& w) {
  const int64_t c = pack_slice_cols();
  const bool sliced = p.accumulates && c > 0 && w.cols > c && w.cols % c == 0 &&
                      c % dtype_info(w.type).block_elems == 0;
  return sliced ? c : w.cols;
}

}  // namespace

int64_t pack_slice_cols() { return pack_slice_setting().load(std::memory_order_relaxed); }

void set_pack_slice_cols(int64_t cols) {
  pack_slice_setting().store(cols, std::memory_order_relaxed);
}

size_t packed_bytes(const KernelTable& k, const WeightMatrix& w) {
  const TypeOps::Packed& p = k.types[static_cast<uint32_t>(w.type)].packed;
  if (p.panel_rows == 0) return 0;
  const int64_t panels = (w.rows + p.panel_rows - 1) / p.panel_rows;
  const int64_t slice = slice_cols_for(p, w);
  return static_cast<size_t>(w.cols / slice) * static_cast<size_t>(panels) * p.panel_bytes(slice);
}

WeightMatrix pack(const KernelTable& k, ThreadPool& pool, const WeightMatrix& w, void* dst) {
  const TypeOps::Packed& p = k.types[static_cast<uint32_t>(w.type)].packed;
  COHORT_CHECK(p.panel_rows > 0 && w.packed == nullptr);
  const int64_t panels = (w.rows + p.panel_rows - 1) / p.panel_rows;
  const int64_t slice = slice_cols_for(p, w), slices = w.cols / slice;
  const size_t panel = p.panel_bytes(slice);
  const size_t slice_bytes = static_cast<size_t>(panels) * panel;
  pool.run_split(panels * slices, w.rows * w.cols, [&](int64_t p0, int64_t p1) {
    for (int64_t i = p0; i < p1; ++i) {
      const int64_t s = i / panels, pi = i % panels;
      const int64_t r0 = pi * p.panel_rows, n_rows = std::min(p.panel_rows, w.rows - r0);
      const uint8_t* src = static_cast<const uint8_t*>(w.data) +
                           static_cast<size_t>(r0) * w.row_stride + row_bytes(w.type, s * slice);
      p.pack_panel(src, w.row_stride, n_rows, slice,
                   static_cast<uint8_t*>(dst) + s * slice_bytes + pi * panel);
    }
  });
  WeightMatrix out = w;
  out.packed = dst;
  out.panel_stride = panel;
  out.slice_cols = slice;
  out.slice_stride = slice_bytes;
  return out;
}

namespace {

// The activations of n_tokens vectors in w's vec_dot_type: x itself when that is f32 and
// dense, else converted once into workspace (every output row reuses them).
const uint8_t* convert_activations(const KernelTable& k, ThreadPool& pool, const WeightMatrix& w,
                                   const float* x, int64_t x_stride, int64_t n_tokens,
                                   void* workspace) {
  const TypeOps& ops = k.types[static_cast<uint32_t>(w.type)];
  if (ops.vec_dot_type == DType::kF32 && x_stride == w.cols) {
    return reinterpret_cast<const uint8_t*>(x);
  }
  const TypeOps& act_ops = k.types[static_cast<uint32_t>(ops.vec_dot_type)];
  COHORT_CHECK(act_ops.from_float != nullptr);
  const size_t act_row = row_bytes(ops.vec_dot_type, w.cols);
  auto* act = static_cast<uint8_t*>(workspace);
  pool.run_split(n_tokens, w.cols * n_tokens * 4, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      act_ops.from_float(x + t * x_stride, act + t * act_row, w.cols);
  });
  return act;
}

// A version for activations just converted (GemmArgs::a_version): never zero, never the
// same twice in a process.
uint64_t next_activation_version() {
  static std::atomic<uint64_t> last{0};
  return last.fetch_add(1, std::memory_order_relaxed) + 1;
}

// For a packed product of several tokens whose type lays its activations out for its prompt
// tiles (Packed::prompt_layout): that layout of act's n_tokens tokens, made once on every
// thread of pool into workspace past the converted activations, for each segment's
// GemmArgs::a_layout; else null. Matrices in column slices keep reading act.
const float* prompt_layout(const KernelTable& k, ThreadPool& pool, const WeightMatrix& w,
                           const uint8_t* act, int64_t n_tokens, void* workspace) {
  const TypeOps& ops = k.types[static_cast<uint32_t>(w.type)];
  if (ops.packed.prompt_layout == nullptr || w.packed == nullptr || n_tokens < 2 ||
      (w.slice_cols > 0 && w.slice_cols != w.cols)) {
    return nullptr;
  }
  GemmArgs g;
  g.n = w.cols;
  g.a = act;
  g.a_stride = row_bytes(ops.vec_dot_type, w.cols);
  auto* dst = static_cast<uint8_t*>(workspace) + layout_offset(ops, w.cols, n_tokens);
  pool.run_sized(w.cols * n_tokens,
                 [&](int ith, int nth) { ops.packed.prompt_layout(g, n_tokens, dst, ith, nth); });
  return reinterpret_cast<const float*>(dst);
}

// One output of a batched product: the gemm (packed or row-major) of w, its panels of
// panel_rows rows (1 when unpacked), their first index in the product's list.
struct Segment {
  void (*gemm)(const GemmArgs&, int64_t, int64_t, int64_t, int64_t) = nullptr;
  GemmArgs g;
  int64_t rows = 0, panel_rows = 1, first_panel = 0, panels = 0;
};

// Column slices of w's packed form (1 when unpacked or whole).
int64_t slices_of(const WeightMatrix& w) {
  return w.packed != nullptr && w.slice_cols > 0 ? w.cols / w.slice_cols : 1;
}

// The segment for w (output y, activations act): its packed form's gemm where it has one, else
// the type's gemm; gemm stays null when the type has neither. Of a packed matrix in column
// slices, slice `slice`: its panels and activations, adding to what the slices before it
// left in y.
Segment segment_of(const KernelTable& k, const WeightMatrix& w, const uint8_t* act,
                   uint64_t act_version, float* y, int64_t slice = 0, const float* layout = nullptr,
                   int64_t layout_tokens = 0) {
  const TypeOps& ops = k.types[static_cast<uint32_t>(w.type)];
  const bool packed = w.packed != nullptr && ops.packed.gemm != nullptr;
  const int64_t cols = packed && w.slice_cols > 0 ? w.slice_cols : w.cols;
  Segment s;
  s.gemm = packed ? ops.packed.gemm : ops.gemm;
  s.g.n = cols;
  s.g.w = packed ? static_cast<const uint8_t*>(w.packed) + slice * w.slice_stride : w.data;
  s.g.w_stride = packed ? w.panel_stride : w.row_stride;
  s.g.a = act + row_bytes(ops.vec_dot_type, slice * cols);
  s.g.a_stride = row_bytes(ops.vec_dot_type, w.cols);
  s.g.accumulate = slice > 0;
  s.g.a_version = act_version;
  s.g.a_layout = layout;
  s.g.a_layout_tokens = layout_tokens;
  s.g.y = y;
  s.g.y_stride = w.rows;
  s.rows = w.rows;
  s.panel_rows = packed ? ops.packed.panel_rows : 1;
  s.panels = (w.rows + s.panel_rows - 1) / s.panel_rows;
  return s;
}

// Weights per chunk of a balanced product (split_stealing): the unit its threads' shares are
// cut in, few enough per share (a 1B model's smallest matrix on 2 threads is ~1 MiB a share
// in Q4_0) that the last chunks even out threads reading at different speeds. A thread takes
// them in runs of many (ThreadPool::run_stealing_runs), so one gemm call and one
// compare-exchange serve a run.
constexpr size_t kChunkBytes = 64 << 10;

// Runs the segments as one fork-join: their panels in one list, each thread a contiguous
// share of it (so of the weights, which pack in order), every token. With split_stealing()
// the list is cut into chunks of whole panels, taken in runs, and a thread done with its share
// takes the back half of another's (ThreadPool::run_stealing_runs).
void run_segments(ThreadPool& pool, const Segment* segs, size_t n_segs, int64_t n_tokens,
                  int64_t units) {
  const int64_t total = segs[n_segs - 1].first_panel + segs[n_segs - 1].panels;
  auto run_panels = [&](int64_t p0, int64_t p1) {
    for (size_t i = 0; i < n_segs; ++i) {
      const Segment& s = segs[i];
      const int64_t b = std::max(p0, s.first_panel) - s.first_panel;
      const int64_t e = std::min(p1, s.first_panel + s.panels) - s.first_panel;
      if (b < e) s.gemm(s.g, b * s.panel_rows, std::min(e * s.panel_rows, s.rows), 0, n_tokens);
    }
  };
  if (split_stealing() && pool.size() > 1 && units >= ThreadPool::kMinParallelUnits) {
    // At least 4 chunks a thread, so that a small matrix still spreads over every thread;
    // an even count of panels where a panel is small, so that a chunk is whole panel pairs
    // (decode_in_pairs).
    int64_t per = std::max<int64_t>(1, static_cast<int64_t>(kChunkBytes / segs[0].g.w_stride));
    per = std::min(per, std::max<int64_t>(1, total / (4 * pool.size())));
    if (per > 1) per -= per % 2;
    const int64_t chunks = (total + per - 1) / per;
    pool.run_stealing_runs(
        chunks, [&](int, int64_t b, int64_t e) { run_panels(b * per, std::min(total, e * per)); });
    return;
  }
  pool.run_split(total, units, run_panels);
}

}  // namespace

void matmul_shared_input(const KernelTable& k, ThreadPool& pool, std::span<const MatmulOutput> outs,
                         const float* x, int64_t x_stride, int64_t n_tokens, void* workspace) {
  COHORT_CHECK(!outs.empty() && outs.size() <= kMaxSharedOutputs);
  const WeightMatrix& w0 = *outs[0].w;
  // Fused where every output has a batched product, packed or row-major (types such as Q5_0 have
  // only the packed one), over one type and width.
  bool fused = true;
  for (const MatmulOutput& o : outs) {
    const TypeOps& ops = k.types[static_cast<uint32_t>(o.w->type)];
    const bool batched =
        ops.gemm != nullptr || (o.w->packed != nullptr && ops.packed.gemm != nullptr);
    fused = fused && batched && o.w->type == w0.type && o.w->cols == w0.cols &&
            slices_of(*o.w) == slices_of(w0);
  }
  if (!fused) {
    for (const MatmulOutput& o : outs) matmul(k, pool, *o.w, x, x_stride, n_tokens, o.y, workspace);
    return;
  }
  const uint8_t* act = convert_activations(k, pool, w0, x, x_stride, n_tokens, workspace);
  const uint64_t version = next_activation_version();
  // One layout serves every output (one type and width); a gemm without a use for it
  // (unpacked) ignores it.
  const float* layout = prompt_layout(k, pool, w0, act, n_tokens, workspace);
  // Matrices in column slices: one fork-join per slice over every output's panels of it.
  const int64_t slices = slices_of(w0);
  for (int64_t slice = 0; slice < slices; ++slice) {
    Segment segs[kMaxSharedOutputs];
    int64_t panels = 0, units = 0;
    for (size_t i = 0; i < outs.size(); ++i) {
      segs[i] = segment_of(k, *outs[i].w, act, version, outs[i].y, slice, layout, n_tokens);
      segs[i].first_panel = panels;
      panels += segs[i].panels;
      units += outs[i].w->rows * w0.cols / slices * n_tokens;
    }
    run_segments(pool, segs, outs.size(), n_tokens, units);
  }
}

void matmul(const KernelTable& k, ThreadPool& pool, const WeightMatrix& w, const float* x,
            int64_t x_stride, int64_t n_tokens, float* y, void* workspace) {
  const TypeOps& ops = k.types[static_cast<uint32_t>(w.type)];
  COHORT_CHECK(ops.vec_dot != nullptr);
  const uint8_t* act_base = convert_activations(k, pool, w, x, x_stride, n_tokens, workspace);
  const size_t act_row = row_bytes(ops.vec_dot_type, w.cols);

  // The packed form, each thread on its share of the panels for every token; else the
  // batched kernel, each thread on its share of the rows for every token (it tiles rows and
  // tokens itself); for one token too, so that batching never changes a token's bits.
  const uint64_t version = next_activation_version();
  const Segment seg =
      segment_of(k, w, act_base, version, y, 0,
                 prompt_layout(k, pool, w, act_base, n_tokens, workspace), n_tokens);
  if (seg.gemm != nullptr) {
    // A sliced matrix: one fork-join per slice, each adding to the last one's sums.
    const int64_t slices = slices_of(w);
    for (int64_t s = 0; s < slices; ++s) {
      const Segment part = s == 0 ? seg : segment_of(k, w, act_base, version, y, s);
      run_segments(pool, &part, 1, n_tokens, w.rows * w.cols / slices * n_tokens);
    }
    return;
  }

  // Rows in tiles so that a tile of weights stays in cache while every token visits it.
  constexpr int64_t kRowTile = 16;
  const size_t w_row_bytes = row_bytes(w.type, w.cols);
  pool.run_split(w.rows, w.rows * w.cols * n_tokens, [&](int64_t r0, int64_t r1) {
    const auto* wbase = static_cast<const uint8_t*>(w.data);
    for (int64_t rt = r0; rt < r1; rt += kRowTile) {
      const int64_t rt_end = std::min(rt + kRowTile, r1);
      for (int64_t t = 0; t < n_tokens; ++t) {
        const uint8_t* a = act_base + t * act_row;
        float* yt = y + t * w.rows;
        for (int64_t r = rt; r < rt_end; ++r) {
          const uint8_t* row = wbase + static_cast<size_t>(r) * w.row_stride;
          if (t == 0) prefetch_bytes(row + kPrefetchRows * w.row_stride, w_row_bytes);
          yt[r] = ops.vec_dot(w.cols, row, a);
        }
      }
    }
  });
}

}  // namespace cohort::kernels
