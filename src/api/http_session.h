// Internal to api/ (Beast types; included by http_server.cpp only): one accepted
// connection. On the connection's strand it reads a request (the header first, answering
// `Expect: 100-continue`, then the body); a handler thread runs dispatch(); the response is
// written back on the strand; then the next request is read (keep-alive) or the connection
// closes. Streamed bodies are written chunk by chunk from the handler thread, each write
// posted to the strand and waited for.
//
// Lifetime: shared_ptr-owned by the pending operation (read, handler task or write); the
// server's ServerContext must outlive every session (HttpServer::stop() ensures it).
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/thread_pool.hpp>
#include <boost/beast/core/error.hpp>
#include <boost/beast/core/flat_buffer.hpp>
#include <boost/beast/core/tcp_stream.hpp>
#include <boost/beast/http/parser.hpp>
#include <boost/beast/http/string_body.hpp>

#include "api/http_message.h"
#include "api/http_server.h"
#include "api/router.h"

namespace cohort::api::detail {

struct ServerContext {
  const ServerOptions* options = nullptr;
  const Router* router = nullptr;
  boost::asio::thread_pool* handlers = nullptr;
  const std::atomic<bool>* stopping = nullptr;
  // Draining (a graceful stop): no new requests on open connections.
  const std::atomic<bool>* draining = nullptr;
  // Requests read and not yet answered in full, across all sessions.
  std::atomic<int>* in_flight = nullptr;
};

// Counts one request in *counter while it lives.
class InFlightRequest {
 public:
  explicit InFlightRequest(std::atomic<int>* counter) : counter_(counter) { ++*counter_; }
  ~InFlightRequest() { --*counter_; }
  InFlightRequest(const InFlightRequest&) = delete;
  InFlightRequest& operator=(const InFlightRequest&) = delete;

 private:
  std::atomic<int>* counter_;
};

class HttpSession : public std::enable_shared_from_this<HttpSession> {
 public:
  HttpSession(boost::asio::ip::tcp::socket socket, const ServerContext& ctx);
  // Starts reading requests. Call once, right after construction.
  void start();

 private:
  friend class ChunkWriter;
  using Done = std::function<void(boost::beast::error_code)>;

  // On the strand.
  void do_read();
  void on_header(boost::beast::error_code ec, size_t bytes);
  void on_read_error(boost::beast::error_code ec);
  void on_request();
  void send_error(int status, const std::string& message);
  void write_response(HttpResponse res, bool head, bool keep_alive);
  void on_write(boost::beast::error_code ec, bool close_after);
  void shutdown_and_drain();
  void do_drain();
  void close();

  // On a handler thread.
  void handle(HttpRequest req, bool head, bool keep_alive);
  void stream_response(HttpResponse res, bool keep_alive);
  bool write_chunk(std::string_view data);
  // Posts `start` to the strand and waits for the operation it starts to call Done.
  // False when it failed, or at once when the server is stopping.
  bool run_and_wait(std::function<void(Done)> start);

  boost::beast::tcp_stream stream_;
  boost::beast::flat_buffer buffer_;
  std::optional<boost::beast::http::request_parser<boost::beast::http::string_body>> parser_;
  ServerContext ctx_;
  std::optional<InFlightRequest> in_flight_;  // set from a request until its answer is sent
  std::vector<char> drain_buf_;
  uint64_t drained_bytes_ = 0;
};

}  // namespace cohort::api::detail
