// GET /metrics: the head's figures in Prometheus text exposition format (version 0.0.4):
// requests by dialect, route and outcome; prompt and generated tokens; tok/s over the
// sliding window; queue depth, active slots; per node (memory, layers held) and per link
// (round trip, bandwidth) from the cluster's current placement.
#pragma once

#include <string>
#include <string_view>

#include "api/live_sources.h"

namespace cohort::api {

std::string prometheus_text(const LiveSources& sources);

// A label value with \, " and newline escaped as the format asks.
std::string prometheus_label_value(std::string_view v);

}  // namespace cohort::api
