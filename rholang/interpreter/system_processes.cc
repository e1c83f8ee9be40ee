// The system processes' handlers and the standard and test tables
// (docs/system_processes.md lists every entry, its behaviour and its cost).
#include "rholang/interpreter/system_processes.h"

#include <cstring>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "crypto/base58.h"
#include "crypto/ed25519.h"
#include "crypto/hash.h"
#include "crypto/rev_address.h"
#include "crypto/secp256k1.h"
#include "rholang/frontend/printer.h"
#include "rholang/interpreter/eval_expr.h"
#include "rholang/interpreter/limits.h"
#include "rholang/interpreter/native_contract.h"
#include "rholang/interpreter/registry_semver.h"
#include "rholang/interpreter/registry_uri.h"
#include "rholang/interpreter/sysproc_internal.h"
#include "util/status_macros.h"

namespace rnode::rholang::interp {
namespace {

using ir::Expr;
using ir::ExprKind;
using ir::Par;
using ir::ParPtr;
using ir::UnforgeableKind;
using Args = std::span<const ParPtr>;
using Replies = absl::StatusOr<std::vector<Reply>>;
using sysproc_internal::Def;
using sysproc_internal::Emit;
using sysproc_internal::kAddressDerivation;
using sysproc_internal::kCallCost;
using sysproc_internal::kHashBase;
using sysproc_internal::kSignatureVerify;
using sysproc_internal::MakeTest;
using sysproc_internal::Render;
using sysproc_internal::Stream;
using sysproc_internal::Sv;

// ---------------------------------------------------------------------------
// URIs and fixed channel bytes (rholang.md §5, RUST column).

constexpr char kStdout[] = "rho:io:stdout";
constexpr char kStdoutAck[] = "rho:io:stdoutAck";
constexpr char kStderr[] = "rho:io:stderr";
constexpr char kStderrAck[] = "rho:io:stderrAck";
constexpr char kEd25519Verify[] = "rho:crypto:ed25519Verify";
constexpr char kSha256Hash[] = "rho:crypto:sha256Hash";
constexpr char kKeccak256Hash[] = "rho:crypto:keccak256Hash";
constexpr char kBlake2b256Hash[] = "rho:crypto:blake2b256Hash";
constexpr char kSecp256k1Verify[] = "rho:crypto:secp256k1Verify";
constexpr char kBlockData[] = "rho:block:data";
constexpr char kInvalidBlocks[] = "rho:casper:invalidBlocks";
constexpr char kVaultAddress[] = "rho:vault:address";
constexpr char kDeployerIdOps[] = "rho:system:deployerId:ops";
constexpr char kRegistryLookup[] = "rho:registry:lookup";
constexpr char kRegistryInsertArbitrary[] = "rho:registry:insertArbitrary";
constexpr char kRegistryInsertSigned[] = "rho:registry:insertSigned:secp256k1";
constexpr char kRegistryOps[] = "rho:registry:ops";
constexpr char kRegistryOpsV1[] = "rho:registry:ops:1.0.0";
constexpr char kAuthTokenOps[] = "sys:authToken:ops";
constexpr char kRegistryV1Internal[] = "rho:registry:v1:internal";
constexpr char kRegistryV1[] = "rho:registry:1.0.0";
constexpr char kDevNull[] = "rho:io:devNull";
constexpr char kAbort[] = "rho:execution:abort";
constexpr char kDeployData[] = "rho:deploy:data";

// secp256k1Verify signs a digest, never a message.
constexpr size_t kSecp256k1DigestBytes = 32;

// Error messages quote at most this many bytes of a deploy's string, so a
// deploy cannot make its error (which is logged and returned) large.
constexpr size_t kMaxQuotedBytes = 64;

}  // namespace

// ---------------------------------------------------------------------------
// Argument access (declared in native_contract.h).

std::string Quoted(std::string_view s) {
  if (s.size() <= kMaxQuotedBytes) return absl::StrCat("\"", Sv(s), "\"");
  return absl::StrCat("\"", Sv(s.substr(0, kMaxQuotedBytes)), "\"...");
}

absl::Status ArgError(std::string_view uri, size_t index, std::string_view name,
                      std::string_view expected, const Par& got) {
  return absl::InvalidArgumentError(
      absl::StrCat(Sv(uri), ": argument ", index + 1, " (", Sv(name),
                   ") must be ", Sv(expected), ", got ", ValueTypeName(got)));
}

absl::Status CheckArity(std::string_view uri, Args args, size_t arity) {
  if (args.size() == arity) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      Sv(uri), ": expected ", arity, " arguments, got ", args.size()));
}

