// HttpServer: HTTP/1.1 on Boost.Beast behind a pimpl (no Beast type leaks out of api/).
//
// Network I/O runs on `threads` I/O threads; route handlers run on `handler_threads`
// handler threads, so a handler that blocks for a whole generation never stalls other
// connections (health checks, preflights). Per connection: keep-alive, one request at a
// time; a request must arrive whole within read_timeout_ms, and every write finish within
// write_timeout_ms. Bodies above max_body_bytes get 413, malformed requests 400 (header
// blocks above 64 KiB 431), each followed by closing the connection; other connections
// are unaffected. CORS headers are on every response (see cors.h).
//
// Thread-safety: port() may be called from any thread; stop() from any thread but a
// handler's. stop() is idempotent; the destructor calls it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "api/router.h"
#include "core/status.h"

namespace cohort::api {

struct ServerOptions {
  std::string host = "127.0.0.1";  // loopback unless asked; "0.0.0.0" or "::" for all
  uint16_t port = 52415;           // 0: any free port (see HttpServer::port())
  int threads = 2;                 // I/O threads
  int handler_threads = 16;        // route handlers that may run (block) at once
  size_t max_body_bytes = size_t{8} << 20;
  int64_t read_timeout_ms = 60'000;   // a whole request, and the idle wait before it
  int64_t write_timeout_ms = 60'000;  // each response write (each chunk when streaming)
  bool keep_alive = true;             // false: close after every response
  std::string api_key;                // non-empty: kApiKey routes need it (401 otherwise)
};

class HttpServer {
 public:
  // Binds, listens and starts serving `router`. Errors: kInvalidArgument for bad options
  // or host, kIoError when the address cannot be bound (in use, no permission).
  static Result<std::unique_ptr<HttpServer>> start(const ServerOptions& options, Router router);

  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // The bound port (the one chosen when options.port was 0).
  uint16_t port() const;

  // A graceful stop's first half: stops accepting connections and new requests on open ones,
  // then waits up to grace_ms for the requests in progress to be answered in full (streams
  // included). Returns how many were still running. Call stop() after it.
  int drain(int64_t grace_ms);

  // Stops accepting, drops open connections and returns once the I/O threads have exited
  // and handlers already running have returned (a stream's writes fail at once, so its
  // producer should return promptly; a blocking handler is waited for). Handlers queued
  // but not started are dropped.
  void stop();

  class Impl;

 private:
  explicit HttpServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cohort::api
