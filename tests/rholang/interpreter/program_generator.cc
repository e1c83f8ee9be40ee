// Random well-formed Rholang programs (see program_generator.h).
#include "tests/rholang/interpreter/program_generator.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace rnode::rholang::interp::testing {
namespace {

// The budget of top-level code: every persistent channel's level is below
// it, so top-level code may send anywhere.
constexpr int kTopBudget = 10000;
// Integer literals stay in [-kMaxLiteral, kMaxLiteral]: with additions along
// finite chains no value comes near the Int range.
constexpr int kMaxLiteral = 20;
// Public channels created before the program body.
constexpr int kMaxPublicChannels = 4;

// Value types. Lists and sets hold Ints; maps map Strings to Ints.
enum class Ty { kInt, kString, kBool, kList, kSet, kMap };
constexpr Ty kAllTypes[] = {Ty::kInt,  Ty::kString, Ty::kBool,
                            Ty::kList, Ty::kSet,    Ty::kMap};

struct Channel {
  std::string ref;      // the name as written: `x3`, `@"pub1"`
  std::vector<Ty> sig;  // payload types, one per datum
  // 0 for a linear channel (never a persistent receive on it); otherwise the
  // level of a persistent channel (never `!!` on it).
  int level = 0;
  bool is_new = false;  // bound by `new` (may be printed as `*ref`)
  // A reply name that may be a write-only bundle: never received on.
  bool send_only = false;
};

struct ProcVar {
  std::string name;
  Ty ty;
};

struct Scope {
  std::vector<Channel> channels;
  std::vector<ProcVar> vars;
};

class Generator {
 public:
  Generator(uint64_t seed, const GeneratorOptions& options)
      : rng_(seed), options_(options), fuel_(options.max_processes) {}

  std::string Program() {
    Scope scope;
    int publics = 1 + static_cast<int>(Below(kMaxPublicChannels));
    for (int i = 0; i < publics; ++i) {
      Channel c;
      c.ref = Chance(50) ? absl::StrCat("@\"pub", i, "\"")
                         : absl::StrCat("@", 100 + i);
      c.sig = RandomSig();
      c.level = Chance(35) ? 1 + static_cast<int>(Below(kTopBudget - 1)) : 0;
      scope.channels.push_back(std::move(c));
    }
    std::vector<std::string> parts;
    int top = 4 + static_cast<int>(Below(9));
    for (int i = 0; i < top && fuel_ > 0; ++i) {
      parts.push_back(Proc(scope, 0, kTopBudget));
    }
    return absl::StrCat("new stdout(`rho:io:stdout`) in {\n  ",
                        absl::StrJoin(parts, " |\n  "), "\n}\n");
  }

 private:
  uint64_t Below(uint64_t n) { return n == 0 ? 0 : rng_() % n; }
  bool Chance(int percent) {
    return Below(100) < static_cast<uint64_t>(percent);
  }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[Below(v.size())];
  }
  std::string Fresh(const char* prefix) {
    return absl::StrCat(prefix, counter_++);
  }
  Ty RandomType() { return kAllTypes[Below(6)]; }
  std::vector<Ty> RandomSig() {
    std::vector<Ty> sig;
    int n = 1 + static_cast<int>(Below(2));
    for (int i = 0; i < n; ++i) sig.push_back(RandomType());
    return sig;
  }
  int64_t Literal() {
    return static_cast<int64_t>(Below(2 * kMaxLiteral + 1)) - kMaxLiteral;
  }
  std::string IntLiteral() {
    int64_t v = Literal();
    return v < 0 ? absl::StrCat("(", v, ")") : absl::StrCat(v);
  }
  std::string StringLiteral() {
    static const char* const kWords[] = {"a",   "b",  "rho", "hello", "",
                                         "x y", "42", "Nil", "é",     "tuple"};
    return absl::StrCat("\"", kWords[Below(10)], "\"");
  }
  std::string MapKey() {
    static const char* const kKeys[] = {"a", "b", "c", "d"};
    return absl::StrCat("\"", kKeys[Below(4)], "\"");
  }

