#include "runtime/cluster_session.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <mutex>
#include <optional>

#include "cluster/fingerprint.h"
#include "cluster/model_desc.h"
#include "comm/counting_communicator.h"
#include "core/clock.h"
#include "core/log.h"
#include "kernels/kernels.h"
#include "model/shard_export.h"
#include "model/transformer.h"
#include "net/discovery.h"
#include "net/frame.h"
#include "net/handshake.h"
#include "net/socket.h"
#include "runtime/cluster_stepper.h"
#include "runtime/data_plane.h"
#include "runtime/heartbeat_monitor.h"
#include "runtime/link_breaker.h"
#include "runtime/link_probe.h"
#include "runtime/node_probe.h"
#include "runtime/shard_transfer.h"
#include "runtime/slow_node_detector.h"

namespace cohort::runtime {

// One connected worker as the head sees it. Not in the anonymous namespace: a member of
// ClusterSession::Impl (which has linkage) may not have a type without linkage.
struct ClusterSessionWorker {
  net::HostPort address;
  net::Socket control;
  cluster::NodeInfo info;
  LinkReport link;
};

namespace {

constexpr int64_t kIoTimeoutMs = 30'000;
// A worker answering setup may first hash a cached shard or page in its model: allow time
// for tens of GiB from disk.
constexpr int64_t kSetupTimeoutMs = 600'000;

// Sends one message and reads the answer, which must be of type expect or expect_too.
Result<net::Frame> request(net::Socket& s, uint16_t type, const std::vector<uint8_t>& payload,
                           uint16_t expect, uint16_t expect_too = 0,
                           int64_t timeout_ms = kIoTimeoutMs) {
  COHORT_RETURN_IF_ERROR(net::write_frame(s, type, payload.data(), payload.size(), kIoTimeoutMs));
  COHORT_ASSIGN_OR_RETURN(net::Frame f,
                          net::read_frame(s, cluster::kMaxControlPayload, timeout_ms));
  if (f.type != expect && (expect_too == 0 || f.type != expect_too)) {
    return Status::corrupt("cluster: " + s.peer() + " answered message " + std::to_string(f.type) +
                           ", expected " + std::to_string(expect));
  }
  return f;
}

void report(EventLog* events, std::string kind, std::string message) {
  if (events != nullptr) events->append(std::move(kind), std::move(message));
}

// Slow links (cluster_view.h) are reported once per placement.
void report_slow_links(const ClusterView& v, EventLog* events) {
  if (events == nullptr) return;
  const double median = median_rtt_us(v.links);
  for (const LinkView& l : v.links) {
    if (!is_slow_link(l, median)) continue;
    char buf[256];
    std::snprintf(buf, sizeof(buf), "slow link %s <-> %s: rtt %.0f us (typical %.0f us)",
                  v.nodes[l.a].name.c_str(), v.nodes[l.b].name.c_str(), l.rtt_us, median);
    events->append("slow_link", buf);
  }
}

}  // namespace

struct ClusterSession::Impl {
  ClusterOptions options;
  const format::GgufFile* file = nullptr;
  std::vector<ClusterSessionWorker> workers;
  cluster::NodeInfo head_info;
  cluster::Plan plan;
  std::unique_ptr<ThreadPool> pool;
  DataPlane dp;
  std::unique_ptr<model::Transformer> model;
  std::vector<model::KvCache> kv_slots;
  std::unique_ptr<ClusterRank> rank;
  std::unique_ptr<ClusterStepper> stepper;
  std::shared_ptr<comm::CommCounters> comm_counters = std::make_shared<comm::CommCounters>();
  uint16_t data_port = 0;  // the head's tcp mesh port (0: shm)
  StepTimes head_times;
  std::unique_ptr<SlowNodeDetector> detector;  // the monitor's thread only
  mutable std::mutex slow_mu;
  std::optional<SlowNode> slow;  // guarded by slow_mu
  // Last: its thread uses the members above, so it stops first.
  std::unique_ptr<HeartbeatMonitor> monitor;

  // peer_links[i][j]: worker i's measured link to worker j (rtt 0 when unmeasured).
  std::vector<std::vector<LinkReport>> peer_links;

