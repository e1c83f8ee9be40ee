// The pattern matcher interface the space calls while holding channel locks.
#ifndef RNODE_RSPACE_MATCHER_H_
#define RNODE_RSPACE_MATCHER_H_

#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "rspace/term.h"

namespace rnode::rspace {

// The matcher's output for one bind (the interpreter's bindings), opaque to
// RSpace and handed back unchanged in the COMM result.
using MatchResult = std::shared_ptr<const void>;

// Implementations must be deterministic (the same pattern and datum always
// give the same answer) and safe to call from several threads at once; they
// run under channel locks, so they must not call back into the space.
class Matcher {
 public:
  virtual ~Matcher() = default;
  // nullopt: no match. An error (e.g. the interpreter ran out of phlo) aborts
  // the operation: the space is left unchanged except that the operation's
  // IO event is already in the event log.
  virtual absl::StatusOr<std::optional<MatchResult>> Match(
      const Term& pattern, const TermPtr& datum) const = 0;
};

}  // namespace rnode::rspace

#endif  // RNODE_RSPACE_MATCHER_H_
