#include "runtime/worker_service.h"

#include <malloc.h>

#include <chrono>
#include <memory>
#include <optional>
#include <thread>
#include <vector>

#include "cluster/fingerprint.h"
#include "cluster/protocol.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "format/gguf.h"
#include "kernels/kernels.h"
#include "model/shard_export.h"
#include "model/transformer.h"
#include "net/discovery.h"
#include "net/frame.h"
#include "net/handshake.h"
#include "net/socket.h"
#include "runtime/cluster_stepper.h"
#include "runtime/data_plane.h"
#include "runtime/heartbeat_sender.h"
#include "runtime/link_probe.h"
#include "runtime/node_probe.h"
#include "runtime/shard_cache.h"
#include "runtime/shard_transfer.h"

namespace cohort::runtime {
namespace {

constexpr int64_t kWorkerIoTimeoutMs = 30'000;
constexpr int64_t kIdleTimeoutMs = 24LL * 3600 * 1000;  // a head may stay idle a long time
constexpr int64_t kProbeTimeoutMs = 5000;

Status reply(net::Socket& s, uint16_t type, const std::vector<uint8_t>& payload) {
  return net::write_frame(s, type, payload.data(), payload.size(), kWorkerIoTimeoutMs);
}

Status reply_done(net::Socket& s, const Status& st) {
  net::WireWriter w;
  w.u8(st.is_ok() ? 1 : 0).str(st.message());
  return reply(s, cluster::kMsgSetupDone, w.data());
}

class Session {
 public:
  Session(const WorkerOptions& o, net::Socket& s) : o_(o), s_(s) {}

  void run() {
    for (;;) {
      auto frame = net::read_frame(s_, cluster::kMaxControlPayload, kIdleTimeoutMs);
      if (!frame.is_ok()) {
        COHORT_LOG_INFO("worker %s: head %s left (%s)", o_.name.c_str(), s_.peer().c_str(),
                        frame.status().message().c_str());
        return;
      }
      Status st = handle(*frame);
      if (done_) {
        COHORT_LOG_INFO("worker %s: head %s ended the session", o_.name.c_str(), s_.peer().c_str());
        return;
      }
      if (!st.is_ok()) {
        COHORT_LOG_WARN("worker %s: %s", o_.name.c_str(), st.message().c_str());
        return;
      }
    }
  }

 private:
  Status handle(const net::Frame& f) {
    switch (f.type) {
      case cluster::kMsgNodeInfoRequest:
        return reply(s_, cluster::kMsgNodeInfo,
                     cluster::encode(probe_this_node(o_.name, o_.threads)));
      case cluster::kMsgPing:
        return reply(s_, cluster::kMsgPong, f.payload);
      case cluster::kMsgProbeData:
        return reply(s_, cluster::kMsgProbeAck, {});
      case cluster::kMsgProbePeer:
        return probe_peer_for_head(f);
      case cluster::kMsgPrepare:
        return prepare(f);
      case cluster::kMsgSetup:
        return setup(f);
      case cluster::kMsgShutdown:
        done_ = true;
        return Status::ok();
      default:
        return Status::corrupt("unexpected control message " + std::to_string(f.type));
    }
  }

  Status probe_peer_for_head(const net::Frame& f) {
    net::WireReader r(f.payload);
    std::string addr;
    COHORT_RETURN_IF_ERROR(r.str(&addr, 300));
    auto peer = net::parse_host_port(addr);
    Result<LinkReport> link = peer.is_ok() ? probe_peer(*peer, o_.key, o_.name, kProbeTimeoutMs)
                                           : Result<LinkReport>(peer.status());
    net::WireWriter w;
    if (!link.is_ok()) {
      w.str(link.status().message());
      return reply(s_, cluster::kMsgError, w.data());
    }
    w.f64(link->rtt_us).f64(link->bandwidth_bytes_per_s);
    return reply(s_, cluster::kMsgPeerLink, w.data());
  }

  Status prepare(const net::Frame& f) {
    net::WireReader r(f.payload.data(), f.payload.size());
    std::string transport;
    COHORT_RETURN_IF_ERROR(r.str(&transport, 16));
    uint32_t port = 0;
    listener_.reset();
    if (transport == "tcp") {
      // Listen on the address the head reached us at, so the head can tell the others.
      auto local = net::parse_host_port(s_.local());
      const std::string host = local.is_ok() ? local->host : o_.listen.host;
      auto l = comm::TcpMeshListener::listen(net::HostPort{host, 0});
      if (!l.is_ok()) return l.status();
      port = l->port();
      listener_.emplace(std::move(l).value());
    }
    net::WireWriter w;
    w.u32(port);
    return reply(s_, cluster::kMsgPrepared, w.data());
  }