  Status connect_workers();
  void probe_worker_links();
  Status setup();
  Status setup_worker(ClusterSessionWorker& w, const cluster::SetupRequest& req);
  void watch_workers();
  void note_step_times(size_t worker, const std::vector<uint8_t>& payload);
};

namespace {

// Weights per node for the slow-node rule: the plan's bytes for its rank over its measured
// kernel speed.
std::vector<double> expected_step_weights(const cluster::Plan& plan,
                                          const std::vector<double>& node_gbps) {
  std::vector<double> w(node_gbps.size(), 0.0);
  for (size_t r = 0; r < plan.ranks.size() && r < plan.rank_bytes.size(); ++r) {
    const int n = plan.ranks[r].node;
    if (n < 0 || static_cast<size_t>(n) >= w.size()) continue;
    const double gbps =
        node_gbps[static_cast<size_t>(n)] > 0 ? node_gbps[static_cast<size_t>(n)] : 1.0;
    w[static_cast<size_t>(n)] += static_cast<double>(plan.rank_bytes[r]) / gbps;
  }
  return w;
}

}  // namespace

// A worker's heartbeat: its step times, and the head's own, go to the slow-node rule.
void ClusterSession::Impl::note_step_times(size_t worker, const std::vector<uint8_t>& payload) {
  cluster::Heartbeat hb;
  if (Status st = cluster::decode(payload, &hb); !st.is_ok()) {
    COHORT_LOG_WARN("cluster: %s: %s", workers[worker].info.name.c_str(), st.message().c_str());
    return;
  }
  (void)detector->report(
      0, head_times.steps.load(std::memory_order_relaxed),
      static_cast<double>(head_times.busy_ns.load(std::memory_order_relaxed)) * 1e-9);
  const std::string verdict =
      detector->report(worker + 1, static_cast<int64_t>(hb.steps), hb.busy_s);
  if (verdict.empty()) return;
  COHORT_LOG_WARN("cluster: %s; placing the model without it", verdict.c_str());
  report(options.events, "slow_node", verdict + "; placing the model without it");
  std::lock_guard<std::mutex> lock(slow_mu);
  if (!slow) slow = SlowNode{workers[worker].info.name, workers[worker].address, verdict};
}

// From here on every worker sends heartbeats; a lost one breaks the head's data-plane links.
void ClusterSession::Impl::watch_workers() {
  std::vector<HeartbeatMonitor::Peer> peers;
  std::vector<std::string> names = {head_info.name};
  std::vector<double> gbps = {head_info.matvec_gbps};
  for (ClusterSessionWorker& w : workers) {
    peers.push_back({w.info.name, &w.control});
    names.push_back(w.info.name);
    gbps.push_back(w.info.matvec_gbps);
  }
  detector =
      std::make_unique<SlowNodeDetector>(std::move(names), expected_step_weights(plan, gbps));
  const uint16_t port = data_port;
  monitor = std::make_unique<HeartbeatMonitor>(
      std::move(peers), cluster::kHeartbeatSilenceMs,
      [port](const std::string& why) {
        if (port == 0) {
          COHORT_LOG_WARN("cluster: shm data plane: steps fail when they time out (%s)",
                          why.c_str());
          return;
        }
        const int n = shutdown_connections_on_port(port);
        COHORT_LOG_INFO("cluster: broke the head's %d data-plane links", n);
      },
      [this](size_t worker, const std::vector<uint8_t>& payload) {
        note_step_times(worker, payload);
      });
}

Status ClusterSession::Impl::setup_worker(ClusterSessionWorker& w,
                                          const cluster::SetupRequest& req) {
  COHORT_ASSIGN_OR_RETURN(
      net::Frame f, request(w.control, cluster::kMsgSetup, cluster::encode(req),
                            cluster::kMsgShardWanted, cluster::kMsgSetupDone, kSetupTimeoutMs));
  if (f.type == cluster::kMsgShardWanted) {
    const model::ShardSpec& shard = req.plan.ranks[req.rank].shard;
    const std::string key = model::shard_key(req.model_fingerprint, req.model_bytes, shard);
    net::WireReader r(f.payload);
    std::string asked;
    COHORT_RETURN_IF_ERROR(r.str(&asked, 64));
    if (asked != key) {
      return Status::corrupt("cluster: " + w.info.name + " asked for shard " + asked +
                             ", expected " + key);
    }
    COHORT_ASSIGN_OR_RETURN(format::GgufWriter shard_file, model::shard_writer(*file, shard));
    COHORT_LOG_INFO("cluster: shipping %.1f MiB of weights (%s) to %s",
                    shard_file.total_bytes() / 1048576.0, shard.to_string().c_str(),
                    w.info.name.c_str());
    COHORT_RETURN_IF_ERROR(send_shard(w.control, shard_file, key, w.info.name, kIoTimeoutMs));
    COHORT_ASSIGN_OR_RETURN(
        f, net::read_frame(w.control, cluster::kMaxControlPayload, kSetupTimeoutMs));
    if (f.type != cluster::kMsgSetupDone) {
      return Status::corrupt("cluster: " + w.info.name + " answered message " +
                             std::to_string(f.type) + " after its shard");
    }
  }
  net::WireReader r(f.payload.data(), f.payload.size());
  uint8_t ok = 0;
  std::string msg;
  COHORT_RETURN_IF_ERROR(r.u8(&ok));
  COHORT_RETURN_IF_ERROR(r.str(&msg, 4096));
  if (!ok) return Status::unavailable(msg);
  return Status::ok();
}

Status ClusterSession::Impl::connect_workers() {
  std::vector<net::HostPort> addrs = options.workers;
  if (addrs.empty()) {
    COHORT_ASSIGN_OR_RETURN(auto heard,
                            net::discover(options.multicast_group, options.discover_ms,
                                          options.bind_host));  // multicast needs an interface
    for (const net::Announcement& a : heard)
      if (a.role == "worker") addrs.push_back(a.control);
    COHORT_LOG_INFO("cluster: discovered %zu workers by multicast", addrs.size());
  }
  for (const net::HostPort& a : addrs) {
    const bool excluded = std::any_of(options.excluded.begin(), options.excluded.end(),
                                      [&](const net::HostPort& x) { return x == a; });
    if (excluded) {
      COHORT_LOG_INFO("cluster: worker %s left out: found slow earlier", a.to_string().c_str());
      continue;
    }
    auto s = net::Socket::connect(a, 5000);
    if (!s.is_ok()) {
      COHORT_LOG_WARN("cluster: worker %s unreachable: %s", a.to_string().c_str(),
                      s.status().message().c_str());
      report(options.events, "unreachable",
             "worker " + a.to_string() + " unreachable: " + s.status().message());
      continue;
    }
    net::PeerInfo mine;
    mine.name = options.name;
    mine.role = "head";
    auto peer = net::handshake(*s, options.key, mine, 5000);
    if (!peer.is_ok()) {
      COHORT_LOG_WARN("cluster: worker %s refused: %s", a.to_string().c_str(),
                      peer.status().message().c_str());
      report(options.events, "refused",
             "worker " + a.to_string() + " refused the handshake: " + peer.status().message());
      continue;
    }
    ClusterSessionWorker w;
    w.address = a;
    w.control = std::move(s).value();
    // A worker busy with another head says so (kMsgError) and is left out.
    COHORT_ASSIGN_OR_RETURN(net::Frame f, request(w.control, cluster::kMsgNodeInfoRequest, {},
                                                  cluster::kMsgNodeInfo, cluster::kMsgError));
    if (f.type == cluster::kMsgError) {
      net::WireReader r(f.payload);
      std::string why;
      (void)r.str(&why, 4096);
      COHORT_LOG_WARN("cluster: worker %s left out: %s", a.to_string().c_str(), why.c_str());
      continue;
    }
    COHORT_RETURN_IF_ERROR(cluster::decode(f.payload, &w.info));
    COHORT_ASSIGN_OR_RETURN(w.link, probe_link(w.control, kIoTimeoutMs));
    w.link.node = w.info.name;
    COHORT_LOG_INFO(
        "cluster: worker %s at %s: %.0f MiB free, %.1f GB/s kernels, rtt %.0f us, %.2f GB/s",
        w.info.name.c_str(), a.to_string().c_str(), w.info.free_bytes / 1048576.0,
        w.info.matvec_gbps, w.link.rtt_us, w.link.bandwidth_bytes_per_s / 1e9);
    workers.push_back(std::move(w));
  }
  return Status::ok();
}

// Each pair of workers once (links are taken as symmetric). A failed probe is logged and
// leaves the pair to the head-based estimate; only a broken control connection is fatal,
// and setup() finds that out.
void ClusterSession::Impl::probe_worker_links() {
  const size_t n = workers.size();
  peer_links.assign(n, std::vector<LinkReport>(n));
  for (size_t i = 0; i < n; ++i)
    for (size_t j = i + 1; j < n; ++j) {
      net::WireWriter p;
      p.str(workers[j].address.to_string());
      auto f = request(workers[i].control, cluster::kMsgProbePeer, p.data(), cluster::kMsgPeerLink,
                       cluster::kMsgError);
      Status st = f.status();
      LinkReport r;
      if (st.is_ok()) {
        net::WireReader rd(f->payload);
        if (f->type == cluster::kMsgError) {
          std::string why;
          st = rd.str(&why, 4096);
          if (st.is_ok()) st = Status::unavailable(why);
        } else {
          st = rd.f64(&r.rtt_us);
          if (st.is_ok()) st = rd.f64(&r.bandwidth_bytes_per_s);
          if (st.is_ok() && !(r.rtt_us > 0 && r.bandwidth_bytes_per_s > 0)) {
            st = Status::corrupt("nonsense measurement");
          }
        }
      }
      if (!st.is_ok()) {
        COHORT_LOG_WARN("cluster: link %s <-> %s not measured: %s", workers[i].info.name.c_str(),
                        workers[j].info.name.c_str(), st.message().c_str());
        continue;
      }
      r.node = workers[j].info.name;
      peer_links[i][j] = r;
      peer_links[j][i] = r;
      peer_links[j][i].node = workers[i].info.name;
      COHORT_LOG_INFO("cluster: link %s <-> %s: rtt %.0f us, %.2f GB/s",
                      workers[i].info.name.c_str(), workers[j].info.name.c_str(), r.rtt_us,
                      r.bandwidth_bytes_per_s / 1e9);
    }
}

Status ClusterSession::Impl::setup() {
  const int n = static_cast<int>(workers.size()) + 1;
  head_info = probe_this_node(options.name, options.threads);
  std::vector<cluster::NodeDesc> nodes;
  nodes.push_back({head_info.name, head_info.free_bytes, 1.0});
  for (const ClusterSessionWorker& w : workers) {
    const double speed =
        head_info.matvec_gbps > 0 ? w.info.matvec_gbps / head_info.matvec_gbps : 1.0;
    nodes.push_back({w.info.name, w.info.free_bytes, std::clamp(speed, 0.25, 4.0)});
  }
  // Links, one way = rtt / 2: head-worker and worker-worker as measured; a worker pair
  // that could not be measured is taken as the slower of their links to the head.
  cluster::LinkMatrix links = cluster::LinkMatrix::uniform(n, 0, 1e12);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < n; ++j) {
      if (i == j) continue;
      auto one = [&](int k) { return k == 0 ? 0.0 : workers[k - 1].link.rtt_us / 2; };
      auto bw = [&](int k) { return k == 0 ? 1e12 : workers[k - 1].link.bandwidth_bytes_per_s; };
      double lat = std::max(one(i), one(j)), rate = std::min(bw(i), bw(j));
      if (i > 0 && j > 0 && peer_links[i - 1][j - 1].rtt_us > 0) {
        lat = peer_links[i - 1][j - 1].rtt_us / 2;
        rate = peer_links[i - 1][j - 1].bandwidth_bytes_per_s;
      }
      links.latency_us[i][j] = lat + options.link_delay_us;
      links.bandwidth_bytes_per_s[i][j] = rate;
    }
  COHORT_ASSIGN_OR_RETURN(cluster::ModelDesc md, cluster::describe_model(*file, options.kv_type));
  cluster::PlanOptions po = options.plan;
  po.n_ctx = options.n_ctx;
  po.n_slots = options.n_slots;
  COHORT_ASSIGN_OR_RETURN(plan, cluster::plan_placement(nodes, links, md, po));
  COHORT_LOG_INFO("cluster: plan\n%s", plan.to_string().c_str());