  std::vector<const ProcVar*> VarsOf(const Scope& s, Ty ty) {
    std::vector<const ProcVar*> out;
    for (const ProcVar& v : s.vars) {
      if (v.ty == ty) out.push_back(&v);
    }
    return out;
  }

  // ---------------------------------------------------------------- values

  std::string Expr(Ty ty, const Scope& s, int depth) {
    std::vector<const ProcVar*> vars = VarsOf(s, ty);
    if (!vars.empty() && Chance(30)) return Pick(vars)->name;
    bool leaf = depth <= 0 || Chance(30);
    switch (ty) {
      case Ty::kInt:
        return leaf ? IntLiteral() : IntExpr(s, depth - 1);
      case Ty::kString:
        return leaf ? StringLiteral() : StringExpr(s, depth - 1);
      case Ty::kBool:
        return leaf ? (Chance(50) ? "true" : "false") : BoolExpr(s, depth - 1);
      case Ty::kList:
        return leaf ? ListLiteral(s, 0) : ListExpr(s, depth - 1);
      case Ty::kSet:
        return leaf ? SetLiteral(s, 0) : SetExpr(s, depth - 1);
      case Ty::kMap:
        return leaf ? MapLiteral(s, 0) : MapExpr(s, depth - 1);
    }
    return "Nil";
  }

  std::string IntExpr(const Scope& s, int d) {
    switch (Below(12)) {
      case 0:
        return absl::StrCat("(", Expr(Ty::kInt, s, d), " + ",
                            Expr(Ty::kInt, s, d), ")");
      case 1:
        return absl::StrCat("(", Expr(Ty::kInt, s, d), " - ",
                            Expr(Ty::kInt, s, d), ")");
      case 2:
        return absl::StrCat("(", IntLiteral(), " * ", IntLiteral(), ")");
      case 3:
        return absl::StrCat("(", Expr(Ty::kInt, s, d), " / ", 1 + Below(9),
                            ")");
      case 4:
        return absl::StrCat("(", Expr(Ty::kInt, s, d), " % ", 1 + Below(9),
                            ")");
      case 5:
        return absl::StrCat(Expr(Ty::kList, s, d), ".length()");
      case 6:
        return absl::StrCat(Expr(Ty::kSet, s, d), ".size()");
      case 7:
        return absl::StrCat(Expr(Ty::kMap, s, d), ".getOrElse(", MapKey(), ", ",
                            IntLiteral(), ")");
      case 8:
        return absl::StrCat(Expr(Ty::kString, s, d), ".length()");
      case 9: {
        int n = 1 + static_cast<int>(Below(3));
        std::vector<std::string> items;
        for (int i = 0; i < n; ++i) items.push_back(Expr(Ty::kInt, s, d));
        return absl::StrCat("[", absl::StrJoin(items, ", "), "].nth(", Below(n),
                            ")");
      }
      case 10:
        return absl::StrCat("(-", Expr(Ty::kInt, s, d), ")");
      default:
        return absl::StrCat(Expr(Ty::kMap, s, d), ".size()");
    }
  }

  std::string StringExpr(const Scope& s, int d) {
    switch (Below(3)) {
      case 0:
        return absl::StrCat("(", Expr(Ty::kString, s, d), " ++ ",
                            Expr(Ty::kString, s, d), ")");
      case 1: {
        Ty vt = Chance(50) ? Ty::kInt : Ty::kString;
        return absl::StrCat("(\"<${k}>${j}\" %% {\"k\": ", Expr(vt, s, d),
                            ", \"j\": ", Expr(Ty::kBool, s, d), "})");
      }
      default:
        return absl::StrCat(Expr(Ty::kString, s, d), ".slice(0, 0)");
    }
  }

