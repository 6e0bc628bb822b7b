#include "cli/served_model.h"

#include <cstdio>
#include <utility>

#include "runtime/chat_renderer.h"
#include "runtime/model_info.h"

namespace cohort::cli {

std::unique_ptr<runtime::GenerationEngine> make_generation_engine(ModelSession& ms,
                                                                  const std::string& name) {
  auto renderer = runtime::ChatRenderer::from_gguf(*ms.file, *ms.tokenizer);
  if (!renderer.is_ok()) {
    std::fprintf(stderr, "serve: %s: %s; using the fallback chat format\n", name.c_str(),
                 renderer.status().message().c_str());
    renderer = runtime::ChatRenderer();
  }
  return std::make_unique<runtime::GenerationEngine>(
      name, *ms.stepper, *ms.tokenizer, std::move(renderer).value(),
      runtime::model_info_from_gguf(*ms.file, ms.n_ctx));
}

Result<std::shared_ptr<ServedModel>> ServedModel::open(const ModelFlags& flags, std::string name,
                                                       runtime::EventLog* events) {
  if (flags.transport == "mpi") {
    return Status::unsupported("serve: several models cannot run over --transport mpi");
  }
  auto m = std::shared_ptr<ServedModel>(new ServedModel());
  COHORT_ASSIGN_OR_RETURN(m->session_, open_model_session(flags, events));
  m->engine_ = make_generation_engine(*m->session_, name);
  return m;
}

runtime::ClusterView ServedModel::cluster_view() const {
  if (session_->cluster) return session_->cluster->view();
  return {};
}

}  // namespace cohort::cli
