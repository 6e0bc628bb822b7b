// COHORT_CHECK: invariants that only a bug can break. Aborts with file and line in every
// build type (never compiled out, unlike assert). Never use it on untrusted bytes:
// those get a Status.
#pragma once

namespace cohort::detail {
[[noreturn]] void check_failed(const char* file, int line, const char* expr, const char* msg);
}  // namespace cohort::detail

#define COHORT_CHECK(cond)                                                \
  do {                                                                    \
    if (!(cond)) [[unlikely]]                                             \
      ::cohort::detail::check_failed(__FILE__, __LINE__, #cond, nullptr); \
  } while (0)

#define COHORT_CHECK_MSG(cond, msg)                                     \
  do {                                                                  \
    if (!(cond)) [[unlikely]]                                           \
      ::cohort::detail::check_failed(__FILE__, __LINE__, #cond, (msg)); \
  } while (0)
