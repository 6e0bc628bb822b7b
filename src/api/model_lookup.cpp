#include "api/model_lookup.h"

#include <utility>

#include "api/ollama_error.h"
#include "api/openai_error.h"
#include "api/prompt_check.h"

namespace cohort::api {

StreamProducer holding_lease(runtime::ModelLease lease, StreamProducer producer) {
  return
      [lease = std::move(lease), producer = std::move(producer)](StreamWriter& w) { producer(w); };
}

HttpResponse openai_lookup_error(const Status& st, const std::string& model) {
  if (st.code() == StatusCode::kNotFound) {
    return openai_error(404, "the model '" + model + "' does not exist", "model",
                        "model_not_found");
  }
  return openai_error(http_status_for(st), st.message(), "model");
}

HttpResponse ollama_lookup_error(const Status& st, const std::string& model) {
  if (st.code() == StatusCode::kNotFound)
    return ollama_error(404, "model '" + model + "' not found");
  return ollama_error(http_status_for(st), st.message());
}

}  // namespace cohort::api
