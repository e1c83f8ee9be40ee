// Positioned front-end errors carried in absl::Status payloads.
#include "rholang/frontend/diagnostic.h"

#include <cstdio>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"

namespace rnode::rholang {
namespace {

constexpr char kPayloadUrl[] = "rnode.rholang.Diagnostic";

}  // namespace

absl::Status DiagnosticError(absl::StatusCode code, uint32_t line, uint32_t col,
                             const std::string& message) {
  absl::Status status(code, absl::StrCat(line, ":", col, ": ", message));
  status.SetPayload(kPayloadUrl,
                    absl::Cord(absl::StrCat(line, ":", col, ":", message)));
  return status;
}

std::optional<Diagnostic> DiagnosticFromStatus(const absl::Status& status) {
  if (status.ok()) return std::nullopt;
  auto payload = status.GetPayload(kPayloadUrl);
  Diagnostic d;
  if (!payload) {
    d.message = std::string(status.message());
    return d;
  }
  std::string text(*payload);
  unsigned line = 0, col = 0;
  int consumed = 0;
  if (std::sscanf(text.c_str(), "%u:%u:%n", &line, &col, &consumed) >= 2 &&
      consumed > 0) {
    d.line = line;
    d.col = col;
    d.message = text.substr(static_cast<size_t>(consumed));
  } else {
    d.message = std::string(status.message());
  }
  return d;
}

std::string FormatDiagnostic(const std::string& file, const Diagnostic& d) {
  if (d.line == 0) return absl::StrCat(file, ": error: ", d.message);
  return absl::StrCat(file, ":", d.line, ":", d.col, ": error: ", d.message);
}

}  // namespace rnode::rholang