absl::Status Charge(ProcessContext& ctx, int64_t amount) {
  if (ctx.meter == nullptr) {
    return absl::InternalError("system process called without a phlo meter");
  }
  return ctx.meter->Charge(amount);
}

// The public node's reading of "a single value" (its singleExpr /
// singleUnforgeable), which we follow because it decides replies: a Par is
// one expression if it has exactly one expr and no send, receive, new, match
// or bundle (unforgeables in parallel are ignored); it is one unforgeable if
// it has exactly one and nothing else but conditionals (which evaluated data
// never holds).
const Expr* ValueExpr(const Par& p) {
  if (p.exprs.size() != 1 || !p.sends.empty() || !p.receives.empty() ||
      !p.news.empty() || !p.matches.empty() || !p.bundles.empty()) {
    return nullptr;
  }
  return p.exprs[0].get();
}

const Expr* SingleOfKind(const Par& p, ExprKind kind) {
  const Expr* e = ValueExpr(p);
  return e != nullptr && e->kind == kind ? e : nullptr;
}

// The unforgeable of kind `kind` if `p` is exactly that one name.
const ir::Unforgeable* SingleUnforgeable(const Par& p, UnforgeableKind kind) {
  if (p.unforgeables.size() != 1 ||
      p.ComponentCount() != 1 + p.conditionals.size()) {
    return nullptr;
  }
  const ir::Unforgeable* u = p.unforgeables[0].get();
  return u->kind == kind ? u : nullptr;
}

absl::StatusOr<ByteView> ByteArrayArg(std::string_view uri, Args args,
                                      size_t index, std::string_view name) {
  const Expr* e = SingleOfKind(*args[index], ExprKind::kByteArray);
  if (e == nullptr) {
    return ArgError(uri, index, name, "a ByteArray", *args[index]);
  }
  return AsBytes(e->text);
}

absl::StatusOr<std::string_view> StringArg(std::string_view uri, Args args,
                                           size_t index,
                                           std::string_view name) {
  const Expr* e = SingleOfKind(*args[index], ExprKind::kString);
  if (e == nullptr) return ArgError(uri, index, name, "a String", *args[index]);
  return std::string_view(e->text);
}

// The operation name (argument 1) of a ("op", x, ack) process, which must be
// one of `ops`.
absl::StatusOr<std::string_view> OpArg(
    std::string_view uri, Args args,
    std::initializer_list<std::string_view> ops) {
  ASSIGN_OR_RETURN(std::string_view op, StringArg(uri, args, 0, "operation"));
  for (std::string_view known : ops) {
    if (op == known) return op;
  }
  std::string list;
  for (std::string_view known : ops) {
    absl::StrAppend(&list, list.empty() ? "" : ", ", "\"", Sv(known), "\"");
  }
  return absl::InvalidArgumentError(
      absl::StrCat(Sv(uri), ": argument 1 (operation) must be one of ", list,
                   ", got ", Quoted(op)));
}

// ---------------------------------------------------------------------------
// Values.

