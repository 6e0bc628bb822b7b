// cohort demo: the whole system on this machine in one command. Starts 2 `cohort worker`
// processes on loopback (runtime/local_workers.h), serves a model across head + workers
// (the one given with -m, or a small synthetic one made on the spot: random weights, its
// text is noise, and the output says so), sends one chat request and streams the answer,
// then prints tok/s, the placement and the dashboard URL and stays up until Ctrl-C
// (--once: exit after the answer).
#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "cli/commands.h"
#include "cli/serve_stack.h"
#include "core/clock.h"
#include "model/synth.h"
#include "runtime/local_workers.h"

namespace cohort::cli {
namespace {

std::atomic<bool> g_demo_stop{false};
extern "C" void on_demo_signal(int) { g_demo_stop.store(true); }

struct DemoConfig {
  std::string model_path;  // empty: a synthetic model
  int local_workers = 2;
  int threads = 1;  // per node
  std::string host = "127.0.0.1";
  int port = 52415;
  std::string prompt = "Tell me a story about a little cat.";
  int64_t max_tokens = 64;
  uint64_t seed = 42;
  std::string parallel = "auto";
  bool once = false;
};

// Small enough to make and load in a moment, with layers and heads for 3 nodes to share.
Status make_synthetic_model(const std::string& path) {
  model::SynthConfig sc;
  sc.dim = 256;
  sc.n_layers = 6;
  sc.n_heads = 8;
  sc.n_kv_heads = 4;
  sc.ffn_dim = 768;
  sc.n_vocab = 512;
  sc.n_ctx = 1024;
  sc.type = DType::kQ8_0;
  return model::write_synthetic_model(sc, path);
}

std::string layer_range(int64_t begin, int64_t end) {
  if (end <= begin) return "none";
  if (end == begin + 1) return std::to_string(begin);
  return std::to_string(begin) + "-" + std::to_string(end - 1);
}

void print_placement(const runtime::ClusterView& v) {
  std::printf("placement (%s over %s, %zu nodes):\n", v.mode.c_str(), v.transport.c_str(),
              v.nodes.size());
  for (const runtime::NodeView& n : v.nodes) {
    std::printf("  %-10s %-6s layers %-6s heads %-6s %8.1f MiB placed%s%s\n", n.name.c_str(),
                n.role.c_str(), layer_range(n.layer_begin, n.layer_end).c_str(),
                layer_range(n.head_begin, n.head_end).c_str(), n.used_bytes / 1048576.0,
                n.embeds ? "  embeds" : "", n.outputs ? "  outputs" : "");
  }
  for (const runtime::LinkView& l : v.links) {
    if (l.rtt_us <= 0) continue;
    std::printf("  link %s <-> %s: rtt %.0f us, %.2f GB/s\n", v.nodes[l.a].name.c_str(),
                v.nodes[l.b].name.c_str(), l.rtt_us, l.bandwidth_bytes_per_s / 1e9);
  }
}

// Sends the chat request to the engine and streams the answer to stdout.
Status chat_once(runtime::GenerationEngine& engine, const DemoConfig& cfg) {
  runtime::ChatPrompt chat;
  chat.messages.push_back({{"role", "user"}, {"content", cfg.prompt}});
  COHORT_ASSIGN_OR_RETURN(std::string prompt, engine.render_chat(chat));
  runtime::CompletionRequest req;
  req.prompt = std::move(prompt);
  req.prompt_is_chat = true;
  req.max_tokens = cfg.max_tokens;
  req.temperature = 0.8f;
  req.top_k = 40;
  req.seed = cfg.seed;
  req.on_text = [](std::string_view piece) {
    std::fwrite(piece.data(), 1, piece.size(), stdout);
    std::fflush(stdout);
    return true;
  };
  std::printf("\nyou: %s\nmodel: ", cfg.prompt.c_str());
  std::fflush(stdout);
  const double t0 = now_s();
  COHORT_ASSIGN_OR_RETURN(runtime::CompletionResult r, engine.complete(req));
  const double s = now_s() - t0;
  std::printf("\n\n%lld tokens in %.2f s: %.1f tok/s (prompt %lld tokens, finish: %s)\n",
              static_cast<long long>(r.completion_tokens), s,
              s > 0 ? static_cast<double>(r.completion_tokens) / s : 0.0,
              static_cast<long long>(r.prompt_tokens), r.finish_reason.c_str());
  return Status::ok();
}

int demo(const DemoConfig& cfg) {
  std::signal(SIGINT, on_demo_signal);
  std::signal(SIGTERM, on_demo_signal);
  if (!cfg.model_path.empty() && !std::filesystem::is_regular_file(cfg.model_path)) {
    std::fprintf(stderr, "error: demo: no model file at %s\n", cfg.model_path.c_str());
    return 1;
  }
  runtime::LocalWorkersOptions wo;
  wo.count = cfg.local_workers;
  wo.threads_each = cfg.threads;
  auto workers = runtime::LocalWorkers::start(wo);
  if (!workers.is_ok()) {
    std::fprintf(stderr, "error: demo: %s\n", workers.status().message().c_str());
    return 1;
  }
  std::fprintf(stderr, "demo: started %zu workers on loopback: %s\n", (*workers)->size(),
               (*workers)->workers_list().c_str());
  ServeOptions so;
  so.host = cfg.host;
  so.port = cfg.port;
  so.model.model_path = cfg.model_path;
  so.model.threads = cfg.threads;
  so.model.slots = 4;
  so.model.workers = (*workers)->workers_list();
  so.model.key_file = (*workers)->key_file();
  so.model.parallel = cfg.parallel;
  const bool synthetic = cfg.model_path.empty();
  if (synthetic) {
    so.model.model_path = (*workers)->dir() + "/synthetic-demo.gguf";
    so.name = "synthetic-demo";
    so.model_note = "RANDOM WEIGHTS (synthetic): the text is noise";
    Status st = make_synthetic_model(so.model.model_path);
    if (!st.is_ok()) {
      std::fprintf(stderr, "error: demo: %s\n", st.message().c_str());
      return 1;
    }
  }
  auto stack = start_serving(so);
  if (!stack.is_ok()) {
    std::fprintf(stderr, "error: demo: %s\n", stack.status().message().c_str());
    return 1;
  }
  ServeStack& s = **stack;
  if (synthetic) {
    std::printf(
        "model: synthetic-demo (RANDOM WEIGHTS, made on the spot: its text is noise; give -m "
        "MODEL.gguf for a real one)\n");
  } else {
    std::printf("model: %s (%s)\n", s.name.c_str(), s.session->hparams.summary().c_str());
  }
  print_placement(s.cluster_view());
  Status chatted = chat_once(*s.engine, cfg);
  if (!chatted.is_ok()) {
    std::fprintf(stderr, "error: demo: %s\n", chatted.message().c_str());
    return 1;
  }
  std::printf("dashboard: http://%s:%u/\n", cfg.host.c_str(), s.port());
  std::printf(
      "API: http://%s:%u/v1 (OpenAI), /v1/messages (Anthropic), /api (Ollama), model \"%s\"\n",
      cfg.host.c_str(), s.port(), s.name.c_str());
  std::fflush(stdout);
  if (cfg.once) return 0;
  std::fprintf(stderr, "demo: serving until Ctrl-C\n");
  while (!g_demo_stop.load()) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::fprintf(stderr, "demo: stopping\n");
  s.server->drain(5000);
  s.server->stop();
  return 0;
}

}  // namespace

void add_demo_command(CLI::App& app, Runner* runner) {
  auto cfg = std::make_shared<DemoConfig>();
  CLI::App* cmd = app.add_subcommand(
      "demo",
      "Start a local cluster (head + 2 workers), serve a model, chat once, show the dashboard");
  cmd->add_option("-m,--model", cfg->model_path,
                  "GGUF model (default: a small synthetic one with random weights)");
  cmd->add_option("--local-workers", cfg->local_workers, "Worker processes to start")
      ->check(CLI::Range(1, 16))
      ->capture_default_str();
  cmd->add_option("-t,--threads", cfg->threads, "Compute threads per node")
      ->check(CLI::Range(1, 1024))
      ->capture_default_str();
  cmd->add_option("--host", cfg->host, "HTTP address");
  cmd->add_option("--port", cfg->port, "HTTP port (0: any free one)")
      ->check(CLI::Range(0, 65535))
      ->capture_default_str();
  cmd->add_option("-p,--prompt", cfg->prompt, "The chat message to send");
  cmd->add_option("-n,--max-tokens", cfg->max_tokens, "Tokens to generate")
      ->check(CLI::Range(1, 4096))
      ->capture_default_str();
  cmd->add_option("--seed", cfg->seed, "Sampling seed")->capture_default_str();
  cmd->add_option("--parallel", cfg->parallel, "auto | pipeline | tensor | hybrid")
      ->check(CLI::IsMember({"auto", "pipeline", "tensor", "hybrid"}));
  cmd->add_flag("--once", cfg->once, "Exit after the answer instead of serving until Ctrl-C");
  cmd->callback([cfg, runner] { *runner = [cfg] { return demo(*cfg); }; });
}

}  // namespace cohort::cli
