// Substitution of environment values into IR terms (see substitute.h).
//
// Scoping, as the normalizer produces it: outside patterns ("process mode")
// a Bound var counts the binders opened since the root of the scope chain,
// so opening a `new`, a receive body or a match case body raises the
// threshold b. Inside a pattern ("pattern mode") Bound vars refer to binders
// of the pattern itself and are never replaced; only free-here VarRefs reach
// the env, and their index counts from the point where the outermost pattern
// starts, so b stays frozen while walking a pattern.
#include "rholang/interpreter/substitute.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "rholang/frontend/limits.h"
#include "rholang/interpreter/limits.h"
#include "util/status_macros.h"

namespace rnode::rholang::interp {
namespace {

using ir::ParPtr;

// True if `lf` holds an index >= n.
bool HasIndexAtLeast(const ir::IndexSet& lf, uint32_t n) {
  if (lf.empty()) return false;
  if (n == 0) return true;
  std::vector<uint32_t> v = lf.ToVector();
  return !v.empty() && v.back() >= n;
}

class Substituter {
 public:
  Substituter(const Env& env, uint32_t keep, PhloMeter& meter)
      : env_(env), keep_(keep), meter_(meter) {}

  // `b`: binders opened inside the term above this point (frozen in pattern
  // mode). Returns `p` itself when nothing in it refers to the env.
  absl::StatusOr<ParPtr> Par(const ParPtr& p, uint32_t b, bool pattern) {
    if (!NeedsWork(*p, b, pattern)) return p;
    ir::ParBuilder out;
    bool changed = false;
    for (const ir::SendPtr& s : p->sends) {
      ASSIGN_OR_RETURN(ir::SendPtr n, Send(s, b, pattern));
      changed = changed || n != s;
      out.Add(std::move(n));
    }
    for (const ir::ReceivePtr& r : p->receives) {
      ASSIGN_OR_RETURN(ir::ReceivePtr n, Receive(r, b, pattern));
      changed = changed || n != r;
      out.Add(std::move(n));
    }
    for (const ir::NewPtr& nw : p->news) {
      ASSIGN_OR_RETURN(ir::NewPtr n, New(nw, b, pattern));
      changed = changed || n != nw;
      out.Add(std::move(n));
    }
    for (const ir::ExprPtr& e : p->exprs) {
      if (!pattern && e->kind == ir::ExprKind::kVar &&
          e->var.kind == ir::VarKind::kBound && e->var.index >= b + keep_) {
        ASSIGN_OR_RETURN(const ParPtr* value, Lookup(e->var.index - b - keep_));
        out.AddAll(**value);
        changed = true;
        continue;
      }
      ASSIGN_OR_RETURN(ir::ExprPtr n, Expr(e, b, pattern));
      changed = changed || n != e;
      out.Add(std::move(n));
    }
    for (const ir::MatchPtr& m : p->matches) {
      ASSIGN_OR_RETURN(ir::MatchPtr n, Match(m, b, pattern));
      changed = changed || n != m;
      out.Add(std::move(n));
    }
    for (const ir::UnforgeablePtr& u : p->unforgeables) out.Add(u);
    for (const ir::BundlePtr& bu : p->bundles) {
      ASSIGN_OR_RETURN(ParPtr body, Par(bu->body, b, pattern));
      if (body == bu->body) {
        out.Add(bu);
        continue;
      }
      RETURN_IF_ERROR(Rebuilt());
      changed = true;
      out.Add(ir::Bundle::Make(std::move(body), bu->write_flag, bu->read_flag));
    }
    for (const ir::ConnectivePtr& c : p->connectives) {
      if (c->kind == ir::ConnectiveKind::kVarRef) {
        if (c->var_ref_free && c->var_ref_index >= b + keep_) {
          ASSIGN_OR_RETURN(const ParPtr* value,
                           Lookup(c->var_ref_index - b - keep_));
          out.AddAll(**value);
          changed = true;
        } else {
          out.Add(c);
        }
        continue;
      }
      ASSIGN_OR_RETURN(ir::ConnectivePtr n, Connective(c, b, pattern));
      changed = changed || n != c;
      out.Add(std::move(n));
    }
    for (const ir::IfPtr& i : p->conditionals) {
      ASSIGN_OR_RETURN(ir::IfPtr n, If(i, b, pattern));
      changed = changed || n != i;
      out.Add(std::move(n));
    }
    if (!changed) return p;
    RETURN_IF_ERROR(Rebuilt());
    return out.Build();
  }

 private:
  // In process mode the cached locally_free says whether any index reaches
  // the env. In pattern mode every node is walked: a VarRef's index is not
  // lowered by binders inside the pattern, so locally_free (which lowers
  // it) is not a safe filter there.
  bool NeedsWork(const ir::NodeInfo& n, uint32_t b, bool pattern) const {
    if (pattern) return n.height > 1 || !n.locally_free.empty();
    return HasIndexAtLeast(n.locally_free, b + keep_);
  }

