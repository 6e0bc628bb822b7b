#include "model/transformer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "kernels/matmul.h"
#include "model/rope.h"

namespace cohort::model {

Result<std::unique_ptr<Transformer>> Transformer::create(const format::GgufFile& file,
                                                         const ShardSpec& shard,
                                                         comm::Communicator& comm, ThreadPool& pool,
                                                         const kernels::KernelTable& kt,
                                                         int64_t max_batch) {
  if (max_batch < 1) return Status::invalid_argument("model: max_batch must be >= 1");
  COHORT_ASSIGN_OR_RETURN(HParams hp, HParams::from_gguf(file));
  COHORT_ASSIGN_OR_RETURN(Weights w, Weights::bind(file, hp, shard, kt));
  COHORT_ASSIGN_OR_RETURN(PackedWeights packed,
                          PackedWeights::pack(&w, kt, pool, file.file_backed()));
  auto t = std::unique_ptr<Transformer>(
      new Transformer(std::move(hp), shard, std::move(w), comm, pool, kt, max_batch));
  t->packed_ = std::move(packed);
  t->allocate_scratch();
  return t;
}

Transformer::Transformer(HParams hp, ShardSpec shard, Weights w, comm::Communicator& comm,
                         ThreadPool& pool, const kernels::KernelTable& kt, int64_t max_batch)
    : hp_(std::move(hp)),
      shard_(shard),
      w_(std::move(w)),
      comm_(comm),
      pool_(pool),
      kt_(kt),
      max_batch_(max_batch) {
  n_q_ = shard_.n_heads() * hp_.head_dim;
  n_kv_ = (shard_.kv_head_end(hp_) - shard_.kv_head_begin(hp_)) * hp_.head_dim;
  n_ffn_ = shard_.n_ffn();
  n_att_ = shard_.n_heads() * hp_.out_head_dim();
  if (hp_.is_moe()) moe_ = std::make_unique<MoeFfn>(hp_, shard_, max_batch, kt, pool);
  if (hp_.is_mla()) {
    n_kv_ = 0;  // the latent cache is MlaAttention's
    mla_ = std::make_unique<MlaAttention>(hp_, shard_, w_.layers, max_batch, kt, pool);
  }
  // deepseek2's dense layers may be wider than an expert (ShardSpec::side_ffn_cols).
  for (const LayerWeights& L : w_.layers) n_ffn_ = std::max(n_ffn_, L.w_gate.rows);
}

void Transformer::allocate_scratch() {
  const int64_t B = max_batch_;
  x_.assign(B * hp_.dim, 0.f);
  xn_.assign(B * hp_.dim, 0.f);
  q_.assign(B * n_q_, 0.f);
  k_.assign(B * n_kv_, 0.f);
  v_.assign(B * n_kv_, 0.f);
  att_.assign(B * n_att_, 0.f);
  o_.assign(B * hp_.dim, 0.f);
  gate_.assign(B * n_ffn_, 0.f);
  up_.assign(B * n_ffn_, 0.f);
  cos_.assign(B * hp_.n_rot / 2, 0.f);
  row_kv_.assign(B, nullptr);
  row_pos_.assign(B, 0);
  run_begin_.assign(B + 1, 0);
  // Per thread, one run's query rows gathered (B tokens x a GQA group), their outputs and
  // their causal limits (unused by latent attention, whose KV heads are not GQA groups).
  const int64_t group = hp_.n_kv_heads > 0 ? hp_.n_heads / hp_.n_kv_heads : 1;
  attn_rows_.assign(static_cast<size_t>(pool_.size() * 2 * B * group * hp_.head_dim), 0.f);
  attn_limits_.assign(static_cast<size_t>(pool_.size() * B * group), 0);
  sin_.assign(B * hp_.n_rot / 2, 0.f);

  // Rotary rates and magnitude, with the model's rope scaling (model/rope.h).
  inv_freq_ = rope_rates(hp_, w_.rope_freq_factors);
  rope_magnitude_ = rope_magnitude(hp_);

  size_t ws = 0;
  auto need = [&](const kernels::WeightMatrix& m) {
    if (m.data) ws = std::max(ws, kernels::matmul_workspace_bytes(kt_, m, B));
  };
  need(w_.output);
  for (const LayerWeights& L : w_.layers) {
    for (const auto* m :
         {&L.wq, &L.wk, &L.wv, &L.wo, &L.w_gate, &L.w_up, &L.w_down, &L.wq_a, &L.wkv_a})
      need(*m);
    if (moe_) ws = std::max(ws, moe_->workspace_bytes(L));
  }
  workspace_.assign(ws, 0);
}

Result<KvCache> Transformer::new_cache(int64_t n_ctx, DType type) const {
  if (mla_) return MlaAttention::new_cache(hp_, shard_.n_layers(), n_ctx, type);
  return KvCache::create(shard_.n_layers(), n_ctx,
                         shard_.kv_head_end(hp_) - shard_.kv_head_begin(hp_), hp_.head_dim, type);
}

void Transformer::linear(const kernels::WeightMatrix& w, const float* x, int64_t n_tokens,
                         float* y) {
  kernels::matmul(kt_, pool_, w, x, w.cols, n_tokens, y, workspace_.data());
}

template <typename Fn>
void Transformer::for_rows(int64_t n_tokens, int64_t units_per_row, Fn&& fn) {
  pool_.run_split(n_tokens, n_tokens * units_per_row, fn);
}

Status Transformer::check_batch(std::span<const BatchSeq> seqs) const {
  int64_t rows = 0;
  for (size_t i = 0; i < seqs.size(); ++i) {
    if (seqs[i].kv == nullptr || seqs[i].n_tokens < 1) {
      return Status::invalid_argument("model: batch entry " + std::to_string(i) +
                                      " has no cache or no tokens");
    }
    rows += seqs[i].n_tokens;
  }
  if (rows < 1 || rows > max_batch_) {
    return Status::invalid_argument("model: batch of " + std::to_string(rows) + " tokens (1.." +
                                    std::to_string(max_batch_) + " allowed)");
  }
  for (size_t i = 0; i < seqs.size(); ++i) {
    const BatchSeq& s = seqs[i];
    if (s.pos0 < 0 || s.pos0 + s.n_tokens > s.kv->n_ctx()) {
      return Status::out_of_range("model: positions " + std::to_string(s.pos0) + ".." +
                                  std::to_string(s.pos0 + s.n_tokens - 1) +
                                  " exceed the context of " + std::to_string(s.kv->n_ctx()));
    }
    for (size_t j = 0; j < i; ++j) {
      if (seqs[j].kv == s.kv) {
        return Status::invalid_argument("model: batch entries " + std::to_string(j) + " and " +
                                        std::to_string(i) + " share one cache");
      }
    }
  }
  return Status::ok();
}

int64_t Transformer::layout_rows(std::span<const BatchSeq> seqs) {
  const int64_t half = hp_.n_rot / 2;
  int64_t t = 0;
  for (const BatchSeq& s : seqs) {
    for (int64_t i = 0; i < s.n_tokens; ++i, ++t) {
      row_kv_[t] = s.kv;
      row_pos_[t] = s.pos0 + i;
      const float pos = static_cast<float>(s.pos0 + i);
      for (int64_t j = 0; j < half; ++j) {
        const float theta = pos * inv_freq_[j];
        cos_[t * half + j] = std::cos(theta) * rope_magnitude_;
        sin_[t * half + j] = std::sin(theta) * rope_magnitude_;
      }
    }
  }
  return t;
}

Status Transformer::attention_block(const LayerWeights& L, int64_t layer, int64_t n_tokens) {
  const int64_t dim = hp_.dim, hd = hp_.head_dim, half = hp_.n_rot / 2;
  const int64_t n_heads = shard_.n_heads();
  const int64_t n_kv_heads = n_kv_ / hd;
  for_rows(n_tokens, dim, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      kt_.rmsnorm(&x_[t * dim], L.attn_norm.data(), &xn_[t * dim], dim, hp_.rms_eps);
    }
  });
  if (mla_) {
    const MlaRows rows{row_kv_.data(), row_pos_.data(), cos_.data(), sin_.data()};
    mla_->forward(L, layer, xn_.data(), n_tokens, rows, att_.data(), workspace_.data());
    return finish_attention(L, n_tokens);
  }
  const kernels::MatmulOutput qkv[] = {{&L.wq, q_.data()}, {&L.wk, k_.data()}, {&L.wv, v_.data()}};
  kernels::matmul_shared_input(kt_, pool_, qkv, xn_.data(), L.wq.cols, n_tokens, workspace_.data());
  // Rows are independent here: each writes its own q, k, v and its own cache position (rows of
  // one cache have distinct positions: check_batch).
  for_rows(n_tokens, n_q_ + 2 * n_kv_, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      float* q = &q_[t * n_q_];
      float* k = &k_[t * n_kv_];
      float* v = &v_[t * n_kv_];
      if (!L.bq.empty()) {
        kt_.add(q, L.bq.data(), q, n_q_);
        kt_.add(k, L.bk.data(), k, n_kv_);
        kt_.add(v, L.bv.data(), v, n_kv_);
      }
      if (!L.q_norm.empty()) {
        for (int64_t h = 0; h < n_heads; ++h)
          kt_.rmsnorm(q + h * hd, L.q_norm.data(), q + h * hd, hd, hp_.rms_eps);
        for (int64_t h = 0; h < n_kv_heads; ++h)
          kt_.rmsnorm(k + h * hd, L.k_norm.data(), k + h * hd, hd, hp_.rms_eps);
      }
      kt_.rope(q, n_heads, hd, hp_.n_rot, &cos_[t * half], &sin_[t * half], hp_.rope_style);
      kt_.rope(k, n_kv_heads, hd, hp_.n_rot, &cos_[t * half], &sin_[t * half], hp_.rope_style);
      row_kv_[t]->store(layer, row_pos_[t], k, v);
    }
  });

  // Heads of this shard that share a KV head are passed together when the shard's head
  // range is aligned to the GQA groups (always, on one node), so that the kernel reads each
  // cached key and value once for the whole group (at long contexts a KV head's cache is
  // larger than L2, and one head at a time read it group-size times from memory);
  // otherwise one head at a time. The rows of one sequence in this forward (a prompt chunk:
  // one cache, successive positions) form a run, and a run's rows share that pass too, each
  // with its own causal limit. Either way each (row, head) gets the same bits.
  const int64_t group = hp_.n_heads / hp_.n_kv_heads;
  const int64_t kv_begin = shard_.kv_head_begin(hp_);
  const bool whole_groups = shard_.head_begin % group == 0 && n_heads % group == 0;
  const int64_t heads_per_item = whole_groups ? group : 1;
  const int64_t items_per_run = n_heads / heads_per_item;
  int64_t n_runs = 0;
  for (int64_t t = 0; t < n_tokens; ++t) {
    if (t == 0 || row_kv_[t] != row_kv_[t - 1] || row_pos_[t] != row_pos_[t - 1] + 1) {
      run_begin_[n_runs++] = t;
    }
  }
  run_begin_[n_runs] = n_tokens;
  const int64_t n_items = n_runs * items_per_run;
  const int64_t scratch_per_thread = static_cast<int64_t>(attn_scratch_.size()) / pool_.size();
  const int64_t rows_per_thread = static_cast<int64_t>(attn_limits_.size()) / pool_.size();
  int64_t n_kv_rows = 0;  // cached positions the rows read, all together
  for (int64_t t = 0; t < n_tokens; ++t) n_kv_rows += row_pos_[t] + 1;
  // One item on thread ith's scratch. Items are independent and each gives the same bits on
  // any thread, so the threads balance them (ThreadPool::run_stealing) unless
  // kernels::split_stealing() is off: at long contexts an item reads megabytes of cache, and
  // two cores' reads rarely keep the same pace.
  auto attend_item = [&](int ith, int64_t item) {
    float* scratch = &attn_scratch_[static_cast<size_t>(ith * scratch_per_thread)];
    float* q_rows = &attn_rows_[static_cast<size_t>(ith * rows_per_thread * 2 * hd)];
    float* out_rows = q_rows + rows_per_thread * hd;
    int64_t* limits = &attn_limits_[static_cast<size_t>(ith * rows_per_thread)];
    const int64_t r = item / items_per_run;
    const int64_t h = item % items_per_run * heads_per_item;  // first head of the item
    const int64_t t0 = run_begin_[r], len = run_begin_[r + 1] - t0;
    const int64_t kvh = (shard_.head_begin + h) / group - kv_begin;
    KvCache& kv = *row_kv_[t0];
    kernels::AttentionArgs a;
    a.k = kv.k_head(layer, kvh);
    a.v = kv.v_head(layer, kvh);
    a.kv_type = kv.type();
    a.n_kv = row_pos_[t0 + len - 1] + 1;
    a.n_kv_heads = 1;
    a.head_dim = hd;
    a.kv_stride = kv.head_dim();  // one KV head's positions are contiguous
    a.keys_blocked = kv.keys_blocked();
    a.k_head_stride = kv.head_stride();
    a.scale = attention_scale(hp_);
    if (len == 1) {
      a.q = &q_[t0 * n_q_ + h * hd];
      a.n_heads = heads_per_item;
      a.out = &att_[t0 * n_q_ + h * hd];
      kt_.attention(a, 0, heads_per_item, scratch);
      return;
    }
    // Gather the run's rows of these heads ([row][head][hd]), attend, scatter back.
    const size_t head_bytes = static_cast<size_t>(heads_per_item * hd) * sizeof(float);
    for (int64_t i = 0; i < len; ++i) {
      std::memcpy(q_rows + i * heads_per_item * hd, &q_[(t0 + i) * n_q_ + h * hd], head_bytes);
      for (int64_t g = 0; g < heads_per_item; ++g) {
        limits[i * heads_per_item + g] = row_pos_[t0 + i] + 1;
      }
    }
    a.q = q_rows;
    a.n_heads = len * heads_per_item;
    a.n_kv_of_head = limits;
    a.out = out_rows;
    kt_.attention(a, 0, a.n_heads, scratch);
    for (int64_t i = 0; i < len; ++i) {
      std::memcpy(&att_[(t0 + i) * n_q_ + h * hd], out_rows + i * heads_per_item * hd, head_bytes);
    }
  };
  // Work: two passes over the cached keys and values of every (token, head) item.
  const int64_t units = 2 * n_heads * n_kv_rows * hd;
  if (units < ThreadPool::kMinParallelUnits || pool_.size() == 1) {
    for (int64_t item = 0; item < n_items; ++item) attend_item(0, item);
  } else if (kernels::split_stealing()) {
    pool_.run_stealing(n_items, attend_item);
  } else {
    pool_.run([&](int ith, int nth) {
      int64_t i0, i1;
      ThreadPool::split(n_items, ith, nth, &i0, &i1);
      for (int64_t item = i0; item < i1; ++item) attend_item(ith, item);
    });
  }

  return finish_attention(L, n_tokens);
}

