#include "api/api_routes.h"

#include <utility>

#include "api/anthropic_routes.h"
#include "api/dialect_errors.h"
#include "api/embedding_routes.h"
#include "api/ollama_routes.h"
#include "api/openai_routes.h"

namespace cohort::api {

void add_api_routes(Router& router, std::shared_ptr<runtime::ModelRegistry> models,
                    HttpHandler browser_root) {
  add_openai_routes(router, models);
  add_anthropic_routes(router, models);
  add_ollama_routes(router, models, std::move(browser_root));
  add_embedding_routes(router, models);
  router.set_error_formatter(dialect_error);
}

void add_api_routes(Router& router, runtime::Engine& engine, HttpHandler browser_root) {
  auto models = std::make_shared<runtime::ModelRegistry>(runtime::ModelRegistryOptions{},
                                                         runtime::ModelLoader{});
  // Not owned: the caller keeps the engine alive.
  const Status st = models->add_resident(std::shared_ptr<runtime::Engine>(&engine, [](auto*) {}));
  (void)st;  // the only model of an empty registry: refused only for a path-like name
  add_api_routes(router, std::move(models), std::move(browser_root));
}

}  // namespace cohort::api
