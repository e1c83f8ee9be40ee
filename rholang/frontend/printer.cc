// Pretty-printer from the canonical IR to Rholang source; variable names are
// generated from de Bruijn indices and pattern capture levels.
#include "rholang/frontend/printer.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "rholang/frontend/limits.h"
#include "util/bytes.h"

namespace rnode::rholang {
namespace {

using ir::ConnectiveKind;
using ir::Expr;
using ir::ExprKind;
using ir::Par;
using ir::VarKind;

enum class Sort : uint8_t { kProc, kName };

struct Entry {
  std::string name;
  Sort sort = Sort::kProc;
};

// Free variables of the pattern being printed, indexed by capture level.
struct FreeNames {
  std::string prefix;
  std::vector<std::optional<Entry>> levels;
};

std::string Escape(const std::string& s) {
  std::string out = "\"";
  for (char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          absl::StrAppend(
              &out, "\\u00",
              absl::Hex(static_cast<unsigned char>(c), absl::kZeroPad2));
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
  return out;
}

const char* BinaryOpText(ExprKind k) {
  switch (k) {
    case ExprKind::kMul:
      return "*";
    case ExprKind::kDiv:
      return "/";
    case ExprKind::kMod:
      return "%";
    case ExprKind::kAdd:
      return "+";
    case ExprKind::kSub:
      return "-";
    case ExprKind::kLt:
      return "<";
    case ExprKind::kLte:
      return "<=";
    case ExprKind::kGt:
      return ">";
    case ExprKind::kGte:
      return ">=";
    case ExprKind::kEq:
      return "==";
    case ExprKind::kNeq:
      return "!=";
    case ExprKind::kAnd:
      return "and";
    case ExprKind::kOr:
      return "or";
    case ExprKind::kShortAnd:
      return "&&";
    case ExprKind::kShortOr:
      return "||";
    case ExprKind::kMatches:
      return "matches";
    case ExprKind::kPercentPercent:
      return "%%";
    case ExprKind::kPlusPlus:
      return "++";
    case ExprKind::kMinusMinus:
      return "--";
    default:
      return "?";
  }
}

void Lower(std::optional<uint32_t>& acc, std::optional<uint32_t> v) {
  if (v && (!acc || *v < *acc)) acc = v;
}

// The lowest capture level of the current pattern that occurs in a term
// (nested patterns and `\/` / `~` operands have their own levels and are
// skipped). Printing siblings in this order reproduces the levels.
std::optional<uint32_t> MinLevel(const Par& p);

std::optional<uint32_t> MinLevelVar(const std::optional<ir::Var>& v) {
  if (v && v->kind == VarKind::kFree) return v->index;
  return std::nullopt;
}

std::optional<uint32_t> MinLevel(const Expr& e) {
  std::optional<uint32_t> acc;
  if (e.kind == ExprKind::kVar) return MinLevelVar(e.var);
  if (e.kind == ExprKind::kMatches) return MinLevel(*e.operands[0]);
  if (e.target) Lower(acc, MinLevel(*e.target));
  for (const ir::ParPtr& p : e.operands) Lower(acc, MinLevel(*p));
  Lower(acc, MinLevelVar(e.remainder));
  return acc;
}

std::optional<uint32_t> MinLevel(const ir::Send& s) {
  std::optional<uint32_t> acc = MinLevel(*s.chan);
  for (const ir::ParPtr& p : s.data) Lower(acc, MinLevel(*p));
  return acc;
}

std::optional<uint32_t> MinLevel(const ir::Receive& r) {
  std::optional<uint32_t> acc = MinLevel(*r.body);
  for (const ir::ReceiveBind& b : r.binds) Lower(acc, MinLevel(*b.source));
  return acc;
}

std::optional<uint32_t> MinLevel(const ir::New& n) { return MinLevel(*n.body); }

std::optional<uint32_t> MinLevel(const ir::Match& m) {
  std::optional<uint32_t> acc = MinLevel(*m.target);
  for (const ir::MatchCase& c : m.cases) Lower(acc, MinLevel(*c.body));
  return acc;
}

std::optional<uint32_t> MinLevel(const ir::Unforgeable&) {
  return std::nullopt;
}
std::optional<uint32_t> MinLevel(const ir::Bundle& b) {
  return MinLevel(*b.body);
}
std::optional<uint32_t> MinLevel(const ir::Connective& c) {
  std::optional<uint32_t> acc;
  if (c.kind == ConnectiveKind::kAnd) {
    for (const ir::ParPtr& p : c.ps) Lower(acc, MinLevel(*p));
  }
  return acc;
}
std::optional<uint32_t> MinLevel(const ir::If& i) {
  std::optional<uint32_t> acc = MinLevel(*i.condition);
  Lower(acc, MinLevel(*i.if_true));
  Lower(acc, MinLevel(*i.if_false));
  return acc;
}

template <typename T>
void LowerAll(std::optional<uint32_t>& acc,
              const std::vector<std::shared_ptr<const T>>& v) {
  for (const auto& c : v) Lower(acc, MinLevel(*c));
}

std::optional<uint32_t> MinLevel(const Par& p) {
  if (!p.connective_used) return std::nullopt;
  std::optional<uint32_t> acc;
  LowerAll(acc, p.sends);
  LowerAll(acc, p.receives);
  LowerAll(acc, p.news);
  LowerAll(acc, p.exprs);
  LowerAll(acc, p.matches);
  LowerAll(acc, p.bundles);
  LowerAll(acc, p.connectives);
  LowerAll(acc, p.conditionals);
  return acc;
}

// Orders items by the lowest capture level they contain; items without one
// keep their relative order and come first.
template <typename T, typename KeyFn>
std::vector<T> ByLevel(std::vector<T> items, KeyFn key) {
  std::vector<std::pair<std::optional<uint32_t>, size_t>> keys;
  for (size_t i = 0; i < items.size(); ++i) keys.emplace_back(key(items[i]), i);
  std::stable_sort(keys.begin(), keys.end(), [](const auto& a, const auto& b) {
    if (a.first.has_value() != b.first.has_value()) return !a.first.has_value();
    return a.first.has_value() && *a.first < *b.first;
  });
  std::vector<T> out;
  out.reserve(items.size());
  for (const auto& k : keys) out.push_back(items[k.second]);
  return out;
}

class Printer {
 public:
  Printer() {
    scopes_.emplace_back();
    free_ = nullptr;
  }

  std::string Run(const Par& p) {
    PrintPar(p, 0);
    return std::move(out_);
  }

 private:
  void Indent(int level) { out_.append(static_cast<size_t>(level) * 2, ' '); }

  std::vector<Entry>& Scope() { return scopes_.back(); }

  const Entry& BoundEntry(uint32_t index) {
    std::vector<Entry>& scope = Scope();
    if (index >= scope.size()) {
      // Only reachable for IR not produced by Normalize.
      static const Entry kUnknown{"unbound", Sort::kProc};
      return kUnknown;
    }
    return scope[scope.size() - 1 - index];
  }

  std::string FreshName(const char* prefix) {
    return absl::StrCat(prefix, counter_++);
  }

  const Entry& FreeEntry(uint32_t level, Sort sort) {
    if (free_ == nullptr) {
      static const Entry kStray{"free", Sort::kProc};
      return kStray;
    }
    if (free_->levels.size() <= level) free_->levels.resize(level + 1);
    if (!free_->levels[level]) {
      free_->levels[level] =
          Entry{absl::StrCat(free_->prefix, "_", level), sort};
    }
    return *free_->levels[level];
  }

  // A process in a position that takes any process (top level, bodies).
  void PrintPar(const Par& p, int indent) {
    if (p.IsNil()) {
      out_ += "Nil";
      return;
    }
    // Component order follows capture levels inside patterns (see ByLevel).
    struct Item {
      std::optional<uint32_t> level;
      std::function<void()> print;
    };
    std::vector<Item> items;
    auto add = [&](const auto& group) {
      for (const auto& c : group) {
        items.push_back({free_ ? MinLevel(*c) : std::nullopt,
                         [this, c, indent]() { PrintComponent(*c, indent); }});
      }
    };
    add(p.sends);
    add(p.receives);
    add(p.news);
    add(p.exprs);
    add(p.matches);
    add(p.unforgeables);
    add(p.bundles);
    add(p.connectives);
    add(p.conditionals);
    items = ByLevel(std::move(items), [](const Item& i) { return i.level; });
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) {
        out_ += " |\n";
        Indent(indent);
      }
      items[i].print();
    }
  }

