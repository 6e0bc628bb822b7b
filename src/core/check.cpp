#include "core/check.h"

#include <cstdio>
#include <cstdlib>

namespace cohort::detail {

void check_failed(const char* file, int line, const char* expr, const char* msg) {
  std::fprintf(stderr, "%s:%d: COHORT_CHECK(%s) failed%s%s\n", file, line, expr, msg ? ": " : "",
               msg ? msg : "");
  std::fflush(stderr);
  std::abort();
}

}  // namespace cohort::detail
