#include "model/packed_weights.h"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

#include "core/log.h"
#include "core/progress.h"
#include "core/system_memory.h"
#include "kernels/matmul.h"

namespace cohort::model {
namespace {

// Every matrix a forward pass multiplies through matmul().
std::vector<kernels::WeightMatrix*> multiplied_matrices(Weights* w) {
  std::vector<kernels::WeightMatrix*> out = {&w->output};
  for (LayerWeights& L : w->layers) {
    for (kernels::WeightMatrix* m :
         {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down, &L.router, &L.wq_a, &L.wkv_a,
          &L.shared.gate, &L.shared.up, &L.shared.down}) {
      out.push_back(m);
    }
    for (ExpertWeights& e : L.experts) {
      for (kernels::WeightMatrix* m : {&e.gate, &e.up, &e.down}) out.push_back(m);
    }
  }
  return out;
}

// Drops the whole pages inside the bytes of w (a file mapping's: read again on touch).
void release_pages(const kernels::WeightMatrix& w) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(w.data);
  const uintptr_t end =
      begin + static_cast<size_t>(w.rows - 1) * w.row_stride + row_bytes(w.type, w.cols);
  const uintptr_t b = (begin + page - 1) / page * page, e = end / page * page;
  if (b < e) madvise(reinterpret_cast<void*>(b), e - b, MADV_DONTNEED);
}

// Packed matrices start on cache lines.
constexpr size_t kAlign = 64;

size_t aligned(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

}  // namespace

Result<PackedWeights> PackedWeights::pack(Weights* w, const kernels::KernelTable& kt,
                                          ThreadPool& pool, bool release_unpacked) {
  PackedWeights out;
  // Each matrix to pack, its offset in the buffer and its packed bytes.
  struct Job {
    kernels::WeightMatrix* m;
    size_t at, bytes;
  };
  std::vector<Job> todo;
  size_t total = 0;
  for (kernels::WeightMatrix* m : multiplied_matrices(w)) {
    if (m->data == nullptr || m->packed != nullptr) continue;
    const size_t bytes = kernels::packed_bytes(kt, *m);
    if (bytes == 0) continue;
    todo.push_back({m, total, bytes});
    total += aligned(bytes);
  }
  if (todo.empty()) return out;
  // The unpacked matrices stay mapped: file pages the kernel may drop, unless the model was
  // copied into memory (--huge-pages). Keep a margin for everything else.
  constexpr size_t kMargin = size_t{1} << 30;
  const SystemMemory mem = read_system_memory();
  if (mem.available_bytes != 0 && total + kMargin > mem.available_bytes) {
    COHORT_LOG_WARN(
        "model: weights left unpacked: their packed copies (%.2f GiB) would not fit "
        "in the %.2f GiB of memory available",
        static_cast<double>(total) / (1 << 30),
        static_cast<double>(mem.available_bytes) / (1 << 30));
    return out;
  }
  COHORT_ASSIGN_OR_RETURN(out.buffer_, HugePageBuffer::allocate(total));
  ProgressMeter progress("packing weights", total);
  for (const Job& j : todo) {
    *j.m = kernels::pack(kt, pool, *j.m, out.buffer_.data() + j.at);
    if (release_unpacked) release_pages(*j.m);
    progress.update(j.at + j.bytes);
  }
  progress.finish();
  out.buffer_.make_read_only();
  return out;
}

}  // namespace cohort::model
