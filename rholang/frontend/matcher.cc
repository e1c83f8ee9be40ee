// Spatial matcher over the canonical IR (see matcher.h for the semantics).
#include "rholang/frontend/matcher.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "rholang/frontend/internal/bipartite_match.h"
#include "rholang/frontend/internal/par_groups.h"
#include "rholang/frontend/internal/sized_subsets.h"
#include "util/status_macros.h"

namespace rnode::rholang {
namespace {

using internal::AddGroupItem;
using internal::AssignmentProblem;
using internal::Counts;
using internal::Filled;
using internal::GroupItem;
using internal::GroupSize;
using internal::kAnyCount;
using internal::kBundleGroup;
using internal::kConnectiveGroup;
using internal::kExprGroup;
using internal::kGroupCount;
using internal::kIfGroup;
using internal::kMatchGroup;
using internal::kNewGroup;
using internal::kReceiveGroup;
using internal::kSendGroup;
using internal::kUnforgeableGroup;
using internal::Plus;
using internal::SizedSubsets;
using ir::Connective;
using ir::ConnectiveKind;
using ir::Expr;
using ir::ExprKind;
using ir::Par;
using ir::ParPtr;
using ir::Var;
using ir::VarKind;

// Least and greatest counts of the target components a pattern can take.
struct Bounds {
  Counts min = Filled(0);
  Counts max = Filled(0);
};

// Target components still to be placed, per group: indices into the
// target Par's group vectors, in canonical order.
using Remaining = std::array<std::vector<uint32_t>, kGroupCount>;

size_t Total(const Remaining& r) {
  size_t n = 0;
  for (const auto& v : r) n += v.size();
  return n;
}

ParPtr CopyPar(const Par& p) { return ir::ParBuilder().AddAll(p).Build(); }

// A Par pattern split for matching.
struct ParPattern {
  // Structural components per group (indices into the pattern's vectors):
  // everything except top-level free variables, wildcards and connectives.
  std::array<std::vector<uint32_t>, kGroupCount> rows;
  // The top-level free variable with the lowest level: it captures the
  // leftovers. Other top-level free variables stay unbound.
  std::optional<Var> rest;
  // A top-level wildcard or free variable: leftovers are allowed.
  bool open = false;
  std::vector<const Connective*> connectives;  // canonical order
};

// Bindings made by one isolated sub-match: (variable, value).
using Delta = std::vector<std::pair<uint32_t, ParPtr>>;

class Matcher {
 public:
  Matcher(uint32_t free_count, uint64_t max_steps)
      : bindings_(free_count), max_steps_(max_steps) {}

  // `t_ptr`, when given, owns `t`: a variable capturing all of `t` shares
  // it instead of rebuilding it.
  absl::StatusOr<bool> MatchPar(const Par& t, const Par& p,
                                const ParPtr* t_ptr = nullptr);
  absl::StatusOr<bool> MatchPar(const ParPtr& t, const Par& p) {
    return MatchPar(*t, p, &t);
  }
  Bindings TakeBindings() { return std::move(bindings_); }

 private:
  // One Par match in progress.
  struct ParMatch {
    const Par& t;
    const ParPtr* t_ptr;
    const Par& p;
    const ParPattern& pat;
  };

  // Charges `units` work units (one per Par comparison and candidate
  // tried, plus one per component sorted into a sub-Par).
  absl::Status Step(uint64_t units = 1) {
    steps_ += units;
    if (steps_ > max_steps_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("spatial match exceeded ", max_steps_, " steps"));
    }
    return absl::OkStatus();
  }

  // Inside a `\/` or `~` operand nothing is bound: the bindings would be
  // discarded, and the normalizer numbers those operands' free variables
  // in a fresh scope, so their indices need not fit free_count.
  bool Discarding() const { return discarding_ > 0; }

  absl::Status CheckIndex(const Var& v) const {
    if (Discarding()) return absl::OkStatus();
    if (v.kind == VarKind::kFree && v.index >= bindings_.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("free variable ", v.index, " out of range (",
                       bindings_.size(), " free variables)"));
    }
    return absl::OkStatus();
  }

