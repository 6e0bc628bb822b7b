#include "net/sync_io.h"

#include <boost/asio/io_context.hpp>

namespace cohort::net {

boost::asio::io_context& sync_io_context() {
  static auto* ctx = new boost::asio::io_context(1);
  return *ctx;
}

}  // namespace cohort::net
