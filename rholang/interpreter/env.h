// The environment of bound variables during evaluation.
#ifndef RNODE_RHOLANG_INTERPRETER_ENV_H_
#define RNODE_RHOLANG_INTERPRETER_ENV_H_

#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "rholang/frontend/ir.h"

namespace rnode::rholang::interp {

// Values of the bound variables in scope, innermost last. Every value is a
// closed term (no bound variables of its own): values come from COMM data,
// match captures and `new` names, all substituted before they are bound.
//
// De Bruijn convention (docs/formats/rholang_ir.md): index 0 is the most
// recently bound variable. A binder of n variables (receive captures bind by
// bind in level order, `new` names in declaration order, match captures in
// level order) pushes its values in that order, so its last variable gets
// index 0.
//
// An Env is a small value (envs hold only the captures of one binder chain
// because bodies are substituted when they are stored); copying is cheap.
class Env {
 public:
  Env() = default;
  explicit Env(std::vector<ir::ParPtr> values) : values_(std::move(values)) {}

  // The value of bound variable `index`, or nullptr if the index is outside
  // this env (a bug in the caller or a malformed term).
  const ir::ParPtr* Get(uint32_t index) const {
    if (index >= values_.size()) return nullptr;
    return &values_[values_.size() - 1 - index];
  }
  size_t size() const { return values_.size(); }
  bool empty() const { return values_.empty(); }

  // This env with `values` bound on top (values.back() becomes index 0).
  Env Extended(std::span<const ir::ParPtr> values) const {
    Env e = *this;
    e.values_.insert(e.values_.end(), values.begin(), values.end());
    return e;
  }

 private:
  std::vector<ir::ParPtr> values_;
};

}  // namespace rnode::rholang::interp

#endif  // RNODE_RHOLANG_INTERPRETER_ENV_H_