  // Bindings are undone through a trail: Mark() before a tentative match,
  // UndoTo(mark) to forget what it bound.
  absl::Status Bind(const Var& v, ParPtr value) {
    if (v.kind != VarKind::kFree) return absl::OkStatus();
    RETURN_IF_ERROR(CheckIndex(v));
    SetBinding(v.index, std::move(value));
    return absl::OkStatus();
  }
  void SetBinding(uint32_t index, ParPtr value) {
    if (Discarding()) return;
    trail_.emplace_back(index, std::move(bindings_[index]));
    bindings_[index] = std::move(value);
  }
  size_t Mark() const { return trail_.size(); }
  void UndoTo(size_t mark) {
    while (trail_.size() > mark) {
      bindings_[trail_.back().first] = std::move(trail_.back().second);
      trail_.pop_back();
    }
  }
  // What was bound since `mark` (call before UndoTo(mark)).
  Delta BoundSince(size_t mark) const {
    Delta d;
    for (size_t k = mark; k < trail_.size(); ++k) {
      d.emplace_back(trail_[k].first, bindings_[trail_[k].first]);
    }
    return d;
  }
  void Apply(const Delta& d) {
    for (const auto& [index, value] : d) SetBinding(index, value);
  }

  absl::StatusOr<ParPattern> Split(const Par& p) const;
  absl::StatusOr<Bounds> ParBounds(const Par& p);
  absl::StatusOr<Bounds> ConnectiveBounds(const Connective& c);
  absl::StatusOr<bool> MatchConnectives(const ParMatch& m);
  absl::StatusOr<bool> MatchStructure(const ParMatch& m, const Remaining& rem);
  absl::StatusOr<bool> MatchConnective(const ParPtr& t, const Connective& c);
  absl::StatusOr<bool> MatchComponent(int group, const Par& t, size_t ti,
                                      const Par& p, size_t pi);
  absl::StatusOr<bool> MatchAll(const std::vector<ParPtr>& ts,
                                const std::vector<ParPtr>& ps);
  absl::StatusOr<bool> MatchSend(const ir::Send& t, const ir::Send& p);
  absl::StatusOr<bool> MatchReceive(const ir::Receive& t, const ir::Receive& p);
  absl::StatusOr<bool> MatchNew(const ir::New& t, const ir::New& p);
  absl::StatusOr<bool> MatchMatch(const ir::Match& t, const ir::Match& p);
  absl::StatusOr<bool> MatchIf(const ir::If& t, const ir::If& p);
  absl::StatusOr<bool> MatchExpr(const Expr& t, const Expr& p);
  absl::StatusOr<bool> MatchList(const Expr& t, const Expr& p);
  absl::StatusOr<bool> MatchCollection(const Expr& t, const Expr& p);

  // Runs `match` in isolation: on success returns true and stores what it
  // bound in `out` (nothing stays bound either way).
  template <typename F>
  absl::StatusOr<bool> Isolated(F&& match, Delta& out) {
    const size_t mark = Mark();
    absl::StatusOr<bool> ok = match();
    if (ok.ok() && *ok) out = BoundSince(mark);
    UndoTo(mark);
    return ok;
  }

  Bindings bindings_;
  std::vector<std::pair<uint32_t, ParPtr>> trail_;  // (variable, old value)
  int discarding_ = 0;  // depth of `\/` / `~` operands being matched
  uint64_t steps_ = 0;
  uint64_t max_steps_;
};

absl::StatusOr<ParPattern> Matcher::Split(const Par& p) const {
  ParPattern pat;
  for (int g = 0; g < kGroupCount; ++g) {
    const size_t n = GroupSize(p, g);
    for (size_t i = 0; i < n; ++i) {
      if (g == kConnectiveGroup) {
        const Connective& c = *p.connectives[i];
        if (c.kind == ConnectiveKind::kVarRef) {
          return absl::UnimplementedError(
              "var-ref connective in a pattern (substitute first)");
        }
        pat.connectives.push_back(&c);
        continue;
      }
      if (g == kExprGroup && p.exprs[i]->kind == ExprKind::kVar &&
          p.exprs[i]->var.kind != VarKind::kBound) {
        const Var& v = p.exprs[i]->var;
        RETURN_IF_ERROR(CheckIndex(v));
        pat.open = true;
        if (v.kind == VarKind::kFree &&
            (!pat.rest.has_value() || v.index < pat.rest->index)) {
          pat.rest = v;
        }
        continue;
      }
      pat.rows[g].push_back(static_cast<uint32_t>(i));
    }
  }
  return pat;
}

