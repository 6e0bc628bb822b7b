#include "net/socket.h"

#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include <poll.h>
#include <sched.h>
#include <sys/socket.h>

#include <array>
#include <atomic>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <cerrno>
#include <climits>
#include <cstring>
#include <utility>
#include <vector>

#include "core/check.h"
#include "core/clock.h"
#include "net/secure_channel.h"
#include "net/sync_io.h"

namespace cohort::net {
namespace asio = boost::asio;
using asio::ip::tcp;
using boost::system::error_code;

namespace {

// How long a busy-polling read spins before it sleeps in poll(). The spin yields the core
// (sched_yield) rather than pausing: when the peer runs on the same core (the scheduler
// likes to co-locate a ping-pong pair), a pure spin would starve it for the whole window.
// Measured on loopback, 64-byte frames: yielding spin ~6 us round trip on one core or two;
// pause-spin ~113 us on one core; blocking poll() ~6 us on one core, ~55 us across cores.
constexpr int64_t kBusyPollSpinNs = 50'000;

class Deadline {
 public:
  explicit Deadline(int64_t timeout_ms)
      : infinite_(timeout_ms < 0), end_ns_(infinite_ ? 0 : now_ns() + timeout_ms * 1'000'000) {}
  bool expired() const { return !infinite_ && now_ns() >= end_ns_; }
  // Milliseconds for poll(): -1 without limit, rounded up so poll never returns early.
  int poll_ms() const {
    if (infinite_) return -1;
    const int64_t left_ns = end_ns_ - now_ns();
    if (left_ns <= 0) return 0;
    const int64_t ms = (left_ns + 999'999) / 1'000'000;
    return ms > INT_MAX ? INT_MAX : static_cast<int>(ms);
  }

 private:
  bool infinite_;
  int64_t end_ns_;
};

// Waits for `events` on fd. *ready is false when the deadline passed with nothing to do.
Status poll_fd(int fd, short events, const Deadline& d, bool* ready) {
  for (;;) {
    pollfd p{fd, events, 0};
    const int r = ::poll(&p, 1, d.poll_ms());
    if (r > 0) {
      *ready = true;
      return Status::ok();
    }
    if (r == 0) {
      if (d.expired()) {
        *ready = false;
        return Status::ok();
      }
      continue;
    }
    if (errno == EINTR) continue;
    return Status::io_error(std::string("tcp: poll failed: ") + std::strerror(errno));
  }
}

bool would_block(const error_code& ec) {
  return ec == asio::error::would_block || ec == asio::error::try_again;
}

bool is_disconnect(const error_code& ec) {
  return ec == asio::error::eof || ec == asio::error::connection_reset ||
         ec == asio::error::broken_pipe || ec == asio::error::connection_aborted ||
         ec == asio::error::not_connected || ec == asio::error::shut_down;
}

std::string endpoint_string(const tcp::endpoint& ep) {
  error_code ec;
  const std::string host = ep.address().to_string(ec);
  if (ec) return "?";
  return HostPort{host, ep.port()}.to_string();
}

// Numeric hosts are taken as they are; names go through the system resolver.
Result<std::vector<tcp::endpoint>> resolve(const HostPort& hp, bool for_bind) {
  if (for_bind && hp.host.empty()) return std::vector<tcp::endpoint>{{tcp::v4(), hp.port}};
  error_code ec;
  const asio::ip::address addr = asio::ip::make_address(hp.host, ec);
  if (!ec) return std::vector<tcp::endpoint>{{addr, hp.port}};
  tcp::resolver resolver(sync_io_context());
  auto flags = tcp::resolver::numeric_service;
  if (for_bind) flags |= tcp::resolver::passive;
  const auto results = resolver.resolve(hp.host, std::to_string(hp.port), flags, ec);
  if (ec || results.empty()) {
    return Status::unavailable("tcp: cannot resolve host '" + hp.host +
                               "': " + (ec ? ec.message() : std::string("no addresses")));
  }
  std::vector<tcp::endpoint> out;
  for (const auto& r : results) out.push_back(r.endpoint());
  return out;
}

}  // namespace

struct Socket::Impl {
  explicit Impl(tcp::socket s) : sock(std::move(s)) {}
  tcp::socket sock;
  std::atomic<bool> shut{false};
  std::atomic<bool> busy{false};
  bool initiator = false;
  std::unique_ptr<SecureChannel> channel;  // set once by the handshake on sealed links
  std::string peer;
  std::string local;

  int fd() { return sock.native_handle(); }

