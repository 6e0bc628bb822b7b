#pragma once

namespace boost::asio {
class io_context;
}

namespace cohort::net {

// The io_context that every synchronous socket in net/ is constructed with. Sockets need one
// to exist, but nothing here ever runs it: all I/O is synchronous on non-blocking
// descriptors. Leaked on purpose, so no static destructor races a socket that outlives main().
boost::asio::io_context& sync_io_context();

}  // namespace cohort::net