  std::string BoolExpr(const Scope& s, int d) {
    static const char* const kCompare[] = {"<", "<=", ">", ">=", "==", "!="};
    switch (Below(8)) {
      case 0:
        return absl::StrCat("(", Expr(Ty::kInt, s, d), " ", kCompare[Below(6)],
                            " ", Expr(Ty::kInt, s, d), ")");
      case 1: {
        Ty t = RandomType();
        return absl::StrCat("(", Expr(t, s, d),
                            Chance(50) ? " == " : " != ", Expr(t, s, d), ")");
      }
      case 2:
        return absl::StrCat("(not ", Expr(Ty::kBool, s, d), ")");
      case 3:
        return absl::StrCat("(", Expr(Ty::kBool, s, d),
                            Chance(50) ? " and " : " or ",
                            Expr(Ty::kBool, s, d), ")");
      case 4:
        return absl::StrCat(Expr(Ty::kSet, s, d), ".contains(",
                            Expr(Ty::kInt, s, d), ")");
      case 5:
        return absl::StrCat(Expr(Ty::kMap, s, d), ".contains(", MapKey(), ")");
      case 6: {
        Ty t = RandomType();
        Scope ignored;
        return absl::StrCat("(", Expr(t, s, d), " matches ",
                            Pattern(t, /*in_receive=*/false, ignored), ")");
      }
      default:
        return absl::StrCat("(", Expr(Ty::kString, s, d), " < ",
                            Expr(Ty::kString, s, d), ")");
    }
  }

  std::string ListLiteral(const Scope& s, int d) {
    int n = static_cast<int>(Below(4));
    std::vector<std::string> items;
    for (int i = 0; i < n; ++i) items.push_back(Expr(Ty::kInt, s, d));
    return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
  }
  std::string ListExpr(const Scope& s, int d) {
    switch (Below(5)) {
      case 0:
        return absl::StrCat("(", Expr(Ty::kList, s, d), " ++ ",
                            Expr(Ty::kList, s, d), ")");
      case 1:
        return absl::StrCat(Expr(Ty::kSet, s, d), ".toList()");
      case 2: {
        // Slice bounds inside a literal of known length.
        int n = 1 + static_cast<int>(Below(4));
        std::vector<std::string> items;
        for (int i = 0; i < n; ++i) items.push_back(Expr(Ty::kInt, s, d));
        uint64_t from = Below(n + 1);
        uint64_t to = from + Below(n + 1 - from);
        return absl::StrCat("[", absl::StrJoin(items, ", "), "].slice(", from,
                            ", ", to, ")");
      }
      default:
        return ListLiteral(s, d);
    }
  }

  std::string SetLiteral(const Scope& s, int d) {
    int n = static_cast<int>(Below(4));
    std::vector<std::string> items;
    for (int i = 0; i < n; ++i) items.push_back(Expr(Ty::kInt, s, d));
    return absl::StrCat("Set(", absl::StrJoin(items, ", "), ")");
  }
  std::string SetExpr(const Scope& s, int d) {
    switch (Below(8)) {
      case 0:
        return absl::StrCat(Expr(Ty::kSet, s, d), ".add(", Expr(Ty::kInt, s, d),
                            ")");
      case 1:
        return absl::StrCat(Expr(Ty::kSet, s, d), ".delete(",
                            Expr(Ty::kInt, s, d), ")");
      case 2:
        return absl::StrCat(Expr(Ty::kSet, s, d), ".union(",
                            Expr(Ty::kSet, s, d), ")");
      case 3:
        return absl::StrCat(Expr(Ty::kSet, s, d), ".diff(",
                            Expr(Ty::kSet, s, d), ")");
      case 4:
        return absl::StrCat("(", Expr(Ty::kSet, s, d), " ++ ",
                            Expr(Ty::kSet, s, d), ")");
      case 5:
        return absl::StrCat("(", Expr(Ty::kSet, s, d), " -- ",
                            Expr(Ty::kSet, s, d), ")");
      case 6:
        return absl::StrCat(Expr(Ty::kList, s, d), ".toSet()");
      default:
        return SetLiteral(s, d);
    }
  }

