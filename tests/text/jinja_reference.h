// Runs tests/text/render_reference.py (Python jinja2 set up as Hugging Face transformers
// sets it up) so tests compare our renders with the reference at test time. When python3 or
// its jinja2 is missing, reference_unavailable() says why and tests GTEST_SKIP with it.
#pragma once

#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "support/subprocess.h"

namespace cohort::testing {

inline std::string reference_script() {
  return (std::filesystem::path(__FILE__).parent_path() / "render_reference.py").string();
}

// "" when the reference renderer can run; otherwise a one-line reason.
inline std::string reference_unavailable() {
  static const std::string reason = [] {
    auto r = run_command("python3 -c 'import jinja2' >/dev/null 2>&1");
    if (r.exit_code == 127) return std::string("python3 is not installed");
    if (r.exit_code != 0) return std::string("python3-jinja2 is not installed");
    if (!std::filesystem::exists(reference_script())) return "missing " + reference_script();
    return std::string();
  }();
  return reason;
}

struct ReferenceRender {
  bool ok = false;
  std::string out;  // the render, or "raise: MSG" / "error: TYPE: MSG" when !ok
};

inline std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// Renders template_path with the JSON object in context_path; err_path receives stderr.
inline ReferenceRender render_reference(const std::string& template_path,
                                        const std::string& context_path, const std::string& now,
                                        const std::string& err_path) {
  auto r = run_command("python3 " + shell_quote(reference_script()) + " " +
                       shell_quote(template_path) + " " + shell_quote(context_path) + " --now " +
                       shell_quote(now) + " 2>" + shell_quote(err_path));
  ReferenceRender rr;
  rr.ok = r.exit_code == 0;
  rr.out = rr.ok ? r.out : slurp(err_path);
  while (!rr.ok && !rr.out.empty() && rr.out.back() == '\n') rr.out.pop_back();
  return rr;
}

// --batch mode: cases_path holds [{"template", "context"}]; returns the script's JSON text.
inline CommandResult render_reference_batch(const std::string& cases_path, const std::string& now) {
  return run_command("python3 " + shell_quote(reference_script()) + " --batch " +
                     shell_quote(cases_path) + " --now " + shell_quote(now));
}

}  // namespace cohort::testing
