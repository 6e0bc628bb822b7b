#include "cluster/protocol.h"

namespace cohort::cluster {
namespace {

constexpr size_t kMaxString = 4096;
constexpr uint32_t kMaxRanks = 1024;

void put_plan(net::WireWriter& w, const Plan& p) {
  w.u32(static_cast<uint32_t>(p.mode));
  w.u32(static_cast<uint32_t>(p.ranks.size()));
  for (const RankPlan& r : p.ranks) {
    w.i32(r.node).i32(r.stage).i32(r.tp_rank);
    const model::ShardSpec& s = r.shard;
    w.i64(s.layer_begin).i64(s.layer_end).i64(s.head_begin).i64(s.head_end);
    w.i64(s.ffn_begin).i64(s.ffn_end).i64(s.expert_begin).i64(s.expert_end);
    w.u8(s.embeds ? 1 : 0).u8(s.outputs ? 1 : 0);
  }
  w.u32(static_cast<uint32_t>(p.stage_ranks.size()));
  for (const auto& st : p.stage_ranks) {
    w.u32(static_cast<uint32_t>(st.size()));
    for (int r : st) w.i32(r);
  }
  w.str(p.why);
}

}  // namespace

std::vector<uint8_t> encode_plan(const Plan& p) {
  net::WireWriter w;
  put_plan(w, p);
  return w.take();
}

Status decode_plan(net::WireReader& r, Plan* p) {
  uint32_t mode = 0, n = 0;
  COHORT_RETURN_IF_ERROR(r.u32(&mode));
  if (mode > static_cast<uint32_t>(ParallelMode::kExpert))
    return Status::corrupt("cluster: bad mode");
  p->mode = static_cast<ParallelMode>(mode);
  COHORT_RETURN_IF_ERROR(r.u32(&n));
  if (n < 1 || n > kMaxRanks) return Status::corrupt("cluster: bad rank count");
  p->ranks.resize(n);
  for (RankPlan& rp : p->ranks) {
    uint8_t embeds = 0, outputs = 0;
    COHORT_RETURN_IF_ERROR(r.i32(&rp.node));
    COHORT_RETURN_IF_ERROR(r.i32(&rp.stage));
    COHORT_RETURN_IF_ERROR(r.i32(&rp.tp_rank));
    model::ShardSpec& s = rp.shard;
    for (int64_t* v : {&s.layer_begin, &s.layer_end, &s.head_begin, &s.head_end, &s.ffn_begin,
                       &s.ffn_end, &s.expert_begin, &s.expert_end}) {
      COHORT_RETURN_IF_ERROR(r.i64(v));
    }
    COHORT_RETURN_IF_ERROR(r.u8(&embeds));
    COHORT_RETURN_IF_ERROR(r.u8(&outputs));
    s.embeds = embeds != 0;
    s.outputs = outputs != 0;
  }
  uint32_t n_stages = 0;
  COHORT_RETURN_IF_ERROR(r.u32(&n_stages));
  if (n_stages < 1 || n_stages > n) return Status::corrupt("cluster: bad stage count");
  p->stage_ranks.assign(n_stages, {});
  std::vector<bool> seen(n, false);
  for (uint32_t s = 0; s < n_stages; ++s) {
    uint32_t m = 0;
    COHORT_RETURN_IF_ERROR(r.u32(&m));
    if (m < 1 || m > n) return Status::corrupt("cluster: bad stage size");
    for (uint32_t i = 0; i < m; ++i) {
      int32_t rank = 0;
      COHORT_RETURN_IF_ERROR(r.i32(&rank));
      if (rank < 0 || rank >= static_cast<int32_t>(n) || seen[rank])
        return Status::corrupt("cluster: bad stage member");
      seen[rank] = true;
      if (p->ranks[rank].stage != static_cast<int>(s))
        return Status::corrupt("cluster: stage mismatch");
      p->stage_ranks[s].push_back(rank);
    }
  }
  for (bool b : seen)
    if (!b) return Status::corrupt("cluster: a rank is in no stage");
  return r.str(&p->why, 64 * kMaxString);
}

std::vector<uint8_t> encode(const NodeInfo& m) {
  net::WireWriter w;
  w.str(m.name).u64(m.free_bytes).u64(m.total_bytes).u32(m.threads).str(m.isa).f64(m.matvec_gbps);
  return w.take();
}

Status decode(const std::vector<uint8_t>& payload, NodeInfo* m) {
  net::WireReader r(payload.data(), payload.size());
  COHORT_RETURN_IF_ERROR(r.str(&m->name, kMaxString));
  COHORT_RETURN_IF_ERROR(r.u64(&m->free_bytes));
  COHORT_RETURN_IF_ERROR(r.u64(&m->total_bytes));
  COHORT_RETURN_IF_ERROR(r.u32(&m->threads));
  COHORT_RETURN_IF_ERROR(r.str(&m->isa, kMaxString));
  COHORT_RETURN_IF_ERROR(r.f64(&m->matvec_gbps));
  return r.expect_end();
}

std::vector<uint8_t> encode(const Heartbeat& m) {
  net::WireWriter w;
  w.u64(m.steps).f64(m.busy_s);
  return w.take();
}

Status decode(const std::vector<uint8_t>& payload, Heartbeat* m) {
  net::WireReader r(payload.data(), payload.size());
  COHORT_RETURN_IF_ERROR(r.u64(&m->steps));
  COHORT_RETURN_IF_ERROR(r.f64(&m->busy_s));
  if (!(m->busy_s >= 0 && m->busy_s < 1e12)) return Status::corrupt("cluster: bad heartbeat");
  return r.expect_end();
}

std::vector<uint8_t> encode(const SetupRequest& m) {
  net::WireWriter w;
  w.str(m.model_path).u64(m.model_bytes).u64(m.model_fingerprint);
  put_plan(w, m.plan);
  w.i32(m.rank).str(m.transport).u32(static_cast<uint32_t>(m.endpoints.size()));
  for (const auto& e : m.endpoints) w.str(e);
  w.str(m.shm_name)
      .i64(m.link_delay_us)
      .i32(m.threads)
      .i64(m.n_ctx)
      .i64(m.max_batch)
      .u32(m.kv_type)
      .u8(m.ship_always ? 1 : 0)
      .i32(m.n_slots);
  return w.take();
}

Status decode(const std::vector<uint8_t>& payload, SetupRequest* m) {
  net::WireReader r(payload.data(), payload.size());
  COHORT_RETURN_IF_ERROR(r.str(&m->model_path, kMaxString));
  COHORT_RETURN_IF_ERROR(r.u64(&m->model_bytes));
  COHORT_RETURN_IF_ERROR(r.u64(&m->model_fingerprint));
  COHORT_RETURN_IF_ERROR(decode_plan(r, &m->plan));
  COHORT_RETURN_IF_ERROR(r.i32(&m->rank));
  if (m->rank < 0 || m->rank >= static_cast<int32_t>(m->plan.ranks.size()))
    return Status::corrupt("cluster: setup rank out of range");
  COHORT_RETURN_IF_ERROR(r.str(&m->transport, 16));
  uint32_t n = 0;
  COHORT_RETURN_IF_ERROR(r.u32(&n));
  if (n > kMaxRanks) return Status::corrupt("cluster: too many endpoints");
  m->endpoints.resize(n);
  for (auto& e : m->endpoints) COHORT_RETURN_IF_ERROR(r.str(&e, 512));
  COHORT_RETURN_IF_ERROR(r.str(&m->shm_name, 256));
  COHORT_RETURN_IF_ERROR(r.i64(&m->link_delay_us));
  COHORT_RETURN_IF_ERROR(r.i32(&m->threads));
  COHORT_RETURN_IF_ERROR(r.i64(&m->n_ctx));
  COHORT_RETURN_IF_ERROR(r.i64(&m->max_batch));
  COHORT_RETURN_IF_ERROR(r.u32(&m->kv_type));
  uint8_t ship = 0;
  COHORT_RETURN_IF_ERROR(r.u8(&ship));
  if (ship > 1) return Status::corrupt("cluster: bad ship flag");
  m->ship_always = ship == 1;
  COHORT_RETURN_IF_ERROR(r.i32(&m->n_slots));
  if (m->link_delay_us < 0 || m->link_delay_us > 10'000'000 || m->threads < 0 ||
      m->threads > 1024 || m->n_ctx < 1 || m->n_ctx > (1 << 24) || m->max_batch < 1 ||
      m->max_batch > 65536 || m->n_slots < 1 || m->n_slots > kMaxSlots) {
    return Status::corrupt("cluster: setup values out of range");
  }
  return r.expect_end();
}

}  // namespace cohort::cluster
