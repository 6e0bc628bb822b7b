// Runs a command line through the shell and captures its stdout (stderr discarded unless
// the command redirects it), for tests of the `cohort` binary.
#pragma once

#include <sys/wait.h>

#include <cstdio>
#include <string>

namespace cohort::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;
};

inline CommandResult run_command(const std::string& cmd) {
  CommandResult r;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), p)) > 0) r.out.append(buf, n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

inline std::string shell_quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

}  // namespace cohort::testing
