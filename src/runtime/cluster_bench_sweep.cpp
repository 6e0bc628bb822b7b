#include "runtime/cluster_bench_sweep.h"

#include <algorithm>
#include <limits>

#include "cluster/model_desc.h"
#include "core/log.h"
#include "net/address.h"
#include "net/cluster_key.h"
#include "runtime/cluster_session.h"
#include "runtime/local_workers.h"

namespace cohort::runtime {
namespace {

Status check_options(const ClusterSweepOptions& o) {
  if (o.model_path.empty()) return Status::invalid_argument("bench cluster: give a model (-m)");
  if (o.nodes < 2) return Status::invalid_argument("bench cluster: --nodes must be >= 2");
  if (o.modes.empty() || o.transports.empty() || o.latencies_us.empty()) {
    return Status::invalid_argument("bench cluster: empty list of modes, transports or latencies");
  }
  for (const std::string& m : o.modes) {
    if (m != "pipeline" && m != "tensor" && m != "hybrid") {
      return Status::invalid_argument("bench cluster: unknown mode '" + m +
                                      "' (pipeline, tensor, hybrid)");
    }
  }
  for (const std::string& t : o.transports) {
    if (t != "tcp" && t != "shm") {
      return Status::invalid_argument("bench cluster: unknown transport '" + t + "' (tcp, shm)");
    }
  }
  for (int64_t l : o.latencies_us) {
    if (l < 0) return Status::invalid_argument("bench cluster: a negative latency");
  }
  if (o.bench.n_prompt == 0 && o.bench.n_gen == 0) {
    return Status::invalid_argument("bench cluster: -p 0 and -n 0 leave nothing to measure");
  }
  return Status::ok();
}

Result<std::vector<net::HostPort>> parse_workers(const std::string& list) {
  std::vector<net::HostPort> out;
  size_t at = 0;
  while (at <= list.size()) {
    const size_t comma = std::min(list.find(',', at), list.size());
    if (comma > at) {
      COHORT_ASSIGN_OR_RETURN(net::HostPort hp, net::parse_host_port(list.substr(at, comma - at)));
      out.push_back(hp);
    }
    at = comma + 1;
  }
  return out;
}

std::string placement_text(const cluster::Plan& plan) {
  const int stages = plan.n_stages();
  const size_t per = plan.stage_ranks[0].size();
  return std::to_string(stages) + (stages == 1 ? " stage x " : " stages x ") + std::to_string(per) +
         (per == 1 ? " rank" : " ranks");
}

// The plan the session will make for `mode` on n identical nodes with unbounded memory, to
// skip impossible or repeated modes before starting anything. Empty string: go ahead.
std::string preview_skip(const format::GgufFile& file, const std::string& mode, int n) {
  auto md = cluster::describe_model(file);
  if (!md.is_ok()) return md.status().message();
  std::vector<cluster::NodeDesc> nodes;
  for (int i = 0; i < n; ++i) {
    nodes.push_back({"n" + std::to_string(i), std::numeric_limits<uint64_t>::max() / 4, 1.0});
  }
  cluster::PlanOptions po;
  po.mode = *cluster::parse_parallel_mode(mode);
  po.even_shares = true;
  po.n_ctx = 64;
  auto plan = cluster::plan_placement(nodes, cluster::LinkMatrix::uniform(n, 0, 1e9), *md, po);
  if (!plan.is_ok()) return plan.status().message();
  if (mode == "hybrid" && (plan->n_stages() == 1 || plan->n_stages() == n)) {
    return "hybrid on " + std::to_string(n) + " nodes plans " + placement_text(*plan) +
           ", the same placement as " + (plan->n_stages() == 1 ? "tensor" : "pipeline");
  }
  return "";
}

}  // namespace

Result<std::vector<ClusterBenchRow>> run_cluster_sweep(
    const ClusterSweepOptions& o, const format::GgufFile& file,
    const std::function<void(const ClusterBenchRow&)>& on_row) {
  COHORT_RETURN_IF_ERROR(check_options(o));
  LocalWorkersOptions wo;
  wo.count = o.nodes - 1;
  wo.threads_each = o.threads;
  wo.encrypt = o.encrypt;
  COHORT_ASSIGN_OR_RETURN(std::unique_ptr<LocalWorkers> workers, LocalWorkers::start(wo));

  ClusterOptions co;
  co.model_path = o.model_path;
  COHORT_ASSIGN_OR_RETURN(co.workers, parse_workers(workers->workers_list()));
  COHORT_ASSIGN_OR_RETURN(co.key, net::load_key_file(workers->key_file()));
  co.key.encrypt_traffic = o.encrypt;
  co.plan.even_shares = true;
  co.threads = o.threads;
  co.max_batch = o.batch;
  co.n_ctx = std::max<int64_t>(o.bench.n_prompt, 4 + o.bench.n_gen);

  std::vector<ClusterBenchRow> rows;
  for (const std::string& mode : o.modes) {
    const std::string skip = preview_skip(file, mode, o.nodes);
    for (const std::string& transport : o.transports) {
      for (int64_t latency : o.latencies_us) {
        ClusterBenchRow row;
        row.mode = mode;
        row.transport = transport;
        row.nodes = o.nodes;
        row.link_latency_us = latency;
        row.skipped = skip;
        if (row.skipped.empty()) {
          co.plan.mode = *cluster::parse_parallel_mode(mode);
          co.transport = transport;
          co.link_delay_us = latency;
          auto session = ClusterSession::start(co, file);
          if (!session.is_ok()) {
            row.skipped = session.status().message();
          } else {
            const cluster::Plan& plan = (*session)->plan();
            row.placement = placement_text(plan);
            row.syncs_per_token = critical_path_syncs(plan);
            row.compute_share = compute_share(plan);
            ClusterSession& s = **session;
            auto m = measure_cluster(
                s.stepper(), [&s] { return s.comm_totals(); }, o.bench);
            if (m.is_ok()) {
              row.m = *m;
            } else {
              row.skipped = m.status().message();
            }
          }
        }
        if (!row.skipped.empty()) {
          COHORT_LOG_WARN("bench cluster: %s over %s at %lld us skipped: %s", mode.c_str(),
                          transport.c_str(), static_cast<long long>(latency), row.skipped.c_str());
        }
        if (on_row) on_row(row);
        rows.push_back(std::move(row));
      }
    }
  }
  return rows;
}

}  // namespace cohort::runtime
