// libFuzzer target: every decoder a peer's bytes reach before or after the key proof. The
// first byte picks the decoder, the rest is its input: frame headers, HELLO, discovery
// announcements, the control protocol's NodeInfo, SetupRequest and Plan. Decoded values
// are re-encoded where an encoder exists and must decode again to the same bytes.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "cluster/protocol.h"
#include "net/discovery.h"
#include "net/frame.h"
#include "net/handshake.h"
#include "net/wire.h"

namespace {

void check(bool ok) {
  if (!ok) std::abort();  // a round trip that does not hold is a finding
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace cohort;
  if (size < 1) return 0;
  const uint8_t which = data[0] % 6;
  const uint8_t* p = data + 1;
  const size_t n = size - 1;
  const std::vector<uint8_t> payload(p, p + n);
  switch (which) {
    case 0: {
      if (n < net::kFrameHeaderBytes) return 0;
      (void)net::decode_frame_header(p, 1 << 20);
      return 0;
    }
    case 1: {
      auto h = net::decode_hello(p, n);
      if (h.is_ok()) {
        const auto bytes = net::encode_hello(h->info, h->nonce, h->link_flags, h->kx_public);
        auto again = net::decode_hello(bytes.data(), bytes.size());
        check(again.is_ok() && again->info.name == h->info.name &&
              again->info.role == h->info.role && again->link_flags == h->link_flags);
      }
      return 0;
    }
    case 2: {
      auto a = net::decode_announcement(p, n);
      if (a.is_ok()) {
        const std::vector<uint8_t> bytes = net::encode_announcement(*a);
        auto again = net::decode_announcement(bytes.data(), bytes.size());
        check(again.is_ok() && again->name == a->name && again->control == a->control);
      }
      return 0;
    }
    case 3: {
      cluster::NodeInfo m;
      if (cluster::decode(payload, &m).is_ok()) {
        cluster::NodeInfo again;
        check(cluster::decode(cluster::encode(m), &again).is_ok() && again.name == m.name);
      }
      return 0;
    }
    case 4: {
      cluster::SetupRequest m;
      if (cluster::decode(payload, &m).is_ok()) {
        cluster::SetupRequest again;
        check(cluster::decode(cluster::encode(m), &again).is_ok() &&
              again.model_path == m.model_path && again.plan.ranks.size() == m.plan.ranks.size());
      }
      return 0;
    }
    default: {
      net::WireReader r(p, n);
      cluster::Plan plan;
      (void)cluster::decode_plan(r, &plan);
      return 0;
    }
  }
}
