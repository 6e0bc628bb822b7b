#include "api/json_body.h"

#include <exception>

#include <nlohmann/json.hpp>

namespace cohort::api {

Result<nlohmann::json> parse_json_object(std::string_view body) {
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(body.begin(), body.end());
  } catch (const nlohmann::json::exception& e) {
    return Status::invalid_argument(std::string("request body is not valid JSON: ") + e.what());
  } catch (const std::exception& e) {
    return Status::invalid_argument(std::string("request body could not be parsed: ") + e.what());
  }
  if (!j.is_object()) return Status::invalid_argument("request body must be a JSON object");
  return j;
}

std::string dump_json(const nlohmann::json& j) {
  try {
    return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  } catch (const std::exception&) {
    return "null";  // only on allocation failure: replace mode never rejects a string
  }
}

HttpResponse json_response(int status, const nlohmann::json& j) {
  HttpResponse res;
  res.status = status;
  res.content_type = "application/json";
  res.body = dump_json(j);
  return res;
}

}  // namespace cohort::api