ParPtr BoolPar(bool v) { return ir::ParOf(Expr::Bool(v)); }
ParPtr IntPar(int64_t v) { return ir::ParOf(Expr::Int(v)); }
ParPtr StringPar(std::string v) {
  return ir::ParOf(Expr::String(std::move(v)));
}
ParPtr BytesPar(ByteView v) { return ir::ParOf(Expr::ByteArray(v)); }
ParPtr UnforgeablePar(UnforgeableKind kind, ByteView id) {
  return ir::ParBuilder().Add(ir::Unforgeable::Make(kind, id)).Build();
}
ParPtr EmptyMapPar() { return ir::ParOf(Expr::Map({}, std::nullopt)); }

std::vector<Reply> ReplyWith(const ParPtr& ack, std::vector<ParPtr> data) {
  std::vector<Reply> out;
  out.push_back(Reply{ack, std::move(data)});
  return out;
}

namespace sysproc_internal {

absl::StatusOr<std::string> Render(const ir::Par& p, ProcessContext& ctx) {
  absl::StatusOr<std::string> printed = Print(p);
  std::string text =
      printed.ok()
          ? *std::move(printed)
          : absl::StrCat("<unprintable: ", printed.status().message(), ">");
  RETURN_IF_ERROR(
      Charge(ctx, cost::kPerByte * static_cast<int64_t>(text.size())));
  return text;
}

void Emit(ProcessContext& ctx, Stream stream, std::string_view line) {
  if (ctx.output == nullptr) return;
  if (stream == Stream::kOut) {
    ctx.output->Stdout(line);
  } else {
    ctx.output->Stderr(line);
  }
}

}  // namespace sysproc_internal

namespace {

// ---------------------------------------------------------------------------
// stdout / stderr.

ProcessHandler PrintHandler(const char* uri, Stream stream, bool ack) {
  return [uri, stream, ack](Args args, ProcessContext& ctx) -> Replies {
    RETURN_IF_ERROR(CheckArity(uri, args, ack ? 2 : 1));
    RETURN_IF_ERROR(Charge(ctx, kCallCost));
    // A term over kMaxTermNodes would print for ever: it fails the deploy.
    RETURN_IF_ERROR(CheckTermSize(uri, *args[0]));
    ASSIGN_OR_RETURN(std::string text, Render(*args[0], ctx));
    Emit(ctx, stream, text);
    if (!ack) return std::vector<Reply>{};
    return ReplyWith(args[1], {ir::Nil()});
  };
}

// ---------------------------------------------------------------------------
// Hashes and signatures.

template <Hash32 (*kHash)(ByteView)>
ProcessHandler HashHandler(const char* uri) {
  return [uri](Args args, ProcessContext& ctx) -> Replies {
    RETURN_IF_ERROR(CheckArity(uri, args, 2));
    RETURN_IF_ERROR(Charge(ctx, kCallCost));
    ASSIGN_OR_RETURN(ByteView input, ByteArrayArg(uri, args, 0, "bytes"));
    RETURN_IF_ERROR(Charge(
        ctx, kHashBase + cost::kPerByte * static_cast<int64_t>(input.size())));
    Hash32 digest = kHash(input);
    return ReplyWith(args[1], {BytesPar(digest)});
  };
}

// `verify(data, signature, key)`: true iff the signature verifies; every
// malformed input is simply false, as in the public node.
using VerifyFn = bool (*)(ByteView, ByteView, ByteView);

bool Ed25519Verifies(ByteView data, ByteView sig, ByteView key) {
  absl::StatusOr<bool> ok = crypto::Ed25519Verify(data, sig, key);
  return ok.ok() && *ok;
}

bool Secp256k1Verifies(ByteView digest, ByteView sig, ByteView key) {
  // The public node refuses (false) any digest that is not 32 bytes, a
  // signature that is not DER or has a high S, and a malformed key; our
  // verifier returns an error in each of those cases.
  if (digest.size() != kSecp256k1DigestBytes) return false;
  // A compressed key is accepted too, as the public node does.
  crypto::Secp256k1PublicKey full{};
  if (key.size() == 33) {
    absl::StatusOr<crypto::Secp256k1PublicKey> k =
        crypto::DecompressSecp256k1PublicKey(key);
    if (!k.ok()) return false;
    full = *k;
    key = ByteView(full.data(), full.size());
  }
  absl::StatusOr<bool> ok = crypto::Secp256k1VerifyDer(digest, sig, key);
  return ok.ok() && *ok;
}

ProcessHandler VerifyHandler(const char* uri, VerifyFn verify) {
  return [uri, verify](Args args, ProcessContext& ctx) -> Replies {
    RETURN_IF_ERROR(CheckArity(uri, args, 4));
    RETURN_IF_ERROR(Charge(ctx, kCallCost));
    ASSIGN_OR_RETURN(ByteView data, ByteArrayArg(uri, args, 0, "data"));
    ASSIGN_OR_RETURN(ByteView sig, ByteArrayArg(uri, args, 1, "signature"));
    ASSIGN_OR_RETURN(ByteView key, ByteArrayArg(uri, args, 2, "public key"));
    RETURN_IF_ERROR(Charge(
        ctx,
        kSignatureVerify + cost::kPerByte * static_cast<int64_t>(data.size())));
    return ReplyWith(args[3], {BoolPar(verify(data, sig, key))});
  };
}

// ---------------------------------------------------------------------------
// Block, Casper and deploy data.

// The deployer key and deploy id of the public node's empty deploy data
// (what it reports when no deploy is set).
constexpr uint8_t kNoKey[] = {0};

Replies BlockData(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kBlockData, args, 1));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  if (ctx.block == nullptr) {
    // Per system_processes.h: zeros and an empty key (the public node's
    // empty block data has the one-byte key {0}; docs/system_processes.md).
    return ReplyWith(args[0], {IntPar(0), IntPar(0), BytesPar({})});
  }
  const BlockInfo& b = *ctx.block;
  return ReplyWith(args[0], {IntPar(b.block_number), IntPar(b.timestamp),
                             BytesPar(b.sender_public_key)});
}