  cluster::SetupRequest req;
  req.model_path = options.model_path;
  req.model_bytes = file->file_bytes();
  req.model_fingerprint = cluster::model_fingerprint(*file);
  req.plan = plan;
  req.transport = options.transport;
  req.link_delay_us = options.link_delay_us;
  req.threads = 0;
  req.n_ctx = options.n_ctx;
  req.max_batch = options.max_batch;
  req.kv_type = static_cast<uint32_t>(options.kv_type);
  req.ship_always = options.ship_always;
  req.n_slots = static_cast<int32_t>(options.n_slots);

  std::optional<comm::TcpMeshListener> listener;
  if (options.transport == "tcp") {
    COHORT_ASSIGN_OR_RETURN(auto l,
                            comm::TcpMeshListener::listen(net::HostPort{options.bind_host, 0}));
    data_port = l.port();
    req.endpoints.push_back(net::HostPort{options.bind_host, l.port()}.to_string());
    listener.emplace(std::move(l));
    for (ClusterSessionWorker& w : workers) {
      net::WireWriter p;
      p.str("tcp");
      COHORT_ASSIGN_OR_RETURN(
          net::Frame f, request(w.control, cluster::kMsgPrepare, p.data(), cluster::kMsgPrepared));
      net::WireReader r(f.payload.data(), f.payload.size());
      uint32_t port = 0;
      COHORT_RETURN_IF_ERROR(r.u32(&port));
      if (port == 0 || port > 65535)
        return Status::corrupt("cluster: bad data port from " + w.info.name);
      req.endpoints.push_back(
          net::HostPort{w.address.host, static_cast<uint16_t>(port)}.to_string());
    }
  } else {
    req.shm_name =
        "/cohort-" + std::to_string(::getpid()) + "-" + std::to_string(now_ns() % 1000000007);
  }

