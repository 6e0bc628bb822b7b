#include "runtime/data_plane.h"

#include "comm/delay_communicator.h"
#include "comm/shm_communicator.h"
#include "comm/subgroup.h"

namespace cohort::runtime {

Result<DataPlane> join_data_plane(const cluster::SetupRequest& setup,
                                  std::optional<comm::TcpMeshListener> listener,
                                  const net::ClusterKey& key, int64_t timeout_ms) {
  DataPlane dp;
  const int size = static_cast<int>(setup.plan.ranks.size());
  if (setup.transport == "tcp") {
    if (!listener) return Status::internal("cluster: tcp data plane without a listener");
    std::vector<net::HostPort> endpoints;
    for (const std::string& e : setup.endpoints) {
      COHORT_ASSIGN_OR_RETURN(net::HostPort hp, net::parse_host_port(e));
      endpoints.push_back(hp);
    }
    if (static_cast<int>(endpoints.size()) != size) {
      return Status::invalid_argument("cluster: " + std::to_string(endpoints.size()) +
                                      " endpoints for " + std::to_string(size) + " ranks");
    }
    comm::TcpOptions opts;
    opts.key = key;
    opts.connect_timeout_ms = timeout_ms;
    opts.name = "rank" + std::to_string(setup.rank);
    COHORT_ASSIGN_OR_RETURN(dp.world, std::move(*listener).connect(setup.rank, endpoints, opts));
  } else if (setup.transport == "shm") {
    COHORT_ASSIGN_OR_RETURN(
        dp.world, comm::make_shm_communicator(setup.shm_name, setup.rank, size, timeout_ms));
  } else {
    return Status::invalid_argument("cluster: unknown transport '" + setup.transport + "'");
  }
  if (setup.link_delay_us > 0) {
    dp.world = comm::make_delay_communicator(std::move(dp.world), setup.link_delay_us);
  }
  const cluster::RankPlan& me = setup.plan.ranks[setup.rank];
  const std::vector<int>& stage = setup.plan.stage_ranks[me.stage];
  if (static_cast<int>(stage.size()) == size) {
    dp.stage = dp.world.get();  // pure tensor parallel: the stage is the world
  } else if (stage.size() == 1) {
    dp.stage_owned = comm::make_local_communicator();
    dp.stage = dp.stage_owned.get();
  } else {
    COHORT_ASSIGN_OR_RETURN(dp.stage_owned, comm::make_subgroup(*dp.world, stage));
    dp.stage = dp.stage_owned.get();
  }
  return dp;
}

void count_traffic(DataPlane* dp, std::shared_ptr<comm::CommCounters> counters) {
  const bool stage_is_world = dp->stage == dp->world.get();
  dp->world = comm::make_counting_communicator(std::move(dp->world), counters);
  if (stage_is_world) {
    dp->stage = dp->world.get();
  } else if (dp->stage_owned && dp->stage_owned->size() > 1) {
    dp->stage_owned = comm::make_counting_communicator(std::move(dp->stage_owned), counters);
    dp->stage = dp->stage_owned.get();
  }
}

}  // namespace cohort::runtime