  // A process as an operand: atoms print bare, anything else in braces.
  void PrintOperand(const Par& p, int indent) {
    const Expr* e = p.SingleExpr();
    if (p.IsNil() || e != nullptr) {
      if (p.IsNil()) {
        out_ += "Nil";
      } else {
        PrintExpr(*e, indent);
      }
      return;
    }
    if (p.ComponentCount() == 1 && p.connectives.size() == 1) {
      PrintComponent(*p.connectives[0], indent);
      return;
    }
    out_ += "{ ";
    PrintPar(p, indent + 1);
    out_ += " }";
  }

  // A process in a name position (channel, pattern element).
  void PrintName(const Par& p, int indent) {
    const Expr* e = p.SingleExpr();
    if (e != nullptr && e->kind == ExprKind::kVar) {
      switch (e->var.kind) {
        case VarKind::kWildcard:
          out_ += "_";
          return;
        case VarKind::kBound: {
          const Entry& b = BoundEntry(e->var.index);
          if (b.sort == Sort::kProc) out_ += "@";
          out_ += b.name;
          return;
        }
        case VarKind::kFree: {
          const Entry& f = FreeEntry(e->var.index, Sort::kName);
          if (f.sort == Sort::kProc) out_ += "@";
          out_ += f.name;
          return;
        }
      }
    }
    out_ += "@";
    if (p.IsNil() ||
        (e != nullptr &&
         (e->kind == ExprKind::kString || e->kind == ExprKind::kBool ||
          (e->kind == ExprKind::kInt && e->int_value >= 0)))) {
      PrintOperand(p, indent);
      return;
    }
    out_ += "{";
    PrintPar(p, indent + 1);
    out_ += "}";
  }

