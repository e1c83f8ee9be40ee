// Positioned front-end errors: a Diagnostic travels inside an absl::Status so
// every parse or normalize failure can be printed as FILE:LINE:COL.
#ifndef RNODE_RHOLANG_DIAGNOSTIC_H_
#define RNODE_RHOLANG_DIAGNOSTIC_H_

#include <cstdint>
#include <optional>
#include <string>

#include "absl/status/status.h"

namespace rnode::rholang {

struct Diagnostic {
  uint32_t line = 0;  // 1-based; 0 when no position applies
  uint32_t col = 0;   // 1-based byte column
  std::string message;
};

// Builds an error status with `code` (kInvalidArgument for malformed input,
// kResourceExhausted for limits) whose message is "LINE:COL: MESSAGE" and
// whose payload carries the position for DiagnosticFromStatus.
absl::Status DiagnosticError(absl::StatusCode code, uint32_t line, uint32_t col,
                             const std::string& message);

// Recovers the diagnostic from a status built by DiagnosticError; for any
// other non-OK status returns {0, 0, status.message()}; nullopt for OK.
std::optional<Diagnostic> DiagnosticFromStatus(const absl::Status& status);

// "FILE:LINE:COL: error: MESSAGE" (or "FILE: error: MESSAGE" without a
// position), the form the `rholang` tool prints.
std::string FormatDiagnostic(const std::string& file, const Diagnostic& d);

}  // namespace rnode::rholang

#endif  // RNODE_RHOLANG_DIAGNOSTIC_H_
