// The RhoSpec test processes (rho:test:*, rho:io:stdlog, sys:test:*) and
// the TestOverrides they set: the table TestSystemProcesses() serves
// (docs/system_processes.md, "Test-only table"). They report through
// ctx.output: one Stdout line per assertion and per completed suite, stdlog
// lines on Stderr.
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "crypto/secp256k1.h"
#include "rholang/interpreter/eval_expr.h"
#include "rholang/interpreter/native_contract.h"
#include "rholang/interpreter/sysproc_internal.h"
#include "rholang/interpreter/system_processes.h"
#include "util/status_macros.h"

namespace rnode::rholang::interp {
namespace sysproc_internal {
namespace {

using ir::Expr;
using ir::ExprKind;
using ir::Par;
using ir::ParPtr;
using ir::UnforgeableKind;
using Args = std::span<const ParPtr>;
using Replies = absl::StatusOr<std::vector<Reply>>;

constexpr char kAssertAck[] = "rho:test:assertAck";
constexpr char kTestSuiteCompleted[] = "rho:test:testSuiteCompleted";
constexpr char kStdlog[] = "rho:io:stdlog";
constexpr char kDeployerIdMake[] = "rho:test:deployerId:make";
constexpr char kSecp256k1Sign[] = "rho:test:crypto:secp256k1Sign";
constexpr char kAuthTokenMake[] = "sys:test:authToken:make";
constexpr char kBlockDataSet[] = "rho:test:block:data:set";
constexpr char kInvalidBlocksSet[] = "rho:test:casper:invalidBlocks:set";

// (testName, attempt, assertion, clue, ack). The assertion is a Bool or a
// tuple (expected, "==" | "!=", actual); ack receives whether it holds.
Replies AssertAck(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kAssertAck, args, 5));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  ASSIGN_OR_RETURN(std::string_view name,
                   StringArg(kAssertAck, args, 0, "test name"));
  const Expr* attempt = SingleOfKind(*args[1], ExprKind::kInt);
  if (attempt == nullptr) {
    return ArgError(kAssertAck, 1, "attempt", "an Int", *args[1]);
  }
  ASSIGN_OR_RETURN(std::string_view clue,
                   StringArg(kAssertAck, args, 3, "clue"));
  // A Bool, or (expected, "==" or "!=", actual). Anything else is a failed
  // assertion, as the public test collector counts it, not an error: a
  // suite that asserts garbage fails its case and goes on.
  bool holds = false;
  bool understood = true;
  const Par& assertion = *args[2];
  if (const Expr* b = SingleOfKind(assertion, ExprKind::kBool)) {
    holds = b->bool_value;
  } else if (const Expr* t = SingleOfKind(assertion, ExprKind::kTuple);
             t != nullptr && t->operands.size() == 3) {
    const Expr* op = SingleOfKind(*t->operands[1], ExprKind::kString);
    if (op != nullptr && (op->text == "==" || op->text == "!=")) {
      bool equal = ir::Equal(t->operands[0], t->operands[2]);
      holds = op->text == "==" ? equal : !equal;
    } else {
      understood = false;
    }
  } else {
    understood = false;
  }
  Emit(ctx, Stream::kOut,
       absl::StrCat("assert ", Sv(name), " (attempt ", attempt->int_value,
                    "): ", holds ? "ok" : "FAILED", ": ", Sv(clue),
                    understood ? ""
                               : absl::StrCat(" (not an assertion: got ",
                                              ValueTypeName(assertion), ")")));
  return ReplyWith(args[4], {BoolPar(holds)});
}

Replies TestSuiteCompleted(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kTestSuiteCompleted, args, 1));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  ASSIGN_OR_RETURN(std::string text, Render(*args[0], ctx));
  Emit(ctx, Stream::kOut, absl::StrCat("testSuiteCompleted ", text));
  return std::vector<Reply>{};
}

// (level, message): level one of trace debug info warn error.
Replies Stdlog(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kStdlog, args, 2));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  ASSIGN_OR_RETURN(std::string_view level,
                   StringArg(kStdlog, args, 0, "level"));
  if (level != "trace" && level != "debug" && level != "info" &&
      level != "warn" && level != "error") {
    return absl::InvalidArgumentError(
        absl::StrCat(kStdlog,
                     ": argument 1 (level) must be one of trace, debug, info, "
                     "warn, error, got ",
                     Quoted(level)));
  }
  ASSIGN_OR_RETURN(std::string text, Render(*args[1], ctx));
  Emit(ctx, Stream::kErr, absl::StrCat("[", Sv(level), "] ", text));
  return std::vector<Reply>{};
}

// ("deployerId", key bytes, ack) -> ack!(GDeployerId(key)).
Replies DeployerIdMake(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kDeployerIdMake, args, 3));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  RETURN_IF_ERROR(OpArg(kDeployerIdMake, args, {"deployerId"}).status());
  ASSIGN_OR_RETURN(ByteView key, ByteArrayArg(kDeployerIdMake, args, 1, "key"));
  return ReplyWith(args[2],
                   {UnforgeablePar(UnforgeableKind::kDeployerId, key)});
}

