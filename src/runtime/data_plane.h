// Builds a rank's data-plane communicators from a setup request: the world group over the
// chosen transport (tcp mesh or shared memory), optionally delayed, and the tensor-parallel
// group of the rank's pipeline stage.
#pragma once

#include <memory>
#include <optional>

#include "cluster/protocol.h"
#include "comm/communicator.h"
#include "comm/counting_communicator.h"
#include "comm/tcp_communicator.h"
#include "net/cluster_key.h"

namespace cohort::runtime {

struct DataPlane {
  std::unique_ptr<comm::Communicator> world;
  std::unique_ptr<comm::Communicator> stage_owned;  // set when the stage group is its own object
  comm::Communicator* stage = nullptr;              // world, stage_owned, or a group of one
};

// listener: this rank's tcp listener (transport "tcp"), opened when the head asked for the
// endpoint. Blocks until every rank has joined or timeout_ms passes.
Result<DataPlane> join_data_plane(const cluster::SetupRequest& setup,
                                  std::optional<comm::TcpMeshListener> listener,
                                  const net::ClusterKey& key, int64_t timeout_ms);

// Wraps the world and stage groups so both add into counters (operations, bytes, time). A
// stage subgroup sends through the world object it was built on, not through the world's
// counter, so no message is counted twice; a group of one never waits and is left as is.
void count_traffic(DataPlane* dp, std::shared_ptr<comm::CommCounters> counters);

}  // namespace cohort::runtime
