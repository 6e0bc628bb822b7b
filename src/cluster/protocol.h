// The control protocol between a head and its workers: small, versioned messages on one
// authenticated TCP connection per worker (net::handshake runs first). Message ids are stable
// and never renumbered; a change of any payload bumps net::kProtocolVersion. Every payload is
// decoded with bounds checks; a malformed one is kCorrupt and the connection is dropped.
//
// The data plane (activations, all-reduces) runs on a separate Communicator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "cluster/planner.h"
#include "core/status.h"
#include "net/wire.h"

namespace cohort::cluster {

enum MessageType : uint16_t {
  kMsgNodeInfoRequest = 1,
  kMsgNodeInfo = 2,
  kMsgPing = 3,
  kMsgPong = 4,
  kMsgProbeData = 5,  // bandwidth probe: payload of any size, answered by kMsgProbeAck
  kMsgProbeAck = 6,
  kMsgPrepare = 7,   // open a data-plane endpoint for the transport named
  kMsgPrepared = 8,  // the endpoint's port (tcp) or 0
  kMsgSetup = 9,     // load a shard, join the data plane, then serve steps
  kMsgSetupDone = 10,
  kMsgShutdown = 11,
  kMsgError = 12,
  // Weight shipping (runtime/shard_transfer.h): a worker that has neither the model nor a
  // cached copy of its shard answers kMsgSetup with kMsgShardWanted; the head streams the
  // shard file as Begin, Chunk..., End, and the worker then answers kMsgSetupDone.
  kMsgShardWanted = 13,  // str key
  kMsgShardBegin = 14,   // str key, u64 total bytes
  kMsgShardChunk = 15,   // u64 offset, u64 xxh3-64 of the data, then the data
  kMsgShardEnd = 16,     // u64 lo, u64 hi: xxh3-128 of the whole file
  // Worker-to-worker links: the head asks a worker to measure its link to another worker's
  // control address (str host:port); the answer is f64 rtt_us, f64 bytes/s, or kMsgError
  // (str reason) when the peer cannot be reached.
  kMsgProbePeer = 17,
  kMsgPeerLink = 18,
  // Liveness: a worker sends one, unasked, every kHeartbeatIntervalMs while it serves steps
  // (after joining the data plane, until its step loop ends). The head reads them beside the
  // token path and declares a worker lost after kHeartbeatSilenceMs without one. Payload:
  // Heartbeat (the worker's step times so far, for finding slow nodes).
  kMsgHeartbeat = 19,
  kMsgCount  // one past the last id: bump the protocol version when this changes
};
static_assert(kMsgCount == 20, "control message ids changed: bump net::kProtocolVersion");

inline constexpr int64_t kHeartbeatIntervalMs = 200;
// Five missed beats: long enough for a busy worker's sender thread to be scheduled late,
// short enough that a lost node is noticed, and its requests failed, within 2 s.
inline constexpr int64_t kHeartbeatSilenceMs = 1000;

// Most a control payload may carry (probe data included).
inline constexpr size_t kMaxControlPayload = 64u << 20;

struct NodeInfo {
  std::string name;
  uint64_t free_bytes = 0;
  uint64_t total_bytes = 0;
  uint32_t threads = 0;
  std::string isa;
  double matvec_gbps = 0;  // measured kernel throughput, for the planner's speed
};

struct SetupRequest {
  std::string model_path;
  uint64_t model_bytes = 0;
  uint64_t model_fingerprint = 0;  // see model_fingerprint(): the worker checks it matches
  Plan plan;
  int32_t rank = 0;
  std::string transport;               // "tcp" or "shm"
  std::vector<std::string> endpoints;  // tcp: "host:port" of every rank's data listener
  std::string shm_name;                // shm: the segment name
  int64_t link_delay_us = 0;
  int32_t threads = 0;
  int64_t n_ctx = 0;
  int64_t max_batch = 0;
  uint32_t kv_type = 1;      // DType id
  bool ship_always = false;  // ship the shard even when the worker has the same model file
  int32_t n_slots = 1;       // sequence slots: KV caches of n_ctx positions each (1..kMaxSlots)
};

inline constexpr int32_t kMaxSlots = 1024;

// A worker's own cost of the steps it has run in this session, cumulative: steps, and the
// seconds spent in them outside communication (computing its shard; waiting for peers is
// left out, so a node that makes others wait shows it and they do not).
struct Heartbeat {
  uint64_t steps = 0;
  double busy_s = 0;
};

std::vector<uint8_t> encode(const NodeInfo& m);
Status decode(const std::vector<uint8_t>& payload, NodeInfo* m);
std::vector<uint8_t> encode(const SetupRequest& m);
Status decode(const std::vector<uint8_t>& payload, SetupRequest* m);
std::vector<uint8_t> encode(const Heartbeat& m);
Status decode(const std::vector<uint8_t>& payload, Heartbeat* m);
std::vector<uint8_t> encode_plan(const Plan& p);
Status decode_plan(net::WireReader& r, Plan* p);

}  // namespace cohort::cluster
