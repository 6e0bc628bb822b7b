#include "api/http_session.h"

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <utility>

#include <boost/asio/dispatch.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/write.hpp>
#include <boost/beast/core/bind_handler.hpp>
#include <boost/beast/http/chunk_encode.hpp>
#include <boost/beast/http/empty_body.hpp>
#include <boost/beast/http/error.hpp>
#include <boost/beast/http/read.hpp>
#include <boost/beast/http/serializer.hpp>
#include <boost/beast/http/write.hpp>

#include "api/cors.h"
#include "api/dispatch.h"
#include "core/log.h"

namespace cohort::api::detail {
namespace beast = boost::beast;
namespace http = boost::beast::http;
namespace net = boost::asio;
using tcp = boost::asio::ip::tcp;

namespace {

constexpr uint32_t kHeaderLimitBytes = 64 * 1024;
// After an error response the client may still be sending a body we refused; reading it
// (for a bounded time) before closing keeps the kernel from answering with a reset that
// would destroy our response before the client reads it.
constexpr auto kDrainTimeout = std::chrono::milliseconds(1000);
constexpr uint64_t kDrainLimitBytes = uint64_t{64} << 20;

bool is_http_parse_error(const beast::error_code& ec) {
  return ec.category() == http::make_error_code(http::error::bad_method).category();
}

char to_lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

HttpRequest to_request(http::request<http::string_body>&& msg) {
  HttpRequest req;
  req.method = std::string(msg.method_string());
  req.target = std::string(msg.target());
  const size_t q = req.target.find('?');
  req.path = req.target.substr(0, q);
  if (q != std::string::npos) req.query = req.target.substr(q + 1);
  for (const auto& field : msg) {
    std::string name(field.name_string());
    for (char& c : name) c = to_lower(c);
    req.headers.push_back({std::move(name), std::string(field.value())});
  }
  req.body = std::move(msg.body());
  return req;
}

bool status_has_body(int status) { return status >= 200 && status != 204 && status != 304; }

template <typename Message>
void fill_head(Message& msg, const HttpResponse& res, bool keep_alive) {
  msg.version(11);
  msg.result(static_cast<unsigned>(res.status));
  msg.set(http::field::server, "cohort");
  if (!res.content_type.empty() && status_has_body(res.status)) {
    msg.set(http::field::content_type, res.content_type);
  }
  for (const HttpHeader& h : res.headers) msg.insert(h.name, h.value);
  msg.keep_alive(keep_alive);
}

std::chrono::milliseconds ms(int64_t v) { return std::chrono::milliseconds(v); }

}  // namespace

class ChunkWriter final : public StreamWriter {
 public:
  explicit ChunkWriter(HttpSession& session) : session_(session) {}
  bool write(std::string_view data) override {
    if (failed_) return false;
    if (data.empty()) return true;  // an empty chunk would end the body
    failed_ = !session_.write_chunk(data);
    return !failed_;
  }
  bool failed() const { return failed_; }
  void fail() { failed_ = true; }