  // Every worker loads and validates its shard first (shipped to it when it lacks the
  // model); only then does anyone join.
  for (size_t i = 0; i < workers.size(); ++i) {
    req.rank = static_cast<int32_t>(i + 1);
    COHORT_RETURN_IF_ERROR(setup_worker(workers[i], req));
  }
  req.rank = 0;
  pool = std::make_unique<ThreadPool>(options.threads);
  COHORT_ASSIGN_OR_RETURN(dp, join_data_plane(req, std::move(listener), options.key, kIoTimeoutMs));
  count_traffic(&dp, comm_counters);
  COHORT_ASSIGN_OR_RETURN(model,
                          model::Transformer::create(*file, plan.ranks[0].shard, *dp.stage, *pool,
                                                     kernels::best(), options.max_batch));
  for (int64_t s = 0; s < options.n_slots; ++s) {
    COHORT_ASSIGN_OR_RETURN(model::KvCache cache, model->new_cache(options.n_ctx, options.kv_type));
    kv_slots.push_back(std::move(cache));
  }
  rank = std::make_unique<ClusterRank>(plan, 0, *dp.world, *model, kv_slots);
  rank->time_steps(&head_times, comm_counters.get());
  stepper = std::make_unique<ClusterStepper>(*rank, *model, kv_slots);
  watch_workers();
  return Status::ok();
}

