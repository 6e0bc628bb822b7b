// Router: maps (method, path) to a handler. Paths match exactly, or by prefix for routes
// added with add_prefix() (e.g. "/v1/models/" for /v1/models/{id}; exact routes win); the
// query string never takes part. A HEAD request falls back to the GET handler of its path (the
// server sends the headers and drops the body).
//
// Errors the server raises itself (401, 404, 405, 413, malformed requests, a handler that
// threw) are formatted by the router's ErrorFormatter, so each dialect can answer in its
// own error shape (by path: /v1/messages is Anthropic's, /api/ Ollama's). The default
// formatter uses OpenAI's shape.
//
// Thread-safety: build it on one thread, then hand it to HttpServer::start(); after that it
// is only read, and handlers are called concurrently from several threads.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "api/http_message.h"

namespace cohort::api {

// Handlers must not throw (the server turns an escaped exception into a 500, but that is a
// bug). They may block: they run on handler threads, never on the I/O threads.
using HttpHandler = std::function<HttpResponse(const HttpRequest&)>;

// kApiKey routes need the server's API key when one is configured; kPublic never do.
enum class RouteAccess { kApiKey, kPublic };

// Sees every request with the response it got (errors the server raised included), for
// metrics. Called on handler threads, concurrently; must not throw. For a stream, called
// when its headers are ready (before the body is produced).
using RequestObserver = std::function<void(const HttpRequest&, const HttpResponse&)>;

using ErrorFormatter =
    std::function<HttpResponse(std::string_view path, int status, std::string_view message)>;

class Router {
 public:
  Router();

  // Registers a handler. Registering the same (method, path) twice is a bug (checked).
  void add(std::string method, std::string path, HttpHandler handler,
           RouteAccess access = RouteAccess::kApiKey);
  // Registers a handler for every path that starts with `prefix` and is longer than it; the
  // handler reads the rest from HttpRequest::path.
  void add_prefix(std::string method, std::string prefix, HttpHandler handler,
                  RouteAccess access = RouteAccess::kApiKey);
  void set_error_formatter(ErrorFormatter formatter);
  void set_observer(RequestObserver observer);
  // Tells the observer (if any) about a request and its response.
  void observe(const HttpRequest& req, const HttpResponse& res) const;

  struct Match {
    const HttpHandler* handler = nullptr;  // null: no route for this method
    RouteAccess access = RouteAccess::kApiKey;
    bool path_known = false;  // some method is routed at this path (405, not 404)
    std::string allow;        // the methods routed at this path, for the Allow header
  };
  Match find(std::string_view method, std::string_view path) const;

  // An error response in the dialect that owns `path`.
  HttpResponse error(std::string_view path, int status, std::string_view message) const;

 private:
  struct Route {
    std::string method;
    std::string path;
    HttpHandler handler;
    RouteAccess access;
    bool prefix = false;
  };
  bool matches(const Route& r, std::string_view path, bool prefix) const;
  std::vector<Route> routes_;
  ErrorFormatter error_formatter_;
  RequestObserver observer_;
};

}  // namespace cohort::api