Replies InvalidBlocks(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kInvalidBlocks, args, 1));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  // Unset: the empty map, per system_processes.h (the public node's unset
  // value is Nil; Casper always sets it before a block's deploys).
  ParPtr blocks = ctx.invalid_blocks ? ctx.invalid_blocks : EmptyMapPar();
  return ReplyWith(args[0], {blocks});
}

Replies DeployData(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kDeployData, args, 1));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  if (ctx.deploy == nullptr) {
    // The public node's empty deploy data: timestamp 0, key and id {0}.
    return ReplyWith(
        args[0],
        {IntPar(0), UnforgeablePar(UnforgeableKind::kDeployerId, kNoKey),
         UnforgeablePar(UnforgeableKind::kDeployId, kNoKey)});
  }
  const DeployInfo& d = *ctx.deploy;
  return ReplyWith(
      args[0],
      {IntPar(d.timestamp),
       UnforgeablePar(UnforgeableKind::kDeployerId, d.deployer_public_key),
       UnforgeablePar(UnforgeableKind::kDeployId, d.deploy_id)});
}

}  // namespace

// ---------------------------------------------------------------------------
// REV ("vault") addresses.

// The address of a GPrivate: its key hash is keccak256 of the protobuf
// encoding of the message GPrivate{id} (field 1, bytes), which is empty for
// an empty id.
std::string AddressOfPrivateName(ByteView id) {
  Bytes encoded;
  if (!id.empty()) {
    encoded.push_back(0x0a);
    uint64_t n = id.size();
    while (n >= 0x80) {
      encoded.push_back(static_cast<uint8_t>(n | 0x80));
      n >>= 7;
    }
    encoded.push_back(static_cast<uint8_t>(n));
    encoded.insert(encoded.end(), id.begin(), id.end());
  }
  return crypto::RevAddressFromKeyHash(crypto::Keccak256(encoded));
}

