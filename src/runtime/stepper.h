// One forward step of "the model", wherever it runs: on this node (LocalStepper) or across a
// cluster (ClusterStepper, runtime/cluster_stepper.h). The generation loop sees only this.
#pragma once

#include <cstdint>

#include "core/status.h"
#include "model/kv_cache.h"
#include "model/transformer.h"

namespace cohort::runtime {

class Stepper {
 public:
  virtual ~Stepper() = default;
  virtual int64_t n_vocab() const = 0;
  virtual int64_t n_ctx() const = 0;
  virtual int64_t max_batch() const = 0;
  // Runs tokens at positions pos0.. (n <= max_batch()); writes the logits of the last token,
  // or of every token when all_logits ([n][n_vocab]).
  virtual Status step(const int32_t* tokens, int64_t n, int64_t pos0, bool all_logits,
                      float* logits) = 0;
};

// The whole model on this node.
class LocalStepper final : public Stepper {
 public:
  LocalStepper(model::Transformer& model, model::KvCache& kv) : model_(model), kv_(kv) {}
  int64_t n_vocab() const override { return model_.hparams().n_vocab; }
  int64_t n_ctx() const override { return kv_.n_ctx(); }
  int64_t max_batch() const override { return model_.max_batch(); }
  Status step(const int32_t* tokens, int64_t n, int64_t pos0, bool all_logits,
              float* logits) override {
    model::ForwardIo io;
    io.tokens = tokens;
    io.logits = logits;
    io.all_logits = all_logits;
    return model_.forward(n, pos0, kv_, io);
  }

 private:
  model::Transformer& model_;
  model::KvCache& kv_;
};

}  // namespace cohort::runtime
