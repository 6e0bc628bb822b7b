#include "api/http_server.h"

#include <chrono>
#include <future>
#include <thread>

#include <atomic>
#include <chrono>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <boost/asio/executor_work_guard.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/address.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/strand.hpp>
#include <boost/asio/thread_pool.hpp>

#include "api/http_session.h"
#include "core/log.h"

namespace cohort::api {
namespace net = boost::asio;
using tcp = boost::asio::ip::tcp;

class HttpServer::Impl {
 public:
  Impl(const ServerOptions& options, Router router)
      : options_(options), router_(std::move(router)) {}
  ~Impl() { stop(); }

  Status start();
  int drain(int64_t grace_ms);
  void stop();
  uint16_t port() const { return port_; }

 private:
  Status listen();
  void do_accept();
  void run_io();
  detail::ServerContext context() {
    return detail::ServerContext{&options_,  &router_,   handlers_.get(),
                                 &stopping_, &draining_, &in_flight_};
  }

  const ServerOptions options_;
  const Router router_;
  std::atomic<bool> stopping_{false};
  std::atomic<bool> draining_{false};
  std::atomic<int> in_flight_{0};
  uint16_t port_ = 0;
  std::mutex stop_mu_;
  bool stopped_ = false;  // guarded by stop_mu_
  // Destroyed by stop() in this order: the handler pool, the acceptor and timer, then the
  // io_context, whose destruction frees the sessions still waiting in it (closing their
  // sockets). Sessions point at options_ and router_, which outlive them.
  std::unique_ptr<net::io_context> ioc_;
  std::optional<net::executor_work_guard<net::io_context::executor_type>> work_;
  std::unique_ptr<tcp::acceptor> acceptor_;
  std::unique_ptr<net::steady_timer> accept_retry_;
  std::unique_ptr<net::thread_pool> handlers_;
  std::vector<std::thread> io_threads_;
};

Status HttpServer::Impl::start() {
  ioc_ = std::make_unique<net::io_context>(options_.threads);
  acceptor_ = std::make_unique<tcp::acceptor>(*ioc_);
  accept_retry_ = std::make_unique<net::steady_timer>(*ioc_);
  COHORT_RETURN_IF_ERROR(listen());
  handlers_ = std::make_unique<net::thread_pool>(static_cast<size_t>(options_.handler_threads));
  work_.emplace(net::make_work_guard(*ioc_));
  do_accept();
  for (int i = 0; i < options_.threads; ++i) io_threads_.emplace_back([this] { run_io(); });
  return Status::ok();
}

Status HttpServer::Impl::listen() {
  boost::system::error_code ec;
  const std::string host = options_.host == "localhost" ? "127.0.0.1" : options_.host;
  const net::ip::address address = net::ip::make_address(host, ec);
  if (ec)
    return Status::invalid_argument("http: bad host '" + options_.host + "': " + ec.message());
  const tcp::endpoint endpoint(address, options_.port);
  const std::string where = options_.host + ":" + std::to_string(options_.port);
  acceptor_->open(endpoint.protocol(), ec);
  if (ec) return Status::io_error("http: cannot open socket for " + where + ": " + ec.message());
  acceptor_->set_option(net::socket_base::reuse_address(true), ec);
  acceptor_->bind(endpoint, ec);
  if (ec) return Status::io_error("http: cannot bind " + where + ": " + ec.message());
  acceptor_->listen(net::socket_base::max_listen_connections, ec);
  if (ec) return Status::io_error("http: cannot listen on " + where + ": " + ec.message());
  port_ = acceptor_->local_endpoint(ec).port();
  if (ec) return Status::io_error("http: cannot read bound port: " + ec.message());
  return Status::ok();
}

void HttpServer::Impl::do_accept() {
  // One accept is outstanding at a time, so the acceptor is never used concurrently.
  acceptor_->async_accept(
      net::make_strand(*ioc_), [this](boost::system::error_code ec, tcp::socket socket) {
        if (stopping_.load() || ec == net::error::operation_aborted) return;
        if (ec) {  // out of descriptors, for example: retry later instead of spinning
          COHORT_LOG_WARN("http: accept failed: %s", ec.message().c_str());
          accept_retry_->expires_after(std::chrono::milliseconds(50));
          accept_retry_->async_wait([this](boost::system::error_code wait_ec) {
            if (!wait_ec && !stopping_.load()) do_accept();
          });
          return;
        }
        boost::system::error_code ignored;
        socket.set_option(tcp::no_delay(true), ignored);
        try {
          std::make_shared<detail::HttpSession>(std::move(socket), context())->start();
        } catch (const std::exception& e) {  // allocation: drop this one, keep accepting
          COHORT_LOG_ERROR("http: cannot start session: %s", e.what());
        }
        do_accept();
      });
}

void HttpServer::Impl::run_io() {
  for (;;) {
    try {
      ioc_->run();
      return;
    } catch (const std::exception& e) {
      COHORT_LOG_ERROR("http: I/O thread caught: %s", e.what());
    } catch (...) {
      COHORT_LOG_ERROR("http: I/O thread caught an unknown exception");
    }
  }
}

int HttpServer::Impl::drain(int64_t grace_ms) {
  draining_.store(true);
  if (ioc_ && acceptor_) {
    std::promise<void> closed;
    net::post(*ioc_, [this, &closed] {
      boost::system::error_code ignored;
      acceptor_->close(ignored);
      closed.set_value();
    });
    closed.get_future().wait_for(std::chrono::seconds(2));
  }
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(grace_ms);
  while (in_flight_.load() > 0 && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return in_flight_.load();
}

void HttpServer::Impl::stop() {
  std::lock_guard<std::mutex> lock(stop_mu_);
  if (stopped_) return;
  stopped_ = true;
  stopping_.store(true);
  if (ioc_) ioc_->stop();
  for (std::thread& t : io_threads_) t.join();
  io_threads_.clear();
  if (handlers_) {
    handlers_->stop();  // drop queued handlers; wait for running ones
    handlers_->join();
  }
  handlers_.reset();
  accept_retry_.reset();
  acceptor_.reset();
  work_.reset();
  ioc_.reset();
}

Result<std::unique_ptr<HttpServer>> HttpServer::start(const ServerOptions& options, Router router) {
  if (options.threads < 1 || options.handler_threads < 1) {
    return Status::invalid_argument("http: threads and handler_threads must be at least 1");
  }
  if (options.max_body_bytes == 0 || options.read_timeout_ms <= 0 ||
      options.write_timeout_ms <= 0) {
    return Status::invalid_argument("http: body limit and timeouts must be positive");
  }
  try {
    auto impl = std::make_unique<Impl>(options, std::move(router));
    Status st = impl->start();
    if (!st.is_ok()) return st;  // ~Impl stops whatever had started
    return std::unique_ptr<HttpServer>(new HttpServer(std::move(impl)));
  } catch (const std::exception& e) {  // thread or io_context creation
    return Status::internal(std::string("http: cannot start server: ") + e.what());
  }
}

HttpServer::HttpServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

HttpServer::~HttpServer() { stop(); }

uint16_t HttpServer::port() const { return impl_->port(); }

int HttpServer::drain(int64_t grace_ms) { return impl_->drain(grace_ms); }

void HttpServer::stop() { impl_->stop(); }

}  // namespace cohort::api
