// Rholang's syntactic sugar as plain syntax (reference rholang.md §1.2,
// §3.2): synchronous sends, sequential and complex receive sources, and
// `let`, rewritten into synthetic nodes the normalizer then normalizes.
#ifndef RNODE_RHOLANG_INTERNAL_DESUGAR_H_
#define RNODE_RHOLANG_INTERNAL_DESUGAR_H_

#include <cstdint>
#include <string>
#include <vector>

#include "rholang/frontend/ast.h"

namespace rnode::rholang::internal {

// Rewrites one program's sugar. The nodes it returns are new ones, owned by
// the desugarer (they live as long as it does), or nodes of the input;
// fresh names contain '#', so they never capture a user's identifier. Not
// thread-safe.
class Desugarer {
 public:
  // `x!?(args); P` => new r in { x!(*r, args) | for (_ <- r) { P } }.
  const ast::Proc* SendSync(const ast::Proc& p);
  // for (a ; b ; c) { P } => for (a) { for (b) { for (c) { P } } }.
  const ast::Proc* Sequential(const ast::Proc& p);
  // `x?!` and `x!?(args)` sources (reference rholang.md §1.2).
  const ast::Proc* ComplexSources(const ast::Proc& p);
  // let (reference rholang.md §3.2): sequential declarations become nested
  // matches on lists; concurrent ones become sends on fresh names and
  // nested receives.
  const ast::Proc* Let(const ast::Proc& p);

 private:
  std::string FreshName();
  ast::Name* VarName(const std::string& var, ast::Pos pos);
  ast::Proc* NewNode(ast::ProcKind kind, ast::Pos pos);
  ast::Proc* ParOf(std::vector<const ast::Proc*> procs, ast::Pos pos);
  ast::Proc* Send(const ast::Name* chan, std::vector<const ast::Proc*> args,
                  ast::Pos pos);
  ast::Proc* Eval(const ast::Name* name, ast::Pos pos);
  ast::Proc* ForOf(std::vector<std::vector<ast::Bind>> receipts,
                   const ast::Proc* body, ast::Pos pos);
  ast::Proc* NewOf(const std::vector<std::string>& names, const ast::Proc* body,
                   ast::Pos pos);

  ast::Arena scratch_;
  uint32_t fresh_counter_ = 0;
};

}  // namespace rnode::rholang::internal

#endif  // RNODE_RHOLANG_INTERNAL_DESUGAR_H_
