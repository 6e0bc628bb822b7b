#include "runtime/model_bench.h"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include "comm/communicator.h"
#include "core/clock.h"
#include "model/hparams.h"
#include "model/kv_cache.h"
#include "model/shard_spec.h"
#include "model/transformer.h"

namespace cohort::runtime {
namespace {

std::vector<int32_t> bench_tokens(int64_t n, int64_t n_vocab) {
  std::vector<int32_t> ids(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) ids[i] = static_cast<int32_t>((i * 7919 + 13) % n_vocab);
  return ids;
}

// Feeds ids at positions pos0.. in steps of at most the model's batch size.
Status feed(model::Transformer& m, model::KvCache& kv, const std::vector<int32_t>& ids,
            int64_t pos0, float* logits) {
  const int64_t n = static_cast<int64_t>(ids.size());
  for (int64_t i = 0; i < n; i += m.max_batch()) {
    model::ForwardIo io;
    io.tokens = ids.data() + i;
    io.logits = logits;
    COHORT_RETURN_IF_ERROR(m.forward(std::min(m.max_batch(), n - i), pos0 + i, kv, io));
  }
  return Status::ok();
}

BenchResult summarize(std::string test, int64_t n_tokens, const std::vector<double>& tok_s) {
  BenchResult r;
  r.test = std::move(test);
  r.n_tokens = n_tokens;
  r.rep_tok_s = tok_s;
  double sum = 0;
  for (double v : tok_s) sum += v;
  r.tok_s = sum / static_cast<double>(tok_s.size());
  if (tok_s.size() > 1) {
    double ss = 0;
    for (double v : tok_s) ss += (v - r.tok_s) * (v - r.tok_s);
    r.tok_s_sd = std::sqrt(ss / static_cast<double>(tok_s.size() - 1));
  }
  return r;
}

bool is_embedding(std::string_view name) { return name == "token_embd.weight"; }

// Positions [0, depth) of every layer get keys and values of a fixed pseudo-random sequence
// (uniform in [-1, 1)), as if a prompt of that length had been run.
void fill_depth(model::KvCache& kv, int64_t n_layers, int64_t depth) {
  std::vector<float> k(static_cast<size_t>(kv.row_elems())), v(k.size());
  uint32_t x = 12345;
  auto next = [&x] {
    x = x * 1664525u + 1013904223u;
    return static_cast<float>(x >> 8) * (2.0f / 16777216.0f) - 1.0f;
  };
  for (int64_t l = 0; l < n_layers; ++l) {
    for (int64_t pos = 0; pos < depth; ++pos) {
      for (size_t i = 0; i < k.size(); ++i) {
        k[i] = next();
        v[i] = next();
      }
      kv.store(l, pos, k.data(), v.data());
    }
  }
}

// The timed repetitions' wall time and pool timing, summed.
struct Spent {
  double wall_s = 0;
  ThreadPool::Timing pool;

  // One repetition (paired: one token) of wall time dt, and the pool's timing since its last
  // reset.
  void add(double dt, const ThreadPool::Timing& t) {
    wall_s += dt;
    pool.steps += t.steps;
    pool.step_ns += t.step_ns;
    pool.join_wait_ns += t.join_wait_ns;
  }
  void into(BenchResult& r) const {
    r.wall_s = wall_s;
    r.pool_steps = pool.steps;
    r.step_s = static_cast<double>(pool.step_ns) * 1e-9;
    r.join_wait_s = static_cast<double>(pool.join_wait_ns) * 1e-9;
  }
};

// Turns the pool's timing on for a scope, and off again however the scope ends.
class PoolTiming {
 public:
  explicit PoolTiming(ThreadPool& pool) : pool_(pool) { pool_.set_timing(true); }
  ~PoolTiming() { pool_.set_timing(false); }
  PoolTiming(const PoolTiming&) = delete;
  PoolTiming& operator=(const PoolTiming&) = delete;

