#include "api/api_routes.h"

#include <utility>

#include "api/anthropic_routes.h"
#include "api/dialect_errors.h"
#include "api/embedding_routes.h"
#include "api/ollama_routes.h"
#include "api/openai_routes.h"

namespace cohort::api {

void add_api_routes(Router& router, runtime::Engine& engine, HttpHandler browser_root) {
  add_openai_routes(router, engine);
  add_anthropic_routes(router, engine);
  add_ollama_routes(router, engine, std::move(browser_root));
  add_embedding_routes(router, engine);
  router.set_error_formatter(dialect_error);
}

}  // namespace cohort::api