// The public node's ParCount rule: structural components count exactly; a
// free variable or wildcard lifts the maximum; connectives add their
// bounds.
absl::StatusOr<Bounds> Matcher::ParBounds(const Par& p) {
  RETURN_IF_ERROR(Step());
  Bounds b;
  bool open = false;
  for (int g = 0; g < kGroupCount; ++g) {
    if (g == kConnectiveGroup) continue;
    b.min[g] = static_cast<int64_t>(GroupSize(p, g));
  }
  for (const ir::ExprPtr& e : p.exprs) {
    if (e->kind == ExprKind::kVar && e->var.kind != VarKind::kBound) {
      --b.min[kExprGroup];
      open = true;
    }
  }
  b.max = open ? Filled(kAnyCount) : b.min;
  for (const ir::ConnectivePtr& c : p.connectives) {
    ASSIGN_OR_RETURN(Bounds cb, ConnectiveBounds(*c));
    b.min = Plus(b.min, cb.min);
    b.max = Plus(b.max, cb.max);
  }
  return b;
}

absl::StatusOr<Bounds> Matcher::ConnectiveBounds(const Connective& c) {
  Bounds b;
  switch (c.kind) {
    case ConnectiveKind::kAnd:
      b.max = Filled(kAnyCount);
      for (const ParPtr& q : c.ps) {
        ASSIGN_OR_RETURN(Bounds qb, ParBounds(*q));
        for (int g = 0; g < kGroupCount; ++g) {
          b.min[g] = std::max(b.min[g], qb.min[g]);
          b.max[g] = std::min(b.max[g], qb.max[g]);
        }
      }
      return b;
    case ConnectiveKind::kOr:
      b.min = Filled(kAnyCount);
      for (const ParPtr& q : c.ps) {
        ASSIGN_OR_RETURN(Bounds qb, ParBounds(*q));
        for (int g = 0; g < kGroupCount; ++g) {
          b.min[g] = std::min(b.min[g], qb.min[g]);
          b.max[g] = std::max(b.max[g], qb.max[g]);
        }
      }
      return b;
    case ConnectiveKind::kNot:
      b.max = Filled(kAnyCount);
      return b;
    case ConnectiveKind::kVarRef:
      return b;
    case ConnectiveKind::kBool:
    case ConnectiveKind::kInt:
    case ConnectiveKind::kString:
    case ConnectiveKind::kUri:
    case ConnectiveKind::kByteArray:
      b.min[kExprGroup] = 1;
      b.max[kExprGroup] = 1;
      return b;
  }
  return absl::InvalidArgumentError("unknown connective kind");
}

absl::StatusOr<bool> Matcher::MatchPar(const Par& t, const Par& p,
                                       const ParPtr* t_ptr) {
  RETURN_IF_ERROR(Step());
  if (!p.connective_used) return t.hash == p.hash;
  // A lone free variable or wildcard (the commonest pattern): what
  // MatchStructure would do, without the bookkeeping.
  if (const Expr* e = p.SingleExpr(); e != nullptr &&
                                      e->kind == ExprKind::kVar &&
                                      e->var.kind != VarKind::kBound) {
    if (e->var.kind == VarKind::kWildcard) return true;
    RETURN_IF_ERROR(CheckIndex(e->var));
    if (!t.locally_free.empty()) return false;
    if (Discarding()) return true;
    SetBinding(e->var.index, t_ptr != nullptr ? *t_ptr : CopyPar(t));
    return true;
  }
  ASSIGN_OR_RETURN(ParPattern pat, Split(p));
  ParMatch m{t, t_ptr, p, pat};
  if (!pat.connectives.empty()) return MatchConnectives(m);
  Remaining all;
  for (int g = 0; g < kGroupCount; ++g) {
    all[g].resize(GroupSize(t, g));
    for (size_t i = 0; i < all[g].size(); ++i) {
      all[g][i] = static_cast<uint32_t>(i);
    }
  }
  return MatchStructure(m, all);
}

