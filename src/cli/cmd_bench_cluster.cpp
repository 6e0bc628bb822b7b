// cohort bench cluster: a model on a local cluster of N nodes (this process and N-1 worker
// processes) in each placement mode, over each transport, at each injected link latency;
// then the step-time model fitted to the measurements and projected to larger clusters
// (runtime/cluster_bench_sweep.h, runtime/cluster_bench_report.h).
// stdout: the table and the fit (or JSON lines with --json); --svg FILE: the plot; progress
// and skipped configurations go to stderr.
#include <cstdio>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/model_source.h"
#include "runtime/cluster_bench_report.h"
#include "runtime/cluster_bench_sweep.h"

namespace cohort::cli {
namespace {

struct BenchClusterConfig {
  runtime::ClusterSweepOptions sweep;
  bool json = false;
  std::string svg_path;
  double node_gbps = 400;
  double link_gbps = 4;
};

std::string file_name(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

int bench_cluster(const BenchClusterConfig& cfg) {
  auto file = open_model(cfg.sweep.model_path, "");
  if (!file.is_ok()) {
    std::fprintf(stderr, "error: %s\n", file.status().message().c_str());
    return 1;
  }
  const std::string model = file_name(cfg.sweep.model_path);
  if (!cfg.json) std::fputs(runtime::cluster_table_header().c_str(), stdout);
  auto rows = runtime::run_cluster_sweep(cfg.sweep, *file, [&](const runtime::ClusterBenchRow& r) {
    const std::string line =
        cfg.json ? runtime::cluster_json_line(model, r) + "\n" : runtime::cluster_table_row(r);
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
  });
  if (!rows.is_ok()) {
    std::fprintf(stderr, "error: %s\n", rows.status().message().c_str());
    return rows.status().code() == StatusCode::kInvalidArgument ? 2 : 1;
  }
  if (!cfg.svg_path.empty()) {
    std::ofstream out(cfg.svg_path, std::ios::binary | std::ios::trunc);
    out << runtime::cluster_svg(
        model + ": " + std::to_string(cfg.sweep.nodes) + " nodes on one machine", *rows);
    if (!out.good()) {
      std::fprintf(stderr, "error: bench cluster: cannot write %s\n", cfg.svg_path.c_str());
      return 1;
    }
  }
  runtime::ProjectionNode node;
  node.node_bytes_per_s = cfg.node_gbps * 1e9;
  node.link_bytes_per_s = cfg.link_gbps * 1e9;
  const std::vector<runtime::StepSample> samples = runtime::step_samples(*rows);
  auto fit = runtime::fit_step_model(samples);
  if (fit.is_ok()) {
    node.latency_factor = fit->latency_factor > 0 ? fit->latency_factor : 1;
    std::fputs(cfg.json ? (runtime::fit_json_line(*fit, samples) + "\n").c_str()
                        : ("\n" + runtime::fit_text(*fit, samples)).c_str(),
               stdout);
  } else {
    std::fprintf(stderr,
                 "bench cluster: no step-time model (%s); projections assume one "
                 "latency per hop\n",
                 fit.status().message().c_str());
  }
  std::fputs(cfg.json ? runtime::projection_json_lines(node).c_str()
                      : ("\n" + runtime::projection_text(node)).c_str(),
             stdout);
  return 0;
}

}  // namespace

void add_bench_cluster_command(CLI::App& bench, Runner* runner) {
  auto cfg = std::make_shared<BenchClusterConfig>();
  runtime::ClusterSweepOptions& s = cfg->sweep;
  CLI::App* cmd = bench.add_subcommand(
      "cluster", "Measure a model on a local cluster across modes, transports and link latencies");
  cmd->add_option("-m,--model", s.model_path, "GGUF file")->required();
  cmd->add_option("--nodes", s.nodes, "Nodes, the head included (workers are started here)")
      ->check(CLI::Range(2, 64));
  cmd->add_option("-t,--threads", s.threads, "Compute threads of every node")
      ->check(CLI::Range(1, 1024));
  cmd->add_option("-b,--batch", s.batch, "Prompt tokens per forward step")
      ->check(CLI::Range(1, 4096));
  cmd->add_option("--modes", s.modes, "Placement modes (pipeline,tensor,hybrid)")->delimiter(',');
  cmd->add_option("--transports", s.transports, "Transports (tcp,shm)")->delimiter(',');
  cmd->add_option("--latencies", s.latencies_us, "Injected one-way link latencies, us")
      ->delimiter(',');
  cmd->add_option("-p,--n-prompt", s.bench.n_prompt, "Prompt tokens of the pp test (0: skip)")
      ->check(CLI::Range(0, 1 << 16));
  cmd->add_option("-n,--n-gen", s.bench.n_gen, "Generated tokens of the tg test (0: skip)")
      ->check(CLI::Range(0, 1 << 16));
  cmd->add_option("-r,--repetitions", s.bench.reps, "Timed repetitions of each test (median)")
      ->check(CLI::Range(1, 1000));
  cmd->add_flag("--encrypt", s.encrypt, "Seal every cluster link (measures what --encrypt costs)");
  cmd->add_flag("--json", cfg->json, "JSON lines: measurements, the fit and the projections");
  cmd->add_option("--svg", cfg->svg_path, "Write the plot of tg tok/s against latency here");
  cmd->add_option("--node-gbps", cfg->node_gbps,
                  "Projections: weight bandwidth of one node, GB/s (Mac Studio-like: 400)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--link-gbps", cfg->link_gbps, "Projections: link bandwidth, GB/s")
      ->check(CLI::PositiveNumber);
  cmd->callback([cfg, runner] { *runner = [cfg] { return bench_cluster(*cfg); }; });
}

}  // namespace cohort::cli
