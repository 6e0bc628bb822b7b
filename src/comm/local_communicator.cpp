#include <cstring>

#include "comm/communicator.h"

namespace cohort::comm {
namespace {

class LocalCommunicator final : public Communicator {
 public:
  int rank() const override { return 0; }
  int size() const override { return 1; }
  std::string name() const override { return "local"; }

  Status send(int peer, const void*, size_t, int64_t) override {
    return Status::invalid_argument("local: no peer " + std::to_string(peer) +
                                    " in a group of one");
  }
  Status recv(int peer, void*, size_t, int64_t) override {
    return Status::invalid_argument("local: no peer " + std::to_string(peer) +
                                    " in a group of one");
  }
  Status all_reduce_sum(float*, size_t, int64_t) override { return Status::ok(); }
  Status all_gather(const void* in, void* out, size_t bytes, int64_t) override {
    if (in != out && bytes > 0) std::memmove(out, in, bytes);
    return Status::ok();
  }
  Status broadcast(void*, size_t, int, int64_t) override { return Status::ok(); }
  Status barrier(int64_t) override { return Status::ok(); }
};

}  // namespace

std::unique_ptr<Communicator> make_local_communicator() {
  return std::make_unique<LocalCommunicator>();
}

}  // namespace cohort::comm