// Each connective in turn takes a sub-Par of what the earlier ones left,
// tried in SizedSubsets order per group (sends slowest, conditionals
// fastest) within the public node's ParCount bounds; the structural part
// then matches what is left. A failure further on backtracks to the next
// sub-Par. Iterative over the connectives.
absl::StatusOr<bool> Matcher::MatchConnectives(const ParMatch& m) {
  const std::vector<const Connective*>& conns = m.pat.connectives;
  const size_t n = conns.size();
  // What the structural part needs: exactly its components, or more if a
  // free variable or wildcard takes leftovers.
  Bounds structure;
  for (int g = 0; g < kGroupCount; ++g) {
    structure.min[g] = static_cast<int64_t>(m.pat.rows[g].size());
  }
  structure.max = m.pat.open ? Filled(kAnyCount) : structure.min;
  // own[i]: the bounds of connective i; after[i]: of everything after it.
  std::vector<Bounds> own(n);
  std::vector<Bounds> after(n);
  for (size_t i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(own[i], ConnectiveBounds(*conns[i]));
  }
  after[n - 1] = structure;
  for (size_t i = n - 1; i > 0; --i) {
    after[i - 1].min = Plus(after[i].min, own[i].min);
    after[i - 1].max = Plus(after[i].max, own[i].max);
  }

  struct Level {
    Remaining input;
    std::array<SizedSubsets, kGroupCount> subsets;
    bool exhausted = false;
    bool holding = false;  // the current sub-Par matched; `mark` undoes it
    size_t mark = 0;
  };
  auto make_level = [&](size_t i, Remaining input) {
    Level level;
    level.input = std::move(input);
    for (int g = 0; g < kGroupCount; ++g) {
      const int64_t count = static_cast<int64_t>(level.input[g].size());
      const int64_t lo = std::max(own[i].min[g], count - after[i].max[g]);
      const int64_t hi = std::min(own[i].max[g], count - after[i].min[g]);
      if (hi < 0 || lo > hi) {
        level.exhausted = true;
        break;
      }
      level.subsets[g] =
          SizedSubsets(static_cast<size_t>(count),
                       static_cast<size_t>(std::max<int64_t>(lo, 0)),
                       static_cast<size_t>(hi));
      if (!level.subsets[g].valid()) {
        level.exhausted = true;
        break;
      }
    }
    return level;
  };
  auto advance = [](Level& level) {
    for (int g = kGroupCount - 1; g >= 0; --g) {
      if (level.subsets[g].Next()) return true;
    }
    return false;
  };

  Remaining all;
  for (int g = 0; g < kGroupCount; ++g) {
    all[g].resize(GroupSize(m.t, g));
    for (size_t k = 0; k < all[g].size(); ++k) {
      all[g][k] = static_cast<uint32_t>(k);
    }
  }
  const size_t target_size = Total(all);
  std::vector<Level> levels;
  levels.push_back(make_level(0, std::move(all)));
  while (!levels.empty()) {
    const size_t i = levels.size() - 1;
    Level& level = levels[i];
    if (level.holding) {
      UndoTo(level.mark);
      level.holding = false;
      if (!advance(level)) level.exhausted = true;
    }
    if (level.exhausted) {
      levels.pop_back();
      continue;
    }
    // One unit for the candidate and one per component it sorts.
    RETURN_IF_ERROR(Step(1 + Total(level.input)));
    ir::ParBuilder sub;
    Remaining rest;
    size_t taken = 0;
    for (int g = 0; g < kGroupCount; ++g) {
      const std::vector<bool>& in = level.subsets[g].in_subset();
      for (size_t k = 0; k < level.input[g].size(); ++k) {
        if (in[k]) {
          AddGroupItem(m.t, g, level.input[g][k], sub);
          ++taken;
        } else {
          rest[g].push_back(level.input[g][k]);
        }
      }
    }
    const ParPtr sub_par =
        taken == target_size && m.t_ptr != nullptr ? *m.t_ptr : sub.Build();
    level.mark = Mark();
    ASSIGN_OR_RETURN(bool ok, MatchConnective(sub_par, *conns[i]));
    if (!ok) {
      UndoTo(level.mark);
      if (!advance(level)) level.exhausted = true;
      continue;
    }
    level.holding = true;
    if (i + 1 < n) {
      levels.push_back(make_level(i + 1, std::move(rest)));
      continue;
    }
    ASSIGN_OR_RETURN(bool done, MatchStructure(m, rest));
    if (done) return true;
  }
  return false;
}

