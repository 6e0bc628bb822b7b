#include "runtime/model_name.h"

namespace cohort::runtime {
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

bool model_names_match(std::string_view requested, std::string_view served) {
  return requested == served || base_name(requested) == base_name(served);
}

bool is_plain_model_name(std::string_view name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    if (c == '/' || c == '\\' || static_cast<unsigned char>(c) < 0x20 || c == 0x7f) return false;
  }
  return true;
}

}  // namespace cohort::runtime
