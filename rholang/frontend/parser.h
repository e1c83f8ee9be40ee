// Rholang parser: source text to an AST (rholang/frontend/ast.h) by recursive descent
// with precedence climbing for the operators.
#ifndef RNODE_RHOLANG_PARSER_H_
#define RNODE_RHOLANG_PARSER_H_

#include <memory>
#include <string_view>

#include "absl/status/statusor.h"
#include "rholang/frontend/ast.h"

namespace rnode::rholang {

// A parsed program: the root process and the arena that owns every node.
struct ParsedProgram {
  std::unique_ptr<ast::Arena> arena;
  const ast::Proc* root = nullptr;
};

// Parses one Rholang program (a single top-level process). On failure
// returns kInvalidArgument with a Diagnostic (diagnostic.h) at the first
// offending token saying what was expected, including "unsupported" errors
// for later public-node features (PathMaps, `select`, `where` guards, new
// numeric literal types); kResourceExhausted when the source is larger than
// kMaxSourceBytes or nests deeper than kMaxNestingDepth. Never crashes on
// any byte sequence. Thread-safe (pure).
absl::StatusOr<ParsedProgram> Parse(std::string_view source);

}  // namespace rnode::rholang

#endif  // RNODE_RHOLANG_PARSER_H_
