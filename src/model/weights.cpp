#include "model/weights.h"

#include <string>

#include "tensor/quantize.h"

namespace cohort::model {
namespace {

std::string shape_str(const std::vector<int64_t>& s) {
  std::string r = "[";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + "]";
}

// Binds tensors by the cut the shard needs. On a whole model file the tensor has its full
// shape and the cut is applied as a view; on a shard file it already has the cut's shape.
class Binder {
 public:
  Binder(const format::GgufFile& f, const kernels::KernelTable& kt, bool pre_sliced,
         std::vector<TensorCut>* cuts)
      : f_(f), kt_(kt), pre_sliced_(pre_sliced), cuts_(cuts) {}

  // Rows [r0, r1) and columns [c0, c1) of a [rows][cols] matrix; columns on block bounds.
  Result<kernels::WeightMatrix> matrix(const std::string& name, int64_t rows, int64_t cols,
                                       int64_t r0, int64_t r1, int64_t c0, int64_t c1) {
    TensorCut cut{name, rows, cols, r0, r1, c0, c1, false};
    COHORT_ASSIGN_OR_RETURN(const format::GgufTensorInfo* t, find_matrix(cut));
    return cut_matrix(cut, f_.tensor_data(*t), t->type);
  }
  Result<kernels::WeightMatrix> matrix(const std::string& name, int64_t rows, int64_t cols) {
    return matrix(name, rows, cols, 0, rows, 0, cols);
  }

  // Matrices [m0, m1) of a stack of n_mats [rows][cols] matrices, each cut to rows
  // [r0, r1) and columns [c0, c1).
  Result<std::vector<kernels::WeightMatrix>> stack(const std::string& name, int64_t n_mats,
                                                   int64_t m0, int64_t m1, int64_t rows,
                                                   int64_t cols, int64_t r0, int64_t r1, int64_t c0,
                                                   int64_t c1) {
    TensorCut cut{name, rows, cols, r0, r1, c0, c1, false, n_mats, m0, m1};
    COHORT_ASSIGN_OR_RETURN(const format::GgufTensorInfo* t, find_matrix(cut));
    // Matrices lie one after another, each a whole [rows][cols] (or, pre-sliced, a cut).
    const size_t mat_bytes = pre_sliced_ ? row_bytes(t->type, cut.cut_cols()) * cut.cut_rows()
                                         : row_bytes(t->type, cols) * rows;
    std::vector<kernels::WeightMatrix> out;
    for (int64_t m = 0; m < cut.cut_mats(); ++m) {
      const int64_t stored = pre_sliced_ ? m : m0 + m;
      out.push_back(cut_matrix(cut, f_.tensor_data(*t) + stored * mat_bytes, t->type));
    }
    return out;
  }

  // Elements [e0, e1) of a vector of n values, converted to f32.
  Result<std::vector<float>> vec(const std::string& name, int64_t n, int64_t e0, int64_t e1) {
    TensorCut cut{name, 1, n, 0, 1, e0, e1, true};
    COHORT_ASSIGN_OR_RETURN(const format::GgufTensorInfo* t, find(cut));
    if (t->type != DType::kF32 && t->type != DType::kF16 && t->type != DType::kBF16) {
      return Status::unsupported("model: " + f_.name() + ": vector '" + name + "' has type " +
                                 std::string(dtype_name(t->type)) + " (f32/f16/bf16 expected)");
    }
    record(cut);
    const int64_t stored = t->shape[0];
    std::vector<float> all(stored);
    dequantize_row(t->type, f_.tensor_data(*t), all.data(), stored);
    if (pre_sliced_) return all;
    return std::vector<float>(all.begin() + e0, all.begin() + e1);
  }
  Result<std::vector<float>> vec(const std::string& name, int64_t n) { return vec(name, n, 0, n); }