  std::string MapLiteral(const Scope& s, int d) {
    int n = static_cast<int>(Below(4));
    std::vector<std::string> items;
    for (int i = 0; i < n; ++i) {
      items.push_back(absl::StrCat(MapKey(), ": ", Expr(Ty::kInt, s, d)));
    }
    return absl::StrCat("{", absl::StrJoin(items, ", "), "}");
  }
  std::string MapExpr(const Scope& s, int d) {
    switch (Below(5)) {
      case 0:
        return absl::StrCat(Expr(Ty::kMap, s, d), ".set(", MapKey(), ", ",
                            Expr(Ty::kInt, s, d), ")");
      case 1:
        return absl::StrCat(Expr(Ty::kMap, s, d), ".delete(", MapKey(), ")");
      case 2:
        return absl::StrCat(Expr(Ty::kMap, s, d), ".union(",
                            Expr(Ty::kMap, s, d), ")");
      case 3:
        return absl::StrCat("(", Expr(Ty::kMap, s, d), " ++ ",
                            Expr(Ty::kMap, s, d), ")");
      default:
        return MapLiteral(s, d);
    }
  }

  // Anything printable: a value, a tuple, a map lookup (may be Nil), an
  // unforgeable name or a bundle of one.
  std::string Printable(const Scope& s) {
    std::vector<const Channel*> news;
    for (const Channel& c : s.channels) {
      if (c.is_new) news.push_back(&c);
    }
    int choice = static_cast<int>(Below(12));
    if (choice == 0 && !news.empty()) {
      return absl::StrCat("*", Pick(news)->ref);
    }
    if (choice == 1 && !news.empty()) {
      return absl::StrCat(Chance(50) ? "bundle0" : "bundle+", " {*",
                          Pick(news)->ref, "}");
    }
    if (choice == 2) {
      return absl::StrCat("(", Expr(RandomType(), s, 2), ", ",
                          Expr(RandomType(), s, 2), ")");
    }
    if (choice == 3) {
      return absl::StrCat(Expr(Ty::kMap, s, 2), ".get(", MapKey(), ")");
    }
    if (choice == 4) {
      return absl::StrCat(Expr(Ty::kMap, s, 1), ".keys()");
    }
    if (choice == 5) {
      return absl::StrCat(Expr(Ty::kMap, s, 1), ".toList()");
    }
    return Expr(RandomType(), s, 3);
  }

  // -------------------------------------------------------------- patterns

  // A process pattern for a value of type `ty`; variables it binds are added
  // to `binds`. `in_receive`: no `\/` or `~` (not allowed there).
  std::string Pattern(Ty ty, bool in_receive, Scope& binds) {
    auto bind = [&](Ty t) {
      std::string v = Fresh("v");
      binds.vars.push_back({v, t});
      return v;
    };
    int c = static_cast<int>(Below(8));
    if (c == 0) return "_";
    if (c == 1) return bind(ty);
    switch (ty) {
      case Ty::kInt:
        switch (c) {
          case 2:
            return absl::StrCat("{", bind(ty), " /\\ Int}");
          case 3:
            return "Int";
          case 4:
            return IntLiteral();
          case 5:
            if (!in_receive) return "{1 \\/ 2 \\/ 3}";
            return absl::StrCat("{Int /\\ ", bind(ty), "}");
          case 6:
            if (!in_receive) return absl::StrCat("{~0 /\\ ", bind(ty), "}");
            return "{_ /\\ Int}";
          default:
            if (in_receive) return absl::StrCat("{", bind(ty), " /\\ Int}");
            return absl::StrCat("{", bind(ty), " /\\ ~String}");
        }
      case Ty::kString:
        switch (c) {
          case 2:
            return absl::StrCat("{", bind(ty), " /\\ String}");
          case 3:
            return "String";
          case 4:
            return StringLiteral();
          case 5:
            if (!in_receive) return "{\"a\" \\/ \"b\"}";
            return "String";
          default:
            return bind(ty);
        }
      case Ty::kBool:
        switch (c) {
          case 2:
            return "true";
          case 3:
            return "false";
          case 4:
            return "Bool";
          default:
            return bind(ty);
        }
      case Ty::kList:
        switch (c) {
          case 2:
            return "[]";
          case 3:
            return absl::StrCat("[", bind(Ty::kInt), " ...", bind(Ty::kList),
                                "]");
          case 4:
            return absl::StrCat("[", bind(Ty::kInt), ", ", bind(Ty::kInt), "]");
          case 5:
            return absl::StrCat("[_ ...", bind(Ty::kList), "]");
          case 6:
            return absl::StrCat("[", bind(Ty::kInt), "]");
          default:
            return absl::StrCat("[{", bind(Ty::kInt), " /\\ Int} ..._]");
        }
      case Ty::kSet:
        switch (c) {
          case 2:
            return "Set()";
          case 3:
            return absl::StrCat("Set(", bind(Ty::kInt), " ...", bind(Ty::kSet),
                                ")");
          case 4:
            return absl::StrCat("Set(", Below(3), " ...", bind(Ty::kSet), ")");
          case 5:
            return absl::StrCat("Set(", bind(Ty::kInt), ")");
          default:
            return bind(ty);
        }
      case Ty::kMap:
        switch (c) {
          case 2:
            return "{}";
          case 3:
            return absl::StrCat("{", MapKey(), ": ", bind(Ty::kInt), " ...",
                                bind(Ty::kMap), "}");
          case 4:
            return absl::StrCat("{\"a\": ", bind(Ty::kInt), ", \"b\": _}");
          case 5:
            return absl::StrCat("{", MapKey(), ": _ ..._}");
          default:
            return bind(ty);
        }
    }
    return "_";
  }

