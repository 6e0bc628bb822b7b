// What a node reports about itself to the head: memory it can use and a quick measure of
// its kernel throughput (the planner's "speed").
#pragma once

#include <string>

#include "cluster/protocol.h"

namespace cohort::runtime {

// threads: the compute threads this node will run with (0: all cores). Takes ~20 ms.
cluster::NodeInfo probe_this_node(const std::string& name, int threads);

}  // namespace cohort::runtime