Status Transformer::finish_attention(const LayerWeights& L, int64_t n_tokens) {
  const int64_t dim = hp_.dim;
  linear(L.wo, att_.data(), n_tokens, o_.data());
  COHORT_RETURN_IF_ERROR(comm_.all_reduce_sum(o_.data(), n_tokens * dim, timeout_ms_));
  add_residual(n_tokens);
  return Status::ok();
}

Status Transformer::ffn_block(const LayerWeights& L, int64_t layer, int64_t n_tokens) {
  const int64_t dim = hp_.dim;
  for_rows(n_tokens, dim, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      kt_.rmsnorm(&x_[t * dim], L.ffn_norm.data(), &xn_[t * dim], dim, hp_.rms_eps);
    }
  });
  if (moe_ && hp_.layer_is_moe(shard_.layer_begin + layer)) {
    moe_->forward(L, layer, xn_.data(), n_tokens, o_.data(), workspace_.data());
  } else if (L.w_gate.data == nullptr) {
    // A deepseek2 dense layer whose columns all live on other ranks.
    std::fill(o_.begin(), o_.begin() + n_tokens * dim, 0.f);
  } else {
    const kernels::MatmulOutput gate_up[] = {{&L.w_gate, gate_.data()}, {&L.w_up, up_.data()}};
    kernels::matmul_shared_input(kt_, pool_, gate_up, xn_.data(), L.w_gate.cols, n_tokens,
                                 workspace_.data());
    const int64_t ffn = L.w_gate.rows;
    for_rows(n_tokens, ffn, [&](int64_t t0, int64_t t1) {
      kt_.silu_mul(&gate_[t0 * ffn], &up_[t0 * ffn], &gate_[t0 * ffn], (t1 - t0) * ffn);
    });
    linear(L.w_down, gate_.data(), n_tokens, o_.data());
  }
  COHORT_RETURN_IF_ERROR(comm_.all_reduce_sum(o_.data(), n_tokens * dim, timeout_ms_));
  add_residual(n_tokens);
  return Status::ok();
}