  // ------------------------------------------------------------- processes

  static bool Sendable(const Channel& c, int budget) {
    return c.level < budget;
  }

  std::string Leaf(const Scope& s, int budget) {
    if (static_cast<int>(Below(1000)) < options_.error_permille) {
      return RuntimeError(s);
    }
    if (Chance(65)) return absl::StrCat("stdout!(", Printable(s), ")");
    std::string send = Send(s, budget);
    return send.empty() ? "Nil" : send;
  }

  // A process that fails at run time (the deploy then fails as a whole).
  std::string RuntimeError(const Scope& s) {
    switch (Below(4)) {
      case 0:
        return absl::StrCat("stdout!(", Expr(Ty::kInt, s, 1), " / 0)");
      case 1:
        return absl::StrCat("stdout!(", ListLiteral(s, 1), ".nth(3))");
      case 2:
        return absl::StrCat("stdout!(9223372036854775807 * (",
                            Expr(Ty::kInt, s, 1), " + 99))");
      default:
        return absl::StrCat("if (", Expr(Ty::kInt, s, 1), ") { Nil }");
    }
  }

  std::string Data(const Channel& c, const Scope& s) {
    std::vector<std::string> data;
    for (Ty t : c.sig) data.push_back(Expr(t, s, 2));
    return absl::StrJoin(data, ", ");
  }

  // A send on a channel of `s` that code under `budget` may send on, or ""
  // if there is none.
  std::string Send(const Scope& s, int budget) {
    std::vector<const Channel*> ok;
    for (const Channel& c : s.channels) {
      if (Sendable(c, budget)) ok.push_back(&c);
    }
    if (ok.empty()) return "";
    const Channel& c = *Pick(ok);
    bool persistent = c.level == 0 && Chance(15);
    return absl::StrCat(c.ref, persistent ? "!!(" : "!(", Data(c, s), ")");
  }

  std::string Proc(const Scope& s, int depth, int budget) {
    --fuel_;
    if (fuel_ <= 0 || depth >= options_.max_depth) return Leaf(s, budget);
    switch (Below(16)) {
      case 0:
      case 1:
        return Leaf(s, budget);
      case 2: {
        std::string send = Send(s, budget);
        return send.empty() ? Leaf(s, budget) : send;
      }
      case 3:
      case 4:
        return Receive(s, depth, budget);
      case 5:
        return New(s, depth, budget);
      case 6:
        return Match(s, depth, budget);
      case 7:
        return If(s, depth, budget);
      case 8:
        return Let(s, depth, budget);
      case 9:
        return Contract(s, depth, budget);
      case 10:
        return Recursion(s, depth, budget);
      case 11:
        return absl::StrCat(Proc(s, depth + 1, budget), " | ",
                            Proc(s, depth + 1, budget));
      case 12:
        return Comm(s, depth, budget);
      case 13:
        return Race(s, budget);
      default:
        return absl::StrCat(Leaf(s, budget), " | ", Receive(s, depth, budget));
    }
  }

