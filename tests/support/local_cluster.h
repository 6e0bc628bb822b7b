// Starting `cohort worker` processes on 127.0.0.1 for the multi-process tests.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "support/process.h"
#include "support/subprocess.h"
#include "support/temp_dir.h"

namespace cohort::testing {

struct LocalWorkers {
  std::vector<std::unique_ptr<ChildProcess>> procs;
  std::string list;  // "127.0.0.1:P1,127.0.0.1:P2,..." for --workers
};

// Starts n workers named prefix0, prefix1, ... (one thread each, no multicast) with the key
// file, logging to dir/<name>.log; extra(name) adds arguments per worker. Fails the test
// (and returns what started) when one does not listen within 5 s.
inline LocalWorkers start_workers(
    const std::string& bin, int n, const std::string& key, const TempDir& dir,
    const std::string& prefix,
    const std::function<std::vector<std::string>(const std::string&)>& extra = {}) {
  LocalWorkers w;
  for (int i = 0; i < n; ++i) {
    const int port = free_port();
    const std::string name = prefix + std::to_string(i);
    std::vector<std::string> argv = {
        bin,          "worker", "--listen",     "127.0.0.1:" + std::to_string(port),
        "--key-file", key,      "--name",       name,
        "-t",         "1",      "--no-announce"};
    if (extra) {
      for (std::string& a : extra(name)) argv.push_back(std::move(a));
    }
    w.procs.push_back(std::make_unique<ChildProcess>(argv, dir.file(name + ".log")));
    if (!wait_for_port(port, 5000)) {
      ADD_FAILURE() << "worker " << name << " did not start:\n" << w.procs.back()->log();
      return w;
    }
    w.list += (w.list.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(port);
  }
  return w;
}

}  // namespace cohort::testing
