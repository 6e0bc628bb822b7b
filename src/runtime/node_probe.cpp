#include "runtime/node_probe.h"

#include <vector>

#include "core/clock.h"
#include "core/system_memory.h"
#include "core/thread_pool.h"
#include "kernels/kernels.h"
#include "tensor/quantize.h"

namespace cohort::runtime {
namespace {

// Q8_0 dot products over 8 MiB of weights, single thread, best of 3.
double measure_matvec_gbps() {
  const kernels::KernelTable& kt = kernels::best();
  const int64_t cols = 4096, rows = 256;
  const size_t rb = row_bytes(DType::kQ8_0, cols);
  std::vector<uint8_t> w(rb * rows, 1), a(rb, 1);
  std::vector<float> x(cols, 0.5f);
  kt.types[static_cast<uint32_t>(DType::kQ8_0)].from_float(x.data(), a.data(), cols);
  double best = 0;
  volatile float sink = 0;
  for (int rep = 0; rep < 3; ++rep) {
    const double t0 = now_s();
    float s = 0;
    for (int64_t r = 0; r < rows; ++r)
      s += kt.types[static_cast<uint32_t>(DType::kQ8_0)].vec_dot(cols, w.data() + r * rb, a.data());
    sink = sink + s;
    const double dt = now_s() - t0;
    if (dt > 0) best = std::max(best, w.size() / dt / 1e9);
  }
  return best;
}

}  // namespace

cluster::NodeInfo probe_this_node(const std::string& name, int threads) {
  cluster::NodeInfo info;
  info.name = name;
  const SystemMemory mem = read_system_memory();
  info.free_bytes = mem.available_bytes;
  info.total_bytes = mem.total_bytes;
  info.threads = static_cast<uint32_t>(threads > 0 ? threads : ThreadPool::hardware_threads());
  info.isa = kernels::best().isa;
  info.matvec_gbps = measure_matvec_gbps();
  return info;
}

}  // namespace cohort::runtime