namespace {

ParPtr AddressOrNil(const std::optional<std::string>& address) {
  return address ? StringPar(*address) : ir::Nil();
}

Replies VaultAddress(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kVaultAddress, args, 3));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  ASSIGN_OR_RETURN(std::string_view op,
                   OpArg(kVaultAddress, args,
                         {"validate", "fromPublicKey", "fromDeployerId",
                          "fromUnforgeable"}));
  const Par& arg = *args[1];
  ParPtr result = ir::Nil();
  // A second argument of the wrong kind gives Nil, not an error (as in the
  // public node).
  if (op == "validate") {
    if (const Expr* s = SingleOfKind(arg, ExprKind::kString)) {
      RETURN_IF_ERROR(Charge(
          ctx,
          kHashBase + cost::kPerByte * static_cast<int64_t>(s->text.size())));
      crypto::RevAddressError error = crypto::CheckRevAddress(s->text);
      if (error != crypto::RevAddressError::kNone) {
        result = StringPar(std::string(crypto::RevAddressErrorText(error)));
      }
    }
  } else if (op == "fromPublicKey") {
    if (const Expr* b = SingleOfKind(arg, ExprKind::kByteArray)) {
      RETURN_IF_ERROR(Charge(ctx, kAddressDerivation));
      result = AddressOrNil(crypto::RevAddressFromKeyBytes(AsBytes(b->text)));
    }
  } else if (op == "fromDeployerId") {
    if (const ir::Unforgeable* u =
            SingleUnforgeable(arg, UnforgeableKind::kDeployerId)) {
      RETURN_IF_ERROR(Charge(ctx, kAddressDerivation));
      result = AddressOrNil(crypto::RevAddressFromKeyBytes(u->id));
    }
  } else {  // fromUnforgeable
    if (const ir::Unforgeable* u =
            SingleUnforgeable(arg, UnforgeableKind::kPrivate)) {
      RETURN_IF_ERROR(
          Charge(ctx, kAddressDerivation +
                          cost::kPerByte * static_cast<int64_t>(u->id.size())));
      result = StringPar(AddressOfPrivateName(u->id));
    }
  }
  return ReplyWith(args[2], {result});
}

// ---------------------------------------------------------------------------
// deployerId ops, registry ops, auth token ops.

Replies DeployerIdOps(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kDeployerIdOps, args, 3));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  RETURN_IF_ERROR(OpArg(kDeployerIdOps, args, {"pubKeyBytes"}).status());
  const ir::Unforgeable* u =
      SingleUnforgeable(*args[1], UnforgeableKind::kDeployerId);
  return ReplyWith(args[2], {u != nullptr ? BytesPar(u->id) : ir::Nil()});
}

Replies RegistryOps(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kRegistryOps, args, 3));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  RETURN_IF_ERROR(OpArg(kRegistryOps, args, {"buildUri"}).status());
  ParPtr result = ir::Nil();
  if (const Expr* b = SingleOfKind(*args[1], ExprKind::kByteArray)) {
    RETURN_IF_ERROR(Charge(
        ctx,
        2 * kHashBase + cost::kPerByte * static_cast<int64_t>(b->text.size())));
    result = ir::ParOf(Expr::Uri(RegistryUriFromKey(AsBytes(b->text))));
  }
  return ReplyWith(args[2], {result});
}

// The bytes of text the version ops may parse in `p`: its String value, or
// those of its tuple / list items, `levels` deep (the ops read at most a
// tuple of a String and a list of Strings).
int64_t TextBytes(const Par& p, int levels) {
  const Expr* e = ValueExpr(p);
  if (e == nullptr) return 0;
  int64_t n = static_cast<int64_t>(e->text.size());
  if (levels > 0 &&
      (e->kind == ExprKind::kTuple || e->kind == ExprKind::kList)) {
    for (const ParPtr& item : e->operands) n += TextBytes(*item, levels - 1);
  }
  return n;
}

