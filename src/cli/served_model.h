// One model as `cohort serve` runs it: the model session (this node or the cluster) and the
// generation engine over it, as one runtime::Engine that owns both. Single-model serve
// builds the engine in place (serve_stack.h); serving several models, the registry loads
// each of these on demand and unloading one destroys it, freeing its memory (and its
// workers, which then wait for the next head session).
#pragma once

#include <memory>
#include <string>

#include "cli/model_session.h"
#include "core/status.h"
#include "runtime/cluster_view.h"
#include "runtime/engine.h"
#include "runtime/event_log.h"
#include "runtime/generation_engine.h"

namespace cohort::cli {

// The engine serve runs over an open session: the GGUF's chat template (the fallback format
// when it has none or it does not parse) and the model's info.
std::unique_ptr<runtime::GenerationEngine> make_generation_engine(ModelSession& session,
                                                                  const std::string& name);

class ServedModel final : public runtime::Engine {
 public:
  // Opens flags.model_path as `name`. Refuses --transport mpi (one model per MPI job).
  static Result<std::shared_ptr<ServedModel>> open(const ModelFlags& flags, std::string name,
                                                   runtime::EventLog* events);

  bool ready() const override { return engine_->ready(); }
  std::string model_name() const override { return engine_->model_name(); }
  runtime::ModelInfo model_info() const override { return engine_->model_info(); }
  Result<std::string> render_chat(const runtime::ChatPrompt& chat) const override {
    return engine_->render_chat(chat);
  }
  Result<int64_t> count_tokens(const std::string& prompt, bool prompt_is_chat) const override {
    return engine_->count_tokens(prompt, prompt_is_chat);
  }
  Result<runtime::CompletionResult> complete(const runtime::CompletionRequest& r) override {
    return engine_->complete(r);
  }
  int64_t embedding_length() const override { return engine_->embedding_length(); }
  Result<runtime::EmbeddingResult> embed(const runtime::EmbeddingRequest& r) override {
    return engine_->embed(r);
  }

  runtime::EngineStats stats() const { return engine_->stats(); }
  // The cluster as the dashboard shows it (clustered = false on one node).
  runtime::ClusterView cluster_view() const;
  const ModelSession& session() const { return *session_; }

 private:
  std::unique_ptr<ModelSession> session_;
  std::unique_ptr<runtime::GenerationEngine> engine_;  // after session_: destroyed first
};

}  // namespace cohort::cli