  void PrintVar(const ir::Var& v) {
    switch (v.kind) {
      case VarKind::kWildcard:
        out_ += "_";
        return;
      case VarKind::kBound: {
        const Entry& b = BoundEntry(v.index);
        if (b.sort == Sort::kName) out_ += "*";
        out_ += b.name;
        return;
      }
      case VarKind::kFree: {
        const Entry& f = FreeEntry(v.index, Sort::kProc);
        if (f.sort == Sort::kName) out_ += "*";
        out_ += f.name;
        return;
      }
    }
  }

  void PrintRemainder(const std::optional<ir::Var>& r) {
    if (!r) return;
    out_ += " ...";
    if (r->kind == VarKind::kWildcard) {
      out_ += "_";
    } else {
      out_ += FreeEntry(r->index, Sort::kProc).name;
    }
  }

  void PrintList(const std::vector<ir::ParPtr>& ps, int indent) {
    for (size_t i = 0; i < ps.size(); ++i) {
      if (i > 0) out_ += ", ";
      PrintPar(*ps[i], indent);
    }
  }

  std::vector<ir::ParPtr> Ordered(const std::vector<ir::ParPtr>& ps) {
    if (free_ == nullptr) return ps;
    return ByLevel(ps, [](const ir::ParPtr& p) { return MinLevel(*p); });
  }

  void PrintExpr(const Expr& e, int indent) {
    switch (e.kind) {
      case ExprKind::kBool:
        out_ += e.bool_value ? "true" : "false";
        return;
      case ExprKind::kInt:
        absl::StrAppend(&out_, e.int_value);
        return;
      case ExprKind::kString:
        out_ += Escape(e.text);
        return;
      case ExprKind::kUri:
        absl::StrAppend(&out_, "`", e.text, "`");
        return;
      case ExprKind::kByteArray:
        absl::StrAppend(
            &out_, "\"",
            HexEncode(ByteView(reinterpret_cast<const uint8_t*>(e.text.data()),
                               e.text.size())),
            "\".hexToBytes()");
        return;
      case ExprKind::kVar:
        PrintVar(e.var);
        return;
      case ExprKind::kNot:
        out_ += "(not ";
        PrintOperand(*e.operands[0], indent);
        out_ += ")";
        return;
      case ExprKind::kNeg:
        out_ += "-(";
        PrintPar(*e.operands[0], indent);
        out_ += ")";
        return;
      case ExprKind::kList:
        out_ += "[";
        PrintList(e.operands, indent);
        PrintRemainder(e.remainder);
        out_ += "]";
        return;
      case ExprKind::kTuple:
        out_ += "(";
        PrintList(e.operands, indent);
        if (e.operands.size() == 1) out_ += ",";
        out_ += ")";
        return;
      case ExprKind::kSet:
        out_ += "Set(";
        PrintList(Ordered(e.operands), indent);
        PrintRemainder(e.remainder);
        out_ += ")";
        return;
      case ExprKind::kMap: {
        std::vector<std::pair<ir::ParPtr, ir::ParPtr>> kvs;
        for (size_t i = 0; i + 1 < e.operands.size(); i += 2) {
          kvs.emplace_back(e.operands[i], e.operands[i + 1]);
        }
        if (free_ != nullptr) {
          kvs = ByLevel(kvs, [](const auto& kv) {
            std::optional<uint32_t> acc = MinLevel(*kv.first);
            Lower(acc, MinLevel(*kv.second));
            return acc;
          });
        }
        out_ += "{";
        for (size_t i = 0; i < kvs.size(); ++i) {
          if (i > 0) out_ += ", ";
          PrintPar(*kvs[i].first, indent);
          out_ += ": ";
          PrintPar(*kvs[i].second, indent);
        }
        PrintRemainder(e.remainder);
        out_ += "}";
        return;
      }
      case ExprKind::kMethod:
        out_ += "(";
        PrintPar(*e.target, indent);
        absl::StrAppend(&out_, ").", e.text, "(");
        PrintList(e.operands, indent);
        out_ += ")";
        return;
      case ExprKind::kMatches:
        out_ += "(";
        PrintOperand(*e.operands[0], indent);
        out_ += " matches ";
        PrintPattern(*e.operands[1], indent, nullptr);
        out_ += ")";
        return;
      default:
        out_ += "(";
        PrintOperand(*e.operands[0], indent);
        absl::StrAppend(&out_, " ", BinaryOpText(e.kind), " ");
        PrintOperand(*e.operands[1], indent);
        out_ += ")";
        return;
    }
  }

