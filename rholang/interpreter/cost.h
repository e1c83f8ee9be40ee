// Phlo accounting: the cost table and the meter that charges it.
//
// The table is ours (costs need not equal the public node's; they must be
// deterministic): docs/costs.md explains every entry. A deploy's cost is the
// same in play and replay and with any thread count because every charge is
// made by deterministic code on a deterministic schedule (see reducer.h).
#ifndef RNODE_RHOLANG_INTERPRETER_COST_H_
#define RNODE_RHOLANG_INTERPRETER_COST_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"

namespace rnode::rholang::interp {

namespace cost {
// Front end: per byte of source, charged before parsing.
inline constexpr int64_t kParsePerByte = 1;
// Process steps.
inline constexpr int64_t kSend = 11;
inline constexpr int64_t kReceive = 11;
inline constexpr int64_t kChannelEval = 11;
inline constexpr int64_t kVarEval = 10;
inline constexpr int64_t kNewBase = 10;
inline constexpr int64_t kNewPerName = 2;
inline constexpr int64_t kMatch = 12;
inline constexpr int64_t kIf = 12;
// Substitution: per IR node rebuilt (a node whose subtree holds a replaced
// variable); untouched subtrees are shared and free.
inline constexpr int64_t kSubstituteNode = 1;
// Expressions.
inline constexpr int64_t kMethodCall = 10;
inline constexpr int64_t kOpCall = 10;  // %% ++ -- and collection + / -
inline constexpr int64_t kSum = 3;      // + - unary -, comparisons
inline constexpr int64_t kCompare = 3;
inline constexpr int64_t kMultiply = 9;    // * / %
inline constexpr int64_t kBoolean = 2;     // and or not
inline constexpr int64_t kLookup = 3;      // get getOrElse contains
inline constexpr int64_t kInsert = 3;      // add set
inline constexpr int64_t kRemove = 3;      // delete
inline constexpr int64_t kPerElement = 1;  // size-dependent work, per element
inline constexpr int64_t kPerByte = 1;     // size-dependent work, per byte
// Storage: per byte of the canonical encoding stored in the space, and per
// event (produce, consume, COMM) recorded in the log.
inline constexpr int64_t kStoragePerByte = 1;
inline constexpr int64_t kEventBase = 32;
inline constexpr int64_t kEventPerChannel = 32;
}  // namespace cost

// Error helpers shared by the interpreter. Codes:
//  * kResourceExhausted with a message starting "out of phlo": the deploy ran
//    out of phlo (IsOutOfPhlo);
//  * kAborted: the deploy called rho:execution:abort (IsUserAbort);
//  * kInvalidArgument: a runtime error of the program (type error, bad
//    method argument, overflow, division by zero, unknown method, ...);
//  * kResourceExhausted (other messages): a named limit (depth, term size,
//    match steps);
//  * kFailedPrecondition: a contract refused (e.g. PoS before genesis), or
//    in replay the status of a divergence (which the event log keeps:
//    rspace::EventLog::divergence());
//  * anything else (kInternal, kDataLoss, kUnavailable, kNotFound: storage
//    faults and broken invariants) is not the program's fault.
absl::Status OutOfPhloError();
bool IsOutOfPhlo(const absl::Status& s);
absl::Status UserAbortError();
bool IsUserAbort(const absl::Status& s);

// Charges phlo against a budget. One meter per unit of work that runs on one
// thread at a time (not thread-safe); the reducer sums meters in a
// deterministic order.
class PhloMeter {
 public:
  // `budget` < 0 means unlimited (system deploys, tools).
  explicit PhloMeter(int64_t budget) : budget_(budget) {}

  // Adds `amount` (>= 0) to the spent total; OutOfPhloError() once the total
  // exceeds the budget (the amount stays counted, so spent() > budget()).
  absl::Status Charge(int64_t amount);

  int64_t spent() const { return spent_; }
  int64_t budget() const { return budget_; }
  bool unlimited() const { return budget_ < 0; }

 private:
  int64_t budget_;
  int64_t spent_ = 0;
};

}  // namespace rnode::rholang::interp

#endif  // RNODE_RHOLANG_INTERPRETER_COST_H_
