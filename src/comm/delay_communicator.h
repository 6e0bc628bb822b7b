// A decorator that adds a fixed one-way latency to every message of a communicator, for
// experiments (does tensor parallelism pay on a link of N microseconds?) on a kernel without
// netem.
//
// Each send is delivered one_way_delay_us later: the sender waits the delay before handing the
// message to the wrapped communicator (sleeping for most of it and spinning the last ~100 us
// for precision). The collectives are re-expressed over the decorator's own point-to-point
// messages (it is a P2PCommunicator), so every hop of an all-reduce pays the delay: messages
// that leave together (one step of an exchange, the two directions of a send_recv) pay it
// once, as on a real link. A round trip therefore takes at least 2 x one_way_delay_us.
//
// Ownership: the decorator owns `inner`. Thread-safety: as Communicator.
#pragma once

#include <cstdint>
#include <memory>

#include "comm/communicator.h"

namespace cohort::comm {

// name() is "delay(<inner name>)". one_way_delay_us < 0 is treated as 0.
std::unique_ptr<Communicator> make_delay_communicator(std::unique_ptr<Communicator> inner,
                                                      int64_t one_way_delay_us);

}  // namespace cohort::comm