  // The weights for this rank's shard: a verified cached shard file, else the head's model
  // file when this node has the same one (and the head allows it), else the shard shipped
  // by the head into the cache.
  Result<format::GgufFile> open_weights(const cluster::SetupRequest& req,
                                        const model::ShardSpec& shard) {
    const std::string key = model::shard_key(req.model_fingerprint, req.model_bytes, shard);
    const ShardCache cache(o_.cache_dir.empty() ? ShardCache::default_dir() : o_.cache_dir);
    if (auto cached = cache.find(key); cached.is_ok()) {
      COHORT_LOG_INFO("worker %s: using cached shard %s", o_.name.c_str(), cached->c_str());
      return format::GgufFile::open(*cached);
    } else if (cached.status().code() != StatusCode::kNotFound) {
      COHORT_LOG_WARN("worker %s: %s", o_.name.c_str(), cached.status().message().c_str());
    }
    if (!req.ship_always) {
      auto file = format::GgufFile::open(req.model_path);
      if (file.is_ok() && file->file_bytes() == req.model_bytes &&
          cluster::model_fingerprint(*file) == req.model_fingerprint) {
        COHORT_LOG_INFO("worker %s: using the local copy of %s", o_.name.c_str(),
                        req.model_path.c_str());
        return file;
      }
      COHORT_LOG_INFO("worker %s: %s", o_.name.c_str(),
                      file.is_ok() ? (req.model_path + " here differs from the head's").c_str()
                                   : file.status().message().c_str());
    }
    COHORT_LOG_INFO("worker %s: asking the head for shard %s (%s)", o_.name.c_str(), key.c_str(),
                    shard.to_string().c_str());
    net::WireWriter w;
    w.str(key);
    COHORT_RETURN_IF_ERROR(reply(s_, cluster::kMsgShardWanted, w.data()));
    COHORT_ASSIGN_OR_RETURN(std::string path, receive_shard(s_, cache, key, kWorkerIoTimeoutMs));
    return format::GgufFile::open(path);
  }

  Status setup(const net::Frame& f) {
    cluster::SetupRequest req;
    Status st = cluster::decode(f.payload, &req);
    if (!st.is_ok()) return st;
    const cluster::RankPlan& me = req.plan.ranks[req.rank];
    // Load first and say so: the head joins the data plane only when every rank loaded.
    auto file = open_weights(req, me.shard);
    if (!file.is_ok()) {
      Status failed =
          Status(file.status().code(), "worker " + o_.name + ": " + file.status().message());
      (void)reply_done(s_, failed);
      return failed;  // the stream may be out of step: end this head's session
    }
    ThreadPool pool(req.threads > 0 ? req.threads : o_.threads);
    // The model binds to the stage group, which exists only after joining; validate the
    // shard now against a group of one so errors reach the head before anyone connects.
    auto probe_comm = comm::make_local_communicator();
    auto check = model::Transformer::create(*file, me.shard, *probe_comm, pool, kernels::best(), 1);
    if (!check.is_ok()) return reply_done(s_, check.status());
    check.value().reset();
    COHORT_RETURN_IF_ERROR(reply_done(s_, Status::ok()));

    auto dp = join_data_plane(req, std::move(listener_), o_.key, kWorkerIoTimeoutMs);
    listener_.reset();
    if (!dp.is_ok()) return Status::unavailable("data plane: " + dp.status().message());
    // Time spent communicating is counted so each step's own cost can be told apart from
    // waiting for the others (StepTimes, reported in the heartbeats).
    auto comm_time = std::make_shared<comm::CommCounters>();
    count_traffic(&*dp, comm_time);
    auto model = model::Transformer::create(*file, me.shard, *dp->stage, pool, kernels::best(),
                                            req.max_batch);
    if (!model.is_ok()) return model.status();
    std::vector<model::KvCache> slots;
    size_t kv_bytes = 0;
    for (int32_t s = 0; s < req.n_slots; ++s) {
      auto kv = (*model)->new_cache(req.n_ctx, static_cast<DType>(req.kv_type));
      if (!kv.is_ok()) return kv.status();
      kv_bytes += kv->bytes();
      slots.push_back(std::move(kv).value());
    }
    COHORT_LOG_INFO("worker %s: rank %d of %zu, %s, %d slots, %.1f MiB KV", o_.name.c_str(),
                    req.rank, req.plan.ranks.size(), me.shard.to_string().c_str(), req.n_slots,
                    kv_bytes / 1048576.0);
    ClusterRank rank(req.plan, req.rank, *dp->world, **model, slots);
    StepTimes times;
    rank.time_steps(&times, comm_time.get());
    rank.set_step_delay_ms(o_.inject_delay_ms);
    Status served;
    {
      // The head reads these beside the data plane (runtime/heartbeat_monitor.h) and stops
      // once this loop ends; nothing else is written on s_ meanwhile.
      HeartbeatSender beats(s_, cluster::kHeartbeatIntervalMs, o_.name, [&times] {
        cluster::Heartbeat hb;
        hb.steps = static_cast<uint64_t>(times.steps.load(std::memory_order_relaxed));
        hb.busy_s = static_cast<double>(times.busy_ns.load(std::memory_order_relaxed)) * 1e-9;
        return cluster::encode(hb);
      });
      served = rank.serve(kIdleTimeoutMs);
    }
    if (!served.is_ok()) {
      COHORT_LOG_WARN("worker %s: steps ended: %s", o_.name.c_str(), served.message().c_str());
    }
    return Status::ok();  // back to the control loop: the head may set up again
  }