  absl::Status Rebuilt() { return meter_.Charge(cost::kSubstituteNode); }

  absl::StatusOr<const ParPtr*> Lookup(uint32_t index) const {
    const ParPtr* v = env_.Get(index);
    if (v == nullptr) {
      return absl::InternalError(absl::StrCat("substitution: variable index ",
                                              index, " outside an env of ",
                                              env_.size(), " values"));
    }
    return v;
  }

  absl::StatusOr<std::vector<ParPtr>> Pars(const std::vector<ParPtr>& ps,
                                           uint32_t b, bool pattern,
                                           bool* changed) {
    std::vector<ParPtr> out;
    out.reserve(ps.size());
    for (const ParPtr& p : ps) {
      ASSIGN_OR_RETURN(ParPtr n, Par(p, b, pattern));
      *changed = *changed || n != p;
      out.push_back(std::move(n));
    }
    return out;
  }

  absl::StatusOr<ir::SendPtr> Send(const ir::SendPtr& s, uint32_t b,
                                   bool pattern) {
    if (!NeedsWork(*s, b, pattern)) return s;
    ASSIGN_OR_RETURN(ParPtr chan, Par(s->chan, b, pattern));
    bool changed = chan != s->chan;
    ASSIGN_OR_RETURN(std::vector<ParPtr> data,
                     Pars(s->data, b, pattern, &changed));
    if (!changed) return s;
    RETURN_IF_ERROR(Rebuilt());
    return ir::Send::Make(std::move(chan), std::move(data), s->persistent);
  }

  absl::StatusOr<ir::ReceivePtr> Receive(const ir::ReceivePtr& r, uint32_t b,
                                         bool pattern) {
    if (!NeedsWork(*r, b, pattern)) return r;
    bool changed = false;
    std::vector<ir::ReceiveBind> binds;
    binds.reserve(r->binds.size());
    for (const ir::ReceiveBind& rb : r->binds) {
      ir::ReceiveBind nb;
      ASSIGN_OR_RETURN(nb.patterns, Pars(rb.patterns, b, true, &changed));
      ASSIGN_OR_RETURN(nb.source, Par(rb.source, b, pattern));
      changed = changed || nb.source != rb.source;
      nb.remainder = rb.remainder;
      nb.free_count = rb.free_count;
      binds.push_back(std::move(nb));
    }
    ASSIGN_OR_RETURN(ParPtr body,
                     Par(r->body, pattern ? b : b + r->bind_count, pattern));
    changed = changed || body != r->body;
    if (!changed) return r;
    RETURN_IF_ERROR(Rebuilt());
    // The bind order is kept (not re-sorted): the body's capture numbering
    // follows it.
    return ir::Receive::Make(std::move(binds), std::move(body), r->persistent,
                             r->peek, r->bind_count);
  }

  absl::StatusOr<ir::NewPtr> New(const ir::NewPtr& n, uint32_t b,
                                 bool pattern) {
    if (!NeedsWork(*n, b, pattern)) return n;
    ASSIGN_OR_RETURN(ParPtr body,
                     Par(n->body, pattern ? b : b + n->bind_count, pattern));
    if (body == n->body) return n;
    RETURN_IF_ERROR(Rebuilt());
    return ir::New::Make(n->bind_count, std::move(body), n->uris,
                         n->injections);
  }

  absl::StatusOr<ir::MatchPtr> Match(const ir::MatchPtr& m, uint32_t b,
                                     bool pattern) {
    if (!NeedsWork(*m, b, pattern)) return m;
    ASSIGN_OR_RETURN(ParPtr target, Par(m->target, b, pattern));
    bool changed = target != m->target;
    std::vector<ir::MatchCase> cases;
    cases.reserve(m->cases.size());
    for (const ir::MatchCase& c : m->cases) {
      ir::MatchCase nc;
      ASSIGN_OR_RETURN(nc.pattern, Par(c.pattern, b, true));
      ASSIGN_OR_RETURN(nc.body,
                       Par(c.body, pattern ? b : b + c.free_count, pattern));
      nc.free_count = c.free_count;
      changed = changed || nc.pattern != c.pattern || nc.body != c.body;
      cases.push_back(std::move(nc));
    }
    if (!changed) return m;
    RETURN_IF_ERROR(Rebuilt());
    return ir::Match::Make(std::move(target), std::move(cases));
  }

