// All-reduce latency of the mpi transport, run under mpirun (ranks are processes):
//
//   mpirun -np 2 --mca pml ob1 --mca btl self,vader  build/release/bench/mpi_comm_bench
//   mpirun -np 2 --mca pml ucx                       build/release/bench/mpi_comm_bench
//
// For 8 KiB (a decode step's hidden state) and 1 MiB (a prefill chunk's), through each path
// the transport can take (MPI_Allreduce, and the point-to-point exchange for small vectors),
// rank 0 prints the median and p99 of 2000 (8 KiB) or 200 (1 MiB) timed calls, each after a
// barrier, as one line per case. The same figures for tcp and shm: bench/comm_bench.
#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "comm/mpi/mpi_communicator.h"
#include "core/clock.h"

using namespace cohort;

int main() {
  if (!comm::mpi::init().is_ok()) return 1;
  for (const char* path : {"mpi", "p2p"}) {
    comm::mpi::Options o;
    o.small_path = path;
    auto w = comm::mpi::make_world(o);
    if (!w.is_ok()) {
      std::fprintf(stderr, "%s\n", w.status().message().c_str());
      return 1;
    }
    comm::Communicator& c = **w;
    for (size_t bytes : {size_t{8} << 10, size_t{1} << 20}) {
      if (std::string(path) == "p2p" && bytes > o.small_bytes) continue;  // always MPI above
      std::vector<float> v(bytes / 4, 1.0f);
      const int iters = bytes <= 8192 ? 2000 : 200;
      std::vector<double> us;
      for (int i = 0; i < iters + 20; ++i) {
        if (!c.barrier(30000).is_ok()) return 1;
        const int64_t t0 = now_ns();
        if (!c.all_reduce_sum(v.data(), v.size(), 30000).is_ok()) return 1;
        if (i >= 20) us.push_back((now_ns() - t0) / 1e3);
      }
      std::sort(us.begin(), us.end());
      if (c.rank() == 0) {
        std::printf("mpi %-14s ranks %d  %7zu bytes  p50 %8.1f us  p99 %8.1f us\n",
                    std::string(path) == "p2p" ? "point-to-point" : "MPI_Allreduce", c.size(),
                    bytes, us[us.size() / 2], us[us.size() * 99 / 100]);
      }
    }
  }
  return 0;
}
