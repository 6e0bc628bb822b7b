// GET /v1/cluster: the dashboard's one JSON document, polled about once a second:
//   {model, summary, cluster:{clustered, state, mode, transport, why, placements, n_layers,
//    n_heads, nodes:[{name, role, address, free_bytes, total_bytes, used_bytes, kernel_gbps,
//    isa, stage, layers:[b,e], heads:[b,e], embeds, outputs}], links:[{a, b, rtt_us,
//    bandwidth_bytes_per_s, slow}]}, stats:{requests_total, ..., tokens_per_s, queue_depth,
//    active_slots, n_slots}, warnings:[{seq, unix_ms, kind, message}]}
#pragma once

#include <nlohmann/json.hpp>

#include "api/live_sources.h"

namespace cohort::api {

nlohmann::json live_status_json(const LiveSources& sources);

}  // namespace cohort::api
