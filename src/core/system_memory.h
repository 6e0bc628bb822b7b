// The machine's memory as the kernel reports it (/proc/meminfo).
#pragma once

#include <cstdint>

namespace cohort {

struct SystemMemory {
  uint64_t available_bytes = 0;  // MemAvailable: what can be allocated without swapping
  uint64_t total_bytes = 0;      // MemTotal
};

// Both 0 when /proc/meminfo cannot be read.
SystemMemory read_system_memory();

}  // namespace cohort
