// Compiling Rholang source and building small terms in tests, for the
// front end's, the interpreter's and the node's suites.
#ifndef RNODE_TESTS_RHOLANG_COMPILE_UTIL_H_
#define RNODE_TESTS_RHOLANG_COMPILE_UTIL_H_

#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "rholang/frontend/ir.h"
#include "rholang/frontend/normalizer.h"

namespace rnode::testing {

// The source's IR; a compile error fails the calling test and gives Nil.
inline rholang::ir::ParPtr MustCompile(const std::string& src) {
  absl::StatusOr<rholang::ir::ParPtr> p = rholang::Compile(src);
  EXPECT_TRUE(p.ok()) << src << ": " << p.status();
  return p.ok() ? *p : rholang::ir::Nil();
}

// The process holding only the integer `v`, or only the string `s`.
inline rholang::ir::ParPtr IntPar(int64_t v) {
  return rholang::ir::ParOf(rholang::ir::Expr::Int(v));
}
inline rholang::ir::ParPtr StrPar(std::string s) {
  return rholang::ir::ParOf(rholang::ir::Expr::String(std::move(s)));
}

}  // namespace rnode::testing

#endif  // RNODE_TESTS_RHOLANG_COMPILE_UTIL_H_
