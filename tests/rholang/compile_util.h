// Compiling Rholang source in tests, for the front end's and the
// interpreter's suites.
#ifndef RNODE_TESTS_RHOLANG_COMPILE_UTIL_H_
#define RNODE_TESTS_RHOLANG_COMPILE_UTIL_H_

#include <string>

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

}  // namespace rnode::testing

#endif  // RNODE_TESTS_RHOLANG_COMPILE_UTIL_H_
