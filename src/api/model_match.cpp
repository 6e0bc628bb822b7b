#include "api/model_match.h"

namespace cohort::api {
namespace {

std::string_view strip_suffix(std::string_view s, std::string_view suffix) {
  if (s.size() > suffix.size() && s.substr(s.size() - suffix.size()) == suffix) {
    s.remove_suffix(suffix.size());
  }
  return s;
}

std::string_view base_name(std::string_view s) {
  return strip_suffix(strip_suffix(s, ":latest"), ".gguf");
}

}  // namespace

bool model_matches(std::string_view requested, std::string_view served) {
  if (requested.empty() || requested == served) return true;
  return base_name(requested) == base_name(served);
}

}  // namespace cohort::api
