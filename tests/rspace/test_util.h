// Helpers for the RSpace tests: byte-string terms and a simple matcher.
#ifndef RNODE_TESTS_RSPACE_TEST_UTIL_H_
#define RNODE_TESTS_RSPACE_TEST_UTIL_H_

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "rspace/deploy_scope.h"
#include "rspace/matcher.h"
#include "rspace/space.h"
#include "rspace/storage/kv_store.h"
#include "tests/test_seed.h"

namespace rnode::rspace::testing {

inline TermPtr T(const std::string& s) { return Term::Make(ToBytes(s)); }
inline std::string S(const TermPtr& t) { return ToString(t->bytes()); }

// Patterns: "*" matches anything; "^abc" matches data starting with "abc";
// "!" makes the matcher fail with Aborted; anything else matches only equal
// bytes. The match result is the datum itself.
class TestMatcher final : public Matcher {
 public:
  absl::StatusOr<std::optional<MatchResult>> Match(
      const Term& pattern, const TermPtr& datum) const override {
    std::string p = ToString(pattern.bytes());
    std::string d = ToString(datum->bytes());
    if (p == "!") return absl::AbortedError("matcher failure");
    bool ok = p == "*" ||
              (p.size() > 0 && p[0] == '^' &&
               d.compare(0, p.size() - 1, p, 1) == 0) ||
              p == d;
    if (!ok) return std::optional<MatchResult>();
    return std::optional<MatchResult>(MatchResult(datum));
  }
};

inline std::string Matched(const BindResult& b) {
  return S(std::static_pointer_cast<const Term>(b.matched));
}

// A space on an in-memory store, with a play log, the test matcher and one
// deploy scope that records every operation made through `ctx`.
struct Fixture {
  InMemoryStore store{3};
  std::unique_ptr<Space> space;
  std::unique_ptr<DeployScope> scope;
  TestMatcher matcher;
  EventLog log;
  OpContext ctx{&log, &matcher};

  Fixture() {
    space = *Space::Open(&store);
    scope = std::make_unique<DeployScope>(*space);
    ctx.scope = scope.get();
  }

  // The one COMM the produce fired, or nullopt if it fired none; an error
  // if it fired several (peeks): use ProduceAll for those.
  absl::StatusOr<std::optional<Comm>> Produce(const std::string& ch,
                                              const std::string& data,
                                              bool persist = false) {
    auto r = ProduceAll(ch, data, persist);
    if (!r.ok()) return r.status();
    if (r->size() > 1) {
      return absl::InternalError("produce fired " + std::to_string(r->size()) +
                                 " COMMs: use ProduceAll");
    }
    if (r->empty()) return std::optional<Comm>();
    return std::optional<Comm>(std::move(r->front()));
  }
  absl::StatusOr<std::vector<Comm>> ProduceAll(const std::string& ch,
                                               const std::string& data,
                                               bool persist = false) {
    return space->Produce(ctx, T(ch), T(data), persist);
  }
  absl::StatusOr<std::optional<Comm>> Consume(
      const std::vector<std::string>& chs, const std::vector<std::string>& ps,
      const std::string& k, bool persist = false, bool peek = false) {
    std::vector<TermPtr> c, p;
    for (const auto& x : chs) c.push_back(T(x));
    for (const auto& x : ps) p.push_back(T(x));
    return space->Consume(ctx, c, p, T(k), persist, peek);
  }
  std::vector<std::string> Data(const std::string& ch) {
    std::vector<std::string> out;
    absl::StatusOr<std::vector<Datum>> data = space->GetData(T(ch)->hash());
    if (!data.ok()) return {"<error: " + data.status().ToString() + ">"};
    for (const auto& d : *data) out.push_back(S(d.value));
    return out;
  }
  size_t Conts(const std::vector<std::string>& chs) {
    std::vector<TermPtr> c;
    for (const auto& x : chs) c.push_back(T(x));
    return space->GetContinuations(c)->size();
  }
  size_t Joins(const std::string& ch) {
    return space->GetJoins(T(ch)->hash())->size();
  }
};

// Debian's RocksDB is not built with ThreadSanitizer; its internal
// synchronisation shows up as races, so RocksDB-backed tests skip under TSAN
// (they run in the other presets).
#if defined(__SANITIZE_THREAD__)
inline constexpr bool kUnderTsan = true;
#else
inline constexpr bool kUnderTsan = false;
#endif
#define RNODE_SKIP_ROCKSDB_UNDER_TSAN()                   \
  do {                                                    \
    if (::rnode::rspace::testing::kUnderTsan) {           \
      GTEST_SKIP() << "RocksDB is not TSAN-instrumented"; \
    }                                                     \
  } while (false)

// Seed for randomized tests (tests/test_seed.h): RNODE_TEST_SEED if set, else
// the fixed default; printed under the running test's name.
using ::rnode::testing::TestSeed;

}  // namespace rnode::rspace::testing

#endif  // RNODE_TESTS_RSPACE_TEST_UTIL_H_