 private:
  ThreadPool& pool_;
};

std::string test_name(const char* kind, int64_t n, int64_t depth) {
  std::string s = kind + std::to_string(n);
  if (depth > 0) s += " @ d" + std::to_string(depth);
  return s;
}

}  // namespace

ModelFacts model_facts(const format::GgufFile& file) {
  ModelFacts f;
  f.name = file.name();
  const size_t slash = f.name.find_last_of('/');
  if (slash != std::string::npos) f.name = f.name.substr(slash + 1);
  const bool tied = file.find_tensor("output.weight") == nullptr;
  const Result<model::HParams> hp = model::HParams::from_gguf(file);
  const bool moe = hp.is_ok() && hp->is_moe();
  std::map<DType, uint64_t> matrix_bytes;
  for (const format::GgufTensorInfo& t : file.tensors()) {
    f.model_bytes += t.bytes;
    const bool matrix = t.shape.size() >= 2;
    if (matrix) matrix_bytes[t.type] += t.bytes;
    if (is_embedding(t.name) && !tied) {
      // One row per token: negligible, and not what bounds the forward pass.
      continue;
    }
    uint64_t bytes = t.bytes, params = matrix ? static_cast<uint64_t>(t.n_elements()) : 0;
    if (moe && t.name.find("_exps.") != std::string_view::npos) {
      bytes = bytes / hp->n_expert * hp->n_expert_used;
      params = params / hp->n_expert * hp->n_expert_used;
    }
    f.bytes_per_token += bytes;
    f.params_per_token += params;
    const bool output = t.name == "output.weight" || (tied && is_embedding(t.name));
    if (!output) f.prompt_params_per_token += params;
  }
  uint64_t most = 0;
  for (const auto& [type, bytes] : matrix_bytes) {
    if (bytes > most) {
      most = bytes;
      f.type = std::string(dtype_name(type));
    }
  }
  return f;
}

Result<std::vector<BenchResult>> run_model_bench(const format::GgufFile& file,
                                                 const kernels::KernelTable& kt, ThreadPool& pool,
                                                 int64_t batch, const BenchOptions& o,
                                                 model::ExpertUsage* usage) {
  COHORT_ASSIGN_OR_RETURN(model::HParams hp, model::HParams::from_gguf(file));
  std::unique_ptr<comm::Communicator> comm = comm::make_local_communicator();
  COHORT_ASSIGN_OR_RETURN(
      std::unique_ptr<model::Transformer> m,
      model::Transformer::create(file, model::ShardSpec::whole(hp), *comm, pool, kt, batch));
  const int64_t n_ctx =
      o.depth + std::max<int64_t>({o.n_prompt, o.n_gen > 0 ? kGenPromptTokens + o.n_gen : 0, 1});
  COHORT_ASSIGN_OR_RETURN(model::KvCache kv, m->new_cache(n_ctx, o.kv_type));
  if (o.depth > 0) fill_depth(kv, hp.n_layers, o.depth);
  const double kv_bytes_per_pos = static_cast<double>(kv.bytes_per_position());
  // Bytes of cache a test's tokens read on average: token i of the test attends positions
  // [0, first + i].
  auto mean_attended = [](int64_t first, int64_t n) {
    return static_cast<double>(first) + static_cast<double>(n + 1) / 2.0;
  };
  auto kv_read = [&](int64_t first, int64_t n) {
    return static_cast<uint64_t>(kv_bytes_per_pos * mean_attended(first, n));
  };
  const double attn_flop_per_pos =
      2.0 * static_cast<double>(hp.n_layers * hp.n_heads *
                                (hp.head_dim + (hp.v_head_dim > 0 ? hp.v_head_dim : hp.head_dim)));
  model::Transformer& model = *m;
  const int64_t n_vocab = model.hparams().n_vocab;
  std::vector<float> logits(static_cast<size_t>(n_vocab));
  std::vector<BenchResult> out;
  const PoolTiming timing(pool);
  if (o.n_prompt > 0) {
    const std::vector<int32_t> ids = bench_tokens(o.n_prompt, n_vocab);
    std::vector<double> tok_s, fma;
    Spent spent;
    for (int rep = 0; rep <= o.reps; ++rep) {
      pool.reset_timing();
      const double t0 = now_s();
      COHORT_RETURN_IF_ERROR(feed(model, kv, ids, o.depth, logits.data()));
      const double dt = now_s() - t0;
      if (rep == 0) continue;
      tok_s.push_back(static_cast<double>(o.n_prompt) / dt);
      spent.add(dt, pool.timing());
      if (o.pair_fma) fma.push_back(fma_gflops_over(*o.pair_fma, pool, dt));
    }
    out.push_back(summarize(test_name("pp", o.n_prompt, o.depth), o.n_prompt, tok_s));
    spent.into(out.back());
    out.back().rep_fma_gflops = std::move(fma);
    out.back().depth = o.depth;
    out.back().kv_bytes_per_token = kv_read(o.depth, o.n_prompt);
    out.back().attn_flop_per_token = attn_flop_per_pos * mean_attended(o.depth, o.n_prompt);
  }
  if (o.n_gen > 0) {
    const std::vector<int32_t> prompt = bench_tokens(kGenPromptTokens, n_vocab);
    const std::vector<int32_t> gen = bench_tokens(kGenPromptTokens + o.n_gen, n_vocab);
    std::vector<double> tok_s, read_before, read_after, token_s, pair_read;
    std::vector<uint64_t> token_bytes;
    Spent spent;
    double probe_before = 0;
    const bool pair = o.bracket && o.pair_tokens;
    const uint64_t weight_bytes = model_facts(file).bytes_per_token;
    for (int rep = 0; rep <= o.reps; ++rep) {
      COHORT_RETURN_IF_ERROR(feed(model, kv, prompt, o.depth, logits.data()));
      if (o.bracket && rep == 1) probe_before = o.bracket->best_gbps(o.bracket_passes);
      pool.reset_timing();
      double dt = 0;  // paired: the tokens' own time, their steps counted into spent one by one
      const double t0 = now_s();
      for (int64_t i = 0; i < o.n_gen; ++i) {
        model::ForwardIo io;
        io.tokens = &gen[static_cast<size_t>(kGenPromptTokens + i)];
        io.logits = logits.data();
        const int64_t pos = o.depth + kGenPromptTokens + i;
        const double ti = now_s();
        COHORT_RETURN_IF_ERROR(model.forward(1, pos, kv, io));
        if (!pair || rep == 0) continue;
        const double ds = now_s() - ti;
        dt += ds;
        spent.add(ds, pool.timing());
        const uint64_t bytes = weight_bytes + kv_read(pos, 1);  // it attends [0, pos]
        token_s.push_back(ds);
        token_bytes.push_back(bytes);
        pair_read.push_back(o.bracket->gbps_of_bytes(bytes));
        pool.reset_timing();
      }
      if (!pair) dt = now_s() - t0;
      if (rep == 0) continue;
      tok_s.push_back(static_cast<double>(o.n_gen) / dt);
      if (!pair) spent.add(dt, pool.timing());
      if (o.bracket) {
        read_before.push_back(probe_before);
        probe_before = o.bracket->best_gbps(o.bracket_passes);  // after this one, before the next
        read_after.push_back(probe_before);
      }
    }
    out.push_back(summarize(test_name("tg", o.n_gen, o.depth), o.n_gen, tok_s));
    spent.into(out.back());
    out.back().rep_read_before = std::move(read_before);
    out.back().rep_read_after = std::move(read_after);
    out.back().token_s = std::move(token_s);
    out.back().pair_read_gbps = std::move(pair_read);
    out.back().token_bytes = std::move(token_bytes);
    out.back().depth = o.depth;
    out.back().kv_bytes_per_token = kv_read(o.depth + kGenPromptTokens, o.n_gen);
    out.back().attn_flop_per_token =
        attn_flop_per_pos * mean_attended(o.depth + kGenPromptTokens, o.n_gen);
  }
  for (BenchResult& r : out) {
    r.kv_type = std::string(dtype_name(o.kv_type));
    r.kv_bytes_per_pos = kv.bytes_per_position();
  }
  if (usage && model.expert_usage()) *usage = *model.expert_usage();
  return out;
}

}  // namespace cohort::runtime
