#include "api/prometheus_metrics.h"

#include <cstdio>
#include <string_view>

namespace cohort::api {
namespace {

// Appends "# HELP" and "# TYPE" once per metric family, then its samples.
class Writer {
 public:
  void family(const char* name, const char* type, const char* help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  // labels: already formatted, e.g. {node="head"}, or empty.
  void sample(const char* name, const std::string& labels, double value) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%.17g", value);
    out_ += name;
    out_ += labels;
    out_ += ' ';
    out_ += buf;
    out_ += '\n';
  }
  void single(const char* name, const char* type, const char* help, double value) {
    family(name, type, help);
    sample(name, "", value);
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

std::string label(std::string_view name, std::string_view value) {
  return std::string(name) + "=\"" + prometheus_label_value(value) + "\"";
}

void request_metrics(Writer& w, const RequestMetrics& requests) {
  w.family("cohort_requests_total", "counter", "HTTP requests by dialect, route and outcome.");
  for (const auto& [key, n] : requests.counts()) {
    w.sample("cohort_requests_total",
             "{" + label("dialect", key.dialect) + "," + label("route", key.route) + "," +
                 label("outcome", key.outcome) + "}",
             static_cast<double>(n));
  }
}

void engine_metrics(Writer& w, const runtime::EngineStats& s) {
  w.family("cohort_generations_total", "counter", "Generations run by the engine, by outcome.");
  w.sample("cohort_generations_total", "{outcome=\"ok\"}", static_cast<double>(s.requests_ok));
  w.sample("cohort_generations_total", "{outcome=\"failed\"}",
           static_cast<double>(s.requests_failed));
  w.sample("cohort_generations_total", "{outcome=\"cancelled\"}",
           static_cast<double>(s.requests_cancelled));
  w.single("cohort_prompt_tokens_total", "counter", "Prompt tokens processed.",
           static_cast<double>(s.prompt_tokens));
  w.single("cohort_generated_tokens_total", "counter", "Tokens generated.",
           static_cast<double>(s.generated_tokens));
  w.single("cohort_tokens_per_second", "gauge",
           "Tokens generated per second over the last few seconds.", s.tokens_per_s);
  w.single("cohort_queue_depth", "gauge", "Requests waiting for a sequence slot.",
           static_cast<double>(s.queue_depth));
  w.single("cohort_active_slots", "gauge", "Sequence slots running a request.",
           static_cast<double>(s.active_slots));
  w.single("cohort_slots", "gauge", "Sequence slots in all.", static_cast<double>(s.n_slots));
}

void cluster_metrics(Writer& w, const runtime::ClusterView& v) {
  w.single("cohort_cluster_nodes", "gauge", "Nodes in the current placement.",
           static_cast<double>(v.nodes.size()));
  w.single("cohort_cluster_placements", "counter", "Placements made since start.",
           static_cast<double>(v.placements));
  if (v.nodes.empty()) return;
  std::vector<std::string> node_labels;
  for (const runtime::NodeView& n : v.nodes) {
    node_labels.push_back("{" + label("node", n.name) + "," + label("role", n.role) + "}");
  }
  w.family("cohort_node_free_bytes", "gauge", "Memory the node may use, as it reported.");
  for (size_t i = 0; i < v.nodes.size(); ++i) {
    w.sample("cohort_node_free_bytes", node_labels[i], static_cast<double>(v.nodes[i].free_bytes));
  }
  w.family("cohort_node_placed_bytes", "gauge", "Weights and KV cache placed on the node.");
  for (size_t i = 0; i < v.nodes.size(); ++i) {
    w.sample("cohort_node_placed_bytes", node_labels[i],
             static_cast<double>(v.nodes[i].used_bytes));
  }
  w.family("cohort_node_layers", "gauge", "Transformer layers the node computes.");
  for (size_t i = 0; i < v.nodes.size(); ++i) {
    w.sample("cohort_node_layers", node_labels[i],
             static_cast<double>(v.nodes[i].layer_end - v.nodes[i].layer_begin));
  }
  w.family("cohort_link_rtt_seconds", "gauge", "Measured round trip of a link.");
  for (const runtime::LinkView& l : v.links) {
    if (l.rtt_us <= 0) continue;
    w.sample("cohort_link_rtt_seconds",
             "{" + label("a", v.nodes[l.a].name) + "," + label("b", v.nodes[l.b].name) + "}",
             l.rtt_us / 1e6);
  }
  w.family("cohort_link_bandwidth_bytes_per_second", "gauge", "Measured bandwidth of a link.");
  for (const runtime::LinkView& l : v.links) {
    if (l.rtt_us <= 0) continue;
    w.sample("cohort_link_bandwidth_bytes_per_second",
             "{" + label("a", v.nodes[l.a].name) + "," + label("b", v.nodes[l.b].name) + "}",
             l.bandwidth_bytes_per_s);
  }
}

}  // namespace

std::string prometheus_label_value(std::string_view v) {
  std::string out;
  for (char c : v) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '"') {
      out += "\\\"";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string prometheus_text(const LiveSources& src) {
  Writer w;
  if (src.requests != nullptr) request_metrics(w, *src.requests);
  engine_metrics(w, src.stats());
  runtime::ClusterView view;
  if (src.cluster) view = src.cluster();
  cluster_metrics(w, view);
  return w.take();
}

}  // namespace cohort::api
