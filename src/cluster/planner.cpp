#include "cluster/planner.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

namespace cohort::cluster {

const char* parallel_mode_name(ParallelMode m) {
  switch (m) {
    case ParallelMode::kAuto:
      return "auto";
    case ParallelMode::kPipeline:
      return "pipeline";
    case ParallelMode::kTensor:
      return "tensor";
    case ParallelMode::kHybrid:
      return "hybrid";
    case ParallelMode::kExpert:
      return "expert";
  }
  return "?";
}

Result<ParallelMode> parse_parallel_mode(const std::string& s) {
  for (ParallelMode m : {ParallelMode::kAuto, ParallelMode::kPipeline, ParallelMode::kTensor,
                         ParallelMode::kHybrid, ParallelMode::kExpert}) {
    if (s == parallel_mode_name(m)) return m;
  }
  return Status::invalid_argument("planner: unknown parallel mode '" + s +
                                  "' (auto, pipeline, tensor, hybrid, expert)");
}

uint64_t ModelDesc::active_layer_bytes() const {
  if (!hp.is_moe()) return layer_bytes;
  return layer_bytes - expert_bytes + expert_bytes / hp.n_expert * hp.n_expert_used;
}

LinkMatrix LinkMatrix::uniform(int n, double latency_us, double bandwidth) {
  LinkMatrix m;
  m.latency_us.assign(n, std::vector<double>(n, latency_us));
  m.bandwidth_bytes_per_s.assign(n, std::vector<double>(n, bandwidth));
  return m;
}

Result<std::vector<std::pair<int64_t, int64_t>>> split_range(int64_t n, int64_t align,
                                                             const std::vector<double>& weights) {
  const int64_t parts = static_cast<int64_t>(weights.size());
  const int64_t units = (n + align - 1) / align;
  if (parts < 1 || units < parts) {
    return Status::invalid_argument("planner: cannot split " + std::to_string(n) + " into " +
                                    std::to_string(parts) + " parts aligned to " +
                                    std::to_string(align));
  }
  // Largest-remainder apportionment of units, at least one each.
  const double total = std::accumulate(weights.begin(), weights.end(), 0.0);
  std::vector<int64_t> share(parts, 1);
  int64_t left = units - parts;
  std::vector<std::pair<double, int64_t>> rem;
  for (int64_t i = 0; i < parts; ++i) {
    const double want = (total > 0 ? weights[i] / total : 1.0 / parts) * units - 1;
    const int64_t whole =
        std::clamp<int64_t>(static_cast<int64_t>(std::floor(std::max(want, 0.0))), 0, left);
    share[i] += whole;
    left -= whole;
    rem.push_back({want - whole, i});
  }
  std::sort(rem.begin(), rem.end(), [](auto& a, auto& b) {
    return a.first > b.first || (a.first == b.first && a.second < b.second);
  });
  for (int64_t k = 0; left > 0; k = (k + 1) % parts, --left) share[rem[k].second] += 1;
  std::vector<std::pair<int64_t, int64_t>> out;
  int64_t at = 0;
  for (int64_t i = 0; i < parts; ++i) {
    const int64_t end = i + 1 == parts ? n : std::min(n, (at / align + share[i]) * align);
    out.push_back({at, end});
    at = end;
  }
  return out;
}

namespace {

int64_t gcd64(int64_t a, int64_t b) { return b == 0 ? a : gcd64(b, a % b); }

// Measured speed and free memory wobble from run to run; snapped to half-octave steps, the
// same cluster gets the same ranges every time (so a worker's cached shard still fits),
// while nodes that differ materially still get proportional shares.
void snap_weights(std::vector<double>& weights, bool even) {
  const double heaviest = *std::max_element(weights.begin(), weights.end());
  for (double& w : weights) {
    if (even || heaviest <= 0 || w <= 0) {
      w = 1;
      continue;
    }
    // Half-octave steps: weights within ~19% of each other count as equal.
    w = std::exp2(std::max(-4.0, std::round(std::log2(w / heaviest) * 2) / 2));
  }
}

// Builds the ranks of a plan with the given stage sizes (ranks per stage, in rank order).
// split_experts: ranks of a stage hold disjoint ranges of whole experts (expert parallel)
// instead of column slices of every expert.
Result<Plan> build(const std::vector<NodeDesc>& nodes, const ModelDesc& md,
                   const std::vector<int>& stage_sizes, const PlanOptions& opt,
                   bool split_experts = false) {
  const model::HParams& hp = md.hp;
  Plan plan;
  const int n_stages = static_cast<int>(stage_sizes.size());
  if (n_stages > hp.n_layers) {
    return Status::invalid_argument("planner: " + std::to_string(n_stages) +
                                    " pipeline stages but only " + std::to_string(hp.n_layers) +
                                    " layers");
  }
  std::vector<double> stage_weight;
  int r = 0;
  for (int s = 0; s < n_stages; ++s) {
    double w = 0;
    for (int i = 0; i < stage_sizes[s]; ++i)
      w += nodes[r + i].speed * double(nodes[r + i].free_bytes);
    stage_weight.push_back(w);
    r += stage_sizes[s];
  }
  snap_weights(stage_weight, opt.even_shares);
  COHORT_ASSIGN_OR_RETURN(auto layer_ranges, split_range(hp.n_layers, 1, stage_weight));

  // Head boundaries: on quant blocks of attn_output, and on GQA groups when that still
  // leaves every rank a head (otherwise KV heads are replicated).
  const int64_t group = hp.n_heads / hp.n_kv_heads;
  const int64_t group_align = md.head_align / gcd64(md.head_align, group) * group;
  r = 0;
  for (int s = 0; s < n_stages; ++s) {
    std::vector<double> speeds;
    for (int i = 0; i < stage_sizes[s]; ++i) speeds.push_back(nodes[r + i].speed);
    snap_weights(speeds, opt.even_shares);
    auto heads = split_range(hp.n_heads, group_align, speeds);
    if (!heads.is_ok()) heads = split_range(hp.n_heads, md.head_align, speeds);
    if (!heads.is_ok()) {
      return Status::invalid_argument(
          "planner: " + std::to_string(stage_sizes[s]) + " tensor-parallel ranks cannot split " +
          std::to_string(hp.n_heads) + " heads on quant-block boundaries (every " +
          std::to_string(md.head_align) + " heads)");
    }
    auto ffn = split_experts ? split_range(hp.ffn_dim, hp.ffn_dim, {1.0})
                             : split_range(hp.ffn_dim, md.ffn_align, speeds);
    if (!ffn.is_ok()) return ffn.status();
    // Experts go by free memory: they are most of a MoE model's bytes.
    std::vector<double> memory;
    for (int i = 0; i < stage_sizes[s]; ++i) memory.push_back(double(nodes[r + i].free_bytes));
    snap_weights(memory, opt.even_shares);
    auto experts = split_experts
                       ? split_range(hp.n_expert, 1, memory)
                       : split_range(hp.n_expert, std::max<int64_t>(hp.n_expert, 1), {1.0});
    if (hp.is_moe() && !experts.is_ok()) {
      return Status::invalid_argument("planner: " + std::to_string(stage_sizes[s]) +
                                      " expert-parallel ranks but only " +
                                      std::to_string(hp.n_expert) + " experts");
    }
    std::vector<int> members;
    for (int i = 0; i < stage_sizes[s]; ++i, ++r) {
      RankPlan rp;
      rp.node = r;
      rp.stage = s;
      rp.tp_rank = i;
      rp.shard.layer_begin = layer_ranges[s].first;
      rp.shard.layer_end = layer_ranges[s].second;
      std::tie(rp.shard.head_begin, rp.shard.head_end) = heads.value()[i];
      std::tie(rp.shard.ffn_begin, rp.shard.ffn_end) =
          split_experts ? ffn.value()[0] : ffn.value()[i];
      if (hp.is_moe()) {
        std::tie(rp.shard.expert_begin, rp.shard.expert_end) =
            split_experts ? experts.value()[i] : experts.value()[0];
      }
      rp.shard.embeds = s == 0;
      rp.shard.outputs = s == n_stages - 1;
      members.push_back(r);
      // Memory: this rank's slice of its layers, the KV heads it reads, embeddings/output.
      const double frac_heads = double(rp.shard.n_heads()) / hp.n_heads;
      const double frac_ffn = double(rp.shard.n_ffn()) / hp.ffn_dim;
      // Dense: about half attention, half FFN. MoE: the experts are counted apart.
      const double frac = 0.5 * (frac_heads + frac_ffn);
      const double frac_experts =
          hp.is_moe() ? frac_ffn * double(rp.shard.n_experts()) / hp.n_expert : 0;
      const double other = double(md.layer_bytes - md.expert_bytes);
      const double layer =
          hp.is_moe() ? other * frac_heads + md.expert_bytes * frac_experts : md.layer_bytes * frac;
      // A latent cache (deepseek2) is whole on every rank; KV heads are the rank's share.
      const int64_t kv_heads =
          hp.is_mla() ? hp.n_kv_heads : rp.shard.kv_head_end(hp) - rp.shard.kv_head_begin(hp);
      uint64_t bytes = static_cast<uint64_t>(layer) * rp.shard.n_layers();
      bytes += md.kv_bytes_per_token_per_layer * kv_heads / hp.n_kv_heads * rp.shard.n_layers() *
               static_cast<uint64_t>(opt.n_ctx) * static_cast<uint64_t>(opt.n_slots);
      if (rp.shard.embeds) bytes += md.embed_bytes;
      if (rp.shard.outputs) bytes += md.output_bytes;
      plan.rank_bytes.push_back(bytes);
      if (bytes > nodes[rp.node].free_bytes) {
        return Status::out_of_range("planner: node '" + nodes[rp.node].name + "' needs " +
                                    std::to_string(bytes >> 20) + " MiB for its shard but has " +
                                    std::to_string(nodes[rp.node].free_bytes >> 20) + " MiB free");
      }
      plan.ranks.push_back(rp);
    }
    plan.stage_ranks.push_back(members);
  }
  return plan;
}

// How a mode splits this model's layers, for the plan's explanation.
std::string mode_phrase(ParallelMode m, const model::HParams& hp) {
  const std::string experts = std::to_string(hp.n_expert) + " experts";
  switch (m) {
    case ParallelMode::kTensor:
      return hp.is_moe() ? "tensor parallel (" + experts + " each sliced by FFN columns)"
                         : "tensor parallel";
    case ParallelMode::kExpert:
      return "expert parallel (" + experts + " spread whole across the nodes)";
    case ParallelMode::kPipeline:
      return "pipeline";
    default:
      return parallel_mode_name(m);
  }
}

double max_latency_us(const LinkMatrix& l) {
  double m = 0;
  for (size_t i = 0; i < l.latency_us.size(); ++i)
    for (size_t j = 0; j < l.latency_us.size(); ++j)
      if (i != j) m = std::max(m, l.latency_us[i][j]);
  return m;
}

}  // namespace

Result<Plan> plan_placement(const std::vector<NodeDesc>& nodes, const LinkMatrix& links,
                            const ModelDesc& md, const PlanOptions& opt) {
  const int n = static_cast<int>(nodes.size());
  if (n < 1) return Status::invalid_argument("planner: no nodes");
  const model::HParams& hp = md.hp;

  // Step-time model: compute / N + syncs x latency (tensor); compute + hops x latency
  // (pipeline, one token at a time). Compute is memory-bound: bytes over ~20 GB/s per node.
  const double model_bytes =
      double(md.active_layer_bytes()) * hp.n_layers + md.embed_bytes + md.output_bytes;
  const double compute_ms =
      opt.compute_s_per_token > 0 ? opt.compute_s_per_token * 1e3 : model_bytes / 20e9 * 1e3;
  const double lat_ms = max_latency_us(links) * 1e-3;
  const double hidden_bytes = 4.0 * hp.dim;
  const double bw = n > 1 ? links.bandwidth_bytes_per_s[0][1 % n] : 1e12;
  const double est_pp = compute_ms + n * (lat_ms + hidden_bytes / bw * 1e3);
  const double est_tp =
      compute_ms / n + (2.0 * hp.n_layers + 1) * (lat_ms + hidden_bytes / bw * 1e3) + lat_ms;

  std::vector<int> sizes;
  ParallelMode mode = opt.mode;
  std::string why;
  char buf[512];
  if (n == 1) {
    mode = ParallelMode::kPipeline;
    sizes = {1};
    why = "one node: the whole model runs on the head.";
  } else if (mode == ParallelMode::kAuto) {
    const bool tensor_first = est_tp < est_pp;
    std::snprintf(buf, sizeof(buf),
                  "auto: %d nodes, worst link %.0f us one way; estimated %.2f ms/token in tensor "
                  "mode (%lld all-reduces per token) vs %.2f ms/token in pipeline mode: ",
                  n, lat_ms * 1e3, est_tp, static_cast<long long>(2 * hp.n_layers), est_pp);
    why = buf;
    // Try the faster mode first; fall back to the others when it cannot be placed. A MoE
    // model's layer split moves the same all-reduces per token either way (tensor-sliced
    // experts or whole experts per rank), so links do not choose between them; the work
    // does. Sliced, every rank runs a 1/N slice of each chosen expert: balanced, but
    // n_expert_used x 3 small matmuls per layer on every rank, each a thread-pool dispatch.
    // Whole, a rank runs only the chosen experts it holds: ~n_expert_used / N full-width
    // matmuls, but the busiest rank sets the pace. With at least kMinRoutedPerRank routed
    // experts per rank on average the busiest stays near the mean, and whole experts were
    // faster (Qwen3-30B-A3B shape, 128 experts top-8, 2 nodes x 1 thread: 6.0-6.3 tok/s
    // against 5.8-5.9 sliced; docs/PERFORMANCE.md); with fewer, one rank often gets all of
    // a token's experts, so slicing stays first.
    constexpr int64_t kMinRoutedPerRank = 4;
    std::vector<ParallelMode> order = {ParallelMode::kTensor};
    if (hp.is_moe()) {
      const bool whole_first = hp.n_expert_used >= kMinRoutedPerRank * n;
      order.insert(whole_first ? order.begin() : order.end(), ParallelMode::kExpert);
    }
    order.insert(tensor_first ? order.end() : order.begin(), ParallelMode::kPipeline);
    for (ParallelMode m : order) {
      std::vector<int> s =
          m == ParallelMode::kPipeline ? std::vector<int>(n, 1) : std::vector<int>{n};
      auto p = build(nodes, md, s, opt, m == ParallelMode::kExpert);
      if (p.is_ok()) {
        p->mode = m;
        p->est_token_ms_pipeline = est_pp;
        p->est_token_ms_tensor = est_tp;
        const bool preferred = m == order.front();
        p->why = why + mode_phrase(m, hp) +
                 (preferred ? " (faster)." : " (the faster mode does not fit these nodes).");
        return p;
      }
    }
    return Status::invalid_argument(
        "planner: the model can be placed neither in tensor nor in pipeline mode on these nodes");
  } else if (mode == ParallelMode::kTensor) {
    sizes = {n};
    why = mode_phrase(mode, hp) + ", as asked: every layer split across all " + std::to_string(n) +
          " nodes.";
  } else if (mode == ParallelMode::kExpert) {
    if (!hp.is_moe()) {
      return Status::invalid_argument(
          "planner: expert parallelism needs a mixture-of-experts model (this one is dense)");
    }
    sizes = {n};
    why = mode_phrase(mode, hp) +
          ", as asked: each node holds whole experts, a share sized by its free memory; the "
          "router runs on every node, the chosen experts where they live, and one all-reduce "
          "per layer sums their outputs (as many as tensor mode: attention heads are split).";
  } else if (mode == ParallelMode::kPipeline) {
    sizes.assign(n, 1);
    why = "pipeline, as asked: contiguous layer ranges sized by free memory x speed.";
  } else {
    const int g = opt.tp_group_size > 0 ? opt.tp_group_size : (n % 2 == 0 ? 2 : n);
    if (g < 1 || n % g != 0 || n / g < 1) {
      return Status::invalid_argument("planner: hybrid needs the node count (" + std::to_string(n) +
                                      ") to be a multiple of the group size (" + std::to_string(g) +
                                      ")");
    }
    sizes.assign(n / g, g);
    why = "hybrid, as asked: " + std::to_string(n / g) + " pipeline stages of " +
          std::to_string(g) + " tensor-parallel ranks.";
  }
  COHORT_ASSIGN_OR_RETURN(Plan p, build(nodes, md, sizes, opt, mode == ParallelMode::kExpert));
  p.mode = mode;
  p.est_token_ms_pipeline = est_pp;
  p.est_token_ms_tensor = est_tp;
  p.why = why;
  return p;
}

std::string Plan::to_string() const {
  std::string s = std::string("mode ") + parallel_mode_name(mode) + ", " +
                  std::to_string(ranks.size()) + " ranks, " + std::to_string(stage_ranks.size()) +
                  " stages\n";
  for (size_t r = 0; r < ranks.size(); ++r) {
    char buf[256];
    std::snprintf(buf, sizeof(buf), "  rank %zu: node %d stage %d tp %d  %s  ~%.1f MiB\n", r,
                  ranks[r].node, ranks[r].stage, ranks[r].tp_rank,
                  ranks[r].shard.to_string().c_str(),
                  r < rank_bytes.size() ? rank_bytes[r] / 1048576.0 : 0.0);
    s += buf;
  }
  return s + "  why: " + why + "\n";
}

}  // namespace cohort::cluster
