// Spatial matcher over the canonical IR (see matcher.h for the scope).
#include "rholang/matcher.h"

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "util/status_macros.h"

namespace rnode::rholang {
namespace {

using ir::Connective;
using ir::ConnectiveKind;
using ir::Expr;
using ir::ExprKind;
using ir::Par;
using ir::ParPtr;
using ir::Var;
using ir::VarKind;

enum Group : int {
  kSendGroup,
  kReceiveGroup,
  kNewGroup,
  kExprGroup,
  kMatchGroup,
  kUnforgeableGroup,
  kBundleGroup,
  kConnectiveGroup,
  kIfGroup,
};

// One top-level component of a Par: its kind group, its position in that
// group's vector and its node data.
struct Component {
  int group;
  size_t index;
  const ir::NodeInfo* info;
};

template <typename T>
void AddComponents(int group, const std::vector<T>& items,
                   std::vector<Component>& out) {
  for (size_t i = 0; i < items.size(); ++i) {
    out.push_back({group, i, items[i].get()});
  }
}

std::vector<Component> Components(const Par& p) {
  std::vector<Component> out;
  out.reserve(p.ComponentCount());
  AddComponents(kSendGroup, p.sends, out);
  AddComponents(kReceiveGroup, p.receives, out);
  AddComponents(kNewGroup, p.news, out);
  AddComponents(kExprGroup, p.exprs, out);
  AddComponents(kMatchGroup, p.matches, out);
  AddComponents(kUnforgeableGroup, p.unforgeables, out);
  AddComponents(kBundleGroup, p.bundles, out);
  AddComponents(kConnectiveGroup, p.connectives, out);
  AddComponents(kIfGroup, p.conditionals, out);
  return out;
}

void AddComponent(const Par& p, const Component& c, ir::ParBuilder& b) {
  switch (c.group) {
    case kSendGroup:
      b.Add(p.sends[c.index]);
      break;
    case kReceiveGroup:
      b.Add(p.receives[c.index]);
      break;
    case kNewGroup:
      b.Add(p.news[c.index]);
      break;
    case kExprGroup:
      b.Add(p.exprs[c.index]);
      break;
    case kMatchGroup:
      b.Add(p.matches[c.index]);
      break;
    case kUnforgeableGroup:
      b.Add(p.unforgeables[c.index]);
      break;
    case kBundleGroup:
      b.Add(p.bundles[c.index]);
      break;
    case kConnectiveGroup:
      b.Add(p.connectives[c.index]);
      break;
    default:
      b.Add(p.conditionals[c.index]);
      break;
  }
}

bool IsPatternVar(const Expr& e) {
  return e.kind == ExprKind::kVar && e.var.kind != VarKind::kBound;
}

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
  absl::Status Step() {
    if (++steps_ > max_steps_) {
      return absl::ResourceExhaustedError(
          absl::StrCat("spatial match exceeded ", max_steps_, " steps"));
    }
    return absl::OkStatus();
  }

  absl::Status Bind(const Var& v, ParPtr value) {
    if (v.kind != VarKind::kFree) return absl::OkStatus();
    if (v.index >= bindings_.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("free variable ", v.index, " out of range (",
                       bindings_.size(), " free variables)"));
    }
    bindings_[v.index] = std::move(value);
    return absl::OkStatus();
  }

  // The assignment problem of one Par pattern against one target Par.
  struct Slots {
    const Par& t;
    const ParPtr* t_ptr;
    const Par& p;
    const std::vector<Component>& pats;
    const std::vector<Component>& targets;
    const std::optional<Var>& rest;
    const Connective* conn;
  };
  absl::StatusOr<bool> Assign(size_t i, const Slots& s,
                              std::vector<bool>& used);
  absl::StatusOr<bool> Leftovers(const Slots& s, const std::vector<bool>& used);
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
  absl::StatusOr<bool> AssignElements(size_t i, size_t width, const Expr& t,
                                      const Expr& p, std::vector<bool>& used);

  Bindings bindings_;
  uint64_t steps_ = 0;
  uint64_t max_steps_;
};