  const WorkerOptions& o_;
  net::Socket& s_;
  std::optional<comm::TcpMeshListener> listener_;
  bool done_ = false;
};

// Another worker measuring its link to this one: pings and probe data only.
void serve_probe(const WorkerOptions& o, net::Socket& s) {
  for (;;) {
    auto f = net::read_frame(s, cluster::kMaxControlPayload, kProbeTimeoutMs);
    if (!f.is_ok()) return;  // the prober is done (or gone)
    Status st = f->type == cluster::kMsgPing        ? reply(s, cluster::kMsgPong, f->payload)
                : f->type == cluster::kMsgProbeData ? reply(s, cluster::kMsgProbeAck, {})
                                                    : Status::corrupt("unexpected probe message");
    if (!st.is_ok()) {
      COHORT_LOG_WARN("worker %s: probe from %s: %s", o.name.c_str(), s.peer().c_str(),
                      st.message().c_str());
      return;
    }
  }
}

// One accepted connection: the handshake, then a head's session (one head at a time; a
// second is refused with the reason) or another worker's link probe.
void serve_connection(const WorkerOptions& o, net::Socket sock, std::atomic<bool>& head_busy) {
  net::PeerInfo mine;
  mine.name = o.name;
  mine.role = "worker";
  auto peer = net::handshake(sock, o.key, mine, 5000);
  if (!peer.is_ok()) {
    COHORT_LOG_WARN("worker %s: refused %s: %s", o.name.c_str(), sock.peer().c_str(),
                    peer.status().message().c_str());
    return;
  }
  if (peer->role == "probe") {
    serve_probe(o, sock);
    return;
  }
  // A head that just lost a node reconnects at once, while this worker may still be
  // closing its session with that head's previous placement: give it a moment.
  bool busy = head_busy.exchange(true);
  for (int i = 0; busy && i < 100; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    busy = head_busy.exchange(true);
  }
  if (busy) {
    const std::string why = "worker " + o.name + " is serving another head";
    COHORT_LOG_WARN("worker %s: refused head %s (%s): busy", o.name.c_str(), peer->name.c_str(),
                    sock.peer().c_str());
    net::WireWriter w;
    w.str(why);
    (void)reply(sock, cluster::kMsgError, w.data());
    return;
  }
  COHORT_LOG_INFO("worker %s: head %s (%s) connected", o.name.c_str(), peer->name.c_str(),
                  sock.peer().c_str());
  Session(o, sock).run();
  head_busy = false;
}

}  // namespace

Status run_worker(const WorkerOptions& o, const std::atomic<bool>& stop) {
#if defined(__GLIBC__)
  // Probe buffers and control payloads of several MiB come and go; with glibc's adaptive
  // threshold they would be served from the heap after the first free and stay resident.
  // A fixed threshold returns them to the OS, so a worker's memory stays its shard.
  mallopt(M_MMAP_THRESHOLD, 1 << 20);
#endif
  COHORT_ASSIGN_OR_RETURN(net::Listener listener, net::Listener::bind(o.listen));
  const net::HostPort control{o.listen.host, listener.port()};
  COHORT_LOG_INFO("worker %s: listening on %s", o.name.c_str(), control.to_string().c_str());
  std::unique_ptr<net::Announcer> announcer;
  if (o.announce || !o.peers.empty()) {
    net::Announcement a;
    a.name = o.name;
    a.role = "worker";
    a.control = control;
    a.free_memory_bytes = probe_this_node(o.name, o.threads).free_bytes;
    auto started = net::Announcer::start(a, o.multicast_group, o.announce_interval_ms,
                                         o.listen.host, o.peers, o.announce);
    if (started.is_ok()) {
      announcer = std::move(started).value();
    } else {
      COHORT_LOG_WARN(
          "worker %s: not announcing on the LAN (%s); heads must name it with --workers",
          o.name.c_str(), started.status().message().c_str());
    }
  }
  // Each connection on its own thread, so probes from other workers are answered while a
  // head's session runs. Finished threads are reaped as the loop goes.
  struct Conn {
    std::thread thread;
    std::shared_ptr<std::atomic<bool>> done;
  };
  std::vector<Conn> conns;
  std::atomic<bool> head_busy{false};
  while (!stop.load()) {
    auto sock = listener.accept(200);
    for (auto it = conns.begin(); it != conns.end();) {
      if (it->done->load()) {
        it->thread.join();
        it = conns.erase(it);
      } else {
        ++it;
      }
    }
    if (!sock.is_ok()) continue;  // timeout or a transient accept error
    auto done = std::make_shared<std::atomic<bool>>(false);
    conns.push_back(Conn{std::thread([&o, &head_busy, done, s = std::move(sock).value()]() mutable {
                           serve_connection(o, std::move(s), head_busy);
                           *done = true;
                         }),
                         done});
  }
  for (Conn& c : conns) c.thread.join();
  return Status::ok();
}

}  // namespace cohort::runtime
