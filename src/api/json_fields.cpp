#include "api/json_fields.h"

#include <limits>

namespace cohort::api {

using nlohmann::json;

const json* field(const json& body, std::string_view name) {
  auto it = body.find(name);
  if (it == body.end() || it->is_null()) return nullptr;
  return &*it;
}

Status field_error(std::string* param, std::string_view name, std::string message) {
  *param = std::string(name);
  return Status::invalid_argument(std::move(message));
}

bool as_int64(const json& v, int64_t* out) {
  if (!v.is_number_integer()) return false;
  if (v.is_number_unsigned()) {
    const uint64_t u = v.get<uint64_t>();
    if (u > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) return false;
    *out = static_cast<int64_t>(u);
    return true;
  }
  *out = v.get<int64_t>();
  return true;
}

namespace {

std::string quoted(std::string_view name) { return "'" + std::string(name) + "'"; }

std::string number_text(double v) {
  std::string s = std::to_string(v);
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (!s.empty() && s.back() == '.') s.pop_back();
  return s;
}

}  // namespace

Status read_float(const json& body, std::string_view name, double lo, double hi, float* out,
                  std::string* param) {
  const json* v = field(body, name);
  if (v == nullptr) return Status::ok();
  if (!v->is_number() || v->get<double>() < lo || v->get<double>() > hi) {
    return field_error(param, name,
                       quoted(name) + " must be a number in [" + number_text(lo) + ", " +
                           (hi == std::numeric_limits<double>::max() ? "inf" : number_text(hi)) +
                           "]");
  }
  *out = v->get<float>();
  return Status::ok();
}

Status read_int(const json& body, std::string_view name, int64_t lo, int64_t hi, int64_t* out,
                std::string* param) {
  const json* v = field(body, name);
  if (v == nullptr) return Status::ok();
  int64_t n = 0;
  if (!as_int64(*v, &n) || n < lo || n > hi) {
    std::string range = hi == std::numeric_limits<int64_t>::max()
                            ? " >= " + std::to_string(lo)
                            : " in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]";
    return field_error(param, name, quoted(name) + " must be an integer" + range);
  }
  *out = n;
  return Status::ok();
}

Status read_bool(const json& body, std::string_view name, bool* out, std::string* param) {
  const json* v = field(body, name);
  if (v == nullptr) return Status::ok();
  if (!v->is_boolean()) return field_error(param, name, quoted(name) + " must be a boolean");
  *out = v->get<bool>();
  return Status::ok();
}

Status read_string(const json& body, std::string_view name, std::string* out, std::string* param) {
  const json* v = field(body, name);
  if (v == nullptr) return Status::ok();
  if (!v->is_string()) return field_error(param, name, quoted(name) + " must be a string");
  *out = v->get<std::string>();
  return Status::ok();
}

Status read_seed(const json& body, std::string_view name, std::optional<uint64_t>* out,
                 std::string* param) {
  const json* v = field(body, name);
  if (v == nullptr) return Status::ok();
  if (!v->is_number_integer())
    return field_error(param, name, quoted(name) + " must be an integer");
  *out = v->is_number_unsigned() ? v->get<uint64_t>() : static_cast<uint64_t>(v->get<int64_t>());
  return Status::ok();
}

Status read_stop(const json& body, std::string_view name, bool allow_string,
                 std::vector<std::string>* out, std::string* param) {
  const json* s = field(body, name);
  if (s == nullptr) return Status::ok();
  const std::string what =
      allow_string ? " must be a string or an array of strings" : " must be an array of strings";
  if (s->is_string() && allow_string) {
    if (!s->get_ref<const std::string&>().empty()) out->push_back(s->get<std::string>());
    return Status::ok();
  }
  if (!s->is_array()) return field_error(param, name, quoted(name) + what);
  for (const json& item : *s) {
    if (!item.is_string()) return field_error(param, name, quoted(name) + what);
    if (!item.get_ref<const std::string&>().empty()) out->push_back(item.get<std::string>());
  }
  return Status::ok();
}

}  // namespace cohort::api