absl::StatusOr<bool> Matcher::MatchPar(const Par& t, const Par& p,
                                       const ParPtr* t_ptr) {
  RETURN_IF_ERROR(Step());
  if (!p.connective_used) return t.hash == p.hash;

  std::vector<Component> pats;
  std::optional<Var> rest;
  int free_vars = 0;
  const Connective* conn = nullptr;
  for (const Component& c : Components(p)) {
    if (c.group == kExprGroup && IsPatternVar(*p.exprs[c.index])) {
      const Var& v = p.exprs[c.index]->var;
      if (v.kind == VarKind::kFree) {
        ++free_vars;
        rest = v;
      } else if (!rest.has_value()) {
        rest = v;
      }
    } else if (c.group == kConnectiveGroup) {
      if (conn != nullptr) {
        return absl::UnimplementedError("Par pattern with several connectives");
      }
      conn = p.connectives[c.index].get();
    } else {
      pats.push_back(c);
    }
  }
  if (free_vars > 1) {
    return absl::UnimplementedError(
        "Par pattern with several top-level free variables");
  }
  if (conn != nullptr && rest.has_value()) {
    return absl::UnimplementedError(
        "Par pattern with a connective and a free variable or wildcard");
  }
  std::vector<Component> targets = Components(t);
  if (pats.size() > targets.size()) return false;
  if (!rest.has_value() && conn == nullptr && pats.size() != targets.size()) {
    return false;
  }
  // Concrete components first: they match by hash and prune early.
  std::stable_partition(pats.begin(), pats.end(), [](const Component& c) {
    return !c.info->connective_used;
  });
  std::vector<bool> used(targets.size(), false);
  Slots slots{t, t_ptr, p, pats, targets, rest, conn};
  return Assign(0, slots, used);
}

absl::StatusOr<bool> Matcher::Assign(size_t i, const Slots& s,
                                     std::vector<bool>& used) {
  if (i == s.pats.size()) return Leftovers(s, used);
  const Component& pat = s.pats[i];
  for (size_t j = 0; j < s.targets.size(); ++j) {
    const Component& target = s.targets[j];
    if (used[j] || target.group != pat.group) continue;
    RETURN_IF_ERROR(Step());
    Bindings saved = bindings_;
    bool ok;
    if (!pat.info->connective_used) {
      ok = target.info->hash == pat.info->hash;
    } else {
      ASSIGN_OR_RETURN(
          ok, MatchComponent(pat.group, s.t, target.index, s.p, pat.index));
    }
    if (ok) {
      used[j] = true;
      ASSIGN_OR_RETURN(bool rest_ok, Assign(i + 1, s, used));
      if (rest_ok) return true;
      used[j] = false;
    }
    bindings_ = std::move(saved);
  }
  return false;
}