  // Several receivers (linear or peek) competing for several distinct data
  // on one fresh channel; each prints its tag and what it got, so the
  // output shows which receiver won which datum.
  std::string Race(const Scope& s, int budget) {
    std::string ch = Fresh("race");
    std::vector<std::string> parts;
    int receivers = 2 + static_cast<int>(Below(4));
    int sends = 1 + static_cast<int>(Below(5));
    for (int i = 0; i < receivers; ++i) {
      std::string v = Fresh("v");
      parts.push_back(absl::StrCat("for (@", v, Chance(25) ? " <<- " : " <- ",
                                   ch, ") { stdout!([\"", ch, "\", ", i, ", ",
                                   v, "]) }"));
    }
    for (int i = 0; i < sends; ++i) {
      parts.push_back(absl::StrCat(ch, Chance(10) ? "!!(" : "!(", i * 10, ")"));
    }
    // Interleave deterministically so sends and receives are mixed in Par.
    for (size_t i = parts.size(); i > 1; --i) {
      std::swap(parts[i - 1], parts[Below(i)]);
    }
    return absl::StrCat("new ", ch, " in { ", absl::StrJoin(parts, " | "),
                        " }");
  }

  // A send and a receive on the same channel (they meet unless a literal
  // pattern rejects the datum).
  std::string Comm(const Scope& s, int depth, int budget) {
    std::vector<const Channel*> ok;
    for (const Channel& c : s.channels) {
      if (!c.send_only && Sendable(c, budget)) ok.push_back(&c);
    }
    if (ok.empty()) return Leaf(s, budget);
    const Channel& c = *Pick(ok);
    Scope inner = s;
    Scope binds;
    std::vector<std::string> pats;
    for (Ty t : c.sig) {
      pats.push_back(absl::StrCat("@", WrapPattern(Pattern(t, true, binds))));
    }
    for (ProcVar& v : binds.vars) inner.vars.push_back(v);
    bool persistent = c.level > 0 && Chance(40);
    int body_budget = persistent ? std::min(budget, c.level) : budget;
    return absl::StrCat(c.ref, "!(", Data(c, s), ") | for (",
                        absl::StrJoin(pats, ", "), persistent ? " <= " : " <- ",
                        c.ref, ") ", Body(inner, depth, body_budget));
  }

  std::string Body(const Scope& s, int depth, int budget) {
    return absl::StrCat("{ ", Proc(s, depth + 1, budget), " }");
  }

  std::string Receive(const Scope& s, int depth, int budget) {
    enum Kind { kLinear, kPeek, kPersistent } kind = kLinear;
    int k = static_cast<int>(Below(10));
    if (k < 2) kind = kPeek;
    if (k >= 7) kind = kPersistent;
    std::vector<const Channel*> candidates;
    for (const Channel& c : s.channels) {
      if (!c.send_only && (kind != kPersistent || c.level > 0)) {
        candidates.push_back(&c);
      }
    }
    if (candidates.empty()) {
      kind = kLinear;
      for (const Channel& c : s.channels) {
        if (!c.send_only) candidates.push_back(&c);
      }
    }
    if (candidates.empty()) return Leaf(s, budget);
    size_t joins = std::min<size_t>(candidates.size(), Chance(30) ? 2 : 1);
    // Distinct channels: shuffle deterministically, take the first `joins`.
    for (size_t i = candidates.size(); i > 1; --i) {
      std::swap(candidates[i - 1], candidates[Below(i)]);
    }
    Scope inner = s;
    Scope binds;
    std::vector<std::string> parts;
    int body_budget = budget;
    const char* arrow = kind == kLinear ? " <- "
                        : kind == kPeek ? " <<- "
                                        : " <= ";
    for (size_t j = 0; j < joins; ++j) {
      const Channel& c = *candidates[j];
      std::vector<std::string> pats;
      for (Ty t : c.sig) {
        pats.push_back(absl::StrCat("@", WrapPattern(Pattern(t, true, binds))));
      }
      parts.push_back(absl::StrCat(absl::StrJoin(pats, ", "), arrow, c.ref));
      if (kind == kPersistent) body_budget = std::min(body_budget, c.level);
    }
    for (ProcVar& v : binds.vars) inner.vars.push_back(v);
    return absl::StrCat("for (", absl::StrJoin(parts, " & "), ") ",
                        Body(inner, depth, body_budget));
  }

