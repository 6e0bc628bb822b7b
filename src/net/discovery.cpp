#include "net/discovery.h"

#include <poll.h>

#include <algorithm>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/multicast.hpp>
#include <boost/asio/ip/udp.hpp>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>

#include "core/clock.h"
#include "core/log.h"
#include "net/sync_io.h"
#include "net/wire.h"

namespace cohort::net {
namespace asio = boost::asio;
using asio::ip::udp;
using boost::system::error_code;

namespace {

Result<udp::endpoint> group_endpoint(const HostPort& group) {
  error_code ec;
  const asio::ip::address addr = asio::ip::make_address(group.host, ec);
  if (ec) {
    return Status::invalid_argument("discovery: group '" + group.host + "' is not an IP address");
  }
  if (!addr.is_v4()) {
    return Status::unsupported("discovery: only IPv4 multicast groups are supported, got " +
                               group.host);
  }
  if (!addr.is_multicast()) {
    return Status::invalid_argument("discovery: " + group.host +
                                    " is not a multicast address (224.0.0.0/4)");
  }
  if (group.port == 0) return Status::invalid_argument("discovery: the group needs a port");
  return udp::endpoint(addr, group.port);
}

Result<asio::ip::address_v4> interface_address(const std::string& ip) {
  if (ip.empty()) return asio::ip::address_v4::any();
  error_code ec;
  const asio::ip::address_v4 a = asio::ip::make_address_v4(ip, ec);
  if (ec) {
    return Status::invalid_argument("discovery: interface '" + ip + "' is not an IPv4 address");
  }
  return a;
}

// Without an interface the kernel picks one by route; a host with no default route (a
// fresh network namespace) has none for multicast.
std::string no_route_hint(const std::string& interface_ip) {
  if (!interface_ip.empty()) return "";
  return " (name the interface address, or add a route: ip route add 224.0.0.0/4 dev IFACE)";
}

bool unspecified_host(const std::string& h) { return h.empty() || h == "0.0.0.0" || h == "::"; }

}  // namespace

std::vector<uint8_t> encode_announcement(const Announcement& a) {
  WireWriter w;
  w.u32(kAnnouncementMagic).u32(a.protocol_version).str(a.name).str(a.role);
  w.str(a.control.host).u16(a.control.port).u64(a.free_memory_bytes);
  return w.take();
}

Result<Announcement> decode_announcement(const uint8_t* p, size_t n) {
  if (n > kMaxAnnouncementBytes) return Status::corrupt("discovery: announcement too large");
  WireReader r(p, n);
  uint32_t magic = 0;
  Announcement a;
  COHORT_RETURN_IF_ERROR(r.u32(&magic));
  if (magic != kAnnouncementMagic) return Status::corrupt("discovery: bad announcement magic");
  COHORT_RETURN_IF_ERROR(r.u32(&a.protocol_version));
  COHORT_RETURN_IF_ERROR(r.str(&a.name, kMaxPeerNameBytes));
  COHORT_RETURN_IF_ERROR(r.str(&a.role, kMaxPeerRoleBytes));
  std::string host;
  COHORT_RETURN_IF_ERROR(r.str(&host, 255));
  uint16_t port = 0;
  COHORT_RETURN_IF_ERROR(r.u16(&port));
  COHORT_RETURN_IF_ERROR(r.u64(&a.free_memory_bytes));
  if (port == 0) return Status::corrupt("discovery: announcement without a control port");
  // Round-trip the host through the one address parser so nothing odd reaches a resolver.
  if (!unspecified_host(host)) {
    Result<HostPort> hp = parse_host_port(HostPort{host, port}.to_string());
    if (!hp.is_ok()) return Status::corrupt("discovery: bad control address");
  }
  a.control = HostPort{std::move(host), port};
  return a;
}

struct Announcer::Impl {
  udp::socket sock{sync_io_context()};
  std::vector<udp::endpoint> dests;  // the group (unless disabled), then the unicast peers
  int64_t interval_ms = 1000;
  std::thread thread;

