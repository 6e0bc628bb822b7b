// Minimal leveled logging to stderr, printf-style. Thread-safe (one write per line).
// The level comes from COHORT_LOG (debug|info|warn|error), default info.
#pragma once

namespace cohort {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarn = 2, kError = 3, kOff = 4 };

LogLevel log_level();
void set_log_level(LogLevel level);
void log_message(LogLevel level, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

}  // namespace cohort

#define COHORT_LOG_DEBUG(...) ::cohort::log_message(::cohort::LogLevel::kDebug, __VA_ARGS__)
#define COHORT_LOG_INFO(...) ::cohort::log_message(::cohort::LogLevel::kInfo, __VA_ARGS__)
#define COHORT_LOG_WARN(...) ::cohort::log_message(::cohort::LogLevel::kWarn, __VA_ARGS__)
#define COHORT_LOG_ERROR(...) ::cohort::log_message(::cohort::LogLevel::kError, __VA_ARGS__)
