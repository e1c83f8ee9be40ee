// Random well-formed Rholang programs for the interpreter's property tests.
#ifndef RNODE_TESTS_INTERPRETER_PROGRAM_GENERATOR_H_
#define RNODE_TESTS_INTERPRETER_PROGRAM_GENERATOR_H_

#include <cstdint>
#include <string>

namespace rnode::rholang::interp::testing {

struct GeneratorOptions {
  // Maximum nesting of processes (receive bodies, news, matches, ifs).
  int max_depth = 5;
  // Upper bound on the number of processes emitted in one program; keeps
  // each evaluation in the low milliseconds.
  int max_processes = 60;
  // Upper bound on the argument of the generated recursive contracts
  // (countdown, accumulate, fibonacci): recursion is bounded by it.
  int max_recursion = 7;
  // Per mille of leaf processes that fail at run time (division by zero,
  // nth out of range, overflow, non-Bool condition), so that error paths
  // are exercised too; 0 for programs that never fail on their own.
  int error_permille = 4;
};

// Returns a program, fully determined by `seed` and `options` (the same on
// every platform: no std distributions), that:
//  * compiles with rnode::rholang::Compile;
//  * binds `rho:io:stdout` and prints values of every kind with it;
//  * uses sends, `!!`, linear, persistent and peek receives, joins, `new`,
//    `match` (with logical and simple-type patterns and remainders), `if`,
//    `let`, bundles as reply channels, contracts with reply channels and
//    contracts with bounded recursion, and expressions over Int, String,
//    Bool, List, Set and Map;
//  * terminates: channels with persistent receives are stratified (code
//    under a persistent receive on a channel of level L only sends to
//    persistent channels of a lower level; persistent channels never get
//    `!!`), and recursive contracts count down from a literal;
//  * cannot overflow: `*` only multiplies small literals, values only grow
//    by additions along finite chains (except the deliberate runtime errors
//    of GeneratorOptions::error_permille);
//  * gives every channel one payload signature, so most receives match.
// Programs may race (two receivers for one datum): the interpreter must
// still evaluate them deterministically.
std::string GenerateProgram(uint64_t seed,
                            const GeneratorOptions& options = {});

}  // namespace rnode::rholang::interp::testing

#endif  // RNODE_TESTS_INTERPRETER_PROGRAM_GENERATOR_H_