 private:
  // find() plus the checks every matrix needs: kernels for its type, columns cut on block
  // bounds. Records the cut.
  Result<const format::GgufTensorInfo*> find_matrix(const TensorCut& cut) {
    COHORT_ASSIGN_OR_RETURN(const format::GgufTensorInfo* t, find(cut));
    if (kt_.types[static_cast<uint32_t>(t->type)].vec_dot == nullptr) {
      return Status::unsupported("model: " + f_.name() + ": tensor '" + cut.name + "' has type " +
                                 std::string(dtype_name(t->type)) + ", which has no kernels");
    }
    const int64_t block = dtype_info(t->type).block_elems;
    if (cut.c0 % block != 0 || cut.c1 % block != 0) {
      return Status::invalid_argument(
          "model: " + f_.name() + ": cannot slice columns [" + std::to_string(cut.c0) + ", " +
          std::to_string(cut.c1) + ") of '" + cut.name + "': type " +
          std::string(dtype_name(t->type)) + " has blocks of " + std::to_string(block));
    }
    record(cut);
    return t;
  }

  // The cut of one [rows][cols] matrix (a cut already, in a shard file) stored at data.
  kernels::WeightMatrix cut_matrix(const TensorCut& cut, const uint8_t* data, DType type) const {
    kernels::WeightMatrix w;
    w.data = data;
    w.type = type;
    if (pre_sliced_) {
      w.rows = cut.cut_rows();
      w.cols = cut.cut_cols();
      w.row_stride = row_bytes(type, w.cols);
      return w;
    }
    w.rows = cut.rows;
    w.cols = cut.cols;
    w.row_stride = row_bytes(type, cut.cols);
    return w.row_slice(cut.r0, cut.r1).col_slice(cut.c0, cut.c1);
  }

  Result<const format::GgufTensorInfo*> find(const TensorCut& cut) {
    const format::GgufTensorInfo* t = f_.find_tensor(cut.name);
    if (!t) {
      return Status::invalid_argument("model: " + f_.name() + ": missing tensor '" + cut.name +
                                      "'");
    }
    const int64_t rows = pre_sliced_ ? cut.cut_rows() : cut.rows;
    const int64_t cols = pre_sliced_ ? cut.cut_cols() : cut.cols;
    std::vector<int64_t> shape =
        cut.is_vector ? std::vector<int64_t>{cols} : std::vector<int64_t>{cols, rows};
    if (cut.n_mats) shape.push_back(pre_sliced_ ? cut.cut_mats() : cut.n_mats);
    if (t->shape != shape) {
      return Status::invalid_argument("model: " + f_.name() + ": tensor '" + cut.name +
                                      "' has shape " + shape_str(t->shape) + ", expected " +
                                      shape_str(shape));
    }
    return t;
  }

  void record(const TensorCut& cut) {
    if (!cuts_) return;
    for (const TensorCut& c : *cuts_)
      if (c.name == cut.name) return;  // tied embeddings: bound twice, stored once
    cuts_->push_back(cut);
  }

