// A cluster on this machine: N `cohort worker` processes on 127.0.0.1 sharing a fresh key,
// for `cohort demo` and `cohort bench cluster`. Everything lives in a private temporary
// directory (key file, worker logs, shard cache) that is removed with the LocalWorkers.
//
// Workers are this executable run again (/proc/self/exe), so the binary must carry the
// `worker` command. They do not announce themselves by multicast; the head is given their
// addresses (workers_list()).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/child_process.h"
#include "core/status.h"

namespace cohort::runtime {

struct LocalWorkersOptions {
  int count = 2;
  int threads_each = 1;
  std::string name_prefix = "worker";  // workers are worker0, worker1, ...
  int64_t start_timeout_ms = 10000;    // per worker, until it accepts connections
  std::string executable;              // the cohort binary; empty: this executable
  bool encrypt = false;                // start the workers with --encrypt (sealed links)
};

class LocalWorkers {
 public:
  // kUnavailable (with the worker's log) when one does not listen in time.
  static Result<std::unique_ptr<LocalWorkers>> start(const LocalWorkersOptions& opts);
  ~LocalWorkers();  // SIGTERM each worker (then SIGKILL after 2 s), remove the directory
  LocalWorkers(const LocalWorkers&) = delete;
  LocalWorkers& operator=(const LocalWorkers&) = delete;

  const std::string& key_file() const { return key_file_; }
  // "127.0.0.1:P1,127.0.0.1:P2,..." for --workers / ClusterOptions.
  const std::string& workers_list() const { return list_; }
  const std::string& dir() const { return dir_; }
  size_t size() const { return procs_.size(); }
  ChildProcess& process(size_t i) { return *procs_[i]; }

 private:
  LocalWorkers() = default;
  std::string dir_;
  std::string key_file_;
  std::string list_;
  std::vector<std::unique_ptr<ChildProcess>> procs_;
};

}  // namespace cohort::runtime