  Status disconnected() const {
    if (shut.load(std::memory_order_relaxed)) {
      return Status::unavailable("tcp: connection to " + peer + " was shut down");
    }
    return Status::unavailable("tcp: peer " + peer + " closed the connection");
  }
};

namespace {

Status not_open() { return Status::unavailable("tcp: socket is not open"); }

// A peer that vanishes without closing (power loss, a cut cable) must be noticed in about
// 2 s, even by a rank blocked in a long receive: the kernel sends a keepalive probe after 1 s
// of silence, and a probe or data unacknowledged for 1.5 s ends the connection (with
// TCP_USER_TIMEOUT set, it decides keepalive failure too). Either way the blocked call fails
// with a socket error. Probes are answered by the peer's kernel, so a busy peer is not
// mistaken for a dead one.
void set_liveness_options(int fd) {
  const int on = 1, idle_s = 1, interval_s = 1, probes = 2;
  const unsigned user_timeout_ms = 1500;
  ::setsockopt(fd, SOL_SOCKET, SO_KEEPALIVE, &on, sizeof(on));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPIDLE, &idle_s, sizeof(idle_s));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPINTVL, &interval_s, sizeof(interval_s));
  ::setsockopt(fd, IPPROTO_TCP, TCP_KEEPCNT, &probes, sizeof(probes));
  ::setsockopt(fd, IPPROTO_TCP, TCP_USER_TIMEOUT, &user_timeout_ms, sizeof(user_timeout_ms));
}

// Makes an accepted or connected stream ready for use: non-blocking (we poll ourselves),
// Nagle off (small control and all-reduce messages must not wait for ACKs), and dead-peer
// detection by the kernel (set_liveness_options).
Result<std::unique_ptr<Socket::Impl>> make_impl(tcp::socket s, bool initiator) {
  error_code ec;
  s.non_blocking(true, ec);
  if (!ec) s.set_option(tcp::no_delay(true), ec);
  if (ec) return Status::io_error("tcp: cannot configure socket: " + ec.message());
  set_liveness_options(s.native_handle());
  auto impl = std::make_unique<Socket::Impl>(std::move(s));
  impl->initiator = initiator;
  impl->peer = endpoint_string(impl->sock.remote_endpoint(ec));
  impl->local = endpoint_string(impl->sock.local_endpoint(ec));
  return impl;
}

Status connect_one(const tcp::endpoint& ep, const HostPort& to, int64_t timeout_ms,
                   const Deadline& d, tcp::socket* out) {
  error_code ec;
  tcp::socket s(sync_io_context());
  s.open(ep.protocol(), ec);
  if (!ec) s.non_blocking(true, ec);
  if (ec) return Status::io_error("tcp: cannot open socket: " + ec.message());
  // asio's synchronous connect waits without a limit, so connect the descriptor directly.
  int err = 0;
  if (::connect(s.native_handle(), ep.data(), static_cast<socklen_t>(ep.size())) != 0) {
    err = errno;
    if (err == EINPROGRESS || err == EINTR) {
      bool ready = false;
      COHORT_RETURN_IF_ERROR(poll_fd(s.native_handle(), POLLOUT, d, &ready));
      if (!ready) {
        return Status::timeout("tcp: connect to " + to.to_string() + " timed out after " +
                               std::to_string(timeout_ms) + " ms");
      }
      socklen_t len = sizeof(err);
      if (::getsockopt(s.native_handle(), SOL_SOCKET, SO_ERROR, &err, &len) != 0) err = errno;
    }
  }
  if (err != 0) {
    return Status::unavailable("tcp: cannot connect to " + to.to_string() + " (" +
                               endpoint_string(ep) + "): " + std::strerror(err));
  }
  *out = std::move(s);
  return Status::ok();
}

}  // namespace