// The public node's listMatchSingle, group by group: pattern components
// take distinct target components (AssignTargets, pair results memoised);
// with a rest variable every leftover must have an empty locally_free and
// the leftovers of all groups are bound to it as one Par; with only a
// wildcard leftovers are dropped; otherwise there must be none.
absl::StatusOr<bool> Matcher::MatchStructure(const ParMatch& m,
                                             const Remaining& rem) {
  const bool has_rest = m.pat.rest.has_value();
  Delta binds;
  ir::ParBuilder leftovers;
  size_t leftover_count = 0;
  auto step = [this]() { return Step(); };
  for (int g = 0; g < kGroupCount; ++g) {
    const std::vector<uint32_t>& rows = m.pat.rows[g];
    const std::vector<uint32_t>& targets = rem[g];
    if (rows.size() > targets.size()) return false;
    if (!m.pat.open && rows.size() != targets.size()) return false;
    if (targets.empty()) continue;
    std::vector<int32_t> owner;
    if (rows.empty()) {
      for (uint32_t ti : targets) {
        RETURN_IF_ERROR(Step());
        if (has_rest && !GroupItem(m.t, g, ti).locally_free.empty()) {
          return false;
        }
      }
      owner.assign(targets.size(), internal::kUnassigned);
    } else {
      AssignmentProblem problem;
      problem.rows = rows.size();
      problem.targets = targets.size();
      if (has_rest) {
        problem.slots = targets.size() - rows.size();
        problem.closed.resize(targets.size());
        for (size_t j = 0; j < targets.size(); ++j) {
          problem.closed[j] =
              GroupItem(m.t, g, targets[j]).locally_free.empty();
        }
      }
      bool keyed = false;
      problem.row_keys.resize(rows.size());
      for (size_t i = 0; i < rows.size(); ++i) {
        const ir::NodeInfo& pi = GroupItem(m.p, g, rows[i]);
        if (!pi.connective_used) {
          problem.row_keys[i] = pi.hash;
          keyed = true;
        }
      }
      if (keyed) {
        problem.target_keys.reserve(targets.size());
        for (uint32_t ti : targets) {
          problem.target_keys.push_back(GroupItem(m.t, g, ti).hash);
        }
      } else {
        problem.row_keys.clear();
      }
      std::unordered_map<uint64_t, Delta> deltas;
      auto edge = [&](size_t i, size_t j) -> absl::StatusOr<bool> {
        const ir::NodeInfo& pi = GroupItem(m.p, g, rows[i]);
        const ir::NodeInfo& tj = GroupItem(m.t, g, targets[j]);
        if (!pi.connective_used) return pi.hash == tj.hash;
        Delta d;
        ASSIGN_OR_RETURN(bool ok, Isolated(
                                      [&] {
                                        return MatchComponent(
                                            g, m.t, targets[j], m.p, rows[i]);
                                      },
                                      d));
        if (ok && !d.empty()) deltas[i * targets.size() + j] = std::move(d);
        return ok;
      };
      ASSIGN_OR_RETURN(std::optional<std::vector<int32_t>> result,
                       internal::AssignTargets(problem, edge, step));
      if (!result.has_value()) return false;
      owner = *std::move(result);
      for (size_t j = 0; j < owner.size(); ++j) {
        if (owner[j] < 0) continue;
        auto it =
            deltas.find(static_cast<uint64_t>(owner[j]) * targets.size() + j);
        if (it == deltas.end()) continue;
        binds.insert(binds.end(), it->second.begin(), it->second.end());
      }
    }
    for (size_t j = 0; j < owner.size(); ++j) {
      if (owner[j] >= 0) continue;
      AddGroupItem(m.t, g, targets[j], leftovers);
      ++leftover_count;
    }
  }
  Apply(binds);
  if (has_rest && !Discarding()) {
    ParPtr rest = leftover_count == m.t.ComponentCount() && m.t_ptr != nullptr
                      ? *m.t_ptr
                      : leftovers.Build();
    RETURN_IF_ERROR(Bind(*m.pat.rest, std::move(rest)));
  }
  return true;
}

