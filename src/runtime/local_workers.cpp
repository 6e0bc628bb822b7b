#include "runtime/local_workers.h"

#include <cstdlib>
#include <filesystem>

#include "net/cluster_key.h"

namespace cohort::runtime {

Result<std::unique_ptr<LocalWorkers>> LocalWorkers::start(const LocalWorkersOptions& opts) {
  if (opts.count < 1) return Status(StatusCode::kInvalidArgument, "local cluster: no workers");
  Result<std::string> exe =
      opts.executable.empty() ? self_executable() : Result<std::string>(opts.executable);
  if (!exe.is_ok()) return exe.status();
  std::unique_ptr<LocalWorkers> w(new LocalWorkers());
  std::string tmpl = (std::filesystem::temp_directory_path() / "cohort-local-XXXXXX").string();
  if (::mkdtemp(tmpl.data()) == nullptr) {
    return Status(StatusCode::kIoError, "local cluster: cannot make a temporary directory");
  }
  w->dir_ = tmpl;
  w->key_file_ = w->dir_ + "/cluster.key";
  Status st = net::save_key_file(w->key_file_, net::generate_cluster_key());
  if (!st.is_ok()) return st;
  for (int i = 0; i < opts.count; ++i) {
    const int port = free_loopback_port();
    const std::string name = opts.name_prefix + std::to_string(i);
    std::vector<std::string> argv = {*exe,
                                     "worker",
                                     "--listen",
                                     "127.0.0.1:" + std::to_string(port),
                                     "--name",
                                     name,
                                     "--key-file",
                                     w->key_file_,
                                     "-t",
                                     std::to_string(opts.threads_each),
                                     "--no-announce",
                                     "--cache-dir",
                                     w->dir_ + "/cache-" + name};
    if (opts.encrypt) argv.push_back("--encrypt");
    w->procs_.push_back(std::make_unique<ChildProcess>(argv, w->dir_ + "/" + name + ".log"));
    if (!wait_for_loopback_port(port, opts.start_timeout_ms)) {
      return Status(
          StatusCode::kUnavailable,
          "local cluster: " + name + " did not start; its log:\n" + w->procs_.back()->log());
    }
    w->list_ += (w->list_.empty() ? "" : ",") + std::string("127.0.0.1:") + std::to_string(port);
  }
  return w;
}

LocalWorkers::~LocalWorkers() {
  for (auto& p : procs_) p->stop(15, 2000);
  procs_.clear();
  if (!dir_.empty()) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

}  // namespace cohort::runtime
