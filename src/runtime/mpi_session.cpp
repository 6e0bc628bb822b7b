#include "runtime/mpi_session.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <optional>
#include <vector>

#include "cluster/fingerprint.h"
#include "cluster/model_desc.h"
#include "cluster/protocol.h"
#include "comm/delay_communicator.h"
#include "comm/subgroup.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/thread_pool.h"
#include "kernels/kernels.h"
#include "model/transformer.h"
#include "net/wire.h"
#include "runtime/cluster_stepper.h"
#include "runtime/node_probe.h"
#if defined(COHORT_HAVE_MPI)
#include "comm/mpi/mpi_communicator.h"
#endif

namespace cohort::runtime {

bool mpi_available() {
#if defined(COHORT_HAVE_MPI)
  return true;
#else
  return false;
#endif
}

bool mpi_launched() {
#if defined(COHORT_HAVE_MPI)
  return comm::mpi::launched_by_mpi();
#else
  return false;
#endif
}

struct MpiSession::Impl {
  MpiSessionOptions options;
  const format::GgufFile* file = nullptr;
  std::unique_ptr<comm::Communicator> world;
  std::unique_ptr<comm::Communicator> stage_owned;
  comm::Communicator* stage = nullptr;
  std::vector<cluster::NodeInfo> nodes;
  std::vector<double> rtt_us, bandwidth;  // rank 0 <-> rank r
  cluster::Plan plan;
  std::unique_ptr<ThreadPool> pool;
  std::unique_ptr<model::Transformer> model;
  std::vector<model::KvCache> kv_slots;
  std::unique_ptr<ClusterRank> rank;
  std::unique_ptr<ClusterStepper> stepper;
  std::string small_path;