Result<std::unique_ptr<ClusterSession>> ClusterSession::start(const ClusterOptions& options,
                                                              const format::GgufFile& file) {
  if (options.transport != "tcp" && options.transport != "shm") {
    return Status::invalid_argument("cluster: --transport must be tcp or shm");
  }
  if (options.n_slots < 1 || options.n_slots > cluster::kMaxSlots) {
    return Status::invalid_argument("cluster: --slots must be 1.." +
                                    std::to_string(cluster::kMaxSlots));
  }
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->file = &file;
  COHORT_RETURN_IF_ERROR(impl->connect_workers());
  impl->probe_worker_links();
  COHORT_RETURN_IF_ERROR(impl->setup());
  auto session = std::unique_ptr<ClusterSession>(new ClusterSession(std::move(impl)));
  report_slow_links(session->view(), options.events);
  return session;
}

ClusterSession::ClusterSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

ClusterSession::~ClusterSession() {
  if (impl_->rank) {
    Status s = impl_->rank->stop();
    if (!s.is_ok()) COHORT_LOG_WARN("cluster: stopping workers: %s", s.message().c_str());
  }
  impl_->monitor.reset();  // the workers' step loops have ended: their heartbeats stop
  for (ClusterSessionWorker& w : impl_->workers) {
    Status s = net::write_frame(w.control, cluster::kMsgShutdown, nullptr, 0, 2000);
    (void)s;  // a worker that has gone needs no goodbye
  }
}

Stepper& ClusterSession::stepper() { return *impl_->stepper; }
std::optional<SlowNode> ClusterSession::slow_node() const {
  std::lock_guard<std::mutex> lock(impl_->slow_mu);
  return impl_->slow;
}

std::string ClusterSession::lost() const {
  return impl_->monitor ? impl_->monitor->lost() : std::string();
}
const cluster::Plan& ClusterSession::plan() const { return impl_->plan; }
comm::CommTotals ClusterSession::comm_totals() const { return impl_->comm_counters->totals(); }

