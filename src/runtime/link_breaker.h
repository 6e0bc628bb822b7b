// Breaks the head's tcp data-plane links from outside the communicator that owns them, so a
// step blocked receiving from a node that will never answer (its link cut, its machine
// frozen) wakes at once with kUnavailable instead of waiting for the kernel's keepalive.
//
// The head is rank 0 of every tcp mesh, which accepts every link on its mesh listener's port,
// so its data-plane sockets are exactly this process's connected TCP sockets whose local port
// is that one (the accepted links keep that port bound while they live, so the system gives
// it to no other socket).
// They are shut down, not closed: the communicator still owns the descriptors, and its next
// call on each link fails as for a peer that hung up.
//
// Linux only (it lists /proc/self/fd). A stop-gap until the tcp communicator offers a way
// to break its own links: it should then be called instead.
#pragma once

#include <cstdint>

namespace cohort::runtime {

// Shuts down every connected TCP socket of this process bound to local_port; returns how many.
int shutdown_connections_on_port(uint16_t local_port);

}  // namespace cohort::runtime
