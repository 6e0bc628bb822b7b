// LAN discovery by UDP multicast. Workers announce themselves; a head listens for a while
// and collects what it heard. An announcement is only a hint: it carries no secret, anyone
// can send one, and the handshake (handshake.h) is what authenticates a peer.
//
// Datagram (at most kMaxAnnouncementBytes, little-endian, wire.h coding):
//   u32 magic "COHD", u32 protocol_version, str name, str role, str control host,
//   u16 control port, u64 free_memory_bytes; trailing bytes are ignored (later versions
//   may append fields).
// Sent with TTL 1 (never leaves the local network) and multicast loopback on, so processes
// on one host hear each other. IPv4 groups only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/status.h"
#include "net/address.h"
#include "net/handshake.h"

namespace cohort::net {

inline constexpr char kDefaultDiscoveryGroup[] = "239.255.77.77";
inline constexpr uint16_t kDefaultDiscoveryPort = 52416;
inline constexpr uint32_t kAnnouncementMagic = 0x44484F43;  // "COHD" on the wire
inline constexpr size_t kMaxAnnouncementBytes = 1024;

inline HostPort default_discovery_group() {
  return HostPort{kDefaultDiscoveryGroup, kDefaultDiscoveryPort};
}

struct Announcement {
  std::string name;  // <= kMaxPeerNameBytes
  std::string role;  // <= kMaxPeerRoleBytes
  // Where the node accepts cluster connections. A host of "" or "0.0.0.0" is replaced by
  // the datagram's source address when heard (127.0.0.1 when the datagram has none, which
  // happens only for datagrams from this host).
  HostPort control;
  uint64_t free_memory_bytes = 0;
  uint32_t protocol_version = kProtocolVersion;
};

std::vector<uint8_t> encode_announcement(const Announcement& a);
// kCorrupt "discovery: ..." on anything malformed.
Result<Announcement> decode_announcement(const uint8_t* p, size_t n);

// Sends an announcement to `group` (unless multicast is false) and to each of
// unicast_peers (IPv4 host:port of heads' discovery ports: the static fallback where
// multicast is blocked) every interval_ms from a background thread until destroyed.
// interface_ip ("" = the OS's choice by route) picks the outgoing multicast interface.
// Thread-safe: update() may be called from any thread.
class Announcer {
 public:
  // Sends the first announcement before returning, so a network that refuses multicast
  // fails here ("discovery: ..."); later send failures are logged once and retried.
  static Result<std::unique_ptr<Announcer>> start(const Announcement& a, const HostPort& group,
                                                  int64_t interval_ms,
                                                  const std::string& interface_ip = "",
                                                  const std::vector<HostPort>& unicast_peers = {},
                                                  bool multicast = true);
  // Replaces what later announcements say (free memory changes, for instance).
  void update(const Announcement& a);
  // Stops the thread (promptly, not after a full interval) and closes the socket.
  ~Announcer();

  Announcer(const Announcer&) = delete;
  Announcer& operator=(const Announcer&) = delete;

  struct Impl;

 private:
  explicit Announcer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

// Joins `group` on interface_ip ("" = the OS's choice), and listens on group.port of
// interface_ip (every interface when "") for announcements sent there directly by unicast;
// listens for wait_ms and returns the
// distinct announcements heard, deduplicated by control address (the latest wins), in the
// order first heard. Malformed datagrams are ignored. Errors: joining or binding failed
// ("discovery: ..."). Thread-safe (each call has its own socket).
Result<std::vector<Announcement>> discover(const HostPort& group, int64_t wait_ms,
                                           const std::string& interface_ip = "");

}  // namespace cohort::net
