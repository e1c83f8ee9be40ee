// Rholang's syntactic sugar as plain syntax (rholang/frontend/internal/desugar.h).
#include "rholang/frontend/internal/desugar.h"

#include <utility>

#include "absl/strings/str_cat.h"

namespace rnode::rholang::internal {

using ast::NameKind;
using ast::ProcKind;

std::string Desugarer::FreshName() {
  // Identifiers cannot contain '#', so these never capture user names.
  return absl::StrCat("#fresh", fresh_counter_++);
}

ast::Name* Desugarer::VarName(const std::string& var, ast::Pos pos) {
  ast::Name* n = scratch_.NewName();
  n->kind = NameKind::kVar;
  n->var = var;
  n->pos = pos;
  return n;
}

ast::Proc* Desugarer::NewNode(ProcKind kind, ast::Pos pos) {
  ast::Proc* p = scratch_.NewProc();
  p->kind = kind;
  p->pos = pos;
  return p;
}

ast::Proc* Desugarer::ParOf(std::vector<const ast::Proc*> procs, ast::Pos pos) {
  if (procs.size() == 1) return const_cast<ast::Proc*>(procs[0]);
  ast::Proc* par = NewNode(ProcKind::kPar, pos);
  par->procs = std::move(procs);
  return par;
}

ast::Proc* Desugarer::Send(const ast::Name* chan,
                           std::vector<const ast::Proc*> args, ast::Pos pos) {
  ast::Proc* s = NewNode(ProcKind::kSend, pos);
  s->name = chan;
  s->procs = std::move(args);
  return s;
}

ast::Proc* Desugarer::Eval(const ast::Name* name, ast::Pos pos) {
  ast::Proc* e = NewNode(ProcKind::kEval, pos);
  e->name = name;
  return e;
}

ast::Proc* Desugarer::ForOf(std::vector<std::vector<ast::Bind>> receipts,
                            const ast::Proc* body, ast::Pos pos) {
  ast::Proc* f = NewNode(ProcKind::kFor, pos);
  ast::ProcExtra* x = scratch_.NewExtra();
  x->receipts = std::move(receipts);
  f->extra = x;
  f->body = body;
  return f;
}

ast::Proc* Desugarer::NewOf(const std::vector<std::string>& names,
                            const ast::Proc* body, ast::Pos pos) {
  ast::Proc* n = NewNode(ProcKind::kNew, pos);
  ast::ProcExtra* x = scratch_.NewExtra();
  for (const std::string& name : names) {
    ast::NewDecl d;
    d.var = name;
    d.pos = pos;
    x->decls.push_back(d);
  }
  n->extra = x;
  n->body = body;
  return n;
}

const ast::Proc* Desugarer::SendSync(const ast::Proc& p) {
  std::string r = FreshName();
  std::vector<const ast::Proc*> args = {Eval(VarName(r, p.pos), p.pos)};
  args.insert(args.end(), p.procs.begin(), p.procs.end());
  ast::Bind bind;
  bind.pos = p.pos;
  ast::Name* wild = scratch_.NewName();
  wild->kind = NameKind::kWildcard;
  wild->pos = p.pos;
  bind.lhs.names.push_back(wild);
  bind.chan = VarName(r, p.pos);
  const ast::Proc* cont =
      p.body != nullptr ? p.body : NewNode(ProcKind::kNil, p.pos);
  const ast::Proc* wait = ForOf({{bind}}, cont, p.pos);
  return NewOf({r}, ParOf({Send(p.name, args, p.pos), wait}, p.pos), p.pos);
}

const ast::Proc* Desugarer::Sequential(const ast::Proc& p) {
  const auto& receipts = p.extra->receipts;
  const ast::Proc* body = p.body;
  for (size_t i = receipts.size(); i-- > 0;) {
    body = ForOf({receipts[i]}, body, receipts[i].front().pos);
  }
  return body;
}

const ast::Proc* Desugarer::ComplexSources(const ast::Proc& p) {
  std::vector<ast::Bind> simple;
  std::vector<const ast::Proc*> sends;
  std::vector<std::string> fresh;
  const ast::Proc* cont = p.body;
  for (const ast::Bind& b : p.extra->receipts[0]) {
    ast::Bind nb = b;
    nb.source = ast::SourceKind::kSimple;
    nb.args.clear();
    if (b.source == ast::SourceKind::kReceiveSend) {
      std::string r = FreshName();
      nb.lhs.names.push_back(VarName(r, b.pos));
      cont = ParOf({Send(VarName(r, b.pos), {}, b.pos), cont}, b.pos);
    } else if (b.source == ast::SourceKind::kSendReceive) {
      std::string r = FreshName();
      fresh.push_back(r);
      nb.chan = VarName(r, b.pos);
      std::vector<const ast::Proc*> args = {Eval(VarName(r, b.pos), b.pos)};
      args.insert(args.end(), b.args.begin(), b.args.end());
      sends.push_back(Send(b.chan, args, b.pos));
    }
    simple.push_back(std::move(nb));
  }
  const ast::Proc* loop = ForOf({simple}, cont, p.pos);
  if (fresh.empty()) return loop;
  sends.push_back(loop);
  return NewOf(fresh, ParOf(sends, p.pos), p.pos);
}

const ast::Proc* Desugarer::Let(const ast::Proc& p) {
  const std::vector<ast::LetDecl>& lets = p.extra->lets;
  if (p.let_concurrent) {
    std::vector<std::string> names;
    std::vector<const ast::Proc*> parts;
    std::vector<std::vector<ast::Bind>> receipts;
    for (const ast::LetDecl& d : lets) {
      std::string t = FreshName();
      names.push_back(t);
      parts.push_back(Send(VarName(t, d.pos), d.rhs, d.pos));
      ast::Bind bind;
      bind.pos = d.pos;
      bind.lhs = d.lhs;
      while (bind.lhs.names.size() < d.rhs.size() &&
             bind.lhs.remainder == nullptr) {
        ast::Name* wild = scratch_.NewName();
        wild->kind = NameKind::kWildcard;
        wild->pos = d.pos;
        bind.lhs.names.push_back(wild);
      }
      bind.chan = VarName(t, d.pos);
      receipts.push_back({bind});
    }
    ast::Proc* loop = ForOf(std::move(receipts), p.body, p.pos);
    parts.push_back(loop);
    return NewOf(names, ParOf(parts, p.pos), p.pos);
  }
  const ast::Proc* body = p.body;
  for (size_t i = lets.size(); i-- > 0;) {
    const ast::LetDecl& d = lets[i];
    ast::Proc* target = NewNode(ProcKind::kList, d.pos);
    target->procs = d.rhs;
    ast::Proc* pattern = NewNode(ProcKind::kList, d.pos);
    for (const ast::Name* n : d.lhs.names) {
      pattern->procs.push_back(Eval(n, n->pos));
    }
    if (d.lhs.remainder != nullptr) {
      ast::Proc* rem = NewNode(d.lhs.remainder->kind == NameKind::kWildcard
                                   ? ProcKind::kWildcard
                                   : ProcKind::kVar,
                               d.lhs.remainder->pos);
      rem->text = d.lhs.remainder->var;
      pattern->remainder = rem;
    } else {
      while (pattern->procs.size() < d.rhs.size()) {
        pattern->procs.push_back(NewNode(ProcKind::kWildcard, d.pos));
      }
    }
    ast::Proc* m = NewNode(ProcKind::kMatch, d.pos);
    m->procs.push_back(target);
    ast::ProcExtra* x = scratch_.NewExtra();
    x->cases.push_back({pattern, body});
    m->extra = x;
    body = m;
  }
  return body;
}

}  // namespace rnode::rholang::internal
