// RETURN_IF_ERROR and ASSIGN_OR_RETURN over absl::Status / absl::StatusOr,
// which Debian's abseil does not ship.
#ifndef RNODE_UTIL_STATUS_MACROS_H_
#define RNODE_UTIL_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

// Evaluates `expr` (an absl::Status); returns it from the enclosing function
// if it is not OK.
#define RETURN_IF_ERROR(expr)                                        \
  do {                                                               \
    ::absl::Status rnode_status_internal_ = (expr);                  \
    if (!rnode_status_internal_.ok()) return rnode_status_internal_; \
  } while (false)

#define RNODE_STATUS_CONCAT_INNER_(a, b) a##b
#define RNODE_STATUS_CONCAT_(a, b) RNODE_STATUS_CONCAT_INNER_(a, b)

// ASSIGN_OR_RETURN(lhs, expr): evaluates `expr` (an absl::StatusOr<T>); on
// error returns its status, else moves the value into `lhs`, which may be a
// declaration (`auto x`, `const Foo& y`) or an existing lvalue.
#define ASSIGN_OR_RETURN(lhs, expr)                                       \
  RNODE_ASSIGN_OR_RETURN_IMPL_(                                           \
      RNODE_STATUS_CONCAT_(rnode_statusor_internal_, __LINE__), lhs, expr)

#define RNODE_ASSIGN_OR_RETURN_IMPL_(statusor, lhs, expr) \
  auto statusor = (expr);                                 \
  if (!statusor.ok()) return std::move(statusor).status(); \
  lhs = *std::move(statusor)

#endif  // RNODE_UTIL_STATUS_MACROS_H_
