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

class Binder {
 public:
  Binder(const format::GgufFile& f, const kernels::KernelTable& kt) : f_(f), kt_(kt) {}

  Result<const format::GgufTensorInfo*> find(const std::string& name,
                                             const std::vector<int64_t>& shape) {
    const format::GgufTensorInfo* t = f_.find_tensor(name);
    if (!t)
      return Status::invalid_argument("model: " + f_.name() + ": missing tensor '" + name + "'");
    if (t->shape != shape) {
      return Status::invalid_argument("model: " + f_.name() + ": tensor '" + name + "' has shape " +
                                      shape_str(t->shape) + ", expected " + shape_str(shape));
    }
    return t;
  }

  // A [rows][cols] matrix (GGUF shape {cols, rows}).
  Result<kernels::WeightMatrix> matrix(const std::string& name, int64_t rows, int64_t cols) {
    COHORT_ASSIGN_OR_RETURN(const format::GgufTensorInfo* t, find(name, {cols, rows}));
    if (kt_.types[static_cast<uint32_t>(t->type)].vec_dot == nullptr) {
      return Status::unsupported("model: " + f_.name() + ": tensor '" + name + "' has type " +
                                 std::string(dtype_name(t->type)) + ", which has no kernels");
    }
    kernels::WeightMatrix w;
    w.data = f_.tensor_data(*t);
    w.type = t->type;
    w.rows = rows;
    w.cols = cols;
    w.row_stride = row_bytes(t->type, cols);
    return w;
  }

  // Like matrix(), then keeps columns [c0, c1): they must fall on block boundaries.
  Result<kernels::WeightMatrix> col_sliced(const std::string& name, int64_t rows, int64_t cols,
                                           int64_t c0, int64_t c1) {
    COHORT_ASSIGN_OR_RETURN(kernels::WeightMatrix w, matrix(name, rows, cols));
    const int64_t block = dtype_info(w.type).block_elems;
    if (c0 % block != 0 || c1 % block != 0) {
      return Status::invalid_argument("model: " + f_.name() + ": cannot slice columns [" +
                                      std::to_string(c0) + ", " + std::to_string(c1) + ") of '" +
                                      name + "': type " + std::string(dtype_name(w.type)) +
                                      " has blocks of " + std::to_string(block));
    }
    return w.col_slice(c0, c1);
  }

  // A vector of n values, elements [e0, e1) kept, converted to f32.
  Result<std::vector<float>> vec(const std::string& name, int64_t n, int64_t e0, int64_t e1) {
    COHORT_ASSIGN_OR_RETURN(const format::GgufTensorInfo* t, find(name, {n}));
    if (t->type != DType::kF32 && t->type != DType::kF16 && t->type != DType::kBF16) {
      return Status::unsupported("model: " + f_.name() + ": vector '" + name + "' has type " +
                                 std::string(dtype_name(t->type)) + " (f32/f16/bf16 expected)");
    }
    std::vector<float> all(n);
    dequantize_row(t->type, f_.tensor_data(*t), all.data(), n);
    return std::vector<float>(all.begin() + e0, all.begin() + e1);
  }
  Result<std::vector<float>> vec(const std::string& name, int64_t n) { return vec(name, n, 0, n); }

 private:
  const format::GgufFile& f_;
  const kernels::KernelTable& kt_;
};

}  // namespace

Result<Weights> Weights::bind(const format::GgufFile& file, const HParams& hp,
                              const ShardSpec& shard, const kernels::KernelTable& kt) {
  COHORT_RETURN_IF_ERROR(shard.validate(hp));
  Binder b(file, kt);
  Weights w;
  const int64_t hd = hp.head_dim;
  const int64_t q0 = shard.head_begin * hd, q1 = shard.head_end * hd;
  const int64_t kv0 = shard.kv_head_begin(hp) * hd, kv1 = shard.kv_head_end(hp) * hd;

  if (shard.embeds) {
    COHORT_ASSIGN_OR_RETURN(w.token_embd, b.matrix("token_embd.weight", hp.n_vocab, hp.dim));
  }
  if (shard.outputs) {
    COHORT_ASSIGN_OR_RETURN(w.output_norm, b.vec("output_norm.weight", hp.dim));
    const char* out_name = hp.tied_embeddings ? "token_embd.weight" : "output.weight";
    COHORT_ASSIGN_OR_RETURN(w.output, b.matrix(out_name, hp.n_vocab, hp.dim));
  }
  if (file.find_tensor("rope_freqs.weight")) {
    COHORT_ASSIGN_OR_RETURN(w.rope_freq_factors, b.vec("rope_freqs.weight", hp.n_rot / 2));
  }

  for (int64_t il = shard.layer_begin; il < shard.layer_end; ++il) {
    const std::string p = "blk." + std::to_string(il) + ".";
    LayerWeights L;
    COHORT_ASSIGN_OR_RETURN(L.attn_norm, b.vec(p + "attn_norm.weight", hp.dim));
    COHORT_ASSIGN_OR_RETURN(auto wq, b.matrix(p + "attn_q.weight", hp.q_dim(), hp.dim));
    COHORT_ASSIGN_OR_RETURN(auto wk, b.matrix(p + "attn_k.weight", hp.kv_dim(), hp.dim));
    COHORT_ASSIGN_OR_RETURN(auto wv, b.matrix(p + "attn_v.weight", hp.kv_dim(), hp.dim));
    L.wq = wq.row_slice(q0, q1);
    L.wk = wk.row_slice(kv0, kv1);
    L.wv = wv.row_slice(kv0, kv1);
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
                            b.col_sliced(p + "attn_output.weight", hp.dim, hp.q_dim(), q0, q1));
    COHORT_ASSIGN_OR_RETURN(L.ffn_norm, b.vec(p + "ffn_norm.weight", hp.dim));
    COHORT_ASSIGN_OR_RETURN(auto wg, b.matrix(p + "ffn_gate.weight", hp.ffn_dim, hp.dim));
    COHORT_ASSIGN_OR_RETURN(auto wu, b.matrix(p + "ffn_up.weight", hp.ffn_dim, hp.dim));
    L.w_gate = wg.row_slice(shard.ffn_begin, shard.ffn_end);
    L.w_up = wu.row_slice(shard.ffn_begin, shard.ffn_end);
    COHORT_ASSIGN_OR_RETURN(L.w_down, b.col_sliced(p + "ffn_down.weight", hp.dim, hp.ffn_dim,
                                                   shard.ffn_begin, shard.ffn_end));
    w.layers.push_back(std::move(L));
  }
  return w;
}

}  // namespace cohort::model
