// A subset of a world communicator's ranks as a group of its own, for hybrid parallelism
// (tensor-parallel groups inside pipeline stages).
//
// Members are renumbered 0..n-1 in the order given; point-to-point messages map to the
// world's send/recv between the corresponding world ranks, and the collectives are built on
// them (P2PCommunicator), using the world's overlapping send_recv/exchange when the world
// has them.
//
// Contract: the world communicator must outlive the subgroup. World messages carry no tag,
// so a subgroup's traffic and other traffic on the same pair of world ranks must not be in
// flight at the same time: the caller runs one group's operation on a pair to completion
// before another's starts (true of our stage drivers, where a rank drives one thing at a
// time). Subgroups with disjoint pairs may run concurrently only if the world communicator
// allows concurrent use, which ours do not (one driving thread).
#pragma once

#include <memory>
#include <vector>

#include "comm/communicator.h"
#include "core/status.h"

namespace cohort::comm {

// world_ranks: distinct ranks of `world`, including world.rank(). kInvalidArgument
// ("subgroup: ...") otherwise. name() is "<world name>/sub".
Result<std::unique_ptr<Communicator>> make_subgroup(Communicator& world,
                                                    std::vector<int> world_ranks);

}  // namespace cohort::comm
