#include "model/mla_attention.h"

#include <algorithm>
#include <cmath>

#include "core/fp16.h"
#include "kernels/matmul.h"
#include "model/rope.h"

namespace cohort::model {
namespace {

// Row pos of a cache layer as floats: in place for f32, converted into buf for f16.
const float* cache_row(const KvCache& kv, const void* layer_base, int64_t pos, float* buf) {
  const int64_t n = kv.row_elems();
  if (kv.type() == DType::kF32) return static_cast<const float*>(layer_base) + pos * n;
  const uint16_t* h = static_cast<const uint16_t*>(layer_base) + pos * n;
  for (int64_t i = 0; i < n; ++i) buf[i] = fp16_to_f32(h[i]);
  return buf;
}

// The rows of every matrix of heads, one after another, as f32.
std::vector<float> dequantize_heads(const kernels::KernelTable& kt,
                                    const std::vector<kernels::WeightMatrix>& heads) {
  std::vector<float> out;
  for (const kernels::WeightMatrix& m : heads) {
    const auto& ops = kt.types[static_cast<uint32_t>(m.type)];
    const size_t at = out.size();
    out.resize(at + m.rows * m.cols);
    for (int64_t i = 0; i < m.rows; ++i)
      ops.to_float(static_cast<const uint8_t*>(m.data) + i * m.row_stride, &out[at + i * m.cols],
                   m.cols);
  }
  return out;
}

// attn_kv_b's rows of n_heads heads, each [k_nope | v] x kv_lora, into the per-head
// matrices the split form holds: ka [head][kv_lora][qk_nope] (the K half transposed),
// vu [head][v_head_dim][kv_lora].
void split_kv_b(const kernels::KernelTable& kt, const HParams& hp, int64_t n_heads,
                const kernels::WeightMatrix& kv_b, std::vector<float>* ka, std::vector<float>* vu) {
  const int64_t r = hp.kv_lora_rank, nope = hp.qk_nope(), vd = hp.v_head_dim;
  const auto& ops = kt.types[static_cast<uint32_t>(kv_b.type)];
  std::vector<float> row(r);
  ka->assign(n_heads * r * nope, 0.f);
  vu->assign(n_heads * vd * r, 0.f);
  for (int64_t h = 0; h < n_heads; ++h) {
    for (int64_t i = 0; i < nope + vd; ++i) {
      const int64_t w_row = h * (nope + vd) + i;
      ops.to_float(static_cast<const uint8_t*>(kv_b.data) + w_row * kv_b.row_stride, row.data(), r);
      if (i < nope) {
        for (int64_t c = 0; c < r; ++c) (*ka)[(h * r + c) * nope + i] = row[c];
      } else {
        std::copy(row.begin(), row.end(), &(*vu)[(h * vd + i - nope) * r]);
      }
    }
  }
}

}  // namespace

MlaAttention::MlaAttention(const HParams& hp, const ShardSpec& shard,
                           const std::vector<LayerWeights>& layers, int64_t max_batch,
                           const kernels::KernelTable& kt, ThreadPool& pool)
    : hp_(hp),
      n_heads_(shard.n_heads()),
      kt_(kt),
      pool_(pool),
      dot_(kt.types[static_cast<uint32_t>(DType::kF32)].vec_dot) {
  for (const LayerWeights& L : layers) {
    std::vector<float> ka, vu;
    if (!L.wk_b.empty()) {
      ka = dequantize_heads(kt, L.wk_b);
      vu = dequantize_heads(kt, L.wv_b);
    } else {
      split_kv_b(kt, hp, n_heads_, L.wkv_b, &ka, &vu);
    }
    k_absorb_.push_back(std::move(ka));
    v_up_.push_back(std::move(vu));
  }
  const int64_t r = hp.kv_lora_rank;
  q_a_.assign(max_batch * std::max<int64_t>(hp.q_lora_rank, 1), 0.f);
  q_.assign(max_batch * n_heads_ * hp.head_dim, 0.f);
  kv_a_.assign(max_batch * (r + hp.n_rot), 0.f);
}

Result<KvCache> MlaAttention::new_cache(const HParams& hp, int64_t n_layers, int64_t n_ctx,
                                        DType type) {
  return KvCache::create_latent(n_layers, n_ctx, hp.kv_lora_rank + hp.n_rot, type);
}

void MlaAttention::attend(int64_t layer, int64_t t, int64_t h, const KvCache& kv, int64_t pos,
                          float* out, float* scratch) const {
  const int64_t r = hp_.kv_lora_rank, nope = hp_.qk_nope(), rope = hp_.n_rot;
  const int64_t vd = hp_.v_head_dim;
  const float* q = &q_[(t * n_heads_ + h) * hp_.head_dim];
  float* q_lat = scratch;
  float* o_lat = q_lat + r;
  float* buf = o_lat + r;
  float* score = buf + r + rope;
  const float* ka = &k_absorb_[layer][h * r * nope];
  for (int64_t c = 0; c < r; ++c) q_lat[c] = dot(q, ka + c * nope, nope);
  const void* base = kv.k(layer);
  const float scale = attention_scale(hp_);
  for (int64_t u = 0; u <= pos; ++u) {
    const float* row = cache_row(kv, base, u, buf);
    score[u] = (dot(q_lat, row, r) + dot(q + nope, row + r, rope)) * scale;
  }
  kt_.softmax(score, pos + 1);
  std::fill(o_lat, o_lat + r, 0.f);
  for (int64_t u = 0; u <= pos; ++u) {
    const float* row = cache_row(kv, base, u, buf);
    for (int64_t c = 0; c < r; ++c) o_lat[c] += score[u] * row[c];
  }
  const float* vu = &v_up_[layer][h * vd * r];
  for (int64_t j = 0; j < vd; ++j) out[j] = dot(vu + j * r, o_lat, r);
}

void MlaAttention::forward(const LayerWeights& L, int64_t layer, const float* xn, int64_t n_tokens,
                           const MlaRows& rows, float* att, void* workspace) {
  const int64_t dim = hp_.dim, hd = hp_.head_dim, nope = hp_.qk_nope(), rope = hp_.n_rot;
  const int64_t r = hp_.kv_lora_rank, half = rope / 2;
  if (hp_.q_lora_rank > 0) {
    const int64_t ql = hp_.q_lora_rank;
    kernels::matmul(kt_, pool_, L.wq_a, xn, dim, n_tokens, q_a_.data(), workspace);
    for (int64_t t = 0; t < n_tokens; ++t)
      kt_.rmsnorm(&q_a_[t * ql], L.q_a_norm.data(), &q_a_[t * ql], ql, hp_.rms_eps);
    kernels::matmul(kt_, pool_, L.wq, q_a_.data(), ql, n_tokens, q_.data(), workspace);
  } else {
    kernels::matmul(kt_, pool_, L.wq, xn, dim, n_tokens, q_.data(), workspace);
  }
  kernels::matmul(kt_, pool_, L.wkv_a, xn, dim, n_tokens, kv_a_.data(), workspace);
  int64_t max_ctx = 0, n_kv_rows = 0;
  for (int64_t t = 0; t < n_tokens; ++t) {
    const float* cos = rows.cos + t * half;
    const float* sin = rows.sin + t * half;
    float* latent = &kv_a_[t * (r + rope)];
    kt_.rmsnorm(latent, L.kv_a_norm.data(), latent, r, hp_.rms_eps);
    kt_.rope(latent + r, 1, rope, rope, cos, sin, hp_.rope_style);
    for (int64_t h = 0; h < n_heads_; ++h)
      kt_.rope(&q_[(t * n_heads_ + h) * hd + nope], 1, rope, rope, cos, sin, hp_.rope_style);
    rows.kv[t]->store(layer, rows.pos[t], latent, nullptr);
    max_ctx = std::max(max_ctx, rows.kv[t]->n_ctx());
    n_kv_rows += rows.pos[t] + 1;
  }

  const int64_t per_thread = 3 * r + rope + max_ctx;
  if (per_thread > scratch_per_thread_) {  // once per context size
    scratch_per_thread_ = per_thread;
    thread_scratch_.assign(static_cast<size_t>(per_thread * pool_.size()), 0.f);
  }
  const int64_t n_items = n_tokens * n_heads_, vd = hp_.v_head_dim;
  // Work: two passes over the cached latents of every (token, head) item.
  pool_.run_sized(2 * n_heads_ * n_kv_rows * (r + rope), [&](int ith, int nth) {
    int64_t i0, i1;
    ThreadPool::split(n_items, ith, nth, &i0, &i1);
    float* scratch = &thread_scratch_[static_cast<size_t>(ith * scratch_per_thread_)];
    for (int64_t item = i0; item < i1; ++item) {
      const int64_t t = item / n_heads_, h = item % n_heads_;
      attend(layer, t, h, *rows.kv[t], rows.pos[t], att + item * vd, scratch);
    }
  });
}

}  // namespace cohort::model
