#include "api/live_status_json.h"

namespace cohort::api {
namespace {

using nlohmann::json;

json node_json(const runtime::NodeView& n) {
  return {{"name", n.name},
          {"role", n.role},
          {"address", n.address},
          {"free_bytes", n.free_bytes},
          {"total_bytes", n.total_bytes},
          {"used_bytes", n.used_bytes},
          {"kernel_gbps", n.kernel_gbps},
          {"isa", n.isa},
          {"stage", n.stage},
          {"layers", json::array({n.layer_begin, n.layer_end})},
          {"heads", json::array({n.head_begin, n.head_end})},
          {"embeds", n.embeds},
          {"outputs", n.outputs}};
}

json cluster_json(const runtime::ClusterView& v) {
  json nodes = json::array();
  for (const runtime::NodeView& n : v.nodes) nodes.push_back(node_json(n));
  json links = json::array();
  const double median = runtime::median_rtt_us(v.links);
  for (const runtime::LinkView& l : v.links) {
    links.push_back({{"a", l.a},
                     {"b", l.b},
                     {"rtt_us", l.rtt_us},
                     {"bandwidth_bytes_per_s", l.bandwidth_bytes_per_s},
                     {"slow", runtime::is_slow_link(l, median)}});
  }
  return {{"clustered", v.clustered}, {"state", v.state},     {"mode", v.mode},
          {"transport", v.transport}, {"why", v.why},         {"placements", v.placements},
          {"n_layers", v.n_layers},   {"n_heads", v.n_heads}, {"nodes", std::move(nodes)},
          {"links", std::move(links)}};
}

json stats_json(const runtime::EngineStats& s) {
  return {{"requests_total", s.requests_total},
          {"requests_ok", s.requests_ok},
          {"requests_failed", s.requests_failed},
          {"requests_cancelled", s.requests_cancelled},
          {"prompt_tokens", s.prompt_tokens},
          {"generated_tokens", s.generated_tokens},
          {"in_flight", s.in_flight},
          {"active_slots", s.active_slots},
          {"queue_depth", s.queue_depth},
          {"n_slots", s.n_slots},
          {"tokens_per_s", s.tokens_per_s},
          {"window_s", s.window_s}};
}

}  // namespace

json live_status_json(const LiveSources& src) {
  runtime::ClusterView view;
  if (src.cluster) view = src.cluster();
  if (!view.clustered) view.state = "one node: no workers";
  json warnings = json::array();
  if (src.events != nullptr) {
    for (const runtime::ClusterEvent& e : src.events->recent()) {
      warnings.push_back(
          {{"seq", e.seq}, {"unix_ms", e.unix_ms}, {"kind", e.kind}, {"message", e.message}});
    }
  }
  return {{"model", src.model_name},
          {"summary", src.model_summary},
          {"cluster", cluster_json(view)},
          {"stats", stats_json(src.stats())},
          {"warnings", std::move(warnings)}};
}

}  // namespace cohort::api