absl::StatusOr<bool> Matcher::MatchConnective(const ParPtr& t,
                                              const Connective& c) {
  RETURN_IF_ERROR(Step());
  const Expr* single = t->SingleExpr();
  auto single_is = [single](ExprKind k) {
    return single != nullptr && single->kind == k;
  };
  switch (c.kind) {
    case ConnectiveKind::kAnd:
      for (const ParPtr& q : c.ps) {
        ASSIGN_OR_RETURN(bool ok, MatchPar(t, *q));
        if (!ok) return false;
      }
      return true;
    case ConnectiveKind::kOr:
      for (const ParPtr& q : c.ps) {
        ++discarding_;
        absl::StatusOr<bool> ok = MatchPar(t, *q);
        --discarding_;
        if (!ok.ok() || *ok) return ok;
      }
      return false;
    case ConnectiveKind::kNot: {
      ++discarding_;
      absl::StatusOr<bool> ok = MatchPar(t, *c.ps[0]);
      --discarding_;
      if (!ok.ok()) return ok;
      return !*ok;
    }
    case ConnectiveKind::kVarRef:
      return absl::UnimplementedError(
          "var-ref connective in a pattern (substitute first)");
    case ConnectiveKind::kBool:
      return single_is(ExprKind::kBool);
    case ConnectiveKind::kInt:
      return single_is(ExprKind::kInt);
    case ConnectiveKind::kString:
      return single_is(ExprKind::kString);
    case ConnectiveKind::kUri:
      return single_is(ExprKind::kUri);
    case ConnectiveKind::kByteArray:
      return single_is(ExprKind::kByteArray);
  }
  return absl::InvalidArgumentError("unknown connective kind");
}

absl::StatusOr<bool> Matcher::MatchComponent(int group, const Par& t, size_t ti,
                                             const Par& p, size_t pi) {
  switch (group) {
    case kSendGroup:
      return MatchSend(*t.sends[ti], *p.sends[pi]);
    case kReceiveGroup:
      return MatchReceive(*t.receives[ti], *p.receives[pi]);
    case kNewGroup:
      return MatchNew(*t.news[ti], *p.news[pi]);
    case kExprGroup:
      return MatchExpr(*t.exprs[ti], *p.exprs[pi]);
    case kMatchGroup:
      return MatchMatch(*t.matches[ti], *p.matches[pi]);
    case kIfGroup:
      return MatchIf(*t.conditionals[ti], *p.conditionals[pi]);
    case kUnforgeableGroup:
      return t.unforgeables[ti]->hash == p.unforgeables[pi]->hash;
    case kBundleGroup:
      return t.bundles[ti]->hash == p.bundles[pi]->hash;
    default:
      return t.connectives[ti]->hash == p.connectives[pi]->hash;
  }
}

absl::StatusOr<bool> Matcher::MatchAll(const std::vector<ParPtr>& ts,
                                       const std::vector<ParPtr>& ps) {
  if (ts.size() != ps.size()) return false;
  for (size_t i = 0; i < ts.size(); ++i) {
    ASSIGN_OR_RETURN(bool ok, MatchPar(ts[i], *ps[i]));
    if (!ok) return false;
  }
  return true;
}

absl::StatusOr<bool> Matcher::MatchSend(const ir::Send& t, const ir::Send& p) {
  if (t.persistent != p.persistent || t.data.size() != p.data.size()) {
    return false;
  }
  ASSIGN_OR_RETURN(bool chan_ok, MatchPar(t.chan, *p.chan));
  if (!chan_ok) return false;
  return MatchAll(t.data, p.data);
}

// Binds pair up as in the public node: each pattern bind takes a distinct
// target bind with equal patterns, remainder and capture count whose source
// matches (their canonical orders differ when the sources do).
absl::StatusOr<bool> Matcher::MatchReceive(const ir::Receive& t,
                                           const ir::Receive& p) {
  if (t.persistent != p.persistent || t.peek != p.peek ||
      t.bind_count != p.bind_count || t.binds.size() != p.binds.size()) {
    return false;
  }
  std::unordered_map<uint64_t, Delta> deltas;
  const size_t n = t.binds.size();
  auto edge = [&](size_t i, size_t j) -> absl::StatusOr<bool> {
    const ir::ReceiveBind& pb = p.binds[i];
    const ir::ReceiveBind& tb = t.binds[j];
    if (tb.patterns.size() != pb.patterns.size() ||
        tb.remainder != pb.remainder || tb.free_count != pb.free_count) {
      return false;
    }
    for (size_t k = 0; k < tb.patterns.size(); ++k) {
      if (!ir::Equal(tb.patterns[k], pb.patterns[k])) return false;
    }
    Delta d;
    ASSIGN_OR_RETURN(
        bool ok, Isolated([&] { return MatchPar(tb.source, *pb.source); }, d));
    if (ok && !d.empty()) deltas[i * n + j] = std::move(d);
    return ok;
  };
  AssignmentProblem problem;
  problem.rows = n;
  problem.targets = n;
  ASSIGN_OR_RETURN(
      std::optional<std::vector<int32_t>> owner,
      internal::AssignTargets(problem, edge, [this] { return Step(); }));
  if (!owner.has_value()) return false;
  for (size_t j = 0; j < n; ++j) {
    auto it = deltas.find(static_cast<uint64_t>((*owner)[j]) * n + j);
    if (it != deltas.end()) Apply(it->second);
  }
  return MatchPar(t.body, *p.body);
}