// The two elements of a 2-tuple, or nullptr.
const std::vector<ParPtr>* Pair(const Par& p) {
  const Expr* t = SingleOfKind(p, ExprKind::kTuple);
  return t != nullptr && t->operands.size() == 2 ? &t->operands : nullptr;
}

// ("matchesVersion", (pattern, version)): false on any malformed input.
bool MatchesVersion(const Par& arg) {
  const std::vector<ParPtr>* pair = Pair(arg);
  if (pair == nullptr) return false;
  const Expr* pattern = SingleOfKind(*(*pair)[0], ExprKind::kString);
  const Expr* version = SingleOfKind(*(*pair)[1], ExprKind::kString);
  if (pattern == nullptr || version == nullptr) return false;
  std::optional<VersionPattern> p = ParseVersionPattern(pattern->text);
  std::optional<SemVersion> v = ParseSemVersion(version->text);
  return p && v && p->Matches(*v);
}

// ("selectBestVersion", (pattern, [version, ...])): the highest matching
// version as a String; Nil if none matches or the input is malformed.
// Elements that are not version Strings are skipped.
ParPtr SelectBestVersion(const Par& arg) {
  const std::vector<ParPtr>* pair = Pair(arg);
  if (pair == nullptr) return ir::Nil();
  const Expr* pattern = SingleOfKind(*(*pair)[0], ExprKind::kString);
  const Expr* list = SingleOfKind(*(*pair)[1], ExprKind::kList);
  if (pattern == nullptr || list == nullptr) return ir::Nil();
  std::optional<VersionPattern> p = ParseVersionPattern(pattern->text);
  if (!p) return ir::Nil();
  std::vector<SemVersion> versions;
  for (const ParPtr& item : list->operands) {
    const Expr* s = SingleOfKind(*item, ExprKind::kString);
    if (s == nullptr) continue;
    if (std::optional<SemVersion> v = ParseSemVersion(s->text)) {
      versions.push_back(*std::move(v));
    }
  }
  std::optional<SemVersion> best = BestMatch(*p, versions);
  return best ? StringPar(best->ToString()) : ir::Nil();
}

// ("parseVersionedUri", urn String): (namespace, serviceVersion, publicKey,
// projectId, projectVersion) with Nil for the parts a registry URN lacks;
// Nil if `urn` is not a versioned URN.
ParPtr ParseVersionedUri(const Par& arg) {
  const Expr* s = SingleOfKind(arg, ExprKind::kString);
  if (s == nullptr) return ir::Nil();
  std::optional<VersionedUrn> urn = ParseVersionedUrn(s->text);
  if (!urn) return ir::Nil();
  auto opt = [](const std::optional<std::string>& v) {
    return v ? StringPar(*v) : ir::Nil();
  };
  return ir::ParOf(Expr::Tuple(
      {StringPar(urn->ns), StringPar(urn->service_version),
       opt(urn->public_key), opt(urn->project_id), opt(urn->project_version)}));
}

Replies RegistryOpsV1(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kRegistryOpsV1, args, 3));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  ASSIGN_OR_RETURN(std::string_view op,
                   OpArg(kRegistryOpsV1, args,
                         {"buildUri", "parseVersionedUri", "matchesVersion",
                          "selectBestVersion"}));
  const Par& arg = *args[1];
  ParPtr result = ir::Nil();
  if (op == "buildUri") {
    if (const Expr* b = SingleOfKind(arg, ExprKind::kByteArray)) {
      RETURN_IF_ERROR(Charge(
          ctx, 2 * kHashBase +
                   cost::kPerByte * static_cast<int64_t>(b->text.size())));
      result = ir::ParOf(Expr::Uri(RegistryUriFromKey(AsBytes(b->text))));
    }
  } else {
    RETURN_IF_ERROR(
        Charge(ctx, kHashBase + cost::kPerByte * TextBytes(arg, 2)));
    if (op == "parseVersionedUri") {
      result = ParseVersionedUri(arg);
    } else if (op == "matchesVersion") {
      result = BoolPar(MatchesVersion(arg));
    } else {  // selectBestVersion
      result = SelectBestVersion(arg);
    }
  }
  return ReplyWith(args[2], {result});
}