  // Prints a pattern in a fresh scope with its own capture levels; the
  // captured names are appended to `captured` (if given) by level.
  void PrintPattern(const Par& p, int indent, std::vector<Entry>* captured,
                    bool as_name = false) {
    FreeNames names{FreshName("a"), {}};
    FreeNames* saved = free_;
    free_ = &names;
    scopes_.emplace_back();
    if (as_name) {
      PrintName(p, indent);
    } else {
      PrintOperand(p, indent);
    }
    scopes_.pop_back();
    free_ = saved;
    if (captured != nullptr) {
      for (size_t i = 0; i < names.levels.size(); ++i) {
        captured->push_back(names.levels[i].value_or(
            Entry{absl::StrCat(names.prefix, "_", i), Sort::kProc}));
      }
    }
  }

  void PrintBody(const Par& body, int indent) {
    out_ += "{\n";
    Indent(indent + 1);
    PrintPar(body, indent + 1);
    out_ += "\n";
    Indent(indent);
    out_ += "}";
  }

  void PrintComponent(const ir::Send& s, int indent) {
    PrintName(*s.chan, indent);
    out_ += s.persistent ? "!!(" : "!(";
    PrintList(s.data, indent);
    out_ += ")";
  }

  void PrintComponent(const ir::Receive& r, int indent) {
    out_ += "for (";
    const char* arrow = r.persistent ? " <= " : r.peek ? " <<- " : " <- ";
    std::vector<Entry> bound;
    for (size_t i = 0; i < r.binds.size(); ++i) {
      const ir::ReceiveBind& b = r.binds[i];
      if (i > 0) out_ += " & ";
      FreeNames names{FreshName("a"), {}};
      FreeNames* saved = free_;
      free_ = &names;
      scopes_.emplace_back();
      for (size_t j = 0; j < b.patterns.size(); ++j) {
        if (j > 0) out_ += ", ";
        PrintName(*b.patterns[j], indent);
      }
      if (b.remainder) {
        out_ += b.patterns.empty() ? "..." : " ...";
        out_ += "@";
        if (b.remainder->kind == VarKind::kWildcard) {
          out_ += "_";
        } else {
          out_ += FreeEntry(b.remainder->index, Sort::kProc).name;
        }
      }
      scopes_.pop_back();
      free_ = saved;
      for (size_t j = 0; j < b.free_count; ++j) {
        bound.push_back(
            j < names.levels.size() && names.levels[j]
                ? *names.levels[j]
                : Entry{absl::StrCat(names.prefix, "_", j), Sort::kProc});
      }
      out_ += arrow;
      PrintName(*b.source, indent);
    }
    out_ += ") ";
    std::vector<Entry>& scope = Scope();
    size_t mark = scope.size();
    scope.insert(scope.end(), bound.begin(), bound.end());
    PrintBody(*r.body, indent);
    Scope().resize(mark);
  }

  void PrintComponent(const ir::New& n, int indent) {
    out_ += "new ";
    size_t plain =
        n.bind_count >= n.uris.size() ? n.bind_count - n.uris.size() : 0;
    std::vector<Entry> names;
    for (uint32_t i = 0; i < n.bind_count; ++i) {
      std::string name = FreshName("x");
      if (i > 0) out_ += ", ";
      out_ += name;
      if (i >= plain && i - plain < n.uris.size()) {
        absl::StrAppend(&out_, "(`", n.uris[i - plain], "`)");
      }
      names.push_back({name, Sort::kName});
    }
    out_ += " in ";
    std::vector<Entry>& scope = Scope();
    size_t mark = scope.size();
    scope.insert(scope.end(), names.begin(), names.end());
    PrintBody(*n.body, indent);
    Scope().resize(mark);
  }