ClusterView ClusterSession::view() const {
  const Impl& im = *impl_;
  ClusterView v;
  v.clustered = true;
  v.state = "placed";
  v.mode = cluster::parallel_mode_name(im.plan.mode);
  v.transport = im.options.transport;
  v.why = im.plan.why;
  auto node = [](const cluster::NodeInfo& info, std::string role, std::string address) {
    NodeView n;
    n.name = info.name;
    n.role = std::move(role);
    n.address = std::move(address);
    n.free_bytes = info.free_bytes;
    n.total_bytes = info.total_bytes;
    n.kernel_gbps = info.matvec_gbps;
    n.isa = info.isa;
    return n;
  };
  v.nodes.push_back(node(im.head_info, "head", ""));
  for (const ClusterSessionWorker& w : im.workers)
    v.nodes.push_back(node(w.info, "worker", w.address.to_string()));
  // Plan ranks map to node indices in the same order (rank r runs on node plan.ranks[r].node).
  for (size_t r = 0; r < im.plan.ranks.size(); ++r) {
    const cluster::RankPlan& rp = im.plan.ranks[r];
    if (rp.node < 0 || static_cast<size_t>(rp.node) >= v.nodes.size()) continue;
    NodeView& n = v.nodes[rp.node];
    n.stage = rp.stage;
    n.layer_begin = rp.shard.layer_begin;
    n.layer_end = rp.shard.layer_end;
    n.head_begin = rp.shard.head_begin;
    n.head_end = rp.shard.head_end;
    n.embeds = rp.shard.embeds;
    n.outputs = rp.shard.outputs;
    if (r < im.plan.rank_bytes.size()) n.used_bytes = im.plan.rank_bytes[r];
    v.n_layers = std::max(v.n_layers, rp.shard.layer_end);
    v.n_heads = std::max(v.n_heads, rp.shard.head_end);
  }
  for (size_t i = 0; i < im.workers.size(); ++i) {
    v.links.push_back({0, static_cast<int>(i + 1), im.workers[i].link.rtt_us,
                       im.workers[i].link.bandwidth_bytes_per_s});
  }
  for (size_t i = 0; i < im.workers.size(); ++i)
    for (size_t j = i + 1; j < im.workers.size(); ++j) {
      const LinkReport& r = im.peer_links[i][j];
      v.links.push_back(
          {static_cast<int>(i + 1), static_cast<int>(j + 1), r.rtt_us, r.bandwidth_bytes_per_s});
    }
  return v;
}

std::string ClusterSession::status_report() const {
  std::string s = "nodes:\n";
  char buf[256];
  std::snprintf(buf, sizeof(buf), "  %-12s (head) %8.0f MiB free  %5.1f GB/s kernels  %s\n",
                impl_->head_info.name.c_str(), impl_->head_info.free_bytes / 1048576.0,
                impl_->head_info.matvec_gbps, impl_->head_info.isa.c_str());
  s += buf;
  for (const ClusterSessionWorker& w : impl_->workers) {
    std::snprintf(buf, sizeof(buf), "  %-12s %-21s %8.0f MiB free  %5.1f GB/s kernels  %s\n",
                  w.info.name.c_str(), w.address.to_string().c_str(), w.info.free_bytes / 1048576.0,
                  w.info.matvec_gbps, w.info.isa.c_str());
    s += buf;
  }
  s += "links (measured):\n";
  const char* delayed = impl_->options.link_delay_us ? " (plus injected delay)" : "";
  for (const ClusterSessionWorker& w : impl_->workers) {
    std::snprintf(buf, sizeof(buf), "  %-12s <-> %-12s rtt %8.1f us  %8.2f GB/s%s\n",
                  impl_->head_info.name.c_str(), w.info.name.c_str(), w.link.rtt_us,
                  w.link.bandwidth_bytes_per_s / 1e9, delayed);
    s += buf;
  }
  for (size_t i = 0; i < impl_->workers.size(); ++i)
    for (size_t j = i + 1; j < impl_->workers.size(); ++j) {
      const LinkReport& r = impl_->peer_links[i][j];
      if (r.rtt_us <= 0) {
        std::snprintf(buf, sizeof(buf), "  %-12s <-> %-12s not measured\n",
                      impl_->workers[i].info.name.c_str(), impl_->workers[j].info.name.c_str());
      } else {
        std::snprintf(buf, sizeof(buf), "  %-12s <-> %-12s rtt %8.1f us  %8.2f GB/s%s\n",
                      impl_->workers[i].info.name.c_str(), impl_->workers[j].info.name.c_str(),
                      r.rtt_us, r.bandwidth_bytes_per_s / 1e9, delayed);
      }
      s += buf;
    }
  s += "transport: " + impl_->options.transport +
       (impl_->options.link_delay_us
            ? ", +" + std::to_string(impl_->options.link_delay_us) + " us per message"
            : "") +
       "\nplacement: " + impl_->plan.to_string();
  return s;
}

}  // namespace cohort::runtime
