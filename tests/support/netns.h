// Network namespaces for the link-fault tests: a head namespace holding a bridge, and one
// namespace per worker joined to it by a veth pair, so a test can cut one node's link
// (`ip link set down`) and restore it. Needs root (CAP_SYS_ADMIN) and the `ip` tool; use
// NetnsLab::unavailable() first and skip with its reason when it is not empty.
//
// Every namespace is named cohort-t<pid>-<role>: a lab removes its own namespaces when it is
// destroyed, and on creation removes those left by test processes that no longer exist (a
// crashed or killed run), so nothing outlives the test for long.
#pragma once

#include <fcntl.h>
#include <sched.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "support/subprocess.h"

namespace cohort::testing {

class NetnsLab {
 public:
  // Why namespaces cannot be used here ("" when they can): a probe namespace is created and
  // removed at once.
  static std::string unavailable() {
    if (::geteuid() != 0) return "network namespaces need root (euid is not 0)";
    if (run_command("command -v ip >/dev/null 2>&1").exit_code != 0) {
      return "the `ip` tool (iproute2) is not installed";
    }
    const std::string probe = prefix() + "probe";
    const CommandResult r = run_command("ip netns add " + probe + " 2>&1");
    run_command("ip netns del " + probe + " 2>/dev/null");
    if (r.exit_code != 0) return "`ip netns add` failed: " + r.out;
    return {};
  }

  // The head namespace (bridge cbr0 at 10.77.0.1/24) and n worker namespaces (eth0 at
  // 10.77.0.<2+i>), every loopback up. ok() is false, with error(), when a step failed.
  explicit NetnsLab(int n_workers) {
    remove_stale();
    head_ = prefix() + "h";
    ok_ = sh("ip netns add " + head_) && sh(in(head_) + "link set lo up") &&
          sh(in(head_) + "link add cbr0 type bridge") &&
          sh(in(head_) + "addr add 10.77.0.1/24 dev cbr0") && sh(in(head_) + "link set cbr0 up");
    for (int i = 0; ok_ && i < n_workers; ++i) {
      const std::string ns = prefix() + "w" + std::to_string(i);
      const std::string port = "cp" + std::to_string(i);
      workers_.push_back(ns);
      // The veth is made in the head namespace and its worker end moved across as eth0.
      ok_ = sh("ip netns add " + ns) && sh(in(ns) + "link set lo up") &&
            sh(in(head_) + "link add " + port + " type veth peer name eth0 netns " + ns) &&
            sh(in(head_) + "link set " + port + " master cbr0") &&
            sh(in(head_) + "link set " + port + " up") &&
            sh(in(ns) + "addr add " + worker_ip(i) + "/24 dev eth0") &&
            sh(in(ns) + "link set eth0 up");
    }
  }
  ~NetnsLab() {
    for (const std::string& ns : workers_) run_command("ip netns del " + ns + " 2>/dev/null");
    if (!head_.empty()) run_command("ip netns del " + head_ + " 2>/dev/null");
  }
  NetnsLab(const NetnsLab&) = delete;
  NetnsLab& operator=(const NetnsLab&) = delete;

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }

  const std::string& head() const { return head_; }
  const std::string& worker(int i) const { return workers_.at(static_cast<size_t>(i)); }
  static std::string head_ip() { return "10.77.0.1"; }
  static std::string worker_ip(int i) { return "10.77.0." + std::to_string(2 + i); }

  // argv run inside namespace ns (through `ip netns exec`, which execs it: the child's pid
  // is the program's own).
  static std::vector<std::string> exec_in(const std::string& ns, std::vector<std::string> argv) {
    std::vector<std::string> out = {ip_path(), "netns", "exec", ns};
    for (std::string& a : argv) out.push_back(std::move(a));
    return out;
  }

  // Takes worker i's link down or up (its end of the veth, as a pulled cable would).
  bool set_worker_link(int i, bool up) {
    return sh(in(worker(i)) + "link set eth0 " + (up ? "up" : "down"));
  }

 private:
  static std::string prefix() { return "cohort-t" + std::to_string(::getpid()) + "-"; }
  static std::string in(const std::string& ns) { return "ip -n " + ns + " "; }
  static std::string ip_path() {
    const CommandResult r = run_command("command -v ip");
    std::string p = r.out;
    while (!p.empty() && (p.back() == '\n' || p.back() == ' ')) p.pop_back();
    return p.empty() ? "/usr/sbin/ip" : p;
  }

  // Runs a command, keeping its output as error() when it fails.
  bool sh(const std::string& cmd) {
    const CommandResult r = run_command(cmd + " 2>&1");
    if (r.exit_code != 0) error_ = cmd + ": " + r.out;
    return r.exit_code == 0;
  }

  // Deletes cohort-t<pid>-* namespaces whose test process is gone.
  static void remove_stale() {
    std::istringstream names(run_command("ip netns list 2>/dev/null").out);
    std::string line;
    while (std::getline(names, line)) {
      const std::string name = line.substr(0, line.find(' '));
      if (name.rfind("cohort-t", 0) != 0) continue;
      const long pid = std::strtol(name.c_str() + 8, nullptr, 10);
      if (pid > 0 && ::kill(static_cast<pid_t>(pid), 0) != 0 && errno == ESRCH) {
        run_command("ip netns del " + name + " 2>/dev/null");
      }
    }
  }

  bool ok_ = false;
  std::string error_;
  std::string head_;
  std::vector<std::string> workers_;
};

// Moves the calling thread into a namespace for this object's lifetime (threads it starts
// meanwhile are born there too), then back. ok() is false when setns failed.
class ScopedNetns {
 public:
  explicit ScopedNetns(const std::string& ns) {
    original_ = ::open("/proc/thread-self/ns/net", O_RDONLY | O_CLOEXEC);
    const int target = ::open(("/var/run/netns/" + ns).c_str(), O_RDONLY | O_CLOEXEC);
    ok_ = original_ >= 0 && target >= 0 && ::setns(target, CLONE_NEWNET) == 0;
    if (target >= 0) ::close(target);
  }
  ~ScopedNetns() {
    if (ok_) ::setns(original_, CLONE_NEWNET);
    if (original_ >= 0) ::close(original_);
  }
  ScopedNetns(const ScopedNetns&) = delete;
  ScopedNetns& operator=(const ScopedNetns&) = delete;

  bool ok() const { return ok_; }

 private:
  int original_ = -1;
  bool ok_ = false;
};

}  // namespace cohort::testing