Replies AuthTokenOps(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kAuthTokenOps, args, 3));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  RETURN_IF_ERROR(OpArg(kAuthTokenOps, args, {"check"}).status());
  bool is_token =
      SingleUnforgeable(*args[1], UnforgeableKind::kSysAuthToken) != nullptr;
  return ReplyWith(args[2], {BoolPar(is_token)});
}

Replies DevNull(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kDevNull, args, 1));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  return std::vector<Reply>{};
}

Replies Abort(Args args, ProcessContext& ctx) {
  RETURN_IF_ERROR(CheckArity(kAbort, args, 1));
  RETURN_IF_ERROR(Charge(ctx, kCallCost));
  return UserAbortError();
}

// A fixed channel whose contract is Rholang (installed by the registry
// bootstrap): no body ref, no arity, no handler.
SystemProcessDef FixedOnly(const char* uri, uint8_t byte) {
  return SystemProcessDef{uri, byte, 0, 0, nullptr};
}

std::vector<SystemProcessDef> MakeStandard() {
  std::vector<SystemProcessDef> t;
  t.push_back(
      Def(kStdout, 0, 0, 1, PrintHandler(kStdout, Stream::kOut, false)));
  t.push_back(
      Def(kStdoutAck, 1, 1, 2, PrintHandler(kStdoutAck, Stream::kOut, true)));
  t.push_back(
      Def(kStderr, 2, 2, 1, PrintHandler(kStderr, Stream::kErr, false)));
  t.push_back(
      Def(kStderrAck, 3, 3, 2, PrintHandler(kStderrAck, Stream::kErr, true)));
  t.push_back(Def(kEd25519Verify, 4, 4, 4,
                  VerifyHandler(kEd25519Verify, &Ed25519Verifies)));
  t.push_back(
      Def(kSha256Hash, 5, 5, 2, HashHandler<&crypto::Sha256>(kSha256Hash)));
  t.push_back(Def(kKeccak256Hash, 6, 6, 2,
                  HashHandler<&crypto::Keccak256>(kKeccak256Hash)));
  t.push_back(Def(kBlake2b256Hash, 7, 7, 2,
                  HashHandler<&crypto::Blake2b256>(kBlake2b256Hash)));
  t.push_back(Def(kSecp256k1Verify, 8, 9, 4,
                  VerifyHandler(kSecp256k1Verify, &Secp256k1Verifies)));
  t.push_back(Def(kBlockData, 10, 11, 1, &BlockData));
  t.push_back(Def(kInvalidBlocks, 11, 12, 1, &InvalidBlocks));
  t.push_back(Def(kVaultAddress, 12, 13, 3, &VaultAddress));
  t.push_back(Def(kDeployerIdOps, 13, 14, 3, &DeployerIdOps));
  t.push_back(FixedOnly(kRegistryLookup, 14));
  t.push_back(FixedOnly(kRegistryInsertArbitrary, 15));
  t.push_back(FixedOnly(kRegistryInsertSigned, 16));
  t.push_back(Def(kRegistryOps, 17, 15, 3, &RegistryOps));
  t.push_back(Def(kAuthTokenOps, 18, 16, 3, &AuthTokenOps));
  t.push_back(FixedOnly(kRegistryV1Internal, 19));
  t.push_back(Def(kRegistryOpsV1, 23, 17, 3, &RegistryOpsV1));
  t.push_back(FixedOnly(kRegistryV1, 24));
  t.push_back(Def(kDevNull, 26, 24, 1, &DevNull));
  t.push_back(Def(kAbort, 27, 25, 1, &Abort));
  t.push_back(Def(kDeployData, 31, 29, 1, &DeployData));
  return t;
}

}  // namespace

