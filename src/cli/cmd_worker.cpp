// cohort worker: a compute node that heads discover and drive.
#include <unistd.h>

#include <atomic>
#include <csignal>
#include <cstdio>
#include <memory>
#include <string>

#include "cli/commands.h"
#include "net/cluster_key.h"
#include "runtime/worker_service.h"

namespace cohort::cli {
namespace {

std::atomic<bool> g_stop{false};
extern "C" void on_signal(int) { g_stop.store(true); }

struct WorkerArgs {
  std::string listen = "127.0.0.1:52417";
  std::string key_file;
  bool encrypt = false;
  std::string name;
  int threads = 0;
  bool no_announce = false;
  std::string group = "239.255.77.77:52416";
  std::string cache_dir;
  std::string peers;
  int64_t inject_delay_ms = 0;
};

int worker(const WorkerArgs& a) {
  runtime::WorkerOptions o;
  auto listen = net::parse_host_port(a.listen);
  auto group = net::parse_host_port(a.group);
  auto key = net::load_key_file(a.key_file);
  for (const Status* s : {&listen.status(), &group.status(), &key.status()}) {
    if (!s->is_ok()) {
      std::fprintf(stderr, "error: %s\n", s->message().c_str());
      return 2;
    }
  }
  o.cache_dir = a.cache_dir;
  if (a.inject_delay_ms < 0 || a.inject_delay_ms > 60'000) {
    std::fprintf(stderr, "error: --inject-delay-ms must be 0..60000\n");
    return 2;
  }
  o.inject_delay_ms = a.inject_delay_ms;
  // host[:port] of heads to announce to by unicast; the port defaults to discovery's.
  for (size_t at = 0; at < a.peers.size();) {
    size_t comma = a.peers.find(',', at);
    if (comma == std::string::npos) comma = a.peers.size();
    std::string item = a.peers.substr(at, comma - at);
    at = comma + 1;
    if (item.empty()) continue;
    if (item.find(':') == std::string::npos) item += ":" + std::to_string(group->port);
    auto peer = net::parse_host_port(item);
    if (!peer.is_ok()) {
      std::fprintf(stderr, "error: --peers: %s\n", peer.status().message().c_str());
      return 2;
    }
    o.peers.push_back(*peer);
  }
  o.listen = *listen;
  o.multicast_group = *group;
  o.key = *key;
  o.key.encrypt_traffic = a.encrypt;
  o.threads = a.threads;
  o.announce = !a.no_announce;
  if (a.name.empty()) {
    char host[256] = "worker";
    ::gethostname(host, sizeof(host) - 1);
    o.name = std::string(host) + ":" + std::to_string(listen->port);
  } else {
    o.name = a.name;
  }
  std::signal(SIGINT, on_signal);
  std::signal(SIGTERM, on_signal);
  Status s = runtime::run_worker(o, g_stop);
  if (!s.is_ok()) {
    std::fprintf(stderr, "error: %s\n", s.message().c_str());
    return 1;
  }
  return 0;
}

}  // namespace

void add_worker_command(CLI::App& app, Runner* runner) {
  auto a = std::make_shared<WorkerArgs>();
  CLI::App* cmd = app.add_subcommand("worker", "Run a compute node that heads discover and drive");
  cmd->add_option("--listen", a->listen, "Control address (use 0.0.0.0:PORT to serve the LAN)");
  cmd->add_option("--key-file", a->key_file, "Cluster key file (from `cohort key new`)")
      ->required();
  cmd->add_flag("--encrypt", a->encrypt,
                "Encrypt and authenticate all cluster traffic (the head and every worker need "
                "--encrypt)");
  cmd->add_option("--name", a->name, "Node name (default host:port)");
  cmd->add_option("-t,--threads", a->threads, "Compute threads (default: all cores)");
  cmd->add_flag("--no-announce", a->no_announce, "Do not advertise by UDP multicast");
  cmd->add_option("--peers", a->peers,
                  "Heads to announce to by unicast where multicast is blocked: host[:port],...");
  cmd->add_option("--multicast", a->group, "Discovery group address");
  cmd->add_option("--cache-dir", a->cache_dir,
                  "Where shipped shards are kept (default: ~/.cache/cohort/shards)");
  cmd->add_option("--inject-delay-ms", a->inject_delay_ms,
                  "Testing: sleep this long in every step, to look like a slow node");
  cmd->callback([a, runner] { *runner = [a] { return worker(*a); }; });
}

void add_key_command(CLI::App& app, Runner* runner) {
  CLI::App* cmd = app.add_subcommand("key", "Cluster keys");
  cmd->require_subcommand(1);
  CLI::App* make = cmd->add_subcommand("new", "Print a new random cluster key (save it to a file)");
  make->callback([runner] {
    *runner = [] {
      std::printf("%s\n", net::key_to_hex(net::generate_cluster_key()).c_str());
      return 0;
    };
  });
}

}  // namespace cohort::cli
