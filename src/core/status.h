// Status and Result<T>: how every expected failure (bad file, lost peer, timeout,
// malformed request) travels. Bugs use COHORT_CHECK (check.h) instead.
//
// Messages start with the area name ("gguf: ...", "tcp: rank 2 ..."), so a one-line
// error says where it came from. Status is cheap to move; ok() carries no string.
#pragma once

#include <string>
#include <utility>
#include <variant>

#include "core/check.h"

namespace cohort {

enum class StatusCode {
  kOk = 0,
  kInvalidArgument,  // the caller asked for something malformed
  kNotFound,         // a file, key or tensor that is not there
  kCorrupt,          // untrusted bytes that do not parse
  kIoError,          // the OS said no
  kUnsupported,      // valid, but not something we implement
  kOutOfRange,       // a limit (context, memory) was reached
  kTimeout,
  kUnavailable,  // a peer or resource has gone
  kInternal,
};

const char* status_code_name(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;
  Status(StatusCode code, std::string message) : code_(code), message_(std::move(message)) {}

  static Status ok() { return Status(); }
  static Status invalid_argument(std::string m) {
    return {StatusCode::kInvalidArgument, std::move(m)};
  }
  static Status not_found(std::string m) { return {StatusCode::kNotFound, std::move(m)}; }
  static Status corrupt(std::string m) { return {StatusCode::kCorrupt, std::move(m)}; }
  static Status io_error(std::string m) { return {StatusCode::kIoError, std::move(m)}; }
  static Status unsupported(std::string m) { return {StatusCode::kUnsupported, std::move(m)}; }
  static Status out_of_range(std::string m) { return {StatusCode::kOutOfRange, std::move(m)}; }
  static Status timeout(std::string m) { return {StatusCode::kTimeout, std::move(m)}; }
  static Status unavailable(std::string m) { return {StatusCode::kUnavailable, std::move(m)}; }
  static Status internal(std::string m) { return {StatusCode::kInternal, std::move(m)}; }

  bool is_ok() const { return code_ == StatusCode::kOk; }
  StatusCode code() const { return code_; }
  const std::string& message() const { return message_; }
  // "ok" or the message alone (it already names its area).
  std::string to_string() const { return is_ok() ? "ok" : message_; }

 private:
  StatusCode code_ = StatusCode::kOk;
  std::string message_;
};

// Either a value or a non-ok Status. Accessing value() of an error is a bug (checked).
template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : v_(std::move(value)) {}        // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {  // NOLINT: implicit by design
    COHORT_CHECK(!std::get<Status>(v_).is_ok());
  }

  bool is_ok() const { return v_.index() == 0; }
  const Status& status() const {
    static const Status kOkStatus;
    return is_ok() ? kOkStatus : std::get<1>(v_);
  }
  T& value() & {
    COHORT_CHECK_MSG(is_ok(), status().message().c_str());
    return std::get<0>(v_);
  }
  const T& value() const& {
    COHORT_CHECK_MSG(is_ok(), status().message().c_str());
    return std::get<0>(v_);
  }
  T&& value() && {
    COHORT_CHECK_MSG(is_ok(), status().message().c_str());
    return std::get<0>(std::move(v_));
  }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T&& operator*() && { return std::move(*this).value(); }

 private:
  std::variant<T, Status> v_;
};

}  // namespace cohort

#define COHORT_CONCAT_INNER_(a, b) a##b
#define COHORT_CONCAT_(a, b) COHORT_CONCAT_INNER_(a, b)

// Returns the Status from the enclosing function when expr is not ok.
#define COHORT_RETURN_IF_ERROR(expr) \
  do {                               \
    ::cohort::Status _st = (expr);   \
    if (!_st.is_ok()) return _st;    \
  } while (0)

// lhs = value of a Result-valued expr, or return its Status.
#define COHORT_ASSIGN_OR_RETURN(lhs, expr) \
  COHORT_ASSIGN_OR_RETURN_IMPL_(COHORT_CONCAT_(_res_, __LINE__), lhs, expr)
#define COHORT_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.is_ok()) return tmp.status();              \
  lhs = std::move(tmp).value()