// (digest, private key, ack) -> ack!(DER signature).
Replies Secp256k1Sign(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kSecp256k1Sign, args, 3));
  RETURN_IF_ERROR(Charge(ctx, kCallCost + kSignatureVerify));
  ASSIGN_OR_RETURN(ByteView digest,
                   ByteArrayArg(kSecp256k1Sign, args, 0, "digest"));
  ASSIGN_OR_RETURN(ByteView sk_bytes,
                   ByteArrayArg(kSecp256k1Sign, args, 1, "private key"));
  absl::StatusOr<crypto::Secp256k1PrivateKey> sk =
      crypto::ParseSecp256k1PrivateKey(sk_bytes);
  if (!sk.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        kSecp256k1Sign, ": argument 2 (private key): ", sk.status().message()));
  }
  absl::StatusOr<Bytes> sig = crypto::Secp256k1SignDer(digest, *sk);
  sk->fill(0);
  if (!sig.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        kSecp256k1Sign, ": argument 1 (digest): ", sig.status().message()));
  }
  return ReplyWith(args[2], {BytesPar(*sig)});
}

// (ack) -> ack!(GSysAuthToken).
Replies AuthTokenMake(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kAuthTokenMake, args, 1));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  return ReplyWith(args[0],
                   {UnforgeablePar(UnforgeableKind::kSysAuthToken, {})});
}

absl::Status NoTestState(std::string_view uri) {
  return absl::FailedPreconditionError(
      absl::StrCat(Sv(uri), ": this runtime keeps no test state"));
}

// ("sender", key bytes, ack) or ("blockNumber", n, ack): rho:block:data
// answers with it from then on; ack!(Nil).
Replies BlockDataSet(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kBlockDataSet, args, 3));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  if (ctx.test == nullptr) return NoTestState(kBlockDataSet);
  ASSIGN_OR_RETURN(std::string_view op,
                   OpArg(kBlockDataSet, args, {"sender", "blockNumber"}));
  if (op == "sender") {
    ASSIGN_OR_RETURN(ByteView key,
                     ByteArrayArg(kBlockDataSet, args, 1, "sender"));
    ctx.test->SetSender(key);
  } else {
    const Expr* n = SingleOfKind(*args[1], ExprKind::kInt);
    if (n == nullptr) {
      return ArgError(kBlockDataSet, 1, "blockNumber", "an Int", *args[1]);
    }
    ctx.test->SetBlockNumber(n->int_value);
  }
  return ReplyWith(args[2], {ir::Nil()});
}

// (blocks, ack): rho:casper:invalidBlocks (and PoS's slash) see `blocks`
// from then on; ack!(Nil).
Replies InvalidBlocksSet(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kInvalidBlocksSet, args, 2));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  if (ctx.test == nullptr) return NoTestState(kInvalidBlocksSet);
  ctx.test->SetInvalidBlocks(args[0]);
  return ReplyWith(args[1], {ir::Nil()});
}

}  // namespace

std::vector<SystemProcessDef> MakeTest() {
  std::vector<SystemProcessDef> t;
  t.push_back(Def(kAssertAck, 101, 101, 5, &AssertAck));
  t.push_back(Def(kTestSuiteCompleted, 102, 102, 1, &TestSuiteCompleted));
  t.push_back(Def(kStdlog, 103, 103, 2, &Stdlog));
  t.push_back(Def(kDeployerIdMake, 104, 104, 3, &DeployerIdMake));
  t.push_back(Def(kSecp256k1Sign, 105, 105, 3, &Secp256k1Sign));
  t.push_back(Def(kAuthTokenMake, 106, 106, 1, &AuthTokenMake));
  t.push_back(Def(kBlockDataSet, 107, 107, 3, &BlockDataSet));
  t.push_back(Def(kInvalidBlocksSet, 108, 108, 2, &InvalidBlocksSet));
  return t;
}

}  // namespace sysproc_internal

void TestOverrides::SetSender(ByteView key) {
  MutexLock lock(&mu_);
  sender_ = Bytes(key.begin(), key.end());
  active_.store(true, std::memory_order_release);
}

void TestOverrides::SetBlockNumber(int64_t number) {
  MutexLock lock(&mu_);
  number_ = number;
  active_.store(true, std::memory_order_release);
}

void TestOverrides::SetInvalidBlocks(ir::ParPtr blocks) {
  MutexLock lock(&mu_);
  invalid_blocks_ = std::move(blocks);
  active_.store(true, std::memory_order_release);
}

bool TestOverrides::active() const {
  return active_.load(std::memory_order_acquire);
}

BlockInfo TestOverrides::Block(const BlockInfo* base) const {
  BlockInfo b = base != nullptr ? *base : BlockInfo();
  MutexLock lock(&mu_);
  if (sender_.has_value()) b.sender_public_key = *sender_;
  if (number_.has_value()) b.block_number = *number_;
  return b;
}

ir::ParPtr TestOverrides::InvalidBlocks(const ir::ParPtr& base) const {
  MutexLock lock(&mu_);
  return invalid_blocks_ != nullptr ? invalid_blocks_ : base;
}

}  // namespace rnode::rholang::interp
