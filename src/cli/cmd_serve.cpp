// cohort serve: the head. Loads the model (or offers several, --models-dir / -m more than
// once, each loaded on demand) on this node or across the cluster and answers
// HTTP in the OpenAI, Anthropic and Ollama dialects on one port (api/api_routes.h), plus
// /v1/cluster/status, the dashboard and /metrics (cli/serve_stack.h), until SIGINT/SIGTERM. `cohort
// cluster status` asks a running head for its nodes and placement.
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "api/http_server.h"
#include "cli/commands.h"
#include "cli/serve_stack.h"
#include "net/frame.h"
#include "net/socket.h"

namespace cohort::cli {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_serve_signal(int) { g_stop.store(true); }

struct ServeConfig {
  ServeOptions serve;
  std::vector<std::string> model_files;  // -m, once or more
  double keep_alive_s = -1;
  double queue_timeout_s = 300;
  double request_timeout_s = 0;
  int shutdown_grace_s = 30;
};

int serve(ServeConfig cfg) {
  std::signal(SIGINT, on_serve_signal);
  std::signal(SIGTERM, on_serve_signal);
  if (cfg.model_files.empty() && cfg.serve.models_dir.empty()) {
    std::fprintf(stderr, "error: serve: give a model (-m FILE) or a --models-dir\n");
    return 2;
  }
  if (cfg.model_files.size() == 1 && cfg.serve.models_dir.empty()) {
    cfg.serve.model.model_path = cfg.model_files[0];
  } else {
    cfg.serve.more_models = cfg.model_files;
  }
  cfg.serve.registry.keep_alive_ms =
      cfg.keep_alive_s < 0 ? -1 : static_cast<int64_t>(cfg.keep_alive_s * 1000);
  cfg.serve.registry.wait_timeout_ms = static_cast<int64_t>(cfg.queue_timeout_s * 1000);
  cfg.serve.request_timeout_ms = static_cast<int64_t>(cfg.request_timeout_s * 1000);
  auto stack = start_serving(cfg.serve);
  if (!stack.is_ok()) {
    std::fprintf(stderr, "error: %s\n", stack.status().message().c_str());
    return 1;
  }
  if (!(*stack)->server) return 0;  // an MPI rank other than 0: its part is done
  api::HttpServer& server = *(*stack)->server;
  std::fprintf(stderr, "serve: %s on http://%s:%u (Ctrl-C to stop; dashboard at /dashboard)\n",
               (*stack)->name.c_str(), cfg.serve.host.c_str(), server.port());
  while (!g_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::fprintf(stderr, "serve: stopping: no new requests; waiting up to %d s for those running\n",
               cfg.shutdown_grace_s);
  const int unfinished = server.drain(static_cast<int64_t>(cfg.shutdown_grace_s) * 1000);
  if (unfinished > 0) {
    std::fprintf(stderr, "serve: %d requests still running are cut off\n", unfinished);
  }
  server.stop();
  std::fprintf(stderr, "serve: stopped; telling the workers\n");
  return 0;
}

// A plain HTTP/1.1 GET over net::Socket: enough for `cluster status` without a client library.
int cluster_status(const std::string& head) {
  auto hp = net::parse_host_port(head);
  if (!hp.is_ok()) {
    std::fprintf(stderr, "error: %s\n", hp.status().message().c_str());
    return 2;
  }
  auto s = net::Socket::connect(*hp, 5000);
  if (!s.is_ok()) {
    std::fprintf(stderr, "error: %s\n", s.status().message().c_str());
    return 1;
  }
  const std::string req =
      "GET /v1/cluster/status HTTP/1.1\r\nHost: " + head + "\r\nConnection: close\r\n\r\n";
  if (!s->write_all(req.data(), req.size(), 5000).is_ok()) return 1;
  std::string resp;
  char buf[4096];
  for (;;) {
    size_t got = 0;
    Status st = s->read_exact_counted(buf, sizeof(buf), 5000, &got);
    resp.append(buf, got);
    if (!st.is_ok()) break;  // the server closed the connection: the response is complete
  }
  const size_t body = resp.find("\r\n\r\n");
  if (resp.rfind("HTTP/1.1 200", 0) != 0 || body == std::string::npos) {
    std::fprintf(stderr, "error: %s answered: %s\n", head.c_str(),
                 resp.substr(0, resp.find('\r')).c_str());
    return 1;
  }
  std::fwrite(resp.data() + body + 4, 1, resp.size() - body - 4, stdout);
  return 0;
}

}  // namespace

void add_serve_command(CLI::App& app, Runner* runner) {
  auto cfg = std::make_shared<ServeConfig>();
  cfg->serve.model.slots = 4;  // concurrent requests share the model, a KV cache each
  CLI::App* cmd =
      app.add_subcommand("serve", "Serve a model over HTTP (on this node or a cluster)");
  add_model_flags(cmd, &cfg->serve.model);
  // serve takes -m more than once (or not at all, with --models-dir).
  cmd->remove_option(cmd->get_option("--model"));
  cmd->add_option("-m,--model", cfg->model_files,
                  "GGUF file; more than once to offer several models (loaded on demand)");
  cmd->add_option("--models-dir", cfg->serve.models_dir,
                  "Offer every .gguf file in this directory, each loaded when first asked for");
  cmd->add_option("--max-loaded", cfg->serve.registry.max_loaded,
                  "Several models: at most this many loaded at once (0: until memory is short); "
                  "the least recently used idle one is unloaded to make room")
      ->check(CLI::Range(0, 1000));
  cmd->add_option("--max-concurrent", cfg->serve.registry.max_active,
                  "Requests one model runs at once (0: no limit; past its slots they queue in "
                  "the engine)")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--max-waiting", cfg->serve.registry.max_waiting,
                  "Requests that may wait for one model (its load, or a turn under "
                  "--max-concurrent); more get 503 with Retry-After")
      ->check(CLI::Range(0, 100000));
  cmd->add_option("--request-timeout", cfg->request_timeout_s,
                  "Seconds a completion may generate before it ends with a timeout error "
                  "(0: no limit)")
      ->check(CLI::Range(0.0, 1e6));
  cmd->add_option("--queue-timeout", cfg->queue_timeout_s,
                  "Seconds a request may wait for a model's load or turn before a 503")
      ->check(CLI::Range(0.001, 1e6));
  cmd->add_option("--keep-alive", cfg->keep_alive_s,
                  "Several models: seconds an idle model stays loaded (< 0: until evicted); "
                  "Ollama's keep_alive overrides it per model")
      ->check(CLI::Range(-1.0, 1e9));
  cmd->add_option("--host", cfg->serve.host, "HTTP address (loopback unless told)");
  cmd->add_option("--port", cfg->serve.port, "HTTP port")->check(CLI::Range(0, 65535));
  cmd->add_option("--api-key", cfg->serve.api_key, "Require this API key (Bearer or x-api-key)");
  cmd->add_option("--shutdown-grace", cfg->shutdown_grace_s,
                  "On SIGTERM/Ctrl-C, seconds to let running requests finish")
      ->check(CLI::Range(0, 3600));
  cmd->add_option("--name", cfg->serve.name, "Model id for clients (default: the file name)");
  cmd->callback([cfg, runner] { *runner = [cfg] { return serve(*cfg); }; });

  auto head = std::make_shared<std::string>("127.0.0.1:52415");
  CLI::App* cl = app.add_subcommand("cluster", "Ask a running head about its cluster");
  cl->require_subcommand(1);
  CLI::App* st = cl->add_subcommand("status", "Nodes, links, placement and why it was chosen");
  st->add_option("--head", *head, "The head's HTTP address");
  st->callback([head, runner] { *runner = [head] { return cluster_status(*head); }; });
}

}  // namespace cohort::cli