  Status start();
  Status gather_nodes();
  Status measure_links();
  Status agree(const Status& mine, const char* what);
};

namespace {
constexpr int64_t kTimeoutMs = 120'000;
}

// Every rank learns whether every rank succeeded; the first failing rank's message is
// everyone's error, so mpirun sees the same exit on all ranks.
Status MpiSession::Impl::agree(const Status& mine, const char* what) {
  const int n = world->size();
  std::vector<uint8_t> oks(static_cast<size_t>(n));
  const uint8_t ok = mine.is_ok() ? 1 : 0;
  COHORT_RETURN_IF_ERROR(world->all_gather(&ok, oks.data(), 1, kTimeoutMs));
  for (int r = 0; r < n; ++r) {
    if (oks[static_cast<size_t>(r)]) continue;
    return Status::unavailable("mpi: rank " + std::to_string(r) + " failed to " + what +
                               (r == world->rank() ? ": " + mine.message() : " (see its log)"));
  }
  return Status::ok();
}

Status MpiSession::Impl::gather_nodes() {
  const cluster::NodeInfo me =
      probe_this_node("rank" + std::to_string(world->rank()), options.threads);
  struct Packed {
    uint64_t free_bytes, total_bytes;
    double matvec_gbps;
    uint32_t threads, pad;
  } mine{me.free_bytes, me.total_bytes, me.matvec_gbps, me.threads, 0};
  std::vector<Packed> all(static_cast<size_t>(world->size()));
  COHORT_RETURN_IF_ERROR(world->all_gather(&mine, all.data(), sizeof(Packed), kTimeoutMs));
  for (int r = 0; r < world->size(); ++r) {
    cluster::NodeInfo n;
    n.name = "rank" + std::to_string(r);
    n.free_bytes = all[r].free_bytes;
    n.total_bytes = all[r].total_bytes;
    n.matvec_gbps = all[r].matvec_gbps;
    n.threads = all[r].threads;
    n.isa = me.isa;
    nodes.push_back(n);
  }
  return Status::ok();
}

// Rank 0 measures each rank in turn: 16 round trips of 64 bytes (median) and one 4 MiB
// transfer answered by one byte. The others answer in rank order.
Status MpiSession::Impl::measure_links() {
  const int n = world->size(), me = world->rank();
  rtt_us.assign(n, 0);
  bandwidth.assign(n, 0);
  std::vector<uint8_t> ping(64), bulk(4 << 20);
  uint8_t ack = 0;
  for (int r = 1; r < n; ++r) {
    if (me == 0) {
      std::vector<double> t;
      for (int i = 0; i < 16; ++i) {
        const int64_t t0 = now_ns();
        COHORT_RETURN_IF_ERROR(world->send(r, ping.data(), ping.size(), kTimeoutMs));
        COHORT_RETURN_IF_ERROR(world->recv(r, ping.data(), ping.size(), kTimeoutMs));
        t.push_back((now_ns() - t0) / 1e3);
      }
      std::sort(t.begin(), t.end());
      rtt_us[r] = t[t.size() / 2];
      const int64_t t0 = now_ns();
      COHORT_RETURN_IF_ERROR(world->send(r, bulk.data(), bulk.size(), kTimeoutMs));
      COHORT_RETURN_IF_ERROR(world->recv(r, &ack, 1, kTimeoutMs));
      bandwidth[r] = bulk.size() / std::max(1e-6, (now_ns() - t0) / 1e9 - rtt_us[r] * 1e-6);
    } else if (me == r) {
      for (int i = 0; i < 16; ++i) {
        COHORT_RETURN_IF_ERROR(world->recv(0, ping.data(), ping.size(), kTimeoutMs));
        COHORT_RETURN_IF_ERROR(world->send(0, ping.data(), ping.size(), kTimeoutMs));
      }
      COHORT_RETURN_IF_ERROR(world->recv(0, bulk.data(), bulk.size(), kTimeoutMs));
      COHORT_RETURN_IF_ERROR(world->send(0, &ack, 1, kTimeoutMs));
    }
  }
  return Status::ok();
}

Status MpiSession::Impl::start() {
#if defined(COHORT_HAVE_MPI)
  comm::mpi::Options mo;
  mo.small_path = options.small_allreduce;
  COHORT_ASSIGN_OR_RETURN(world, comm::mpi::make_world(mo));
  small_path = comm::mpi::describe_small_path(*world);
  const int n = world->size(), me = world->rank();

  // Same model everywhere: rank 0's fingerprint is the reference.
  const uint64_t fp[2] = {cluster::model_fingerprint(*file), file->file_bytes()};
  std::vector<uint64_t> fps(2 * static_cast<size_t>(n));
  COHORT_RETURN_IF_ERROR(world->all_gather(fp, fps.data(), sizeof(fp), kTimeoutMs));
  for (int r = 1; r < n; ++r) {
    if (fps[2 * r] != fps[0] || fps[2 * r + 1] != fps[1]) {
      return Status::invalid_argument("mpi: rank " + std::to_string(r) + "'s " + file->name() +
                                      " differs from rank 0's; every rank needs the same model "
                                      "file (weights are not shipped over MPI)");
    }
  }
  COHORT_RETURN_IF_ERROR(gather_nodes());
  COHORT_RETURN_IF_ERROR(measure_links());

  // Rank 0 plans and tells everyone.
  std::vector<uint8_t> plan_bytes;
  Status planned = Status::ok();
  if (me == 0) {
    std::vector<cluster::NodeDesc> descs;
    for (const cluster::NodeInfo& ni : nodes) {
      const double speed = nodes[0].matvec_gbps > 0 ? ni.matvec_gbps / nodes[0].matvec_gbps : 1.0;
      descs.push_back({ni.name, ni.free_bytes, std::clamp(speed, 0.25, 4.0)});
    }
    cluster::LinkMatrix links = cluster::LinkMatrix::uniform(n, 0, 1e12);
    for (int i = 0; i < n; ++i)
      for (int j = 0; j < n; ++j) {
        if (i == j) continue;
        links.latency_us[i][j] = std::max(rtt_us[i], rtt_us[j]) / 2 + options.link_delay_us;
        const double bi = i ? bandwidth[i] : 1e12, bj = j ? bandwidth[j] : 1e12;
        links.bandwidth_bytes_per_s[i][j] = std::min(bi, bj);
      }
    auto md = cluster::describe_model(*file, options.kv_type);
    cluster::PlanOptions po = options.plan;
    po.n_ctx = options.n_ctx;
    auto p = md.is_ok() ? cluster::plan_placement(descs, links, *md, po)
                        : Result<cluster::Plan>(md.status());
    if (p.is_ok()) {
      plan = *p;
      plan_bytes = cluster::encode_plan(plan);
    } else {
      planned = p.status();
    }
  }
  COHORT_RETURN_IF_ERROR(agree(planned, "plan the placement"));
  uint64_t plan_size = plan_bytes.size();
  COHORT_RETURN_IF_ERROR(world->broadcast(&plan_size, sizeof(plan_size), 0, kTimeoutMs));
  if (plan_size > (16u << 20)) return Status::corrupt("mpi: plan too large");
  plan_bytes.resize(plan_size);
  COHORT_RETURN_IF_ERROR(world->broadcast(plan_bytes.data(), plan_size, 0, kTimeoutMs));
  if (me != 0) {
    net::WireReader r(plan_bytes);
    COHORT_RETURN_IF_ERROR(cluster::decode_plan(r, &plan));
    if (static_cast<int>(plan.ranks.size()) != n) return Status::corrupt("mpi: plan size");
  }
  if (options.link_delay_us > 0) {
    world = comm::make_delay_communicator(std::move(world), options.link_delay_us);
  }

  // Stage groups: collective over the world, so every rank splits when any stage has
  // several ranks and is not the whole world.
  const cluster::RankPlan& mine = plan.ranks[me];
  const size_t stage_n = plan.stage_ranks[mine.stage].size();
  bool any_split = false;
  for (const auto& s : plan.stage_ranks)
    any_split |= s.size() > 1 && static_cast<int>(s.size()) < n;
  if (static_cast<int>(stage_n) == n) {
    stage = world.get();
  } else if (any_split && options.link_delay_us == 0) {
    COHORT_ASSIGN_OR_RETURN(stage_owned, comm::mpi::split(*world, mine.stage));
    stage = stage_owned.get();
  } else if (stage_n == 1) {
    stage_owned = comm::make_local_communicator();
    stage = stage_owned.get();
  } else {  // delayed links: the stage group goes through the delay decorator too
    COHORT_ASSIGN_OR_RETURN(stage_owned, comm::make_subgroup(*world, plan.stage_ranks[mine.stage]));
    stage = stage_owned.get();
  }

  pool = std::make_unique<ThreadPool>(options.threads);
  auto m = model::Transformer::create(*file, mine.shard, *stage, *pool, kernels::best(),
                                      options.max_batch);
  Status loaded = m.status();
  if (m.is_ok()) {
    model = std::move(m).value();
    for (int64_t slot = 0; slot < options.n_slots && loaded.is_ok(); ++slot) {
      auto cache = model->new_cache(options.n_ctx, options.kv_type);
      loaded = cache.status();
      if (cache.is_ok()) kv_slots.push_back(std::move(cache).value());
    }
  }
  COHORT_RETURN_IF_ERROR(agree(loaded, "load its shard"));
  COHORT_LOG_INFO("mpi: rank %d of %d: %s", me, n, mine.shard.to_string().c_str());
  rank = std::make_unique<ClusterRank>(plan, me, *world, *model, kv_slots);
  if (me == 0) stepper = std::make_unique<ClusterStepper>(*rank, *model, kv_slots);
  return Status::ok();
#else
  return Status::unsupported("this build has no mpi transport (MPI was not found at build time)");
#endif
}

Result<std::unique_ptr<MpiSession>> MpiSession::start(const MpiSessionOptions& options,
                                                      const format::GgufFile& file) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  impl->file = &file;
  COHORT_RETURN_IF_ERROR(impl->start());
  return std::unique_ptr<MpiSession>(new MpiSession(std::move(impl)));
}

