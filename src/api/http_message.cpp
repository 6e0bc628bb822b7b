#include "api/http_message.h"

#include <algorithm>
#include <utility>

namespace cohort::api {
namespace {

char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

std::optional<std::string_view> find_header(const std::vector<HttpHeader>& headers,
                                            std::string_view name) {
  for (const HttpHeader& h : headers) {
    if (iequals(h.name, name)) return std::string_view(h.value);
  }
  return std::nullopt;
}

}  // namespace

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(),
                                            [](char x, char y) { return lower(x) == lower(y); });
}

std::optional<std::string_view> HttpRequest::header(std::string_view name) const {
  return find_header(headers, name);
}

std::optional<std::string_view> HttpResponse::header(std::string_view name) const {
  return find_header(headers, name);
}

void HttpResponse::set_header(std::string name, std::string value) {
  for (HttpHeader& h : headers) {
    if (iequals(h.name, name)) {
      h.value = std::move(value);
      return;
    }
  }
  headers.push_back({std::move(name), std::move(value)});
}

HttpResponse text_response(int status, std::string body, std::string content_type) {
  HttpResponse res;
  res.status = status;
  res.content_type = std::move(content_type);
  res.body = std::move(body);
  return res;
}

}  // namespace cohort::api
