#include "rholang/interpreter/cost.h"

#include <limits>

#include "absl/strings/match.h"

namespace rnode::rholang::interp {

namespace {
constexpr std::string_view kOutOfPhlo = "out of phlo";
}  // namespace

absl::Status OutOfPhloError() {
  return absl::ResourceExhaustedError(std::string(kOutOfPhlo));
}

bool IsOutOfPhlo(const absl::Status& s) {
  return s.code() == absl::StatusCode::kResourceExhausted &&
         absl::StartsWith(std::string(s.message()), std::string(kOutOfPhlo));
}

absl::Status UserAbortError() {
  return absl::AbortedError("deploy aborted by rho:execution:abort");
}

bool IsUserAbort(const absl::Status& s) {
  return s.code() == absl::StatusCode::kAborted;
}

absl::Status PhloMeter::Charge(int64_t amount) {
  if (amount < 0) return absl::InternalError("negative phlo charge");
  if (amount > std::numeric_limits<int64_t>::max() - spent_) {
    spent_ = std::numeric_limits<int64_t>::max();
  } else {
    spent_ += amount;
  }
  if (budget_ >= 0 && spent_ > budget_) return OutOfPhloError();
  return absl::OkStatus();
}

}  // namespace rnode::rholang::interp