absl::StatusOr<bool> Matcher::MatchNew(const ir::New& t, const ir::New& p) {
  if (t.bind_count != p.bind_count || t.uris != p.uris ||
      t.injections.size() != p.injections.size()) {
    return false;
  }
  for (size_t i = 0; i < t.injections.size(); ++i) {
    if (t.injections[i].first != p.injections[i].first ||
        !ir::Equal(t.injections[i].second, p.injections[i].second)) {
      return false;
    }
  }
  return MatchPar(t.body, *p.body);
}

absl::StatusOr<bool> Matcher::MatchMatch(const ir::Match& t,
                                         const ir::Match& p) {
  if (t.cases.size() != p.cases.size()) return false;
  ASSIGN_OR_RETURN(bool target_ok, MatchPar(t.target, *p.target));
  if (!target_ok) return false;
  for (size_t i = 0; i < t.cases.size(); ++i) {
    if (t.cases[i].free_count != p.cases[i].free_count ||
        !ir::Equal(t.cases[i].pattern, p.cases[i].pattern)) {
      return false;
    }
    ASSIGN_OR_RETURN(bool body_ok, MatchPar(t.cases[i].body, *p.cases[i].body));
    if (!body_ok) return false;
  }
  return true;
}

absl::StatusOr<bool> Matcher::MatchIf(const ir::If& t, const ir::If& p) {
  ASSIGN_OR_RETURN(bool cond_ok, MatchPar(t.condition, *p.condition));
  if (!cond_ok) return false;
  ASSIGN_OR_RETURN(bool true_ok, MatchPar(t.if_true, *p.if_true));
  if (!true_ok) return false;
  return MatchPar(t.if_false, *p.if_false);
}

// Element-wise; a remainder takes the tail as a List. A free-variable
// remainder requires every tail element to have an empty locally_free.
absl::StatusOr<bool> Matcher::MatchList(const Expr& t, const Expr& p) {
  if (!p.remainder.has_value()) return MatchAll(t.operands, p.operands);
  if (t.remainder.has_value() || t.operands.size() < p.operands.size()) {
    return false;
  }
  for (size_t i = 0; i < p.operands.size(); ++i) {
    ASSIGN_OR_RETURN(bool ok, MatchPar(t.operands[i], *p.operands[i]));
    if (!ok) return false;
  }
  if (p.remainder->kind != VarKind::kFree) return true;
  std::vector<ParPtr> tail(t.operands.begin() + p.operands.size(),
                           t.operands.end());
  ParPtr tail_par = ir::ParOf(Expr::List(std::move(tail), std::nullopt));
  if (!tail_par->locally_free.empty()) return false;
  RETURN_IF_ERROR(Bind(*p.remainder, std::move(tail_par)));
  return true;
}