absl::StatusOr<bool> Matcher::Leftovers(const Slots& s,
                                        const std::vector<bool>& used) {
  ir::ParBuilder builder;
  bool any = false;
  bool all = true;
  for (size_t j = 0; j < s.targets.size(); ++j) {
    if (used[j]) {
      all = false;
      continue;
    }
    AddComponent(s.t, s.targets[j], builder);
    any = true;
  }
  if (!any && !s.rest.has_value() && s.conn == nullptr) return true;
  ParPtr leftover = all && s.t_ptr != nullptr ? *s.t_ptr : builder.Build();
  if (s.rest.has_value()) {
    if (!leftover->locally_free.empty()) return false;
    RETURN_IF_ERROR(Bind(*s.rest, leftover));
    return true;
  }
  if (s.conn != nullptr) return MatchConnective(leftover, *s.conn);
  return false;
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
        Bindings saved = bindings_;
        ASSIGN_OR_RETURN(bool ok, MatchPar(t, *q));
        bindings_ = std::move(saved);
        if (ok) return true;
      }
      return false;
    case ConnectiveKind::kNot: {
      Bindings saved = bindings_;
      ASSIGN_OR_RETURN(bool ok, MatchPar(t, *c.ps[0]));
      bindings_ = std::move(saved);
      return !ok;
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

absl::StatusOr<bool> Matcher::MatchReceive(const ir::Receive& t,
                                           const ir::Receive& p) {
  if (t.persistent != p.persistent || t.peek != p.peek ||
      t.bind_count != p.bind_count || t.binds.size() != p.binds.size()) {
    return false;
  }
  for (size_t i = 0; i < t.binds.size(); ++i) {
    const ir::ReceiveBind& tb = t.binds[i];
    const ir::ReceiveBind& pb = p.binds[i];
    if (tb.patterns.size() != pb.patterns.size() ||
        tb.remainder != pb.remainder || tb.free_count != pb.free_count) {
      return false;
    }
    for (size_t k = 0; k < tb.patterns.size(); ++k) {
      if (!ir::Equal(tb.patterns[k], pb.patterns[k])) return false;
    }
    ASSIGN_OR_RETURN(bool source_ok, MatchPar(tb.source, *pb.source));
    if (!source_ok) return false;
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

absl::StatusOr<bool> Matcher::MatchList(const Expr& t, const Expr& p) {
  if (!p.remainder.has_value()) return MatchAll(t.operands, p.operands);
  if (t.remainder.has_value() || t.operands.size() < p.operands.size()) {
    return false;
  }
  for (size_t i = 0; i < p.operands.size(); ++i) {
    ASSIGN_OR_RETURN(bool ok, MatchPar(t.operands[i], *p.operands[i]));
    if (!ok) return false;
  }
  std::vector<ParPtr> tail(t.operands.begin() + p.operands.size(),
                           t.operands.end());
  ParPtr tail_par = ir::ParOf(Expr::List(std::move(tail), std::nullopt));
  if (!tail_par->locally_free.empty()) return false;
  RETURN_IF_ERROR(Bind(*p.remainder, std::move(tail_par)));
  return true;
}

// Sets (width 1) and maps (width 2, key then value) match element by
// element: each pattern element takes a distinct target element, found by a
// backtracking search in canonical order; leftovers go to the remainder.
absl::StatusOr<bool> Matcher::MatchCollection(const Expr& t, const Expr& p) {
  const size_t width = p.kind == ExprKind::kMap ? 2 : 1;
  if (t.remainder.has_value()) return false;
  const size_t target_count = t.operands.size() / width;
  const size_t pattern_count = p.operands.size() / width;
  if (pattern_count > target_count) return false;
  if (!p.remainder.has_value() && pattern_count != target_count) {
    return false;
  }
  std::vector<bool> used(target_count, false);
  return AssignElements(0, width, t, p, used);
}

absl::StatusOr<bool> Matcher::AssignElements(size_t i, size_t width,
                                             const Expr& t, const Expr& p,
                                             std::vector<bool>& used) {
  if (i * width == p.operands.size()) {
    if (!p.remainder.has_value()) return true;
    ParPtr rest;
    if (width == 1) {
      std::vector<ParPtr> left;
      for (size_t j = 0; j < used.size(); ++j) {
        if (!used[j]) left.push_back(t.operands[j]);
      }
      rest = ir::ParOf(Expr::Set(std::move(left), std::nullopt));
    } else {
      std::vector<std::pair<ParPtr, ParPtr>> left;
      for (size_t j = 0; j < used.size(); ++j) {
        if (!used[j])
          left.emplace_back(t.operands[2 * j], t.operands[2 * j + 1]);
      }
      rest = ir::ParOf(Expr::Map(std::move(left), std::nullopt));
    }
    if (!rest->locally_free.empty()) return false;
    RETURN_IF_ERROR(Bind(*p.remainder, std::move(rest)));
    return true;
  }
  for (size_t j = 0; j < used.size(); ++j) {
    if (used[j]) continue;
    RETURN_IF_ERROR(Step());
    Bindings saved = bindings_;
    bool ok = true;
    for (size_t k = 0; k < width && ok; ++k) {
      ASSIGN_OR_RETURN(
          ok, MatchPar(t.operands[j * width + k], *p.operands[i * width + k]));
    }
    if (ok) {
      used[j] = true;
      ASSIGN_OR_RETURN(bool rest_ok, AssignElements(i + 1, width, t, p, used));
      if (rest_ok) return true;
      used[j] = false;
    }
    bindings_ = std::move(saved);
  }
  return false;
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
