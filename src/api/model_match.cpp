#include "api/model_match.h"

#include "runtime/model_name.h"

namespace cohort::api {

bool model_matches(std::string_view requested, std::string_view served) {
  return requested.empty() || runtime::model_names_match(requested, served);
}

}  // namespace cohort::api