  // `@` binds tighter than most pattern syntax: brace anything that is not a
  // single token.
  static std::string WrapPattern(const std::string& p) {
    if (p.empty() || p[0] == '{' || p[0] == '[' || p[0] == '"') return p;
    if (p.find_first_of(" (") == std::string::npos) return p;
    return absl::StrCat("{", p, "}");
  }

  std::string New(const Scope& s, int depth, int budget) {
    Scope inner = s;
    int n = 1 + static_cast<int>(Below(3));
    std::vector<std::string> names;
    for (int i = 0; i < n; ++i) {
      Channel c;
      c.ref = Fresh("ch");
      c.sig = RandomSig();
      c.is_new = true;
      if (budget > 1 && Chance(40)) {
        c.level = 1 + static_cast<int>(Below(budget - 1));
      }
      names.push_back(c.ref);
      inner.channels.push_back(std::move(c));
    }
    std::vector<std::string> parts;
    int count = 1 + static_cast<int>(Below(3));
    for (int i = 0; i < count; ++i)
      parts.push_back(Proc(inner, depth + 1, budget));
    return absl::StrCat("new ", absl::StrJoin(names, ", "), " in { ",
                        absl::StrJoin(parts, " | "), " }");
  }

  std::string Match(const Scope& s, int depth, int budget) {
    Ty ty = RandomType();
    std::string target = Expr(ty, s, 2);
    int cases = 1 + static_cast<int>(Below(3));
    std::vector<std::string> out;
    for (int i = 0; i < cases; ++i) {
      Scope binds;
      std::string pat = Pattern(ty, false, binds);
      Scope inner = s;
      for (ProcVar& v : binds.vars) inner.vars.push_back(v);
      out.push_back(absl::StrCat(pat, " => ", Body(inner, depth, budget)));
    }
    if (Chance(50))
      out.push_back(absl::StrCat("_ => ", Body(s, depth, budget)));
    return absl::StrCat("match ", target, " { ", absl::StrJoin(out, " "), " }");
  }

  std::string If(const Scope& s, int depth, int budget) {
    std::string out = absl::StrCat("if (", Expr(Ty::kBool, s, 2), ") ",
                                   Body(s, depth, budget));
    if (Chance(60)) absl::StrAppend(&out, " else ", Body(s, depth, budget));
    return out;
  }

  std::string Let(const Scope& s, int depth, int budget) {
    Scope inner = s;
    std::vector<std::string> binds;
    int n = 1 + static_cast<int>(Below(2));
    for (int i = 0; i < n; ++i) {
      Ty ty = RandomType();
      std::string v = Fresh("l");
      binds.push_back(absl::StrCat("@", v, " <- ", Expr(ty, inner, 2)));
      inner.vars.push_back({v, ty});
    }
    return absl::StrCat("let ", absl::StrJoin(binds, "; "), " in ",
                        Body(inner, depth, budget));
  }

