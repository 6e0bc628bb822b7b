// What the tests that drive tests/js scripts with node share: whether node is installed (a
// missing node is a skip, the one thing a test machine may lack), whether the npm packages
// are (missing ones are a failure that names the fix), and the command that runs one script
// against a server on loopback.
#pragma once

#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "support/subprocess.h"

namespace cohort::testing {

#ifdef COHORT_JS_DIR
// tests/js: the npm client scripts and their node_modules (set for the clients tests only).
inline const std::string kJsDir = COHORT_JS_DIR;
#endif

inline bool have_node() { return run_command("command -v node >/dev/null 2>&1").exit_code == 0; }

// "" when js_dir/node_modules (and the package in it, when named) is there; else the fix.
inline std::string missing_npm_packages(const std::string& js_dir,
                                        const std::string& package = "") {
  const std::string path = js_dir + "/node_modules" + (package.empty() ? "" : "/" + package);
  if (std::filesystem::is_directory(path)) return "";
  return "no " + path + ": run scripts/bootstrap.sh (it runs npm ci in tests/js)";
}

// `node script` in js_dir with COHORT_URL naming the server at 127.0.0.1:port and the other
// environment variables given, killed after timeout_s seconds, stderr folded into stdout.
inline std::string node_script_command(const std::string& js_dir, int port,
                                       const std::string& script,
                                       const std::vector<std::pair<std::string, std::string>>& env,
                                       int timeout_s) {
  std::string cmd =
      "cd " + shell_quote(js_dir) + " && COHORT_URL=http://127.0.0.1:" + std::to_string(port);
  for (const auto& [name, value] : env) cmd += " " + name + "=" + shell_quote(value);
  return cmd + " timeout " + std::to_string(timeout_s) + " node " + script + " 2>&1";
}

}  // namespace cohort::testing

// Skips the current test when node is not installed.
#define COHORT_SKIP_WITHOUT_NODE()                                                           \
  do {                                                                                       \
    if (!::cohort::testing::have_node()) {                                                   \
      GTEST_SKIP() << "node is not installed: scripts/bootstrap.sh installs nodejs and npm"; \
    }                                                                                        \
  } while (0)
