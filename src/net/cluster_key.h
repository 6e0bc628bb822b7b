// The shared cluster key: 32 random bytes that every member holds. Peers prove they hold it
// (handshake.h) before any placement or weight traffic. Stored as 64 hex characters in a
// file passed with --key-file.
//
// Errors never contain key material (neither the key nor the text that failed to parse).
// All functions are thread-safe.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/status.h"

namespace cohort::net {

inline constexpr size_t kClusterKeyBytes = 32;

struct ClusterKey {
  std::array<uint8_t, kClusterKeyBytes> bytes{};
  // The cluster-wide link policy, set from `--encrypt` (it is not part of the key file):
  // every connection this key authenticates is then sealed after its handshake
  // (handshake.h, secure_channel.h). It travels with the key because every place that proves
  // the key must also agree on sealing; ends that differ refuse each other at the handshake.
  bool encrypt_traffic = false;
};

// Initialises libsodium once (idempotent, thread-safe). A libsodium that cannot initialise
// (no entropy source) is fatal: COHORT_CHECK.
void ensure_sodium();

// 32 bytes from libsodium's CSPRNG.
ClusterKey generate_cluster_key();

// 64 lower-case hex characters.
std::string key_to_hex(const ClusterKey& key);

// Exactly 64 hex characters (either case); kInvalidArgument "key: ..." otherwise.
Result<ClusterKey> key_from_hex(std::string_view hex);

// Reads a key file: the hex text, surrounding whitespace (a trailing newline) ignored.
// kNotFound / kIoError / kInvalidArgument "key: <path>: ...". Logs a warning when the file
// is readable by group or others.
Result<ClusterKey> load_key_file(const std::string& path);

// Writes the key as hex plus a newline to a new file with mode 0600 (fails if it exists).
Status save_key_file(const std::string& path, const ClusterKey& key);

}  // namespace cohort::net
