#include "casper/contracts/vault.h"

#include <string>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "casper/contracts/names.h"
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
    const ir::ParPtr& ret = args[4];
    // Checked in the public node's order: target, amount, key, funds.
    std::string error;
    ASSIGN_OR_RETURN(std::string to, AddressArg(*args[1], ctx, error));
    if (!error.empty()) return Fail(ret, error);
    const ir::Expr* amount = interp::SingleOfKind(*args[2], ir::ExprKind::kInt);
    if (amount == nullptr) return Fail(ret, "Amount must be an Int");
    if (amount->int_value <= 0) {
      return Fail(ret, TransferErrorText(TransferError::kNonPositiveAmount));
    }
    if (!ir::Equal(args[3], AuthKeyOf(self))) {
      return Fail(ret, "Invalid AuthKey");
    }
    ASSIGN_OR_RETURN(TransferError refused,
                     ledger->Transfer(*ctx.space, self, to, amount->int_value));
    if (refused != TransferError::kNone) {
      return Fail(ret, TransferErrorText(refused));
    }
    return interp::ReplyWith(ret, {EitherPar(true, ir::Nil())});
  }
  return UnknownMethod(kVault, args);
}

}  // namespace

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