  void PrintComponent(const Expr& e, int indent) { PrintExpr(e, indent); }

  void PrintComponent(const ir::Match& m, int indent) {
    out_ += "match ";
    PrintOperand(*m.target, indent);
    out_ += " {\n";
    for (const ir::MatchCase& c : m.cases) {
      Indent(indent + 1);
      std::vector<Entry> captured;
      PrintPattern(*c.pattern, indent + 1, &captured);
      captured.resize(c.free_count, Entry{FreshName("unused"), Sort::kProc});
      out_ += " => ";
      std::vector<Entry>& scope = Scope();
      size_t mark = scope.size();
      scope.insert(scope.end(), captured.begin(), captured.end());
      PrintBody(*c.body, indent + 1);
      Scope().resize(mark);
      out_ += "\n";
    }
    Indent(indent);
    out_ += "}";
  }

  void PrintComponent(const ir::Unforgeable& u, int) {
    static constexpr const char* kKinds[] = {"GPrivate", "GDeployId",
                                             "GDeployerId", "GSysAuthToken"};
    absl::StrAppend(&out_, "Unforgeable(", kKinds[static_cast<int>(u.kind)],
                    ", 0x", HexEncode(u.id), ")");
  }

  void PrintComponent(const ir::Bundle& b, int indent) {
    out_ += b.write_flag && b.read_flag ? "bundle "
            : b.write_flag              ? "bundle+ "
            : b.read_flag               ? "bundle- "
                                        : "bundle0 ";
    PrintBody(*b.body, indent);
  }

  void PrintComponent(const ir::Connective& c, int indent) {
    switch (c.kind) {
      case ConnectiveKind::kAnd:
      case ConnectiveKind::kOr: {
        bool is_and = c.kind == ConnectiveKind::kAnd;
        out_ += "(";
        const std::vector<ir::ParPtr>& ps = c.ps;
        for (size_t i = 0; i < ps.size(); ++i) {
          if (i > 0) out_ += is_and ? " /\\ " : " \\/ ";
          if (is_and) {
            PrintOperand(*ps[i], indent);
          } else {
            FreeNames names{FreshName("a"), {}};
            FreeNames* saved = free_;
            free_ = &names;
            PrintOperand(*ps[i], indent);
            free_ = saved;
          }
        }
        out_ += ")";
        return;
      }
      case ConnectiveKind::kNot: {
        out_ += "~";
        FreeNames names{FreshName("a"), {}};
        FreeNames* saved = free_;
        free_ = &names;
        const Par& body = *c.ps.at(0);
        if (body.IsNil() || body.SingleExpr() != nullptr) {
          PrintOperand(body, indent);
        } else {
          out_ += "{ ";
          PrintPar(body, indent + 1);
          out_ += " }";
        }
        free_ = saved;
        return;
      }
      case ConnectiveKind::kVarRef: {
        size_t frame = scopes_.size() - 1 -
                       std::min<size_t>(c.var_ref_depth, scopes_.size() - 1);
        const std::vector<Entry>& scope = scopes_[frame];
        if (c.var_ref_index < scope.size()) {
          const Entry& e = scope[scope.size() - 1 - c.var_ref_index];
          absl::StrAppend(&out_, e.sort == Sort::kName ? "=*" : "=", e.name);
        } else {
          out_ += "=unbound";
        }
        return;
      }
      case ConnectiveKind::kBool:
        out_ += "Bool";
        return;
      case ConnectiveKind::kInt:
        out_ += "Int";
        return;
      case ConnectiveKind::kString:
        out_ += "String";
        return;
      case ConnectiveKind::kUri:
        out_ += "Uri";
        return;
      case ConnectiveKind::kByteArray:
        out_ += "ByteArray";
        return;
    }
  }

  void PrintComponent(const ir::If& i, int indent) {
    out_ += "if (";
    PrintPar(*i.condition, indent);
    out_ += ") ";
    PrintBody(*i.if_true, indent);
    if (!i.if_false->IsNil()) {
      out_ += " else ";
      PrintBody(*i.if_false, indent);
    }
  }

  std::string out_;
  std::vector<std::vector<Entry>> scopes_;
  FreeNames* free_;
  uint64_t counter_ = 0;
};

}  // namespace

absl::StatusOr<std::string> Print(const ir::Par& par) {
  if (par.height > kMaxIrDepth) {
    return absl::ResourceExhaustedError(
        absl::StrCat("IR term deeper than ", kMaxIrDepth));
  }
  return Printer().Run(par);
}

}  // namespace rnode::rholang