MpiSession::MpiSession(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MpiSession::~MpiSession() {
  if (impl_->rank && is_head()) {
    Status s = impl_->rank->stop();
    if (!s.is_ok()) COHORT_LOG_WARN("mpi: stopping the other ranks: %s", s.message().c_str());
  }
}

bool MpiSession::is_head() const { return impl_->world->rank() == 0; }
Stepper& MpiSession::stepper() { return *impl_->stepper; }

Status MpiSession::serve() {
  if (is_head()) return Status::internal("mpi: serve() is for ranks other than 0");
  return impl_->rank->serve(24LL * 3600 * 1000);
}

std::string MpiSession::status_report() const {
  std::string s = "mpi world of " + std::to_string(impl_->world->size()) + " ranks\n";
  char buf[256];
  for (size_t r = 0; r < impl_->nodes.size(); ++r) {
    const cluster::NodeInfo& n = impl_->nodes[r];
    std::snprintf(buf, sizeof(buf), "  rank %-3zu %8.0f MiB free  %5.1f GB/s kernels", r,
                  n.free_bytes / 1048576.0, n.matvec_gbps);
    s += buf;
    if (r > 0) {
      std::snprintf(buf, sizeof(buf), "  rank 0 <-> %zu: rtt %.1f us, %.2f GB/s", r,
                    impl_->rtt_us[r], impl_->bandwidth[r] / 1e9);
      s += buf;
    }
    s += "\n";
  }
  s += impl_->small_path + "\nplacement: " + impl_->plan.to_string();
  return s;
}

}  // namespace cohort::runtime
