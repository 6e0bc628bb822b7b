#include "runtime/worker_service.h"

#include <malloc.h>

#include <memory>
#include <optional>

#include "cluster/fingerprint.h"
#include "cluster/protocol.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "format/gguf.h"
#include "kernels/kernels.h"
#include "model/transformer.h"
#include "net/discovery.h"
#include "net/frame.h"
#include "net/handshake.h"
#include "net/socket.h"
#include "runtime/cluster_stepper.h"
#include "runtime/data_plane.h"
#include "runtime/node_probe.h"

namespace cohort::runtime {
namespace {

constexpr int64_t kIoTimeoutMs = 30'000;
constexpr int64_t kIdleTimeoutMs = 24LL * 3600 * 1000;  // a head may stay idle a long time

Status reply(net::Socket& s, uint16_t type, const std::vector<uint8_t>& payload) {
  return net::write_frame(s, type, payload.data(), payload.size(), kIoTimeoutMs);
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

  Status setup(const net::Frame& f) {
    cluster::SetupRequest req;
    Status st = cluster::decode(f.payload, &req);
    if (!st.is_ok()) return st;
    // Load first and say so: the head joins the data plane only when every rank loaded.
    auto file = format::GgufFile::open(req.model_path);
    if (!file.is_ok()) {
      return reply_done(
          s_, Status::not_found("worker " + o_.name +
                                ": cannot open the model here: " + file.status().message() +
                                " (weight shipping is not implemented yet)"));
    }
    if (file->file_bytes() != req.model_bytes ||
        cluster::model_fingerprint(*file) != req.model_fingerprint) {
      return reply_done(s_, Status::invalid_argument("worker " + o_.name + ": " + req.model_path +
                                                     " differs from the head's file"));
    }
    ThreadPool pool(req.threads > 0 ? req.threads : o_.threads);
    const cluster::RankPlan& me = req.plan.ranks[req.rank];
    // The model binds to the stage group, which exists only after joining; validate the
    // shard now against a group of one so errors reach the head before anyone connects.
    auto probe_comm = comm::make_local_communicator();
    auto check = model::Transformer::create(*file, me.shard, *probe_comm, pool, kernels::best(), 1);
    if (!check.is_ok()) return reply_done(s_, check.status());
    check.value().reset();
    COHORT_RETURN_IF_ERROR(reply_done(s_, Status::ok()));

    auto dp = join_data_plane(req, std::move(listener_), o_.key, kIoTimeoutMs);
    listener_.reset();
    if (!dp.is_ok()) return Status::unavailable("data plane: " + dp.status().message());
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
    Status served = rank.serve(kIdleTimeoutMs);
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
  if (o.announce) {
    net::Announcement a;
    a.name = o.name;
    a.role = "worker";
    a.control = control;
    a.free_memory_bytes = probe_this_node(o.name, o.threads).free_bytes;
    auto started =
        net::Announcer::start(a, o.multicast_group, o.announce_interval_ms, o.listen.host);
    if (started.is_ok()) {
      announcer = std::move(started).value();
    } else {
      COHORT_LOG_WARN(
          "worker %s: not announcing on the LAN (%s); heads must name it with --workers",
          o.name.c_str(), started.status().message().c_str());
    }
  }
  while (!stop.load()) {
    auto sock = listener.accept(200);
    if (!sock.is_ok()) continue;  // timeout or a transient accept error
    net::PeerInfo mine;
    mine.name = o.name;
    mine.role = "worker";
    auto peer = net::handshake(*sock, o.key, mine, 5000);
    if (!peer.is_ok()) {
      COHORT_LOG_WARN("worker %s: refused %s: %s", o.name.c_str(), sock->peer().c_str(),
                      peer.status().message().c_str());
      continue;
    }
    COHORT_LOG_INFO("worker %s: head %s (%s) connected", o.name.c_str(), peer->name.c_str(),
                    sock->peer().c_str());
    Session(o, *sock).run();
  }
  return Status::ok();
}

}  // namespace cohort::runtime