ir::ParPtr FixedChannel(uint8_t byte) {
  const uint8_t id[1] = {byte};
  return UnforgeablePar(UnforgeableKind::kPrivate, id);
}

namespace {
// First byte of an object name's id (system_processes.h).
constexpr uint8_t kObjectIdTag = 0xFE;
// The length of the ids `new` creates; object ids never have it.
constexpr size_t kNewIdBytes = 32;
}  // namespace

ir::ParPtr ObjectName(uint8_t kind, ByteView key) {
  Bytes id;
  id.reserve(key.size() + 3);
  id.push_back(kObjectIdTag);
  id.push_back(kind);
  id.insert(id.end(), key.begin(), key.end());
  if (id.size() == kNewIdBytes) id.push_back(0);
  return UnforgeablePar(UnforgeableKind::kPrivate, id);
}

bool AsObjectName(const Par& p, uint8_t& kind, ByteView& key) {
  const ir::Unforgeable* u = SingleUnforgeable(p, UnforgeableKind::kPrivate);
  if (u == nullptr || u->id.size() < 2 || u->id.size() == kNewIdBytes ||
      u->id[0] != kObjectIdTag) {
    return false;
  }
  kind = u->id[1];
  key = ByteView(u->id).subspan(2);
  return true;
}

const std::vector<SystemProcessDef>& StandardSystemProcesses() {
  static const std::vector<SystemProcessDef>* const table =
      new std::vector<SystemProcessDef>(MakeStandard());
  return *table;
}

const std::vector<SystemProcessDef>& TestSystemProcesses() {
  static const std::vector<SystemProcessDef>* const table =
      new std::vector<SystemProcessDef>(MakeTest());
  return *table;
}

std::optional<std::string_view> UnservedUriReason(std::string_view uri) {
  static constexpr std::string_view kVersioned =
      "the versioned registry is not installed on this node (use "
      "rho:registry:lookup and rho:registry:insertSigned:secp256k1)";
  static constexpr std::string_view kExternal =
      "an external, non-deterministic service of the public node, which "
      "this node does not run";
  static constexpr std::string_view kInternalLookup =
      "an internal channel of the public node's versioned registry (use "
      "rho:registry:lookup)";
  struct Entry {
    std::string_view uri;
    std::string_view reason;
  };
  static constexpr Entry kUnserved[] = {
      {kRegistryV1, kVersioned},
      {kRegistryV1Internal, kVersioned},
      {"rho:internal:registry_lookup", kInternalLookup},
      {"rho:ai:gpt4", kExternal},
      {"rho:ai:dalle3", kExternal},
      {"rho:ai:textToAudio", kExternal},
      {"rho:io:grpcTell", kExternal},
      {"rho:ollama:chat", kExternal},
      {"rho:ollama:generate", kExternal},
      {"rho:ollama:models", kExternal},
      {"rho:chroma:collection:new", kExternal},
      {"rho:chroma:collection:meta", kExternal},
      {"rho:chroma:entries:new", kExternal},
      {"rho:chroma:entries:query", kExternal},
      {"rho:chroma:entries:delete", kExternal},
  };
  for (const Entry& e : kUnserved) {
    if (e.uri == uri) return e.reason;
  }
  return std::nullopt;
}

std::optional<ir::ParPtr> SystemUriValue(
    std::string_view uri, std::span<const SystemProcessDef> table) {
  for (const SystemProcessDef& def : table) {
    if (def.uri == uri) {
      return ir::ParBuilder()
          .Add(ir::Bundle::Make(FixedChannel(def.channel_byte),
                                /*write_flag=*/true, /*read_flag=*/false))
          .Build();
    }
  }
  return std::nullopt;
}

}  // namespace rnode::rholang::interp
