#include "casper/contracts/registry.h"

#include <array>
#include <utility>

#include "casper/contracts/names.h"
#include "crypto/hash.h"
#include "crypto/secp256k1.h"
#include "rholang/frontend/public_par.h"
#include "rholang/interpreter/cost.h"
#include "rholang/interpreter/native_contract.h"
#include "rholang/interpreter/registry_uri.h"
#include "util/status_macros.h"

namespace rnode::casper::contracts {
namespace {

namespace ir = rholang::ir;
namespace interp = rholang::interp;
using Args = std::span<const ir::ParPtr>;
using Replies = absl::StatusOr<std::vector<interp::Reply>>;

constexpr char kLookup[] = "rho:registry:lookup";
constexpr char kInsertArbitrary[] = "rho:registry:insertArbitrary";
constexpr char kInsertSigned[] = "rho:registry:insertSigned:secp256k1";

// Fixed channel bytes (the public node's) and our body refs.
constexpr uint8_t kLookupByte = 14;
constexpr uint8_t kInsertArbitraryByte = 15;
constexpr uint8_t kInsertSignedByte = 16;
constexpr uint32_t kLookupRef = 40;
constexpr uint32_t kInsertArbitraryRef = 41;
constexpr uint32_t kInsertSignedRef = 42;

constexpr int64_t kCallCost = interp::cost::kSend;
constexpr int64_t kHashCost = 10;
constexpr int64_t kSignatureVerify = 1000;

constexpr std::string_view kEntryDomain = "rnode/registry/";

constexpr char kVaultId[] =
    "rho:id:6zcfqnwnaqcwpeyuysx1rm48ndr6sgsbbgjuwf45i5nor3io7dr76j";
constexpr char kPosId[] =
    "rho:id:m3xk7h8r54dtqtwsrnxqzhe81baswey66nzw6m533nyd45ptyoybqr";

struct Shorthand {
  const char* name;
  const char* id;
};
// The public shorthand table (and the older rho:rchain: names of the vault
// and PoS, which clients such as rnode-client-js still use).
constexpr std::array<Shorthand, 13> kShorthands = {{
    {"rho:lang:either",
     "rho:id:qrh6mgfp5z6orgchgszyxnuonanz7hw3amgrprqtciia6astt66ypn"},
    {"rho:lang:listOps",
     "rho:id:6fzorimqngeedepkrizgiqms6zjt76zjeciktt1eifequy4osz35ks"},
    {"rho:lang:nonNegativeNumber",
     "rho:id:hxyadh1ffypra47ry9mk6b8r1i33ar1w9wjsez4khfe9huzrfcytx9"},
    {"rho:lang:stack",
     "rho:id:eb6a9iqn4tqr9gaa6dzspiuee9g3mt9c1umrfwcpaugp6ctuijbnwj"},
    {"rho:system:authKey",
     "rho:id:1qw5ehmq1x49dey4eadr1h4ncm361w3536asho7dr38iyookwcsp6i"},
    {"rho:system:makeMint",
     "rho:id:asysrwfgzf8bf7sxkiowp4b3tcsy4f8ombi3w96ysox4u3qdmn1wbc"},
    {"rho:system:pos", kPosId},
    {"rho:rchain:pos", kPosId},
    {"rho:system:tokenMetadata",
     "rho:id:jutz139igo7x5gpby3ri1dhwcwnbdghd6onuys3wfnqhhkwffxbfsn"},
    {"rho:vault:system", kVaultId},
    {"rho:rchain:revVault", kVaultId},
    {"rho:vault:multiSig",
     "rho:id:b9s6j3xeobgset4ndn64hje64grfcj7a43eekb3fh43yso5ujiecfn"},
    {"rho:rchain:multiSigRevVault",
     "rho:id:b9s6j3xeobgset4ndn64hje64grfcj7a43eekb3fh43yso5ujiecfn"},
}};

ir::ParPtr SystemContractValue(ObjectKind kind) {
  return ir::ParOf(ir::Expr::Tuple(
      {interp::IntPar(kSystemContractNonce), WriteOnlyObject(kind, "")}));
}

// The value a system contract's URI resolves to, or null. Built once: every
// wallet deploy looks the vault up.
ir::ParPtr SystemContract(std::string_view id) {
  static const ir::ParPtr* const vault =
      new ir::ParPtr(SystemContractValue(kRevVaultObject));
  static const ir::ParPtr* const pos =
      new ir::ParPtr(SystemContractValue(kPosObject));
  if (id == kVaultId) return *vault;
  if (id == kPosId) return *pos;
  return nullptr;
}

ir::ParPtr UriPar(std::string uri) {
  return ir::ParOf(ir::Expr::Uri(std::move(uri)));
}

absl::Status NeedSpace(const interp::ProcessContext& ctx, const char* uri) {
  if (ctx.space != nullptr) return absl::OkStatus();
  return absl::InternalError(std::string(uri) + " called without space access");
}

Replies Lookup(Args args, interp::ProcessContext& ctx) {
  RETURN_IF_ERROR(interp::CheckArity(kLookup, args, 2));
  RETURN_IF_ERROR(interp::Charge(ctx, kCallCost));
  RETURN_IF_ERROR(NeedSpace(ctx, kLookup));
  const ir::Expr* u = interp::SingleOfKind(*args[0], ir::ExprKind::kUri);
  if (u == nullptr) return interp::ReplyWith(args[1], {ir::Nil()});
  std::string id = ResolveShorthand(u->text).value_or(u->text);
  if (ir::ParPtr contract = SystemContract(id)) {
    return interp::ReplyWith(args[1], {contract});
  }
  ASSIGN_OR_RETURN(std::optional<std::vector<ir::ParPtr>> entry,
                   ctx.space->Peek(RegistryEntryChannel(id)));
  if (!entry.has_value() || entry->size() != 1) {
    return interp::ReplyWith(args[1], {ir::Nil()});
  }
  return interp::ReplyWith(args[1], {(*entry)[0]});
}

Replies InsertArbitrary(Args args, interp::ProcessContext& ctx) {
  RETURN_IF_ERROR(interp::CheckArity(kInsertArbitrary, args, 2));
  RETURN_IF_ERROR(interp::Charge(ctx, kCallCost + 2 * kHashCost));
  RETURN_IF_ERROR(NeedSpace(ctx, kInsertArbitrary));
  if (ctx.rng == nullptr) {
    return absl::InternalError("insertArbitrary called without a generator");
  }
  // As the public node: the URI of a fresh unforgeable name's bytes.
  Hash32 seed = ctx.rng->Next();
  ir::ParPtr name = interp::UnforgeablePar(ir::UnforgeableKind::kPrivate, seed);
  ASSIGN_OR_RETURN(Bytes name_bytes, rholang::EncodePublicPar(*name));
  std::string uri = interp::RegistryUriFromHash(crypto::Blake2b256(name_bytes));
  RETURN_IF_ERROR(ctx.space->Put(RegistryEntryChannel(uri), {args[0]}));
  return interp::ReplyWith(args[1], {UriPar(std::move(uri))});
}

// (pubKey, (nonce, value), sig, ret): sig, made with pubKey's key, signs
// blake2b256 of the public encoding of (deployTimestamp, deployerPubKey,
// nonce), the deploy's own timestamp and deployer (as the public node's
// Registry.rho reads them from rho:deploy:data). Nil on a bad signature or a
// nonce not above the stored one.
Replies InsertSigned(Args args, interp::ProcessContext& ctx) {
  RETURN_IF_ERROR(interp::CheckArity(kInsertSigned, args, 4));
  RETURN_IF_ERROR(interp::Charge(ctx, kCallCost));
  RETURN_IF_ERROR(NeedSpace(ctx, kInsertSigned));
  const ir::ParPtr& ret = args[3];
  const ir::Expr* key =
      interp::SingleOfKind(*args[0], ir::ExprKind::kByteArray);
  const ir::Expr* pair = interp::SingleOfKind(*args[1], ir::ExprKind::kTuple);
  const ir::Expr* sig =
      interp::SingleOfKind(*args[2], ir::ExprKind::kByteArray);
  const ir::Expr* nonce = nullptr;
  if (pair != nullptr && pair->operands.size() == 2) {
    nonce = interp::SingleOfKind(*pair->operands[0], ir::ExprKind::kInt);
  }
  if (key == nullptr || nonce == nullptr || sig == nullptr) {
    return interp::ReplyWith(ret, {ir::Nil()});
  }
  const int64_t timestamp = ctx.deploy != nullptr ? ctx.deploy->timestamp : 0;
  const Bytes no_deployer;
  const Bytes& deployer =
      ctx.deploy != nullptr ? ctx.deploy->deployer_public_key : no_deployer;
  ir::ParPtr to_sign = ir::ParOf(
      ir::Expr::Tuple({interp::IntPar(timestamp), interp::BytesPar(deployer),
                       interp::IntPar(nonce->int_value)}));
  ASSIGN_OR_RETURN(Bytes encoded, rholang::EncodePublicPar(*to_sign));
  RETURN_IF_ERROR(interp::Charge(
      ctx, kSignatureVerify + kHashCost +
               interp::cost::kPerByte * static_cast<int64_t>(encoded.size())));
  Hash32 digest = crypto::Blake2b256(encoded);
  absl::StatusOr<bool> valid = crypto::Secp256k1VerifyDer(
      digest, AsBytes(sig->text), AsBytes(key->text));
  if (!valid.ok() || !*valid) return interp::ReplyWith(ret, {ir::Nil()});
  RETURN_IF_ERROR(interp::Charge(ctx, 2 * kHashCost));
  std::string uri = interp::RegistryUriFromKey(AsBytes(key->text));
  ir::ParPtr channel = RegistryEntryChannel(uri);
  ASSIGN_OR_RETURN(std::optional<std::vector<ir::ParPtr>> old,
                   ctx.space->Peek(channel));
  if (old.has_value()) {
    const ir::Expr* old_pair =
        old->size() == 1
            ? interp::SingleOfKind(*(*old)[0], ir::ExprKind::kTuple)
            : nullptr;
    const ir::Expr* old_nonce =
        old_pair != nullptr && old_pair->operands.size() == 2
            ? interp::SingleOfKind(*old_pair->operands[0], ir::ExprKind::kInt)
            : nullptr;
    if (old_nonce != nullptr && nonce->int_value <= old_nonce->int_value) {
      return interp::ReplyWith(ret, {ir::Nil()});
    }
    RETURN_IF_ERROR(ctx.space->Take(channel).status());
  }
  RETURN_IF_ERROR(ctx.space->Put(channel, {args[1]}));
  return interp::ReplyWith(ret, {UriPar(std::move(uri))});
}

}  // namespace

std::optional<std::string> ResolveShorthand(std::string_view uri) {
  for (const Shorthand& s : kShorthands) {
    if (uri == s.name) return std::string(s.id);
  }
  return std::nullopt;
}

ir::ParPtr RegistryEntryChannel(std::string_view uri) {
  Bytes pre(kEntryDomain.begin(), kEntryDomain.end());
  pre.insert(pre.end(), uri.begin(), uri.end());
  return interp::UnforgeablePar(ir::UnforgeableKind::kPrivate,
                                crypto::Blake2b256(pre));
}

std::vector<interp::SystemProcessDef> RegistryProcesses() {
  std::vector<interp::SystemProcessDef> out;
  out.push_back({kLookup, kLookupByte, kLookupRef, 2, &Lookup});
  out.push_back({kInsertArbitrary, kInsertArbitraryByte, kInsertArbitraryRef, 2,
                 &InsertArbitrary});
  out.push_back(
      {kInsertSigned, kInsertSignedByte, kInsertSignedRef, 4, &InsertSigned});
  return out;
}

}  // namespace rnode::casper::contracts