// Sets (width 1) and maps (width 2: key, value) as in the public node's
// listMatchSingle over elements: pattern elements take distinct target
// elements (AssignTargets); a free-variable remainder takes the leftovers
// (each with an empty locally_free) as a Set / Map; a wildcard remainder
// drops them; without a remainder the sizes must be equal.
absl::StatusOr<bool> Matcher::MatchCollection(const Expr& t, const Expr& p) {
  const size_t width = p.kind == ExprKind::kMap ? 2 : 1;
  if (t.remainder.has_value()) return false;
  const size_t tlen = t.operands.size() / width;
  const size_t plen = p.operands.size() / width;
  if (plen > tlen) return false;
  if (!p.remainder.has_value() && plen != tlen) return false;
  const bool has_rest =
      p.remainder.has_value() && p.remainder->kind == VarKind::kFree;
  auto closed = [&](size_t j) {
    for (size_t k = 0; k < width; ++k) {
      if (!t.operands[j * width + k]->locally_free.empty()) return false;
    }
    return true;
  };
  std::vector<int32_t> owner(tlen, internal::kUnassigned);
  if (plen > 0) {
    AssignmentProblem problem;
    problem.rows = plen;
    problem.targets = tlen;
    if (has_rest) {
      problem.slots = tlen - plen;
      problem.closed.resize(tlen);
      for (size_t j = 0; j < tlen; ++j) problem.closed[j] = closed(j);
    }
    // A concrete element (set) or key (map) can only take its equal.
    bool keyed = false;
    problem.row_keys.resize(plen);
    for (size_t i = 0; i < plen; ++i) {
      const Par& key = *p.operands[i * width];
      if (!key.connective_used) {
        problem.row_keys[i] = key.hash;
        keyed = true;
      }
    }
    if (keyed) {
      for (size_t j = 0; j < tlen; ++j) {
        problem.target_keys.push_back(t.operands[j * width]->hash);
      }
    } else {
      problem.row_keys.clear();
    }
    std::unordered_map<uint64_t, Delta> deltas;
    auto edge = [&](size_t i, size_t j) -> absl::StatusOr<bool> {
      Delta d;
      ASSIGN_OR_RETURN(
          bool ok, Isolated(
                       [&]() -> absl::StatusOr<bool> {
                         for (size_t k = 0; k < width; ++k) {
                           ASSIGN_OR_RETURN(
                               bool part, MatchPar(t.operands[j * width + k],
                                                   *p.operands[i * width + k]));
                           if (!part) return false;
                         }
                         return true;
                       },
                       d));
      if (ok && !d.empty()) deltas[i * tlen + j] = std::move(d);
      return ok;
    };
    ASSIGN_OR_RETURN(
        std::optional<std::vector<int32_t>> result,
        internal::AssignTargets(problem, edge, [this] { return Step(); }));
    if (!result.has_value()) return false;
    owner = *std::move(result);
    for (size_t j = 0; j < tlen; ++j) {
      if (owner[j] < 0) continue;
      auto it = deltas.find(static_cast<uint64_t>(owner[j]) * tlen + j);
      if (it != deltas.end()) Apply(it->second);
    }
  } else if (has_rest) {
    for (size_t j = 0; j < tlen; ++j) {
      RETURN_IF_ERROR(Step());
      if (!closed(j)) return false;
    }
  }
  if (!has_rest) return true;
  ParPtr rest;
  if (width == 1) {
    std::vector<ParPtr> left;
    for (size_t j = 0; j < tlen; ++j) {
      if (owner[j] < 0) left.push_back(t.operands[j]);
    }
    rest = ir::ParOf(Expr::Set(std::move(left), std::nullopt));
  } else {
    std::vector<std::pair<ParPtr, ParPtr>> left;
    for (size_t j = 0; j < tlen; ++j) {
      if (owner[j] < 0) {
        left.emplace_back(t.operands[2 * j], t.operands[2 * j + 1]);
      }
    }
    rest = ir::ParOf(Expr::Map(std::move(left), std::nullopt));
  }
  RETURN_IF_ERROR(Bind(*p.remainder, std::move(rest)));
  return true;
}

absl::StatusOr<bool> Matcher::MatchExpr(const Expr& t, const Expr& p) {
  if (t.kind != p.kind) return false;
  switch (p.kind) {
    case ExprKind::kVar:
      return t.var == p.var;
    case ExprKind::kList:
      return MatchList(t, p);
    case ExprKind::kTuple:
      return MatchAll(t.operands, p.operands);
    case ExprKind::kSet:
    case ExprKind::kMap:
      return MatchCollection(t, p);
    case ExprKind::kMatches:
      if (t.operands.size() != 2 || p.operands.size() != 2 ||
          !ir::Equal(t.operands[1], p.operands[1])) {
        return false;
      }
      return MatchPar(t.operands[0], *p.operands[0]);
    case ExprKind::kMethod: {
      if (t.text != p.text) return false;
      ASSIGN_OR_RETURN(bool target_ok, MatchPar(t.target, *p.target));
      if (!target_ok) return false;
      return MatchAll(t.operands, p.operands);
    }
    default:
      if (ir::IsGround(p.kind)) return t.hash == p.hash;
      return MatchAll(t.operands, p.operands);
  }
}

}  // namespace

absl::StatusOr<std::optional<Bindings>> SpatialMatch(
    const ir::Par& target, const ir::Par& pattern, uint32_t free_count,
    const MatchOptions& options) {
  Matcher matcher(free_count, options.max_steps);
  ASSIGN_OR_RETURN(bool ok, matcher.MatchPar(target, pattern));
  if (!ok) return std::optional<Bindings>();
  return std::optional<Bindings>(matcher.TakeBindings());
}

}  // namespace rnode::rholang
