// Status and StatusOr: how every StableRT layer reports failure.
//
// A Status is either OK (no allocation, a null pointer) or carries an error code
// (the absl/PJRT numbering) and a message. Functions that can fail on user input
// return Status or StatusOr<T>; broken internal invariants use STABLERT_CHECK instead.
// Status values are immutable and safe to copy between threads.
#pragma once

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace stablert {

// Numbering equals absl::StatusCode and PJRT_Error_Code.
enum class StatusCode : int {
  kOk = 0,
  kCancelled = 1,
  kUnknown = 2,
  kInvalidArgument = 3,
  kDeadlineExceeded = 4,
  kNotFound = 5,
  kAlreadyExists = 6,
  kPermissionDenied = 7,
  kResourceExhausted = 8,
  kFailedPrecondition = 9,
  kAborted = 10,
  kOutOfRange = 11,
  kUnimplemented = 12,
  kInternal = 13,
  kUnavailable = 14,
  kDataLoss = 15,
  kUnauthenticated = 16,
};

std::string_view StatusCodeName(StatusCode code);

class [[nodiscard]] Status {
 public:
  Status() = default;  // OK
  Status(StatusCode code, std::string message);

  bool ok() const { return rep_ == nullptr; }
  StatusCode code() const { return rep_ ? rep_->code : StatusCode::kOk; }
  std::string_view message() const { return rep_ ? std::string_view(rep_->message) : ""; }
  // "INVALID_ARGUMENT: message", or "OK".
  std::string ToString() const;
  // A copy whose message is `prefix + ": " + message()`; OK stays OK.
  Status WithPrefix(std::string_view prefix) const;
  void IgnoreError() const {}

 private:
  struct Rep {
    StatusCode code;
    std::string message;
  };
  std::shared_ptr<const Rep> rep_;
};

inline Status OkStatus() { return Status(); }
Status InvalidArgument(std::string message);
Status Unimplemented(std::string message);
Status Internal(std::string message);
Status NotFound(std::string message);
Status FailedPrecondition(std::string message);
Status OutOfRange(std::string message);
Status DeadlineExceeded(std::string message);
Status ResourceExhausted(std::string message);
Status DataLoss(std::string message);
Status Cancelled(std::string message);
Status Unavailable(std::string message);

// Holds a T or a non-OK Status. Accessing value() of an error is a bug (aborts).
template <typename T>
class [[nodiscard]] StatusOr {
 public:
  StatusOr(const Status& status) : status_(status) {  // NOLINT: implicit by design
    if (status_.ok()) status_ = Internal("StatusOr constructed from an OK status without a value");
  }
  StatusOr(T value) : value_(std::move(value)) {}  // NOLINT: implicit by design
  template <typename U,
            typename = std::enable_if_t<std::is_convertible_v<U&&, T> && !std::is_same_v<std::decay_t<U>, T> &&
                                        !std::is_same_v<std::decay_t<U>, Status>>>
  StatusOr(U&& value) : value_(T(std::forward<U>(value))) {}  // NOLINT

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { CheckOk(); return *value_; }
  const T& value() const& { CheckOk(); return *value_; }
  T&& value() && { CheckOk(); return std::move(*value_); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  void CheckOk() const {
    if (!value_.has_value()) std::abort();
  }
  Status status_;
  std::optional<T> value_;
};

[[noreturn]] void CheckFailed(const char* file, int line, const char* condition);

}  // namespace stablert

#define STABLERT_CONCAT_INNER(a, b) a##b
#define STABLERT_CONCAT(a, b) STABLERT_CONCAT_INNER(a, b)

#define STABLERT_RETURN_IF_ERROR(...)                    \
  do {                                                   \
    ::stablert::Status _stablert_status = (__VA_ARGS__); \
    if (!_stablert_status.ok()) return _stablert_status; \
  } while (0)

#define STABLERT_ASSIGN_OR_RETURN_IMPL(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return tmp.status();                  \
  lhs = std::move(tmp).value()

#define STABLERT_ASSIGN_OR_RETURN(lhs, ...) \
  STABLERT_ASSIGN_OR_RETURN_IMPL(STABLERT_CONCAT(_stablert_or_, __LINE__), lhs, (__VA_ARGS__))

// Internal invariant: aborts with file and line. Never for conditions user input can cause.
#define STABLERT_CHECK(cond) \
  do {                       \
    if (!(cond)) ::stablert::CheckFailed(__FILE__, __LINE__, #cond); \
  } while (0)
