// Randomized tests (each prints its seed; RNODE_TEST_SEED replays it,
// tests/test_seed.h): arbitrary bytes and token soups never crash, and
// generated programs normalize, round-trip and are invariant under Par
// reordering and renaming of bound variables.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "rholang/frontend/diagnostic.h"
#include "rholang/frontend/ir_encoding.h"
#include "rholang/frontend/normalizer.h"
#include "rholang/frontend/printer.h"
#include "tests/test_seed.h"
#include "util/bytes.h"

namespace rnode::rholang {
namespace {

void ExpectErrorOrIr(const std::string& src) {
  auto r = Compile(src);
  if (r.ok()) return;
  auto d = DiagnosticFromStatus(r.status());
  ASSERT_TRUE(d.has_value());
  EXPECT_GE(d->line, 1u) << src;
  EXPECT_FALSE(d->message.empty()) << src;
}

TEST(RandomInputTest, ArbitraryBytesNeverCrash) {
  const uint64_t seed = ::rnode::testing::TestSeed(20261130);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 3000; ++i) {
    std::string src(rng() % 64, '\0');
    for (char& c : src) c = static_cast<char>(rng() & 0xFF);
    ExpectErrorOrIr(src);
  }
}

TEST(RandomInputTest, TokenSoupNeverCrashes) {
  static const char* kTokens[] = {
      "new", "in",    "for",     "(",       ")",    "{",    "}",    "[",
      "]",   "<-",    "<=",      "<<-",     "&",    ";",    "|",    "!",
      "!!",  "!?",    "?!",      "@",       "*",    "x",    "y",    "_",
      "1",   "\"s\"", "`u`",     "match",   "=>",   "if",   "else", "contract",
      "=",   "let",   "bundle+", "bundle0", "Nil",  "true", "+",    "-",
      "++",  "%%",    "matches", "/\\",     "\\/",  "~",    "=*",   ".",
      "len", ",",     "...",     "Set",     "Int",  ":",    "not",  "and",
      "or",  "==",    "<",       "select",  "where"};
  const uint64_t seed = ::rnode::testing::TestSeed(20261131);
  std::mt19937_64 rng(seed);
  constexpr size_t kCount = sizeof(kTokens) / sizeof(kTokens[0]);
  for (int i = 0; i < 3000; ++i) {
    std::string src;
    size_t n = rng() % 40;
    for (size_t k = 0; k < n; ++k) {
      src += kTokens[rng() % kCount];
      src += ' ';
    }
    ExpectErrorOrIr(src);
  }
}

// Generates random well-formed programs; the same seed with another name
// prefix yields an alpha-equivalent program.
class ProgramGenerator {
 public:
  ProgramGenerator(uint64_t seed, std::string prefix)
      : rng_(seed), prefix_(std::move(prefix)) {}

  // Top-level components, to be joined with `|` in any order.
  std::vector<std::string> Components(int count) {
    std::vector<std::string> out;
    for (int i = 0; i < count; ++i) out.push_back(Proc(4));
    return out;
  }

 private:
  uint64_t Pick(uint64_t n) { return rng_() % n; }

  std::string Fresh() { return prefix_ + std::to_string(counter_++); }

  std::string Name() {
    if (!names_.empty() && Pick(3) != 0) return names_[Pick(names_.size())];
    return "@" + std::to_string(Pick(5));
  }

  std::string Expr(int depth) {
    switch (depth <= 0 ? Pick(4) : Pick(10)) {
      case 0:
        return std::to_string(static_cast<int64_t>(Pick(200)) - 100);
      case 1:
        return "\"s" + std::to_string(Pick(9)) + "\"";
      case 2:
        return Pick(2) ? "true" : "false";
      case 3:
        if (!procs_.empty()) return procs_[Pick(procs_.size())];
        return "Nil";
      case 4:
        return "(" + Expr(depth - 1) + " + " + Expr(depth - 1) + ")";
      case 5:
        return "[" + Expr(depth - 1) + ", " + Expr(depth - 1) + "]";
      case 6:
        return "Set(" + Expr(depth - 1) + ", " + Expr(depth - 1) + ")";
      case 7:
        return "{" + Expr(depth - 1) + ": " + Expr(depth - 1) + "}";
      case 8:
        return "(" + Expr(depth - 1) + ").length()";
      default:
        return names_.empty() ? "Nil" : "*" + names_[Pick(names_.size())];
    }
  }

