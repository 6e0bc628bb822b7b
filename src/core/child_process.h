// A child process started with fork+exec, its stdout and stderr sent to a log file, killed
// (SIGKILL unless stopped earlier) and reaped when the handle is destroyed. Used by the
// commands that start a local cluster (`cohort demo`, `cohort bench cluster`) and by the
// multi-process tests.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/status.h"

namespace cohort {

class ChildProcess {
 public:
  // Starts argv[0] (a path, not searched in PATH) with argv. The log file is created or
  // truncated. A failing exec shows as exit status 127 and a line in the log.
  ChildProcess(const std::vector<std::string>& argv, const std::string& log_path);
  ~ChildProcess() { kill(9); }
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const { return pid_; }
  // Sends sig and waits for the process to end (no-op once it has been reaped).
  void kill(int sig);
  // Sends sig, waits up to timeout_ms for the process to end, then SIGKILLs it.
  // Returns the exit status (-1 when killed by a signal).
  int stop(int sig, int64_t timeout_ms);
  bool alive() const;
  std::string log() const;  // the log file's contents so far
  // Resident set size in KiB (0 when the process is gone).
  long rss_kib() const;

 private:
  pid_t pid_ = -1;
  std::string log_;
};

// A TCP port on 127.0.0.1 that was free a moment ago (another process may take it first).
int free_loopback_port();

// Waits until something accepts TCP connections on 127.0.0.1:port.
bool wait_for_loopback_port(int port, int64_t timeout_ms);

// The path of the running executable (/proc/self/exe), for starting more of ourselves.
Result<std::string> self_executable();

}  // namespace cohort