Socket::Socket() = default;
Socket::Socket(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Socket::Socket(Socket&&) noexcept = default;
Socket& Socket::operator=(Socket&&) noexcept = default;
Socket::~Socket() = default;

Result<Socket> Socket::connect(const HostPort& to, int64_t timeout_ms) {
  const Deadline d(timeout_ms);
  COHORT_ASSIGN_OR_RETURN(const std::vector<tcp::endpoint> eps, resolve(to, false));
  Status last;
  for (const auto& ep : eps) {
    tcp::socket s(sync_io_context());
    last = connect_one(ep, to, timeout_ms, d, &s);
    if (last.code() == StatusCode::kTimeout) return last;
    if (!last.is_ok()) continue;
    COHORT_ASSIGN_OR_RETURN(auto impl, make_impl(std::move(s), true));
    return Socket(std::move(impl));
  }
  return last;
}

Status Socket::write_all(const void* data, size_t bytes, int64_t timeout_ms) {
  return write_all2(data, bytes, nullptr, 0, timeout_ms);
}

Status Socket::write_all2(const void* head, size_t head_bytes, const void* body, size_t body_bytes,
                          int64_t timeout_ms) {
  if (!impl_) return not_open();
  const Deadline d(timeout_ms);
  const auto* a = static_cast<const uint8_t*>(head);
  const auto* b = static_cast<const uint8_t*>(body);
  const size_t total = head_bytes + body_bytes;
  size_t sent = 0;
  while (sent < total) {
    if (impl_->shut.load(std::memory_order_relaxed)) return impl_->disconnected();
    error_code ec;
    size_t n;
    if (sent < head_bytes) {
      const std::array<asio::const_buffer, 2> bufs{asio::buffer(a + sent, head_bytes - sent),
                                                   asio::buffer(b, body_bytes)};
      n = impl_->sock.write_some(bufs, ec);
    } else {
      n = impl_->sock.write_some(asio::buffer(b + (sent - head_bytes), total - sent), ec);
    }
    if (!ec) {
      sent += n;
      continue;
    }
    if (would_block(ec)) {
      bool ready = false;
      COHORT_RETURN_IF_ERROR(poll_fd(impl_->fd(), POLLOUT, d, &ready));
      if (!ready) {
        return Status::timeout("tcp: write to " + impl_->peer + " timed out after " +
                               std::to_string(timeout_ms) + " ms (sent " + std::to_string(sent) +
                               " of " + std::to_string(total) + " bytes)");
      }
      continue;
    }
    if (ec == asio::error::interrupted) continue;
    if (is_disconnect(ec)) return impl_->disconnected();
    return Status::io_error("tcp: write to " + impl_->peer + " failed: " + ec.message());
  }
  return Status::ok();
}

Status Socket::read_exact(void* data, size_t bytes, int64_t timeout_ms) {
  size_t got = 0;
  return read_exact_counted(data, bytes, timeout_ms, &got);
}

Status Socket::read_exact_counted(void* data, size_t bytes, int64_t timeout_ms,
                                  size_t* bytes_read) {
  *bytes_read = 0;
  if (!impl_) return not_open();
  const Deadline d(timeout_ms);
  auto* p = static_cast<uint8_t*>(data);
  size_t got = 0;
  bool spinning = false;
  int64_t spin_end_ns = 0;
  while (got < bytes) {
    if (impl_->shut.load(std::memory_order_relaxed)) return impl_->disconnected();
    error_code ec;
    const size_t n = impl_->sock.read_some(asio::buffer(p + got, bytes - got), ec);
    if (!ec) {
      got += n;
      *bytes_read = got;
      spinning = false;
      continue;
    }
    if (would_block(ec)) {
      if (impl_->busy.load(std::memory_order_relaxed) && !d.expired()) {
        const int64_t t = now_ns();
        if (!spinning) {
          spinning = true;
          spin_end_ns = t + kBusyPollSpinNs;
        }
        if (t < spin_end_ns) {
          ::sched_yield();
          continue;
        }
      }
      bool ready = false;
      COHORT_RETURN_IF_ERROR(poll_fd(impl_->fd(), POLLIN, d, &ready));
      if (!ready) {
        return Status::timeout("tcp: read from " + impl_->peer + " timed out after " +
                               std::to_string(timeout_ms) + " ms (received " + std::to_string(got) +
                               " of " + std::to_string(bytes) + " bytes)");
      }
      continue;
    }
    if (ec == asio::error::interrupted) continue;
    if (is_disconnect(ec)) return impl_->disconnected();
    return Status::io_error("tcp: read from " + impl_->peer + " failed: " + ec.message());
  }
  return Status::ok();
}

Result<bool> Socket::wait_readable(int64_t timeout_ms) {
  if (!impl_) return not_open();
  if (impl_->shut.load(std::memory_order_relaxed)) return true;
  const Deadline d(timeout_ms);
  if (impl_->busy.load(std::memory_order_relaxed)) {
    const int64_t spin_end_ns = now_ns() + kBusyPollSpinNs;
    while (now_ns() < spin_end_ns && !d.expired()) {
      pollfd p{impl_->fd(), POLLIN, 0};
      if (::poll(&p, 1, 0) > 0) return true;
      ::sched_yield();
    }
  }
  bool ready = false;
  COHORT_RETURN_IF_ERROR(poll_fd(impl_->fd(), POLLIN, d, &ready));
  return ready;
}

void Socket::set_busy_poll(bool on) {
  if (impl_) impl_->busy.store(on, std::memory_order_relaxed);
}

void Socket::shutdown() {
  if (!impl_) return;
  impl_->shut.store(true, std::memory_order_relaxed);
  error_code ec;
  impl_->sock.shutdown(tcp::socket::shutdown_both, ec);  // ENOTCONN when already gone: fine
}

bool Socket::is_open() const { return impl_ && !impl_->shut.load(std::memory_order_relaxed); }
bool Socket::is_initiator() const { return impl_ && impl_->initiator; }

void Socket::seal_with(std::unique_ptr<SecureChannel> channel) {
  COHORT_CHECK_MSG(impl_ && !impl_->channel, "Socket::seal_with: no socket, or already sealed");
  impl_->channel = std::move(channel);
}

SecureChannel* Socket::channel() const { return impl_ ? impl_->channel.get() : nullptr; }
std::string Socket::peer() const { return impl_ ? impl_->peer : std::string(); }
std::string Socket::local() const { return impl_ ? impl_->local : std::string(); }

struct Listener::Impl {
  explicit Impl(tcp::acceptor a) : acceptor(std::move(a)) {}
  tcp::acceptor acceptor;
  std::atomic<bool> closed{false};
  uint16_t port = 0;
};

Listener::Listener() = default;
Listener::Listener(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Listener::Listener(Listener&&) noexcept = default;
Listener& Listener::operator=(Listener&&) noexcept = default;
Listener::~Listener() = default;

Result<Listener> Listener::bind(const HostPort& at) {
  COHORT_ASSIGN_OR_RETURN(const std::vector<tcp::endpoint> eps, resolve(at, true));
  error_code ec;
  tcp::acceptor a(sync_io_context());
  const tcp::endpoint& ep = eps.front();
  a.open(ep.protocol(), ec);
  if (!ec) a.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) a.bind(ep, ec);
  if (!ec) a.listen(asio::socket_base::max_listen_connections, ec);
  if (!ec) a.non_blocking(true, ec);
  if (ec)
    return Status::unavailable("tcp: cannot listen on " + at.to_string() + ": " + ec.message());
  auto impl = std::make_unique<Impl>(std::move(a));
  impl->port = impl->acceptor.local_endpoint(ec).port();
  if (ec) return Status::io_error("tcp: cannot read the bound port: " + ec.message());
  return Listener(std::move(impl));
}

uint16_t Listener::port() const { return impl_ ? impl_->port : 0; }

Result<Socket> Listener::accept(int64_t timeout_ms) {
  if (!impl_) return Status::unavailable("tcp: listener is not open");
  const Deadline d(timeout_ms);
  const auto closed = [&] {
    return Status::unavailable("tcp: listener on port " + std::to_string(impl_->port) +
                               " is closed");
  };
  for (;;) {
    if (impl_->closed.load(std::memory_order_relaxed)) return closed();
    error_code ec;
    tcp::socket s(sync_io_context());
    impl_->acceptor.accept(s, ec);
    if (!ec) {
      COHORT_ASSIGN_OR_RETURN(auto impl, make_impl(std::move(s), false));
      return Socket(std::move(impl));
    }
    if (would_block(ec)) {
      bool ready = false;
      COHORT_RETURN_IF_ERROR(poll_fd(impl_->acceptor.native_handle(), POLLIN, d, &ready));
      if (!ready) {
        return Status::timeout("tcp: no connection on port " + std::to_string(impl_->port) +
                               " within " + std::to_string(timeout_ms) + " ms");
      }
      continue;
    }
    // A connection reset before we took it, or a signal: try again.
    if (ec == asio::error::interrupted || ec == asio::error::connection_aborted) continue;
    if (impl_->closed.load(std::memory_order_relaxed)) return closed();
    return Status::io_error("tcp: accept on port " + std::to_string(impl_->port) +
                            " failed: " + ec.message());
  }
}

void Listener::close() {
  if (!impl_) return;
  impl_->closed.store(true, std::memory_order_relaxed);
  // shutdown() (not close()) so a thread blocked in poll() on this descriptor wakes safely;
  // the descriptor itself is released by the destructor.
  ::shutdown(impl_->acceptor.native_handle(), SHUT_RDWR);
}

}  // namespace cohort::net