 private:
  HttpSession& session_;
  bool failed_ = false;
};

HttpSession::HttpSession(tcp::socket socket, const ServerContext& ctx)
    : stream_(std::move(socket)), ctx_(ctx) {}

void HttpSession::start() {
  net::dispatch(stream_.get_executor(),
                beast::bind_front_handler(&HttpSession::do_read, shared_from_this()));
}

void HttpSession::do_read() {
  if (ctx_.stopping->load() || ctx_.draining->load()) return close();
  parser_.emplace();
  parser_->header_limit(kHeaderLimitBytes);
  parser_->body_limit(static_cast<uint64_t>(ctx_.options->max_body_bytes));
  stream_.expires_after(ms(ctx_.options->read_timeout_ms));  // covers header and body
  http::async_read_header(stream_, buffer_, *parser_,
                          beast::bind_front_handler(&HttpSession::on_header, shared_from_this()));
}

void HttpSession::on_header(beast::error_code ec, size_t /*bytes*/) {
  if (ec) return on_read_error(ec);
  if (parser_->is_done()) return on_request();
  auto read_body = [self = shared_from_this()] {
    http::async_read(self->stream_, self->buffer_, *self->parser_,
                     [self](beast::error_code read_ec, size_t) {
                       if (read_ec) return self->on_read_error(read_ec);
                       self->on_request();
                     });
  };
  // curl and others wait (about a second) for this before sending a large body.
  auto expect = parser_->get().find(http::field::expect);
  if (expect != parser_->get().end() && iequals(expect->value(), "100-continue")) {
    static constexpr std::string_view kContinue = "HTTP/1.1 100 Continue\r\n\r\n";
    net::async_write(stream_, net::buffer(kContinue.data(), kContinue.size()),
                     [self = shared_from_this(), read_body](beast::error_code write_ec, size_t) {
                       if (write_ec) return self->close();
                       read_body();
                     });
    return;
  }
  read_body();
}

void HttpSession::on_read_error(beast::error_code ec) {
  if (ec == http::error::end_of_stream) return shutdown_and_drain();  // closed between requests
  if (ec == http::error::body_limit) {
    return send_error(413, "http: request body exceeds " +
                               std::to_string(ctx_.options->max_body_bytes) + " bytes");
  }
  if (ec == http::error::header_limit) return send_error(431, "http: request headers too large");
  if (is_http_parse_error(ec) && ec != http::error::partial_message) {
    return send_error(400, "http: malformed request: " + ec.message());
  }
  close();  // timeout, reset, a message cut short, or the server stopping
}

void HttpSession::on_request() {
  const bool head = parser_->get().method() == http::verb::head;
  const bool keep_alive = parser_->get().keep_alive() && ctx_.options->keep_alive;
  HttpRequest req = to_request(parser_->release());
  parser_.reset();
  in_flight_.emplace(ctx_.in_flight);
  stream_.expires_never();  // the handler may take long; the write sets its own deadline
  net::post(*ctx_.handlers,
            [self = shared_from_this(), req = std::move(req), head, keep_alive]() mutable {
              self->handle(std::move(req), head, keep_alive);
            });
}

void HttpSession::send_error(int status, const std::string& message) {
  HttpResponse res;
  std::optional<std::string> origin;
  std::string path = "/";
  try {
    // Whatever the parser got before failing is well-formed: for body_limit (raised when
    // the header ends) that is the whole header; for a malformed request, a prefix.
    if (parser_) {
      const auto& msg = parser_->get();
      std::string target(msg.target());
      path = target.substr(0, target.find('?'));
      auto it = msg.find(http::field::origin);
      if (it != msg.end()) origin = std::string(it->value());
    }
    res = ctx_.router->error(path, status, message);
  } catch (...) {
    res = text_response(status, message + "\n");
  }
  add_cors_headers(origin, res);
  write_response(std::move(res), /*head=*/false, /*keep_alive=*/false);
}

void HttpSession::write_response(HttpResponse res, bool head, bool keep_alive) {
  auto msg = std::make_shared<http::response<http::string_body>>();
  try {
    fill_head(*msg, res, keep_alive);
    if (!status_has_body(res.status)) {
      // 1xx, 204 and 304 carry neither a body nor a length.
    } else if (head) {
      msg->content_length(res.body.size());
    } else {
      msg->body() = std::move(res.body);
      msg->content_length(msg->body().size());
    }
  } catch (const std::exception& e) {
    COHORT_LOG_ERROR("http: cannot build response: %s", e.what());
    return close();
  }
  stream_.expires_after(ms(ctx_.options->write_timeout_ms));
  http::async_write(stream_, *msg,
                    [self = shared_from_this(), msg, keep_alive](beast::error_code ec, size_t) {
                      self->on_write(ec, !keep_alive);
                    });
}

void HttpSession::on_write(beast::error_code ec, bool close_after) {
  in_flight_.reset();
  if (ec) return close();
  if (close_after) return shutdown_and_drain();
  do_read();
}

void HttpSession::shutdown_and_drain() {
  beast::error_code ignored;
  stream_.socket().shutdown(tcp::socket::shutdown_send, ignored);
  drain_buf_.resize(16 * 1024);
  drained_bytes_ = 0;
  stream_.expires_after(kDrainTimeout);
  do_drain();
}

void HttpSession::do_drain() {
  stream_.async_read_some(net::buffer(drain_buf_),
                          [self = shared_from_this()](beast::error_code ec, size_t n) {
                            self->drained_bytes_ += n;
                            if (ec || self->drained_bytes_ > kDrainLimitBytes) return self->close();
                            self->do_drain();
                          });
}

void HttpSession::close() {
  beast::error_code ignored;
  stream_.socket().close(ignored);
}

void HttpSession::handle(HttpRequest req, bool head, bool keep_alive) {
  HttpResponse res;
  try {
    res = dispatch(*ctx_.router, ctx_.options->api_key, req);
  } catch (...) {  // dispatch() does not throw; only allocation could get here
    res = text_response(500, "internal error\n");
  }
  if (res.stream && !head && status_has_body(res.status)) {
    return stream_response(std::move(res), keep_alive);
  }
  net::post(stream_.get_executor(),
            [self = shared_from_this(), res = std::move(res), head, keep_alive]() mutable {
              self->write_response(std::move(res), head, keep_alive);
            });
}

void HttpSession::stream_response(HttpResponse res, bool keep_alive) {
  auto header = std::make_shared<http::response<http::empty_body>>();
  bool ok = true;
  try {
    fill_head(*header, res, keep_alive);
    header->chunked(true);
  } catch (const std::exception& e) {
    COHORT_LOG_ERROR("http: cannot build stream header: %s", e.what());
    ok = false;
  }
  if (ok) {
    auto sr = std::make_shared<http::response_serializer<http::empty_body>>(*header);
    ok = run_and_wait([self = shared_from_this(), header, sr](Done done) {
      http::async_write_header(self->stream_, *sr,
                               [header, sr, done](beast::error_code ec, size_t) { done(ec); });
    });
  }
  ChunkWriter writer(*this);
  if (ok) {
    try {
      res.stream(writer);
    } catch (const std::exception& e) {
      COHORT_LOG_ERROR("http: stream producer threw: %s", e.what());
      writer.fail();
    } catch (...) {
      writer.fail();
    }
    ok = !writer.failed();
  }
  if (ok) {
    ok = run_and_wait([self = shared_from_this()](Done done) {
      net::async_write(self->stream_, http::make_chunk_last(),
                       [done](beast::error_code ec, size_t) { done(ec); });
    });
  }
  // A stream cut short is closed without its last chunk, so the client sees it failed.
  net::post(stream_.get_executor(), [self = shared_from_this(), ok, keep_alive] {
    self->in_flight_.reset();
    if (!ok) return self->close();
    if (keep_alive) return self->do_read();
    self->shutdown_and_drain();
  });
}

bool HttpSession::write_chunk(std::string_view data) {
  auto bytes = std::make_shared<std::string>(data);
  return run_and_wait([self = shared_from_this(), bytes](Done done) {
    net::async_write(self->stream_, http::make_chunk(net::buffer(*bytes)),
                     [bytes, done](beast::error_code ec, size_t) { done(ec); });
  });
}

bool HttpSession::run_and_wait(std::function<void(Done)> start) {
  struct WaitState {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    beast::error_code ec;
  };
  auto state = std::make_shared<WaitState>();
  Done done = [state](beast::error_code ec) {
    std::lock_guard<std::mutex> lock(state->mu);
    state->ec = ec;
    state->done = true;
    state->cv.notify_all();
  };
  net::post(stream_.get_executor(),
            [self = shared_from_this(), start = std::move(start), done = std::move(done)] {
              self->stream_.expires_after(ms(self->ctx_.options->write_timeout_ms));
              start(done);
            });
  std::unique_lock<std::mutex> lock(state->mu);
  while (!state->done) {
    // The I/O threads are gone once stopping is set, so nothing would ever call done.
    if (ctx_.stopping->load()) return false;
    state->cv.wait_for(lock, std::chrono::milliseconds(20));
  }
  return !state->ec;
}

}  // namespace cohort::api::detail