  const format::GgufFile& f_;
  const kernels::KernelTable& kt_;
  bool pre_sliced_;
  std::vector<TensorCut>* cuts_;
};

// A [begin, end) pair stored as a 2-element integer array.
bool read_range(const format::GgufFile& file, const char* key, int64_t* b, int64_t* e) {
  const format::GgufArray* a = file.get_array(key);
  if (!a || a->count != 2) return false;
  const std::optional<int64_t> x = a->int_at(0), y = a->int_at(1);
  if (!x || !y) return false;
  *b = *x;
  *e = *y;
  return true;
}

// The router and the shard's experts of one layer (prefix p: "blk.N.").
Status bind_experts(Binder& b, const HParams& hp, const ShardSpec& shard, const std::string& p,
                    LayerWeights* L) {
  const int64_t dim = hp.dim, E = hp.n_expert, F = hp.ffn_dim;
  const int64_t e0 = shard.expert_begin, e1 = shard.expert_end;
  const int64_t f0 = shard.ffn_begin, f1 = shard.ffn_end;
  COHORT_ASSIGN_OR_RETURN(L->router, b.matrix(p + "ffn_gate_inp.weight", E, dim));
  COHORT_ASSIGN_OR_RETURN(auto gate,
                          b.stack(p + "ffn_gate_exps.weight", E, e0, e1, F, dim, f0, f1, 0, dim));
  COHORT_ASSIGN_OR_RETURN(auto up,
                          b.stack(p + "ffn_up_exps.weight", E, e0, e1, F, dim, f0, f1, 0, dim));
  COHORT_ASSIGN_OR_RETURN(auto down,
                          b.stack(p + "ffn_down_exps.weight", E, e0, e1, dim, F, 0, dim, f0, f1));
  for (size_t i = 0; i < gate.size(); ++i) L->experts.push_back({gate[i], up[i], down[i]});
  return Status::ok();
}

// Elements per quantization block of a tensor (1 when it is missing: binding reports that).
int64_t block_of(const format::GgufFile& f, const std::string& name) {
  const format::GgufTensorInfo* t = f.find_tensor(name);
  return t ? dtype_info(t->type).block_elems : 1;
}

// A SwiGLU FFN's gate/up rows and down columns [c0, c1) of `width` (names p + stem + ...).
Result<ExpertWeights> bind_ffn_cols(Binder& b, const HParams& hp, const std::string& p,
                                    const std::string& suffix, int64_t width, int64_t c0,
                                    int64_t c1) {
  const int64_t dim = hp.dim;
  ExpertWeights e;
  COHORT_ASSIGN_OR_RETURN(e.gate, b.matrix(p + "ffn_gate" + suffix, width, dim, c0, c1, 0, dim));
  COHORT_ASSIGN_OR_RETURN(e.up, b.matrix(p + "ffn_up" + suffix, width, dim, c0, c1, 0, dim));
  COHORT_ASSIGN_OR_RETURN(e.down, b.matrix(p + "ffn_down" + suffix, dim, width, 0, dim, c0, c1));
  return e;
}

// deepseek2's latent attention of one layer, sliced to the shard's heads.
Status bind_mla_attention(Binder& b, const format::GgufFile& f, const HParams& hp,
                          const ShardSpec& shard, const std::string& p, LayerWeights* L) {
  const int64_t dim = hp.dim, hd = hp.head_dim, vd = hp.v_head_dim, r = hp.kv_lora_rank;
  const int64_t h0 = shard.head_begin, h1 = shard.head_end;
  if (hp.q_lora_rank > 0) {
    const int64_t ql = hp.q_lora_rank;
    COHORT_ASSIGN_OR_RETURN(L->wq_a, b.matrix(p + "attn_q_a.weight", ql, dim));
    COHORT_ASSIGN_OR_RETURN(L->q_a_norm, b.vec(p + "attn_q_a_norm.weight", ql));
    COHORT_ASSIGN_OR_RETURN(
        L->wq, b.matrix(p + "attn_q_b.weight", hp.q_dim(), ql, h0 * hd, h1 * hd, 0, ql));
  } else {
    COHORT_ASSIGN_OR_RETURN(
        L->wq, b.matrix(p + "attn_q.weight", hp.q_dim(), dim, h0 * hd, h1 * hd, 0, dim));
  }
  COHORT_ASSIGN_OR_RETURN(L->wkv_a, b.matrix(p + "attn_kv_a_mqa.weight", r + hp.n_rot, dim));
  COHORT_ASSIGN_OR_RETURN(L->kv_a_norm, b.vec(p + "attn_kv_a_norm.weight", r));
  if (f.find_tensor(p + "attn_k_b.weight")) {  // split form: stacks of per-head matrices
    const int64_t nope = hp.qk_nope(), H = hp.n_heads;
    COHORT_ASSIGN_OR_RETURN(L->wk_b,
                            b.stack(p + "attn_k_b.weight", H, h0, h1, r, nope, 0, r, 0, nope));
    COHORT_ASSIGN_OR_RETURN(L->wv_b, b.stack(p + "attn_v_b.weight", H, h0, h1, vd, r, 0, vd, 0, r));
  } else {
    const int64_t kvb = hp.qk_nope() + vd;  // rows of kv_b per head: [k_nope | v]
    COHORT_ASSIGN_OR_RETURN(
        L->wkv_b, b.matrix(p + "attn_kv_b.weight", hp.n_heads * kvb, r, h0 * kvb, h1 * kvb, 0, r));
  }
  COHORT_ASSIGN_OR_RETURN(
      L->wo, b.matrix(p + "attn_output.weight", dim, hp.n_heads * vd, 0, dim, h0 * vd, h1 * vd));
  return Status::ok();
}

// deepseek2's FFN of one layer: the routing bias and shared experts besides the routed
// experts, or a dense FFN in the leading layers (side FFNs: ShardSpec::side_ffn_cols).
Status bind_deepseek2_ffn(Binder& b, const format::GgufFile& f, const HParams& hp,
                          const ShardSpec& shard, int64_t layer, const std::string& p,
                          LayerWeights* L) {
  int64_t c0 = 0, c1 = 0;
  if (!hp.layer_is_moe(layer)) {
    shard.side_ffn_cols(hp, hp.dense_ffn_dim, block_of(f, p + "ffn_down.weight"), &c0, &c1);
    if (c0 == c1) return Status::ok();
    COHORT_ASSIGN_OR_RETURN(ExpertWeights e,
                            bind_ffn_cols(b, hp, p, ".weight", hp.dense_ffn_dim, c0, c1));
    L->w_gate = e.gate;
    L->w_up = e.up;
    L->w_down = e.down;
    return Status::ok();
  }
  COHORT_RETURN_IF_ERROR(bind_experts(b, hp, shard, p, L));
  if (f.find_tensor(p + "exp_probs_b.bias")) {
    COHORT_ASSIGN_OR_RETURN(L->router_bias, b.vec(p + "exp_probs_b.bias", hp.n_expert));
  }
  if (hp.n_expert_shared == 0) return Status::ok();
  const int64_t width = hp.n_expert_shared * hp.ffn_dim;
  shard.side_ffn_cols(hp, width, block_of(f, p + "ffn_down_shexp.weight"), &c0, &c1);
  if (c0 == c1) return Status::ok();
  COHORT_ASSIGN_OR_RETURN(L->shared, bind_ffn_cols(b, hp, p, "_shexp.weight", width, c0, c1));
  return Status::ok();
}

}  // namespace

std::optional<ShardSpec> shard_file_spec(const format::GgufFile& file) {
  ShardSpec s;
  if (!read_range(file, "cohort.shard.layers", &s.layer_begin, &s.layer_end) ||
      !read_range(file, "cohort.shard.heads", &s.head_begin, &s.head_end) ||
      !read_range(file, "cohort.shard.ffn", &s.ffn_begin, &s.ffn_end)) {
    return std::nullopt;
  }
  // Absent in shards of dense models (their expert range is empty).
  if (file.get_array("cohort.shard.experts") &&
      !read_range(file, "cohort.shard.experts", &s.expert_begin, &s.expert_end)) {
    return std::nullopt;
  }
  s.embeds = file.get_bool("cohort.shard.embeds").value_or(false);
  s.outputs = file.get_bool("cohort.shard.outputs").value_or(false);
  return s;
}

Result<Weights> Weights::bind(const format::GgufFile& file, const HParams& hp,
                              const ShardSpec& shard, const kernels::KernelTable& kt,
                              std::vector<TensorCut>* cuts) {
  COHORT_RETURN_IF_ERROR(shard.validate(hp));
  const std::optional<ShardSpec> cut_for = shard_file_spec(file);
  if (cut_for && !(*cut_for == shard)) {
    return Status::invalid_argument("model: " + file.name() + " is a shard file cut for " +
                                    cut_for->to_string() + ", not for " + shard.to_string());
  }
  Binder b(file, kt, cut_for.has_value(), cuts);
  Weights w;
  const int64_t hd = hp.head_dim;
  const int64_t q0 = shard.head_begin * hd, q1 = shard.head_end * hd;
  const int64_t kv0 = shard.kv_head_begin(hp) * hd, kv1 = shard.kv_head_end(hp) * hd;
  const int64_t dim = hp.dim, f0 = shard.ffn_begin, f1 = shard.ffn_end;

  if (shard.embeds) {
    COHORT_ASSIGN_OR_RETURN(w.token_embd, b.matrix("token_embd.weight", hp.n_vocab, dim));
  }
  if (shard.outputs) {
    COHORT_ASSIGN_OR_RETURN(w.output_norm, b.vec("output_norm.weight", dim));
    const char* out_name = hp.tied_embeddings ? "token_embd.weight" : "output.weight";
    COHORT_ASSIGN_OR_RETURN(w.output, b.matrix(out_name, hp.n_vocab, dim));
  }
  if (file.find_tensor("rope_freqs.weight")) {
    COHORT_ASSIGN_OR_RETURN(w.rope_freq_factors, b.vec("rope_freqs.weight", hp.n_rot / 2));
  }

  for (int64_t il = shard.layer_begin; il < shard.layer_end; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    LayerWeights L;
    COHORT_ASSIGN_OR_RETURN(L.attn_norm, b.vec(p + "attn_norm.weight", dim));
    if (hp.is_mla()) {
      COHORT_RETURN_IF_ERROR(bind_mla_attention(b, file, hp, shard, p, &L));
      COHORT_ASSIGN_OR_RETURN(L.ffn_norm, b.vec(p + "ffn_norm.weight", dim));
      COHORT_RETURN_IF_ERROR(bind_deepseek2_ffn(b, file, hp, shard, il, p, &L));
      w.layers.push_back(std::move(L));
      continue;
    }
    COHORT_ASSIGN_OR_RETURN(L.wq, b.matrix(p + "attn_q.weight", hp.q_dim(), dim, q0, q1, 0, dim));
    COHORT_ASSIGN_OR_RETURN(L.wk,
                            b.matrix(p + "attn_k.weight", hp.kv_dim(), dim, kv0, kv1, 0, dim));
    COHORT_ASSIGN_OR_RETURN(L.wv,
                            b.matrix(p + "attn_v.weight", hp.kv_dim(), dim, kv0, kv1, 0, dim));
    if (hp.has_qkv_bias) {
      COHORT_ASSIGN_OR_RETURN(L.bq, b.vec(p + "attn_q.bias", hp.q_dim(), q0, q1));
      COHORT_ASSIGN_OR_RETURN(L.bk, b.vec(p + "attn_k.bias", hp.kv_dim(), kv0, kv1));
      COHORT_ASSIGN_OR_RETURN(L.bv, b.vec(p + "attn_v.bias", hp.kv_dim(), kv0, kv1));
    }
    if (hp.has_qk_norm) {
      COHORT_ASSIGN_OR_RETURN(L.q_norm, b.vec(p + "attn_q_norm.weight", hd));
      COHORT_ASSIGN_OR_RETURN(L.k_norm, b.vec(p + "attn_k_norm.weight", hd));
    }
    COHORT_ASSIGN_OR_RETURN(L.wo,
                            b.matrix(p + "attn_output.weight", dim, hp.q_dim(), 0, dim, q0, q1));
    COHORT_ASSIGN_OR_RETURN(L.ffn_norm, b.vec(p + "ffn_norm.weight", dim));
    if (hp.is_moe()) {
      COHORT_RETURN_IF_ERROR(bind_experts(b, hp, shard, p, &L));
      w.layers.push_back(std::move(L));
      continue;
    }
    COHORT_ASSIGN_OR_RETURN(ExpertWeights ffn,
                            bind_ffn_cols(b, hp, p, ".weight", hp.ffn_dim, f0, f1));
    L.w_gate = ffn.gate;
    L.w_up = ffn.up;
    L.w_down = ffn.down;
    w.layers.push_back(std::move(L));
  }
  return w;
}

}  // namespace cohort::model