  // A contract with a reply channel and one to three calls to it.
  std::string Contract(const Scope& s, int depth, int budget) {
    if (budget <= 1) return Leaf(s, budget);
    Channel f;
    f.ref = Fresh("f");
    f.sig = RandomSig();
    f.is_new = true;
    f.level = 1 + static_cast<int>(Below(budget - 1));
    Scope body_scope = s;
    Scope binds;
    std::vector<std::string> formals;
    for (Ty t : f.sig) {
      formals.push_back(
          absl::StrCat("@", WrapPattern(Pattern(t, true, binds))));
    }
    std::string ret = Fresh("ret");
    formals.push_back(ret);
    for (ProcVar& v : binds.vars) body_scope.vars.push_back(v);
    Channel ret_channel;
    ret_channel.ref = ret;
    ret_channel.sig = {Ty::kInt};
    ret_channel.send_only = true;
    body_scope.channels.push_back(ret_channel);
    std::string body =
        absl::StrCat(ret, "!(", Expr(Ty::kInt, body_scope, 2), ")");
    if (Chance(50)) {
      absl::StrAppend(&body, " | ", Proc(body_scope, depth + 1, f.level));
    }
    std::string def =
        absl::StrCat("contract ", f.ref, "(", absl::StrJoin(formals, ", "),
                     ") = { ", body, " }");
    Scope caller = s;
    caller.channels.push_back(f);
    std::vector<std::string> parts = {def};
    int calls = 1 + static_cast<int>(Below(3));
    for (int i = 0; i < calls; ++i) {
      std::string r = Fresh("r");
      std::string v = Fresh("v");
      Scope cont = caller;
      cont.vars.push_back({v, Ty::kInt});
      std::string reply = Chance(25) ? absl::StrCat("bundle+ {*", r, "}")
                                     : absl::StrCat("*", r);
      parts.push_back(absl::StrCat(
          "new ", r, " in { ", f.ref, "!(", Data(f, caller), ", ", reply,
          ") | for (@", v, " <- ", r, ") ", Body(cont, depth, budget), " }"));
    }
    return absl::StrCat("new ", f.ref, " in { ", absl::StrJoin(parts, " | "),
                        " }");
  }

  // A contract that calls itself a bounded number of times.
  std::string Recursion(const Scope& s, int depth, int budget) {
    std::string f = Fresh("rec");
    std::string r = Fresh("r");
    std::string v = Fresh("v");
    uint64_t k = Below(options_.max_recursion + 1);
    Scope cont = s;
    cont.vars.push_back({v, Ty::kInt});
    std::string def;
    std::string call;
    switch (Below(3)) {
      case 0:  // countdown, printing each step
        def = absl::StrCat("contract ", f,
                           "(@n, ret) = { if (n <= 0) { ret!(n) }"
                           " else { stdout!((\"step ${n}\" %% {\"n\": n})) | ",
                           f, "!(n - 1, *ret) } }");
        call = absl::StrCat(f, "!(", k, ", *", r, ")");
        break;
      case 1:  // accumulate
        def = absl::StrCat("contract ", f,
                           "(@n, @acc, ret) = { if (n == 0) "
                           "{ ret!(acc) } else { ",
                           f, "!(n - 1, acc + n, *ret) } }");
        call = absl::StrCat(f, "!(", k, ", ", IntLiteral(), ", *", r, ")");
        break;
      default:  // fibonacci with a join on the two sub-results
        k = std::min<uint64_t>(k, 6);
        def = absl::StrCat("contract ", f,
                           "(@n, ret) = { if (n < 2) { ret!(n) }"
                           " else { new a, b in { ",
                           f, "!(n - 1, *a) | ", f,
                           "!(n - 2, *b) | for (@x <- a & @y <- b) "
                           "{ ret!(x + y) } } } }");
        call = absl::StrCat(f, "!(", k, ", *", r, ")");
        break;
    }
    return absl::StrCat("new ", f, ", ", r, " in { ", def, " | ", call,
                        " | for (@", v, " <- ", r, ") ",
                        Body(cont, depth, budget), " }");
  }

  std::mt19937_64 rng_;
  GeneratorOptions options_;
  int fuel_;
  int counter_ = 0;
};

}  // namespace

std::string GenerateProgram(uint64_t seed, const GeneratorOptions& options) {
  return Generator(seed, options).Program();
}

}  // namespace rnode::rholang::interp::testing