void Transformer::add_residual(int64_t n_tokens) {
  const int64_t dim = hp_.dim;
  for_rows(n_tokens, dim, [&](int64_t t0, int64_t t1) {
    kt_.add(&x_[t0 * dim], &o_[t0 * dim], &x_[t0 * dim], (t1 - t0) * dim);
  });
}

Status Transformer::forward(int64_t n_tokens, int64_t pos0, KvCache& kv, const ForwardIo& io) {
  const BatchSeq one{&kv, pos0, n_tokens};
  return forward_batch(std::span<const BatchSeq>(&one, 1), io);
}

Status Transformer::forward_batch(std::span<const BatchSeq> seqs, const ForwardIo& io) {
  const int64_t dim = hp_.dim;
  COHORT_RETURN_IF_ERROR(check_batch(seqs));
  int64_t max_ctx = 0;
  for (const BatchSeq& s : seqs) max_ctx = std::max(max_ctx, s.kv->n_ctx());
  if (attn_scratch_.size() < static_cast<size_t>(pool_.size() * max_ctx)) {
    attn_scratch_.assign(static_cast<size_t>(pool_.size() * max_ctx),
                         0.f);  // once per context size
  }
  const int64_t n_tokens = layout_rows(seqs);

  if (shard_.embeds) {
    const kernels::TypeOps& ops = kt_.types[static_cast<uint32_t>(w_.token_embd.type)];
    for (int64_t t = 0; t < n_tokens; ++t) {
      const int32_t id = io.tokens[t];
      if (id < 0 || id >= hp_.n_vocab) {
        return Status::invalid_argument("model: token id " + std::to_string(id) +
                                        " is outside the vocabulary of " +
                                        std::to_string(hp_.n_vocab));
      }
      ops.to_float(static_cast<const uint8_t*>(w_.token_embd.data) + id * w_.token_embd.row_stride,
                   &x_[t * dim], dim);
    }
  } else {
    std::copy(io.hidden_in, io.hidden_in + n_tokens * dim, x_.begin());
  }

  for (int64_t l = 0; l < shard_.n_layers(); ++l) {
    const LayerWeights& L = w_.layers[l];
    COHORT_RETURN_IF_ERROR(attention_block(L, l, n_tokens));
    COHORT_RETURN_IF_ERROR(ffn_block(L, l, n_tokens));
  }

  if (!shard_.outputs) {
    std::copy(x_.begin(), x_.begin() + n_tokens * dim, io.hidden_out);
    return Status::ok();
  }
  if (io.hidden_normed != nullptr) {
    for (int64_t t = 0; t < n_tokens; ++t) {
      kt_.rmsnorm(&x_[t * dim], w_.output_norm.data(), &io.hidden_normed[t * dim], dim,
                  hp_.rms_eps);
    }
    return Status::ok();
  }
  // The rows whose logits are wanted, normed into consecutive rows of xn_.
  int64_t n_out = 0, row = 0;
  for (const BatchSeq& s : seqs) {
    row += s.n_tokens;
    for (int64_t t = io.all_logits ? row - s.n_tokens : row - 1; t < row; ++t, ++n_out) {
      kt_.rmsnorm(&x_[t * dim], w_.output_norm.data(), &xn_[n_out * dim], dim, hp_.rms_eps);
    }
  }
  linear(w_.output, xn_.data(), n_out, io.logits);
  return Status::ok();
}

}  // namespace cohort::model
