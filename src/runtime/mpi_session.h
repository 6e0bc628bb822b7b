// `--transport mpi` under mpirun: the MPI world replaces discovery, the key handshake and
// the control connections (the launcher's trust model applies; hostfiles work as usual).
// Every rank runs the same command with the same model path; rank 0 is the head (it plans,
// serves the API, samples), the others run their shard of every step until rank 0 stops
// them. Planning uses every rank's free memory and kernel speed and the measured rank 0 <->
// rank links; all ranks must hold the same model file (checked by fingerprint; weights are
// not shipped over MPI).
#pragma once

#include <memory>
#include <string>

#include "cluster/planner.h"
#include "core/status.h"
#include "format/gguf.h"
#include "runtime/stepper.h"
#include "tensor/dtype.h"

namespace cohort::runtime {

struct MpiSessionOptions {
  cluster::PlanOptions plan;
  int threads = 0;
  int64_t n_ctx = 2048;
  int64_t max_batch = 64;
  int64_t n_slots = 1;  // sequence slots (a KV cache each, on every rank)
  DType kv_type = DType::kF16;
  int64_t link_delay_us = 0;
  std::string small_allreduce;  // "", "mpi" or "p2p" (see comm/mpi/mpi_communicator.h)
};

// True when this build has the mpi transport and the process was started by mpirun/srun.
bool mpi_available();
bool mpi_launched();

class MpiSession {
 public:
  // Collective over MPI_COMM_WORLD: every rank calls it. file is this rank's open model and
  // must outlive the session. Every rank returns the same error when any rank fails.
  static Result<std::unique_ptr<MpiSession>> start(const MpiSessionOptions& options,
                                                   const format::GgufFile& file);
  ~MpiSession();  // the head stops the other ranks

  bool is_head() const;
  Stepper& stepper();  // head only
  // Other ranks: runs steps until the head stops them (ok) or a peer fails.
  Status serve();
  std::string status_report() const;

  struct Impl;

 private:
  explicit MpiSession(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cohort::runtime