  absl::StatusOr<ir::ExprPtr> Expr(const ir::ExprPtr& e, uint32_t b,
                                   bool pattern) {
    if (ir::IsGround(e->kind) || e->kind == ir::ExprKind::kVar) return e;
    if (!NeedsWork(*e, b, pattern)) return e;
    bool changed = false;
    switch (e->kind) {
      case ir::ExprKind::kNot:
      case ir::ExprKind::kNeg: {
        ASSIGN_OR_RETURN(ParPtr p, Par(e->operands[0], b, pattern));
        if (p == e->operands[0]) return e;
        RETURN_IF_ERROR(Rebuilt());
        return ir::Expr::Unary(e->kind, std::move(p));
      }
      case ir::ExprKind::kList:
      case ir::ExprKind::kTuple:
      case ir::ExprKind::kSet:
      case ir::ExprKind::kMap: {
        ASSIGN_OR_RETURN(std::vector<ParPtr> ps,
                         Pars(e->operands, b, pattern, &changed));
        if (!changed) return e;
        RETURN_IF_ERROR(Rebuilt());
        if (e->kind == ir::ExprKind::kList) {
          return ir::Expr::List(std::move(ps), e->remainder);
        }
        if (e->kind == ir::ExprKind::kTuple) {
          return ir::Expr::Tuple(std::move(ps));
        }
        if (e->kind == ir::ExprKind::kSet) {
          return ir::Expr::Set(std::move(ps), e->remainder);
        }
        std::vector<std::pair<ParPtr, ParPtr>> kvs;
        kvs.reserve(ps.size() / 2);
        for (size_t i = 0; i + 1 < ps.size(); i += 2) {
          kvs.emplace_back(std::move(ps[i]), std::move(ps[i + 1]));
        }
        return ir::Expr::Map(std::move(kvs), e->remainder);
      }
      case ir::ExprKind::kMethod: {
        ASSIGN_OR_RETURN(ParPtr target, Par(e->target, b, pattern));
        changed = target != e->target;
        ASSIGN_OR_RETURN(std::vector<ParPtr> args,
                         Pars(e->operands, b, pattern, &changed));
        if (!changed) return e;
        RETURN_IF_ERROR(Rebuilt());
        return ir::Expr::Method(e->text, std::move(target), std::move(args));
      }
      default:
        break;
    }
    if (!ir::IsBinaryOp(e->kind) || e->operands.size() != 2) {
      return absl::InternalError(
          absl::StrCat("substitution: malformed expression of kind ",
                       static_cast<int>(e->kind)));
    }
    ASSIGN_OR_RETURN(ParPtr a, Par(e->operands[0], b, pattern));
    ASSIGN_OR_RETURN(
        ParPtr c,
        Par(e->operands[1], b, pattern || e->kind == ir::ExprKind::kMatches));
    if (a == e->operands[0] && c == e->operands[1]) return e;
    RETURN_IF_ERROR(Rebuilt());
    return ir::Expr::Binary(e->kind, std::move(a), std::move(c));
  }

  absl::StatusOr<ir::ConnectivePtr> Connective(const ir::ConnectivePtr& c,
                                               uint32_t b, bool pattern) {
    if (c->ps.empty()) return c;
    bool changed = false;
    ASSIGN_OR_RETURN(std::vector<ParPtr> ps, Pars(c->ps, b, pattern, &changed));
    if (!changed) return c;
    RETURN_IF_ERROR(Rebuilt());
    return ir::Connective::Make(c->kind, std::move(ps));
  }

  absl::StatusOr<ir::IfPtr> If(const ir::IfPtr& i, uint32_t b, bool pattern) {
    if (!NeedsWork(*i, b, pattern)) return i;
    ASSIGN_OR_RETURN(ParPtr cond, Par(i->condition, b, pattern));
    ASSIGN_OR_RETURN(ParPtr yes, Par(i->if_true, b, pattern));
    ASSIGN_OR_RETURN(ParPtr no, Par(i->if_false, b, pattern));
    if (cond == i->condition && yes == i->if_true && no == i->if_false) {
      return i;
    }
    RETURN_IF_ERROR(Rebuilt());
    return ir::If::Make(std::move(cond), std::move(yes), std::move(no));
  }

  const Env& env_;
  uint32_t keep_;
  PhloMeter& meter_;
};

absl::StatusOr<ParPtr> Run(const ParPtr& term, const Env& env, uint32_t keep,
                           bool pattern, PhloMeter& meter) {
  if (term->height > kMaxIrDepth) {
    return absl::ResourceExhaustedError(
        absl::StrCat("term deeper than ", kMaxIrDepth, " levels"));
  }
  Substituter s(env, keep, meter);
  ASSIGN_OR_RETURN(ParPtr out, s.Par(term, 0, pattern));
  if (out->height > kMaxIrDepth) {
    return absl::ResourceExhaustedError(
        absl::StrCat("substituted term deeper than ", kMaxIrDepth, " levels"));
  }
  RETURN_IF_ERROR(CheckTermSize("substituted term", *out));
  return out;
}

}  // namespace

absl::StatusOr<ir::ParPtr> Substitute(const ir::ParPtr& term, const Env& env,
                                      uint32_t keep, PhloMeter& meter) {
  return Run(term, env, keep, /*pattern=*/false, meter);
}

absl::StatusOr<ir::ParPtr> SubstitutePattern(const ir::ParPtr& pattern,
                                             const Env& env, PhloMeter& meter) {
  return Run(pattern, env, 0, /*pattern=*/true, meter);
}

}  // namespace rnode::rholang::interp