  std::mutex mu;
  std::condition_variable cv;
  bool stop = false;             // guarded by mu
  std::vector<uint8_t> payload;  // guarded by mu

  std::string hint;  // no_route_hint() for the chosen interface

  // Sends to every destination; fails only when none could be reached.
  Status send_once() {
    std::vector<uint8_t> bytes;
    {
      std::lock_guard<std::mutex> lock(mu);
      bytes = payload;
    }
    std::string errors;
    size_t sent = 0;
    for (const udp::endpoint& dest : dests) {
      error_code ec;
      sock.send_to(asio::buffer(bytes), dest, 0, ec);
      if (!ec) {
        ++sent;
        continue;
      }
      errors += (errors.empty() ? "" : "; ") + dest.address().to_string() + ":" +
                std::to_string(dest.port()) + ": " + ec.message();
    }
    if (sent == 0) return Status::unavailable("discovery: cannot send to " + errors + hint);
    return Status::ok();
  }

  void loop() {
    bool warned = false;
    std::unique_lock<std::mutex> lock(mu);
    while (!stop) {
      cv.wait_for(lock, std::chrono::milliseconds(interval_ms), [&] { return stop; });
      if (stop) break;
      lock.unlock();
      const Status st = send_once();
      if (!st.is_ok() && !warned) {
        COHORT_LOG_WARN("%s (will keep trying)", st.message().c_str());
        warned = true;
      }
      lock.lock();
    }
  }
};

Announcer::Announcer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

Announcer::~Announcer() {
  {
    std::lock_guard<std::mutex> lock(impl_->mu);
    impl_->stop = true;
  }
  impl_->cv.notify_all();
  if (impl_->thread.joinable()) impl_->thread.join();
}

void Announcer::update(const Announcement& a) {
  std::vector<uint8_t> bytes = encode_announcement(a);
  std::lock_guard<std::mutex> lock(impl_->mu);
  impl_->payload = std::move(bytes);
}

Result<std::unique_ptr<Announcer>> Announcer::start(const Announcement& a, const HostPort& group,
                                                    int64_t interval_ms,
                                                    const std::string& interface_ip,
                                                    const std::vector<HostPort>& unicast_peers,
                                                    bool multicast) {
  if (a.name.size() > kMaxPeerNameBytes || a.role.size() > kMaxPeerRoleBytes ||
      a.control.host.size() > 255) {
    return Status::invalid_argument("discovery: announcement name, role or host is too long");
  }
  if (interval_ms <= 0) return Status::invalid_argument("discovery: interval_ms must be > 0");
  auto impl = std::make_unique<Impl>();
  if (multicast) {
    COHORT_ASSIGN_OR_RETURN(const udp::endpoint dest, group_endpoint(group));
    impl->dests.push_back(dest);
  }
  for (const HostPort& peer : unicast_peers) {
    error_code ec;
    const asio::ip::address_v4 ip = asio::ip::make_address_v4(peer.host, ec);
    if (ec) {
      return Status::invalid_argument("discovery: peer " + peer.to_string() +
                                      " is not an IPv4 address");
    }
    impl->dests.emplace_back(ip, peer.port);
  }
  if (impl->dests.empty()) return Status::invalid_argument("discovery: nowhere to announce to");
  COHORT_ASSIGN_OR_RETURN(const asio::ip::address_v4 iface, interface_address(interface_ip));
  impl->interval_ms = interval_ms;
  impl->payload = encode_announcement(a);
  impl->hint = multicast ? no_route_hint(interface_ip) : "";
  error_code ec;
  impl->sock.open(udp::v4(), ec);
  if (!ec) impl->sock.set_option(asio::ip::multicast::hops(1), ec);
  if (!ec) impl->sock.set_option(asio::ip::multicast::enable_loopback(true), ec);
  if (!ec && !interface_ip.empty()) {
    impl->sock.set_option(asio::ip::multicast::outbound_interface(iface), ec);
  }
  if (ec) return Status::unavailable("discovery: cannot open the announce socket: " + ec.message());
  COHORT_RETURN_IF_ERROR(impl->send_once());
  Impl* raw = impl.get();
  impl->thread = std::thread([raw] { raw->loop(); });
  return std::unique_ptr<Announcer>(new Announcer(std::move(impl)));
}

Result<std::vector<Announcement>> discover(const HostPort& group, int64_t wait_ms,
                                           const std::string& interface_ip) {
  COHORT_ASSIGN_OR_RETURN(const udp::endpoint ep, group_endpoint(group));
  COHORT_ASSIGN_OR_RETURN(const asio::ip::address_v4 iface, interface_address(interface_ip));
  error_code ec;
  udp::socket sock(sync_io_context());
  sock.open(udp::v4(), ec);
  if (!ec) sock.set_option(udp::socket::reuse_address(true), ec);
  // Bound to the group address (not INADDR_ANY) so only this group's datagrams arrive.
  if (!ec) sock.bind(ep, ec);
  if (ec) {
    return Status::unavailable("discovery: cannot bind " + group.to_string() + ": " + ec.message());
  }
  sock.set_option(asio::ip::multicast::join_group(ep.address().to_v4(), iface), ec);
  if (ec) {
    return Status::unavailable(
        "discovery: cannot join group " + group.host + " on " +
        (interface_ip.empty() ? std::string("the default interface") : interface_ip) + ": " +
        ec.message() + no_route_hint(interface_ip));
  }
  sock.non_blocking(true, ec);
  if (ec) return Status::io_error("discovery: cannot configure socket: " + ec.message());
  // Workers started with --peers send their announcements straight to this port: listen
  // for those too (on the chosen interface, or every one). Optional: a port already taken
  // by another head on this host leaves discovery to multicast.
  udp::socket direct(sync_io_context());
  direct.open(udp::v4(), ec);
  if (!ec) direct.set_option(udp::socket::reuse_address(true), ec);
  if (!ec) {
    direct.bind(
        udp::endpoint(interface_ip.empty() ? asio::ip::address_v4::any() : iface, group.port), ec);
  }
  if (!ec) direct.non_blocking(true, ec);
  if (ec) {
    COHORT_LOG_DEBUG("discovery: not listening for direct announcements: %s", ec.message().c_str());
    direct.close(ec);
  }

  std::vector<Announcement> heard;
  const int64_t end_ns = now_ns() + std::max<int64_t>(wait_ms, 0) * 1'000'000;
  uint8_t buf[2048];
  for (;;) {
    udp::endpoint from;
    size_t n = sock.receive_from(asio::buffer(buf), from, 0, ec);
    if (ec && direct.is_open()) n = direct.receive_from(asio::buffer(buf), from, 0, ec);
    if (!ec) {
      Result<Announcement> a = decode_announcement(buf, n);
      if (!a.is_ok()) {
        COHORT_LOG_DEBUG("discovery: ignored a datagram from %s: %s",
                         from.address().to_string().c_str(), a.status().message().c_str());
        continue;
      }
      if (unspecified_host(a->control.host)) {
        // A sender without a source address (multicast routed via lo, which has only a
        // host-scope address) can only be on this host.
        a->control.host =
            from.address().is_unspecified() ? "127.0.0.1" : from.address().to_string();
      }
      const auto same = std::find_if(heard.begin(), heard.end(), [&](const Announcement& h) {
        return h.control == a->control;
      });
      if (same != heard.end()) {
        *same = std::move(a).value();
      } else {
        heard.push_back(std::move(a).value());
      }
      continue;
    }
    if (ec != asio::error::would_block && ec != asio::error::try_again &&
        ec != asio::error::interrupted) {
      COHORT_LOG_DEBUG("discovery: receive failed: %s", ec.message().c_str());
    }
    const int64_t left_ns = end_ns - now_ns();
    if (left_ns <= 0) break;
    pollfd p[2] = {{sock.native_handle(), POLLIN, 0},
                   {direct.is_open() ? direct.native_handle() : -1, POLLIN, 0}};
    ::poll(p, 2, static_cast<int>((left_ns + 999'999) / 1'000'000));
  }
  return heard;
}

}  // namespace cohort::net
