#include "core/log.h"

#include <algorithm>
#include <atomic>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

namespace cohort {
namespace {

LogLevel level_from_env() {
  const char* v = std::getenv("COHORT_LOG");
  if (!v) return LogLevel::kInfo;
  if (!std::strcmp(v, "debug")) return LogLevel::kDebug;
  if (!std::strcmp(v, "warn")) return LogLevel::kWarn;
  if (!std::strcmp(v, "error")) return LogLevel::kError;
  if (!std::strcmp(v, "off")) return LogLevel::kOff;
  return LogLevel::kInfo;
}

std::atomic<LogLevel>& level_ref() {
  static std::atomic<LogLevel> level{level_from_env()};
  return level;
}

}  // namespace

LogLevel log_level() { return level_ref().load(std::memory_order_relaxed); }
void set_log_level(LogLevel level) { level_ref().store(level); }

void log_message(LogLevel level, const char* fmt, ...) {
  if (level < log_level()) return;
  static const char* const kTags[] = {"debug", "info", "warn", "error"};
  char buf[2048];
  int n = std::snprintf(buf, sizeof(buf), "[%s] ", kTags[static_cast<int>(level)]);
  va_list ap;
  va_start(ap, fmt);
  int m = std::vsnprintf(buf + n, sizeof(buf) - n - 1, fmt, ap);
  va_end(ap);
  size_t len = static_cast<size_t>(n) + (m < 0 ? 0 : std::min<size_t>(m, sizeof(buf) - n - 2));
  buf[len++] = '\n';
  std::fwrite(buf, 1, len, stderr);  // one call per line keeps lines whole across threads
}

}  // namespace cohort
