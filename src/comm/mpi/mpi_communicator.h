// The `mpi` transport: a Communicator on Open MPI (or any MPI), for clusters launched with
// mpirun/Slurm where MPI (UCX/RDMA underneath, when the hardware has it) is the trusted
// transport. Built only when CMake finds MPI (COHORT_HAVE_MPI); mpi.h stays behind this
// header.
//
// Semantics match the other transports: every call takes a timeout (non-blocking MPI
// requests polled until done or the deadline; a request that times out is cancelled and
// the communicator refuses further use with kUnavailable, since MPI cannot resynchronise a
// half-finished exchange). Point-to-point messages keep their order per pair (one tag).
// all_reduce_sum takes, for decode-sized vectors, whichever of MPI_Allreduce and the
// point-to-point one-step exchange (comm/collectives.h, bit-identical on every rank) measured
// faster when the group was made; larger vectors always use MPI_Allreduce.
//
// Thread-safety: as Communicator. MPI is initialised with the highest thread level it
// offers up to MPI_THREAD_MULTIPLE.
#pragma once

#include <memory>
#include <string>

#include "comm/communicator.h"
#include "core/status.h"

namespace cohort::comm::mpi {

// Initialises MPI once per process (later calls are no-ops) and finalises it at exit.
// Errors: MPI refused to start.
Status init();
// True when this process was started by an MPI launcher (mpirun, srun): the environment
// names a world rank. Cheap; needs no init().
bool launched_by_mpi();
int world_rank();  // after init()
int world_size();  // after init()

struct Options {
  // Decode-sized all-reduces (up to this many bytes) take the faster of the two paths.
  size_t small_bytes = 64 * 1024;
  // Force the small-vector path instead of measuring: "", "mpi" or "p2p".
  std::string small_path;
};

// A communicator over a duplicate of MPI_COMM_WORLD. Collective: every rank calls it.
Result<std::unique_ptr<Communicator>> make_world(const Options& options = {});

// The ranks of `world` (an mpi communicator) that pass the same color form one group,
// ordered by their world rank. Collective over world: every rank calls it.
Result<std::unique_ptr<Communicator>> split(Communicator& world, int color);

// Which path decode-sized all-reduces use, and the measurement behind the choice.
std::string describe_small_path(const Communicator& c);

}  // namespace cohort::comm::mpi
