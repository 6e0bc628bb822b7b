#include "core/system_memory.h"

#include <cstdio>
#include <cstring>

namespace cohort {

SystemMemory read_system_memory() {
  SystemMemory m;
  FILE* f = std::fopen("/proc/meminfo", "r");
  if (!f) return m;
  char key[64];
  unsigned long long kb;
  while (std::fscanf(f, "%63s %llu kB", key, &kb) == 2) {
    if (!std::strcmp(key, "MemAvailable:")) m.available_bytes = kb * 1024;
    if (!std::strcmp(key, "MemTotal:")) m.total_bytes = kb * 1024;
  }
  std::fclose(f);
  return m;
}

}  // namespace cohort