  std::string Proc(int depth) {
    switch (depth <= 0 ? 0 : Pick(8)) {
      case 0: {
        std::string s = Name() + (Pick(4) == 0 ? "!!(" : "!(");
        int n = static_cast<int>(Pick(3));
        for (int i = 0; i < n; ++i) {
          s += (i ? ", " : "") + Expr(2);
        }
        return s + ")";
      }
      case 1: {
        int n = 1 + static_cast<int>(Pick(2));
        std::string s = "new ";
        size_t mark = names_.size();
        for (int i = 0; i < n; ++i) {
          names_.push_back(Fresh());
          s += (i ? ", " : "") + names_.back();
        }
        s += " in { " + Proc(depth - 1) + " }";
        names_.resize(mark);
        return s;
      }
      case 2: {
        int n = 1 + static_cast<int>(Pick(2));
        std::string s = "for (";
        size_t mark_p = procs_.size();
        size_t mark_n = names_.size();
        std::vector<std::string> bound_p, bound_n;
        for (int i = 0; i < n; ++i) {
          std::string v = Fresh();
          bool proc = Pick(2) == 0;
          (proc ? bound_p : bound_n).push_back(v);
          const char* arrow = Pick(3) == 0 ? " <= " : " <- ";
          if (i > 0 && arrow[2] != '=') arrow = " <- ";
          s += (i ? " & " : "") + (proc ? "@" + v : v) + arrow + "@\"j" +
               std::to_string(i) + "\"";
        }
        s += ") { ";
        procs_.insert(procs_.end(), bound_p.begin(), bound_p.end());
        names_.insert(names_.end(), bound_n.begin(), bound_n.end());
        s += Proc(depth - 1) + " }";
        procs_.resize(mark_p);
        names_.resize(mark_n);
        return s;
      }
      case 3: {
        std::string s = "match " + Expr(1) + " { ";
        std::string v = Fresh();
        s += "[" + v + ", _] => { ";
        procs_.push_back(v);
        s += Proc(depth - 1) + " } ";
        procs_.pop_back();
        s += "_ => { " + Proc(depth - 1) + " } }";
        return s;
      }
      case 4:
        return "if (" + Expr(1) + " == " + Expr(1) + ") { " + Proc(depth - 1) +
               " } else { " + Proc(depth - 1) + " }";
      case 5:
        return Proc(depth - 1) + " | " + Proc(depth - 1);
      case 6: {
        std::string v = Fresh();
        std::string s = "contract " + Name() + "(@" + v + ") = { ";
        procs_.push_back(v);
        s += Proc(depth - 1) + " }";
        procs_.pop_back();
        return s;
      }
      default:
        return "bundle+ { " + Proc(depth - 1) + " }";
    }
  }

  std::mt19937_64 rng_;
  std::string prefix_;
  uint64_t counter_ = 0;
  std::vector<std::string> names_;
  std::vector<std::string> procs_;
};

std::string Join(const std::vector<std::string>& parts) {
  std::string s;
  for (size_t i = 0; i < parts.size(); ++i) {
    s += (i ? " | " : "") + parts[i];
  }
  return s;
}

TEST(RandomProgramTest, GeneratedProgramsNormalizeAndRoundTrip) {
  const uint64_t seed = ::rnode::testing::TestSeed(20261132);
  std::mt19937_64 seeds(seed);
  for (int i = 0; i < 300; ++i) {
    uint64_t seed = seeds();
    std::vector<std::string> parts = ProgramGenerator(seed, "v").Components(3);
    std::string src = Join(parts);
    auto ir = Compile(src);
    ASSERT_TRUE(ir.ok()) << ir.status() << "\n" << src;
    auto printed = Print(**ir);
    ASSERT_TRUE(printed.ok());
    auto again = Compile(*printed);
    ASSERT_TRUE(again.ok()) << again.status() << "\n" << *printed;
    EXPECT_EQ((*again)->hash, (*ir)->hash) << src << "\n" << *printed;
    auto bytes = ir::EncodePar(**ir);
    ASSERT_TRUE(bytes.ok());
    auto decoded = ir::DecodePar(*bytes);
    ASSERT_TRUE(decoded.ok()) << decoded.status();
    EXPECT_EQ((*decoded)->hash, (*ir)->hash);
  }
}

TEST(RandomProgramTest, ParOrderDoesNotChangeTheHash) {
  const uint64_t seed = ::rnode::testing::TestSeed(20261133);
  std::mt19937_64 seeds(seed);
  for (int i = 0; i < 200; ++i) {
    std::vector<std::string> parts =
        ProgramGenerator(seeds(), "v").Components(4);
    auto a = Compile(Join(parts));
    ASSERT_TRUE(a.ok()) << a.status();
    std::shuffle(parts.begin(), parts.end(), seeds);
    auto b = Compile(Join(parts));
    ASSERT_TRUE(b.ok()) << b.status();
    EXPECT_EQ((*a)->hash, (*b)->hash) << Join(parts);
  }
}

TEST(RandomProgramTest, RenamingBoundVariablesDoesNotChangeTheHash) {
  const uint64_t seed = ::rnode::testing::TestSeed(20261134);
  std::mt19937_64 seeds(seed);
  for (int i = 0; i < 200; ++i) {
    uint64_t seed = seeds();
    std::string a_src = Join(ProgramGenerator(seed, "v").Components(3));
    std::string b_src = Join(ProgramGenerator(seed, "renamed_").Components(3));
    auto a = Compile(a_src);
    auto b = Compile(b_src);
    ASSERT_TRUE(a.ok()) << a.status() << "\n" << a_src;
    ASSERT_TRUE(b.ok()) << b.status() << "\n" << b_src;
    EXPECT_EQ((*a)->hash, (*b)->hash) << a_src << "\n" << b_src;
  }
}

TEST(RandomProgramTest, MutatedProgramsNeverCrash) {
  const uint64_t seed = ::rnode::testing::TestSeed(20261135);
  std::mt19937_64 rng(seed);
  for (int i = 0; i < 300; ++i) {
    std::string src = Join(ProgramGenerator(rng(), "v").Components(2));
    for (int m = 0; m < 3 && !src.empty(); ++m) {
      size_t at = rng() % src.size();
      switch (rng() % 3) {
        case 0:
          src.erase(at, 1 + rng() % 4);
          break;
        case 1:
          src.insert(at, 1, static_cast<char>(rng() % 128));
          break;
        default:
          std::swap(src[at], src[rng() % src.size()]);
          break;
      }
    }
    ExpectErrorOrIr(src);
  }
}

}  // namespace
}  // namespace rnode::rholang
