// TCP streams and listeners in blocking-with-timeout style: every call that can wait takes
// timeout_ms and returns kTimeout when it runs out, never hangs.
//
// Timeouts (all in milliseconds): timeout_ms < 0 waits without limit, 0 does not wait (only
// what is possible right now), > 0 is a deadline for the whole call (all bytes of a
// read_exact, not each chunk).
//
// Errors: a peer that closed or reset the connection is kUnavailable
// ("tcp: peer 1.2.3.4:5 closed the connection"); a refused or unreachable connect is
// kUnavailable; a deadline is kTimeout; anything else the OS reports is kIoError. Messages
// start with "tcp: ". Nothing here throws.
//
// Boost.Asio does the work underneath; it stays out of this header (pimpl).
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "core/status.h"
#include "net/address.h"

namespace cohort::net {

class SecureChannel;

// A connected TCP stream (TCP_NODELAY on). Move-only; owns its descriptor and closes it on
// destruction.
//
// Thread-safety: at most one reading thread and one writing thread at a time; a read and a
// write may run concurrently. shutdown(), set_busy_poll(), is_open(), peer() and local() may
// be called from any thread at any time. Moving or destroying a Socket while another thread
// uses it is a bug.
class Socket {
 public:
  // Resolves `to` (numeric addresses directly; names through the system resolver, which has
  // no timeout of its own) and connects within timeout_ms.
  static Result<Socket> connect(const HostPort& to, int64_t timeout_ms);

  // Sends all `bytes` bytes, or fails. A timeout may leave a prefix sent: the stream is then
  // out of sync and the caller should close it.
  Status write_all(const void* data, size_t bytes, int64_t timeout_ms);
  // Gather form: sends head then body in as few system calls as possible (one for small
  // messages). Same contract as write_all.
  Status write_all2(const void* head, size_t head_bytes, const void* body, size_t body_bytes,
                    int64_t timeout_ms);

  // Reads exactly `bytes` bytes into `data`, or fails.
  Status read_exact(void* data, size_t bytes, int64_t timeout_ms);
  // As read_exact, and reports in *bytes_read how many bytes arrived before a failure, so a
  // caller can tell "nothing came" (stream still in sync) from "cut off mid-message".
  Status read_exact_counted(void* data, size_t bytes, int64_t timeout_ms, size_t* bytes_read);

  // Waits up to timeout_ms for readable data; true when a read would not block (data, EOF,
  // an error, or a local shutdown), false when the time ran out.
  Result<bool> wait_readable(int64_t timeout_ms);

  // When on, a read (or wait_readable) that finds no data spins on non-blocking recv() for up
  // to ~50 us, yielding the core between tries, before it sleeps in poll(): lowest latency
  // (no cross-core wake-up), at the cost of a busy core while waiting.
  void set_busy_poll(bool on);

  // Shuts the connection down in both directions without closing the descriptor: a reader
  // or writer blocked in another thread wakes up and gets kUnavailable, and so does every
  // later call. Idempotent.
  void shutdown();

  // True from a successful connect/accept until shutdown() (a peer's close is only seen by
  // the next read or write).
  bool is_open() const;
  // True for the side that called connect(), false for the side that accepted. The
  // handshake binds its proofs to this so a proof cannot be reflected back.
  bool is_initiator() const;

  // Seals the link: from now on frame.h encrypts and authenticates every frame through
  // `channel` (secure_channel.h). The handshake calls this once, before the socket is
  // shared between threads; it cannot be undone.
  void seal_with(std::unique_ptr<SecureChannel> channel);
  // The link's channel, null while it is plaintext. Its send half belongs to the writing
  // thread and its receive half to the reading thread, as the socket's own reads and writes.
  SecureChannel* channel() const;

  std::string peer() const;   // "ip:port" of the remote end ("[v6]:port" for IPv6)
  std::string local() const;  // "ip:port" of this end

  Socket();
  Socket(Socket&&) noexcept;
  Socket& operator=(Socket&&) noexcept;
  ~Socket();
  Socket(const Socket&) = delete;
  Socket& operator=(const Socket&) = delete;

  struct Impl;

 private:
  explicit Socket(std::unique_ptr<Impl> impl);
  friend class Listener;
  std::unique_ptr<Impl> impl_;
};

// A listening TCP socket. Move-only; owns its descriptor.
//
// Thread-safety: one thread calls accept(); close() and port() may be called from any
// thread (close() wakes a blocked accept(), which then returns kUnavailable).
class Listener {
 public:
  // Binds and listens on `at` (host "" or "0.0.0.0" = every IPv4 interface, "::" = every
  // interface; port 0 = any free port, see port()). SO_REUSEADDR is on, so a restarted node
  // can rebind its port at once.
  static Result<Listener> bind(const HostPort& at);

  // The bound port (the one the OS chose when bind() was given 0). 0 when not bound.
  uint16_t port() const;

  // Waits up to timeout_ms for one incoming connection (TCP_NODELAY on).
  Result<Socket> accept(int64_t timeout_ms);

  // Stops listening: new connections are refused, a blocked accept() wakes. The port is
  // released when the Listener is destroyed. Idempotent.
  void close();

  Listener();
  Listener(Listener&&) noexcept;
  Listener& operator=(Listener&&) noexcept;
  ~Listener();
  Listener(const Listener&) = delete;
  Listener& operator=(const Listener&) = delete;

  struct Impl;

 private:
  explicit Listener(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace cohort::net
