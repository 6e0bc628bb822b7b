// A group of n communicators in one process, for tests of sharded execution: rank i is
// driven by its own thread. Collectives meet at a shared rendezvous; point-to-point
// messages go through per-pair mailboxes. Every wait honours its timeout, so a test whose
// ranks disagree fails with kTimeout instead of hanging.
#pragma once

#include <memory>
#include <vector>

#include "comm/communicator.h"

namespace cohort::comm {

// Returns n communicators that form one group (ranks 0..n-1). They share state and must
// all be destroyed after every thread using them has stopped.
std::vector<std::unique_ptr<Communicator>> make_in_process_group(int n);

}  // namespace cohort::comm
