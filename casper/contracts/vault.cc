#include "casper/contracts/vault.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "casper/contracts/names.h"
#include "crypto/hash.h"
#include "crypto/rev_address.h"
#include "rholang/interpreter/cost.h"
#include "rholang/interpreter/native_contract.h"
#include "util/status_macros.h"

namespace rnode::casper::contracts {
namespace {

namespace ir = rholang::ir;
namespace interp = rholang::interp;
using Args = std::span<const ir::ParPtr>;
using Replies = absl::StatusOr<std::vector<interp::Reply>>;

constexpr char kVaultUri[] = "rho:vault:system";
constexpr char kVault[] = "vault";

// Every vault call: the argument checks and the reply (one send).
constexpr int64_t kCallCost = interp::cost::kSend;
// Validating an address: a hash of its payload and a base58 decoding.
constexpr int64_t kAddressCheck = 10 + 60;
// Deriving an address from a key or a name (as rho:vault:address).
constexpr int64_t kAddressDerivation = 130;

// Where a vault's log channel is kept (setLog): one datum, the name, on
// Unforgeable(GPrivate, blake2b256(kLogDomain || address)); no datum: the
// vault does not log. No program can name it.
constexpr std::string_view kLogDomain = "rnode/vault-log/";

ir::ParPtr LogStoreChannel(std::string_view address) {
  Bytes pre(kLogDomain.begin(), kLogDomain.end());
  pre.insert(pre.end(), address.begin(), address.end());
  return interp::UnforgeablePar(ir::UnforgeableKind::kPrivate,
                                crypto::Blake2b256(pre));
}

// The entry a logging vault sends after a transfer, as the public vault
// does: ["transfer", target, amount, result, blockNumber, timestamp,
// sender] (block data of the block the deploy runs in; zeros and an empty
// key outside one).
ir::ParPtr TransferLogEntry(const ir::ParPtr& target, const ir::ParPtr& amount,
                            ir::ParPtr result,
                            const interp::ProcessContext& ctx) {
  const interp::BlockInfo* b = ctx.block;
  return ir::ParOf(ir::Expr::List(
      {interp::StringPar("transfer"), target, amount, std::move(result),
       interp::IntPar(b != nullptr ? b->block_number : 0),
       interp::IntPar(b != nullptr ? b->timestamp : 0),
       interp::BytesPar(b != nullptr ? ByteView(b->sender_public_key)
                                     : ByteView())},
      std::nullopt));
}

Replies Fail(const ir::ParPtr& ret, std::string_view message) {
  return interp::ReplyWith(
      ret, {EitherPar(false, interp::StringPar(std::string(message)))});
}

// The address a String argument names, or the reason it is not one.
absl::StatusOr<std::string> AddressArg(const ir::Par& arg,
                                       interp::ProcessContext& ctx,
                                       std::string& error) {
  const ir::Expr* s = interp::SingleOfKind(arg, ir::ExprKind::kString);
  if (s == nullptr) {
    error = "Address must be a String";
    return std::string();
  }
  RETURN_IF_ERROR(interp::Charge(
      ctx, kAddressCheck +
               interp::cost::kPerByte * static_cast<int64_t>(s->text.size())));
  crypto::RevAddressError bad = crypto::CheckRevAddress(s->text);
  if (bad != crypto::RevAddressError::kNone) {
    error = std::string(crypto::RevAddressErrorText(bad));
    return std::string();
  }
  return s->text;
}

absl::Status UnknownMethod(std::string_view uri, Args args) {
  std::string name = "?";
  if (!args.empty()) {
    if (const ir::Expr* s =
            interp::SingleOfKind(*args[0], ir::ExprKind::kString)) {
      name = interp::Quoted(s->text);
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(uri), ": no method ", name, " taking ",
                   args.empty() ? 0 : args.size() - 1, " arguments"));
}

bool IsMethod(Args args, std::string_view name, size_t arity) {
  if (args.size() != arity + 1) return false;
  const ir::Expr* s = interp::SingleOfKind(*args[0], ir::ExprKind::kString);
  return s != nullptr && s->text == name;
}

Replies RevVaultCall(Ledger* ledger, Args args, interp::ProcessContext& ctx) {
  RETURN_IF_ERROR(interp::Charge(ctx, kCallCost));
  if (IsMethod(args, "findOrCreate", 2)) {
    std::string error;
    ASSIGN_OR_RETURN(std::string address, AddressArg(*args[1], ctx, error));
    if (!error.empty()) return Fail(args[2], error);
    return interp::ReplyWith(
        args[2], {EitherPar(true, WriteOnlyObject(kVaultObject, address))});
  }
  if (IsMethod(args, "deployerAuthKey", 2)) {
    const ir::Unforgeable* id =
        interp::SingleUnforgeable(*args[1], ir::UnforgeableKind::kDeployerId);
    std::optional<std::string> address;
    if (id != nullptr) address = crypto::RevAddressFromKeyBytes(id->id);
    if (!address.has_value()) {
      return interp::ArgError(kVaultUri, 1, "deployerId",
                              "a deployer id with a 65-byte key", *args[1]);
    }
    RETURN_IF_ERROR(interp::Charge(ctx, kAddressDerivation));
    return interp::ReplyWith(args[2], {AuthKeyOf(*address)});
  }
  if (IsMethod(args, "unforgeableAuthKey", 2)) {
    const ir::Unforgeable* u =
        interp::SingleUnforgeable(*args[1], ir::UnforgeableKind::kPrivate);
    if (u == nullptr) {
      return interp::ArgError(kVaultUri, 1, "name", "an unforgeable name",
                              *args[1]);
    }
    RETURN_IF_ERROR(interp::Charge(ctx, kAddressDerivation));
    return interp::ReplyWith(args[2],
                             {AuthKeyOf(interp::AddressOfPrivateName(u->id))});
  }
  return UnknownMethod(kVaultUri, args);
}

// A vault's ("transfer", target, amount, authKey, ret): the result to
// reply, (true, Nil) or (false, reason).
absl::StatusOr<ir::ParPtr> Transfer(Ledger* ledger, std::string_view self,
                                    Args args, interp::ProcessContext& ctx) {
  return VaultTransfer(ledger, self, args[1], args[2], args[3], ctx);
}

Replies VaultCall(Ledger* ledger, ByteView key, Args args,
                  interp::ProcessContext& ctx) {
  RETURN_IF_ERROR(interp::Charge(ctx, kCallCost));
  if (ctx.space == nullptr) {
    return absl::InternalError("vault called without space access");
  }
  std::string_view self(reinterpret_cast<const char*>(key.data()), key.size());
  if (IsMethod(args, "balance", 1)) {
    ASSIGN_OR_RETURN(int64_t balance, ledger->Balance(*ctx.space, self));
    return interp::ReplyWith(args[1], {interp::IntPar(balance)});
  }
  if (IsMethod(args, "transfer", 4)) {
    ASSIGN_OR_RETURN(ir::ParPtr result, Transfer(ledger, self, args, ctx));
    std::vector<interp::Reply> replies = {{args[4], {result}}};
    // A logging vault reports every attempt, refused ones too.
    ASSIGN_OR_RETURN(std::optional<std::vector<ir::ParPtr>> log,
                     ctx.space->Peek(LogStoreChannel(self)));
    if (log.has_value() && log->size() == 1) {
      replies.push_back(
          {(*log)[0], {TransferLogEntry(args[1], args[2], result, ctx)}});
    }
    return replies;
  }
  if (IsMethod(args, "setLog", 3)) {
    // ("setLog", logCh, authKey, ret): with the vault's key, every later
    // transfer is reported on logCh (Nil: no more); replies whether the key
    // was the vault's.
    const ir::ParPtr& ret = args[3];
    if (!ir::Equal(args[2], AuthKeyOf(self))) {
      return interp::ReplyWith(ret, {interp::BoolPar(false)});
    }
    const ir::ParPtr store = LogStoreChannel(self);
    RETURN_IF_ERROR(ctx.space->Take(store).status());
    if (!args[1]->IsNil()) RETURN_IF_ERROR(ctx.space->Put(store, {args[1]}));
    return interp::ReplyWith(ret, {interp::BoolPar(true)});
  }
  return UnknownMethod(kVault, args);
}

}  // namespace

absl::StatusOr<ir::ParPtr> VaultTransfer(Ledger* ledger, std::string_view from,
                                         const ir::ParPtr& target,
                                         const ir::ParPtr& amount,
                                         const ir::ParPtr& auth_key,
                                         interp::ProcessContext& ctx) {
  auto fail = [](std::string_view message) {
    return EitherPar(false, interp::StringPar(std::string(message)));
  };
  std::string error;
  ASSIGN_OR_RETURN(std::string to, AddressArg(*target, ctx, error));
  if (!error.empty()) return fail(error);
  const ir::Expr* value = interp::SingleOfKind(*amount, ir::ExprKind::kInt);
  if (value == nullptr) return fail("Amount must be an Int");
  if (value->int_value <= 0) {
    return fail(TransferErrorText(TransferError::kNonPositiveAmount));
  }
  if (!ir::Equal(auth_key, AuthKeyOf(from))) return fail("Invalid AuthKey");
  ASSIGN_OR_RETURN(TransferError refused,
                   ledger->Transfer(*ctx.space, from, to, value->int_value));
  if (refused != TransferError::kNone) return fail(TransferErrorText(refused));
  return EitherPar(true, ir::Nil());
}

interp::NativeObjectDef RevVaultObject(Ledger* ledger) {
  return interp::NativeObjectDef{
      kRevVaultObject, "rev vault",
      [ledger](ByteView, Args args, interp::ProcessContext& ctx) {
        return RevVaultCall(ledger, args, ctx);
      }};
}

interp::NativeObjectDef VaultObject(Ledger* ledger) {
  return interp::NativeObjectDef{
      kVaultObject, "vault",
      [ledger](ByteView key, Args args, interp::ProcessContext& ctx) {
        return VaultCall(ledger, key, args, ctx);
      }};
}

}  // namespace rnode::casper::contracts
