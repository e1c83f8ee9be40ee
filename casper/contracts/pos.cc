// Proof of stake, native (pos.h; docs/contracts-pos.md).
#include "casper/contracts/pos.h"

#include <algorithm>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "casper/contracts/names.h"
#include "casper/contracts/vault.h"
#include "crypto/hash.h"
#include "crypto/rev_address.h"
#include "rholang/interpreter/cost.h"
#include "rholang/interpreter/native_contract.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/channel_codec.h"
#include "util/status_macros.h"

namespace rnode::casper::contracts {
namespace {

namespace ir = rholang::ir;
namespace interp = rholang::interp;
namespace cost = rholang::interp::cost;

using Args = std::span<const ir::ParPtr>;
using Replies = absl::StatusOr<std::vector<interp::Reply>>;

constexpr std::string_view kUri = "rho:system:pos";
constexpr std::string_view kStateDomain = "rnode/pos-state";
constexpr std::string_view kCoopVaultDomain = "rnode/pos-coop-vault";

// Public keys are uncompressed secp256k1 points.
constexpr size_t kPublicKeyBytes = 65;

// Phlo of one call, before any state access: the price of the send that
// carried it (the handler's own dispatch and argument checks).
constexpr int64_t kCallCost = cost::kSend;
// Phlo per element of the state a call decodes, encodes or walks (bonds,
// active keys, rewards, withdrawers): the work grows with the validator set.
constexpr int64_t kPerStateElement = cost::kPerElement;
// Phlo of deriving a REV address from a key (keccak256 + checksum), as the
// vault's address derivation.
constexpr int64_t kAddressCost = 2 * cost::kMethodCall;

// State map keys (docs/contracts-pos.md "State").
constexpr std::string_view kAllBonds = "allBonds";
constexpr std::string_view kActive = "activeValidators";
constexpr std::string_view kRewards = "committedRewards";
constexpr std::string_view kPending = "pendingWithdrawers";
constexpr std::string_view kWithdrawers = "withdrawers";
constexpr std::string_view kParams = "params";
constexpr std::string_view kMinimumBond = "minimumBond";
constexpr std::string_view kMaximumBond = "maximumBond";
constexpr std::string_view kEpochLength = "epochLength";
constexpr std::string_view kQuarantineLength = "quarantineLength";
constexpr std::string_view kActiveCount = "numberOfActiveValidators";
constexpr std::string_view kFtt = "faultToleranceThresholdPpm";

// The decoded PoS state. Keys are 65-byte public keys, ordered as bytes.
struct State {
  std::map<Bytes, int64_t> bonds;    // allBonds (slashed: 0)
  std::set<Bytes> active;            // activeValidators
  std::map<Bytes, int64_t> rewards;  // committedRewards
  std::map<Bytes, int64_t> pending;  // pendingWithdrawers: key -> end block
  // withdrawers: key -> (bond, end block)
  std::map<Bytes, std::pair<int64_t, int64_t>> withdrawers;
  PosParams params;

  int64_t Elements() const {
    return static_cast<int64_t>(bonds.size() + active.size() + rewards.size() +
                                pending.size() + withdrawers.size());
  }
};

absl::Status Malformed(std::string_view what) {
  return absl::FailedPreconditionError(
      absl::StrCat("malformed PoS state: ", std::string(what)));
}

// --- Encoding ---

ir::ParPtr Str(std::string_view s) { return interp::StringPar(std::string(s)); }

ir::ParPtr Tuple(std::vector<ir::ParPtr> ps) {
  return ir::ParOf(ir::Expr::Tuple(std::move(ps)));
}

ir::ParPtr MapPar(std::vector<std::pair<ir::ParPtr, ir::ParPtr>> kvs) {
  return ir::ParOf(ir::Expr::Map(std::move(kvs), std::nullopt));
}

ir::ParPtr IntMap(const std::map<Bytes, int64_t>& m) {
  std::vector<std::pair<ir::ParPtr, ir::ParPtr>> kvs;
  kvs.reserve(m.size());
  for (const auto& [k, v] : m) {
    kvs.emplace_back(interp::BytesPar(k), interp::IntPar(v));
  }
  return MapPar(std::move(kvs));
}

ir::ParPtr KeySet(const std::set<Bytes>& s) {
  std::vector<ir::ParPtr> ps;
  ps.reserve(s.size());
  for (const Bytes& k : s) ps.push_back(interp::BytesPar(k));
  return ir::ParOf(ir::Expr::Set(std::move(ps), std::nullopt));
}

ir::ParPtr WithdrawersMap(
    const std::map<Bytes, std::pair<int64_t, int64_t>>& m) {
  std::vector<std::pair<ir::ParPtr, ir::ParPtr>> kvs;
  kvs.reserve(m.size());
  for (const auto& [k, v] : m) {
    kvs.emplace_back(interp::BytesPar(k), Tuple({interp::IntPar(v.first),
                                                 interp::IntPar(v.second)}));
  }
  return MapPar(std::move(kvs));
}

ir::ParPtr EncodeState(const State& s) {
  const PosParams& p = s.params;
  ir::ParPtr params = MapPar({
      {Str(kMinimumBond), interp::IntPar(p.minimum_bond)},
      {Str(kMaximumBond), interp::IntPar(p.maximum_bond)},
      {Str(kEpochLength), interp::IntPar(p.epoch_length)},
      {Str(kQuarantineLength), interp::IntPar(p.quarantine_length)},
      {Str(kActiveCount), interp::IntPar(p.number_of_active_validators)},
      {Str(kFtt), interp::IntPar(p.fault_tolerance_threshold_ppm)},
  });
  return MapPar({
      {Str(kAllBonds), IntMap(s.bonds)},
      {Str(kActive), KeySet(s.active)},
      {Str(kRewards), IntMap(s.rewards)},
      {Str(kPending), IntMap(s.pending)},
      {Str(kWithdrawers), WithdrawersMap(s.withdrawers)},
      {Str(kParams), params},
  });
}

// --- Decoding ---

// The expression `p` is exactly, if it has `kind`.
const ir::Expr* Exactly(const ir::Par& p, ir::ExprKind kind) {
  const ir::Expr* e = p.SingleExpr();
  return e != nullptr && e->kind == kind ? e : nullptr;
}

absl::StatusOr<Bytes> KeyOf(const ir::Par& p) {
  const ir::Expr* e = Exactly(p, ir::ExprKind::kByteArray);
  if (e == nullptr || e->text.size() != kPublicKeyBytes) {
    return Malformed("a key is not a 65-byte ByteArray");
  }
  return ToBytes(e->text);
}

absl::StatusOr<int64_t> IntOf(const ir::Par& p) {
  const ir::Expr* e = Exactly(p, ir::ExprKind::kInt);
  if (e == nullptr) return Malformed("a value is not an Int");
  return e->int_value;
}

// The entries of a map Par as (key, value) pairs.
absl::StatusOr<std::vector<std::pair<const ir::Par*, const ir::Par*>>> Entries(
    const ir::Par& p) {
  const ir::Expr* e = Exactly(p, ir::ExprKind::kMap);
  if (e == nullptr || e->remainder.has_value() || e->operands.size() % 2 != 0) {
    return Malformed("not a map");
  }
  std::vector<std::pair<const ir::Par*, const ir::Par*>> out;
  for (size_t i = 0; i < e->operands.size(); i += 2) {
    out.emplace_back(e->operands[i].get(), e->operands[i + 1].get());
  }
  return out;
}

absl::StatusOr<std::map<Bytes, int64_t>> DecodeIntMap(const ir::Par& p) {
  ASSIGN_OR_RETURN(auto entries, Entries(p));
  std::map<Bytes, int64_t> out;
  for (const auto& [k, v] : entries) {
    ASSIGN_OR_RETURN(Bytes key, KeyOf(*k));
    ASSIGN_OR_RETURN(int64_t value, IntOf(*v));
    out[std::move(key)] = value;
  }
  return out;
}

absl::StatusOr<State> DecodeState(const ir::Par& p) {
  ASSIGN_OR_RETURN(auto entries, Entries(p));
  std::map<std::string, const ir::Par*> fields;
  for (const auto& [k, v] : entries) {
    const ir::Expr* name = Exactly(*k, ir::ExprKind::kString);
    if (name == nullptr) return Malformed("a field name is not a String");
    fields[name->text] = v;
  }
  auto field = [&](std::string_view name) -> absl::StatusOr<const ir::Par*> {
    auto it = fields.find(std::string(name));
    if (it == fields.end()) {
      return Malformed(absl::StrCat("missing ", std::string(name)));
    }
    return it->second;
  };
  if (fields.size() != 6) return Malformed("unexpected fields");
  State s;
  ASSIGN_OR_RETURN(const ir::Par* bonds, field(kAllBonds));
  ASSIGN_OR_RETURN(s.bonds, DecodeIntMap(*bonds));
  ASSIGN_OR_RETURN(const ir::Par* rewards, field(kRewards));
  ASSIGN_OR_RETURN(s.rewards, DecodeIntMap(*rewards));
  ASSIGN_OR_RETURN(const ir::Par* pending, field(kPending));
  ASSIGN_OR_RETURN(s.pending, DecodeIntMap(*pending));

  ASSIGN_OR_RETURN(const ir::Par* active, field(kActive));
  const ir::Expr* set = Exactly(*active, ir::ExprKind::kSet);
  if (set == nullptr || set->remainder.has_value()) {
    return Malformed("activeValidators is not a set");
  }
  for (const ir::ParPtr& k : set->operands) {
    ASSIGN_OR_RETURN(Bytes key, KeyOf(*k));
    s.active.insert(std::move(key));
  }

  ASSIGN_OR_RETURN(const ir::Par* withdrawers, field(kWithdrawers));
  ASSIGN_OR_RETURN(auto w_entries, Entries(*withdrawers));
  for (const auto& [k, v] : w_entries) {
    ASSIGN_OR_RETURN(Bytes key, KeyOf(*k));
    const ir::Expr* t = Exactly(*v, ir::ExprKind::kTuple);
    if (t == nullptr || t->operands.size() != 2) {
      return Malformed("a withdrawer is not (bond, end)");
    }
    ASSIGN_OR_RETURN(int64_t bond, IntOf(*t->operands[0]));
    ASSIGN_OR_RETURN(int64_t end, IntOf(*t->operands[1]));
    s.withdrawers[std::move(key)] = {bond, end};
  }

  ASSIGN_OR_RETURN(const ir::Par* params, field(kParams));
  ASSIGN_OR_RETURN(auto p_entries, Entries(*params));
  std::map<std::string, int64_t> values;
  for (const auto& [k, v] : p_entries) {
    const ir::Expr* name = Exactly(*k, ir::ExprKind::kString);
    if (name == nullptr) return Malformed("a parameter name is not a String");
    ASSIGN_OR_RETURN(values[name->text], IntOf(*v));
  }
  auto param = [&](std::string_view name, int64_t& out) -> absl::Status {
    auto it = values.find(std::string(name));
    if (it == values.end()) {
      return Malformed(absl::StrCat("missing parameter ", std::string(name)));
    }
    out = it->second;
    return absl::OkStatus();
  };
  RETURN_IF_ERROR(param(kMinimumBond, s.params.minimum_bond));
  RETURN_IF_ERROR(param(kMaximumBond, s.params.maximum_bond));
  RETURN_IF_ERROR(param(kEpochLength, s.params.epoch_length));
  RETURN_IF_ERROR(param(kQuarantineLength, s.params.quarantine_length));
  RETURN_IF_ERROR(param(kActiveCount, s.params.number_of_active_validators));
  RETURN_IF_ERROR(param(kFtt, s.params.fault_tolerance_threshold_ppm));
  return s;
}

absl::StatusOr<State> StateOfDatum(const std::vector<ir::ParPtr>& values) {
  if (values.size() != 1) return Malformed("the datum is not one value");
  return DecodeState(*values[0]);
}

// --- State access ---

// The state datum a Peek or Take of the state channel found;
// FailedPrecondition when there is none (no genesis yet).
absl::StatusOr<std::vector<ir::ParPtr>> StateDatum(
    absl::StatusOr<std::optional<std::vector<ir::ParPtr>>> read) {
  if (!read.ok()) return read.status();
  if (!read->has_value()) {
    return absl::FailedPreconditionError("PoS state missing (no genesis)");
  }
  return std::move(**read);
}

absl::StatusOr<State> ReadState(interp::NativeSpace& space) {
  ASSIGN_OR_RETURN(std::vector<ir::ParPtr> datum,
                   StateDatum(space.Peek(PosStateChannel())));
  return StateOfDatum(datum);
}

// Consumes the state datum (the caller writes the new one).
absl::StatusOr<State> TakeState(interp::NativeSpace& space) {
  ASSIGN_OR_RETURN(std::vector<ir::ParPtr> datum,
                   StateDatum(space.Take(PosStateChannel())));
  return StateOfDatum(datum);
}

absl::Status PutState(interp::NativeSpace& space, const State& s) {
  return space.Put(PosStateChannel(), {EncodeState(s)});
}

// Replaces the state datum (already read and decoded by the caller) with
// `s`.
absl::Status WriteState(interp::NativeSpace& space, const State& s) {
  RETURN_IF_ERROR(StateDatum(space.Take(PosStateChannel())).status());
  return PutState(space, s);
}

// --- Rules ---

// The `count` largest positive stakes, ties by key ascending.
std::set<Bytes> SelectActive(const std::map<Bytes, int64_t>& bonds,
                             int64_t count) {
  std::vector<std::pair<int64_t, const Bytes*>> ranked;
  for (const auto& [k, v] : bonds) {
    if (v > 0) ranked.emplace_back(v, &k);
  }
  std::stable_sort(
      ranked.begin(), ranked.end(),
      [](const auto& a, const auto& b) { return a.first > b.first; });
  std::set<Bytes> out;
  for (size_t i = 0; i < ranked.size() && static_cast<int64_t>(i) < count;
       ++i) {
    out.insert(*ranked[i].second);
  }
  return out;
}

// The undistributed fees: PoS vault balance minus everything it owes.
absl::StatusOr<int64_t> RewardPot(Ledger& ledger, interp::NativeSpace& space,
                                  const State& s) {
  ASSIGN_OR_RETURN(int64_t balance, ledger.Balance(space, PosVaultAddress()));
  __int128 owed = 0;
  for (const auto& [k, v] : s.bonds) owed += v;
  for (const auto& [k, v] : s.withdrawers) owed += v.first;
  for (const auto& [k, v] : s.rewards) owed += v;
  __int128 pot = static_cast<__int128>(balance) - owed;
  return pot > 0 ? static_cast<int64_t>(pot) : 0;
}

// Each active validator's share of `pot`: pot * stake / total active stake,
// rounded down; validators whose share is 0 are left out.
std::map<Bytes, int64_t> Shares(const State& s, int64_t pot) {
  std::map<Bytes, int64_t> out;
  if (pot <= 0) return out;
  __int128 total = 0;
  for (const Bytes& k : s.active) {
    auto it = s.bonds.find(k);
    if (it != s.bonds.end() && it->second > 0) total += it->second;
  }
  if (total == 0) return out;
  for (const Bytes& k : s.active) {
    auto it = s.bonds.find(k);
    if (it == s.bonds.end() || it->second <= 0) continue;
    __int128 share = static_cast<__int128>(pot) * it->second / total;
    if (share > 0) out[k] = static_cast<int64_t>(share);
  }
  return out;
}

absl::Status CheckParams(const PosParams& p) {
  auto bad = [](const char* what) {
    return absl::InvalidArgumentError(
        absl::StrCat("PoS: invalid parameters: ", what));
  };
  if (p.minimum_bond < 1) return bad("minimum bond must be at least 1");
  if (p.maximum_bond < p.minimum_bond) {
    return bad("maximum bond is below the minimum bond");
  }
  if (p.epoch_length < 1) return bad("epoch length must be at least 1");
  if (p.quarantine_length < 0) return bad("quarantine length is negative");
  if (p.number_of_active_validators < 1) {
    return bad("number of active validators must be at least 1");
  }
  if (p.fault_tolerance_threshold_ppm < 0) {
    return bad("fault tolerance threshold is negative");
  }
  if (!p.vault_transfer_key.empty() &&
      p.vault_transfer_key.size() != kPublicKeyBytes) {
    return bad("the vault transfer key is not a 65-byte public key");
  }
  return absl::OkStatus();
}

// The reply (false, message) / (true, Nil).
ir::ParPtr Failure(std::string_view message) {
  return EitherPar(false, Str(message));
}
ir::ParPtr Success() { return EitherPar(true, ir::Nil()); }

std::string MethodUri(std::string_view method) {
  return absl::StrCat(std::string(kUri), ".", std::string(method));
}

bool IsAuthToken(const ir::Par& p) {
  return interp::SingleUnforgeable(p, ir::UnforgeableKind::kSysAuthToken) !=
         nullptr;
}

// The validator the invalid-blocks map names for `block_hash`, if any.
std::optional<Bytes> SlashTarget(const ir::ParPtr& invalid_blocks,
                                 const ir::Par& block_hash) {
  if (invalid_blocks == nullptr) return std::nullopt;
  const ir::Expr* m = Exactly(*invalid_blocks, ir::ExprKind::kMap);
  if (m == nullptr) return std::nullopt;
  for (size_t i = 0; i + 1 < m->operands.size(); i += 2) {
    if (!ir::Equal(*m->operands[i], block_hash)) continue;
    const ir::Expr* v = Exactly(*m->operands[i + 1], ir::ExprKind::kByteArray);
    if (v == nullptr) return std::nullopt;
    return ToBytes(v->text);
  }
  return std::nullopt;
}

// bond(deployerId, amount, return).
Replies BondCall(Ledger& ledger, const PosParams& params,
                 const std::string& uri, std::span<const ir::ParPtr> args,
                 interp::ProcessContext& ctx) {
  RETURN_IF_ERROR(interp::CheckArity(uri, args, 4));
  const ir::Unforgeable* deployer =
      interp::SingleUnforgeable(*args[1], ir::UnforgeableKind::kDeployerId);
  if (deployer == nullptr || deployer->id.size() != kPublicKeyBytes) {
    return interp::ArgError(uri, 1, "deployerId", "a deployer id", *args[1]);
  }
  const ir::Expr* amount_expr =
      interp::SingleOfKind(*args[2], ir::ExprKind::kInt);
  if (amount_expr == nullptr) {
    return interp::ArgError(uri, 2, "amount", "Int", *args[2]);
  }
  const int64_t amount = amount_expr->int_value;
  const ir::ParPtr& ret = args[3];
  interp::NativeSpace& space = *ctx.space;
  const Bytes& pk = deployer->id;

  ASSIGN_OR_RETURN(State s, ReadState(space));
  RETURN_IF_ERROR(interp::Charge(ctx, kPerStateElement * s.Elements()));
  if (s.bonds.contains(pk) || s.withdrawers.contains(pk)) {
    return interp::ReplyWith(ret, {Failure("Public key is already bonded.")});
  }
  if (amount <= 0) {
    return interp::ReplyWith(ret, {Failure("Bond amount must be positive.")});
  }
  if (amount < params.minimum_bond) {
    return interp::ReplyWith(ret, {Failure("Bond is less than minimum!")});
  }
  if (amount > params.maximum_bond) {
    return interp::ReplyWith(ret, {Failure("Bond is greater than maximum!")});
  }
  RETURN_IF_ERROR(interp::Charge(ctx, kAddressCost));
  std::optional<std::string> from = crypto::RevAddressFromKeyBytes(pk);
  if (!from.has_value()) return absl::InternalError("bond: key length");
  ASSIGN_OR_RETURN(TransferError err,
                   ledger.Transfer(space, *from, PosVaultAddress(), amount));
  if (err != TransferError::kNone) {
    return interp::ReplyWith(
        ret, {Failure(absl::StrCat("Bond deposit failed: ",
                                   std::string(TransferErrorText(err))))});
  }
  s.bonds[pk] = amount;
  RETURN_IF_ERROR(WriteState(space, s));
  return interp::ReplyWith(ret, {Success()});
}

// withdraw(deployerId, return).
Replies WithdrawCall(const PosParams& params, const std::string& uri,
                     std::span<const ir::ParPtr> args,
                     interp::ProcessContext& ctx) {
  RETURN_IF_ERROR(interp::CheckArity(uri, args, 3));
  const ir::Unforgeable* deployer =
      interp::SingleUnforgeable(*args[1], ir::UnforgeableKind::kDeployerId);
  if (deployer == nullptr) {
    return interp::ArgError(uri, 1, "deployerId", "a deployer id", *args[1]);
  }
  const ir::ParPtr& ret = args[2];
  interp::NativeSpace& space = *ctx.space;
  const Bytes& pk = deployer->id;

  ASSIGN_OR_RETURN(State s, ReadState(space));
  RETURN_IF_ERROR(interp::Charge(ctx, kPerStateElement * s.Elements()));
  auto bond = s.bonds.find(pk);
  if (bond == s.bonds.end() || bond->second <= 0) {
    return interp::ReplyWith(ret, {Failure("User is not bonded")});
  }
  if (s.pending.contains(pk)) return interp::ReplyWith(ret, {Success()});
  const int64_t block = ctx.block != nullptr ? ctx.block->block_number : 0;
  const int64_t epoch = params.epoch_length;
  s.pending[pk] = params.quarantine_length + epoch * (1 + block / epoch);
  RETURN_IF_ERROR(WriteState(space, s));
  return interp::ReplyWith(ret, {Success()});
}

// The coop vault tuple (multiSigVault, address, systemVault), if the
// state has one.
absl::StatusOr<std::optional<ir::ParPtr>> CoopVault(
    interp::NativeSpace& space) {
  ASSIGN_OR_RETURN(std::optional<std::vector<ir::ParPtr>> datum,
                   space.Peek(CoopVaultChannel()));
  if (!datum.has_value()) return std::optional<ir::ParPtr>();
  if (datum->size() != 1) return Malformed("coop vault datum");
  const ir::Expr* t = Exactly(*(*datum)[0], ir::ExprKind::kTuple);
  if (t == nullptr || t->operands.size() != 3 ||
      Exactly(*t->operands[1], ir::ExprKind::kString) == nullptr) {
    return Malformed("coop vault tuple");
  }
  return std::optional<ir::ParPtr>((*datum)[0]);
}

// posVaultTransfer(target, amount, deployerId, return): a transfer from
// the PoS vault, for the deployer of PosParams::vault_transfer_key only.
Replies PosVaultTransferCall(Ledger& ledger, const PosParams& params,
                             const std::string& uri, Args args,
                             interp::ProcessContext& ctx) {
  RETURN_IF_ERROR(interp::CheckArity(uri, args, 5));
  const ir::Unforgeable* deployer =
      interp::SingleUnforgeable(*args[3], ir::UnforgeableKind::kDeployerId);
  if (deployer == nullptr) {
    return interp::ArgError(uri, 3, "deployerId", "a deployer id", *args[3]);
  }
  const ir::ParPtr& ret = args[4];
  if (params.vault_transfer_key.empty() ||
      deployer->id != params.vault_transfer_key) {
    return interp::ReplyWith(ret,
                             {Failure("You have not permission to transfer.")});
  }
  ASSIGN_OR_RETURN(ir::ParPtr result,
                   VaultTransfer(&ledger, PosVaultAddress(), args[1], args[2],
                                 AuthKeyOf(PosVaultAddress()), ctx));
  return interp::ReplyWith(ret, {std::move(result)});
}

}  // namespace

ir::ParPtr CoopVaultChannel() {
  static const ir::ParPtr* const channel = new ir::ParPtr(
      interp::UnforgeablePar(ir::UnforgeableKind::kPrivate,
                             crypto::Blake2b256(AsBytes(kCoopVaultDomain))));
  return *channel;
}

ir::ParPtr PosStateChannel() {
  static const ir::ParPtr* const channel = new ir::ParPtr(
      interp::UnforgeablePar(ir::UnforgeableKind::kPrivate,
                             crypto::Blake2b256(AsBytes(kStateDomain))));
  return *channel;
}

// --- Object ---

interp::NativeObjectDef ProofOfStake::Object() {
  interp::ObjectHandler handler =
      [this](ByteView, Args args, interp::ProcessContext& ctx) -> Replies {
    RETURN_IF_ERROR(interp::Charge(ctx, kCallCost));
    if (args.empty()) return interp::CheckArity(kUri, args, 2);
    ASSIGN_OR_RETURN(std::string_view method,
                     interp::StringArg(kUri, args, 0, "method"));
    if (ctx.space == nullptr) {
      return absl::InternalError("rho:system:pos called without space access");
    }
    RETURN_IF_ERROR(CheckParams(params_));
    interp::NativeSpace& space = *ctx.space;
    const std::string uri = MethodUri(method);
    const ir::ParPtr& ret = args.back();

    // Read-only methods: (method, return).
    auto getter = [&](auto&& value_of) -> Replies {
      RETURN_IF_ERROR(interp::CheckArity(uri, args, 2));
      ASSIGN_OR_RETURN(State s, ReadState(space));
      RETURN_IF_ERROR(interp::Charge(ctx, kPerStateElement * s.Elements()));
      ASSIGN_OR_RETURN(ir::ParPtr value, value_of(s));
      return interp::ReplyWith(ret, {value});
    };
    auto constant = [&](int64_t v) -> Replies {
      RETURN_IF_ERROR(interp::CheckArity(uri, args, 2));
      return interp::ReplyWith(ret, {interp::IntPar(v)});
    };

    if (method == "getBonds") {
      return getter([](const State& s) -> absl::StatusOr<ir::ParPtr> {
        return IntMap(s.bonds);
      });
    }
    if (method == "getActiveValidators") {
      return getter([](const State& s) -> absl::StatusOr<ir::ParPtr> {
        return KeySet(s.active);
      });
    }
    if (method == "getEpochLength") return constant(params_.epoch_length);
    if (method == "getQuarantineLength") {
      return constant(params_.quarantine_length);
    }
    if (method == "getFaultToleranceThresholdPpm") {
      return constant(params_.fault_tolerance_threshold_ppm);
    }
    if (method == "getCurrentEpochRewards" || method == "getRewards") {
      const bool with_committed = method == "getRewards";
      return getter([&](const State& s) -> absl::StatusOr<ir::ParPtr> {
        ASSIGN_OR_RETURN(int64_t pot, RewardPot(*ledger_, space, s));
        std::map<Bytes, int64_t> rewards = Shares(s, pot);
        if (with_committed) {
          for (const auto& [k, v] : s.rewards) rewards[k] += v;
        }
        return IntMap(rewards);
      });
    }
    if (method == "getWithdrawers") {
      return getter([](const State& s) -> absl::StatusOr<ir::ParPtr> {
        return WithdrawersMap(s.withdrawers);
      });
    }
    if (method == "getPendingWithdrawer") {
      return getter([](const State& s) -> absl::StatusOr<ir::ParPtr> {
        return IntMap(s.pending);
      });
    }
    if (method == "getInitialPosVault") {
      RETURN_IF_ERROR(interp::CheckArity(uri, args, 2));
      return interp::ReplyWith(
          ret, {Tuple({Str(PosVaultAddress()),
                       WriteOnlyObject(kVaultObject, PosVaultAddress())})});
    }
    if (method == "getCoopVault") {
      RETURN_IF_ERROR(interp::CheckArity(uri, args, 2));
      ASSIGN_OR_RETURN(std::optional<ir::ParPtr> coop, CoopVault(space));
      if (!coop.has_value()) {
        return absl::FailedPreconditionError(absl::StrCat(
            uri, ": this state has no coop vault (made by genesis)"));
      }
      return interp::ReplyWith(ret, {*std::move(coop)});
    }
    if (method == "posVaultTransfer") {
      return PosVaultTransferCall(*ledger_, params_, uri, args, ctx);
    }
    if (method == "bond") return BondCall(*ledger_, params_, uri, args, ctx);
    if (method == "withdraw") return WithdrawCall(params_, uri, args, ctx);
    if (method == "closeBlock") {
      RETURN_IF_ERROR(interp::CheckArity(uri, args, 3));
      if (!IsAuthToken(*args[1])) {
        return interp::ReplyWith(ret, {Failure("Invalid system auth token")});
      }
      interp::BlockInfo none;
      RETURN_IF_ERROR(
          CloseBlock(space, ctx.block != nullptr ? *ctx.block : none));
      return interp::ReplyWith(ret, {Success()});
    }
    if (method == "slash") {
      RETURN_IF_ERROR(interp::CheckArity(uri, args, 5));
      if (!IsAuthToken(*args[3])) {
        return interp::ReplyWith(ret, {Failure("Invalid system auth token")});
      }
      std::optional<Bytes> target = SlashTarget(ctx.invalid_blocks, *args[2]);
      if (!target.has_value()) {
        return interp::ReplyWith(ret, {Failure("invalid slash evidence")});
      }
      RETURN_IF_ERROR(Slash(space, *target));
      return interp::ReplyWith(ret, {Success()});
    }
    return absl::InvalidArgumentError(absl::StrCat(
        std::string(kUri), ": unknown method ", interp::Quoted(method)));
  };
  return interp::NativeObjectDef{kPosObject, "proof of stake",
                                 std::move(handler)};
}

// --- System operations ---

absl::Status ProofOfStake::Genesis(interp::NativeSpace& space,
                                   const std::vector<contracts::Bond>& bonds) {
  RETURN_IF_ERROR(CheckParams(params_));
  ASSIGN_OR_RETURN(std::optional<std::vector<ir::ParPtr>> existing,
                   space.Peek(PosStateChannel()));
  if (existing.has_value()) {
    return absl::FailedPreconditionError("PoS genesis: state already exists");
  }
  State s;
  s.params = params_;
  __int128 sum = 0;
  for (const contracts::Bond& b : bonds) {
    if (b.validator.size() != kPublicKeyBytes) {
      return absl::InvalidArgumentError("PoS genesis: a key is not 65 bytes");
    }
    if (b.stake < params_.minimum_bond || b.stake > params_.maximum_bond) {
      return absl::InvalidArgumentError(
          "PoS genesis: a stake is out of [minimum_bond, maximum_bond]");
    }
    if (!s.bonds.emplace(b.validator, b.stake).second) {
      return absl::InvalidArgumentError("PoS genesis: duplicate key");
    }
    sum += b.stake;
  }
  if (sum > std::numeric_limits<int64_t>::max()) {
    return absl::InvalidArgumentError("PoS genesis: stakes overflow");
  }
  s.active = SelectActive(s.bonds, params_.number_of_active_validators);
  RETURN_IF_ERROR(PutState(space, s));
  return ledger_->Mint(space, PosVaultAddress(), static_cast<int64_t>(sum));
}

absl::Status ProofOfStake::CloseBlock(interp::NativeSpace& space,
                                      const interp::BlockInfo& block) {
  RETURN_IF_ERROR(CheckParams(params_));
  const int64_t number = block.block_number;
  if (number % params_.epoch_length != 0) return absl::OkStatus();
  ASSIGN_OR_RETURN(State s, TakeState(space));

  // (1) Rewards of the closing epoch.
  ASSIGN_OR_RETURN(int64_t pot, RewardPot(*ledger_, space, s));
  for (const auto& [k, v] : Shares(s, pot)) s.rewards[k] += v;
  // (2) Withdrawals requested in an earlier epoch leave the bonds.
  for (auto it = s.pending.begin(); it != s.pending.end();) {
    const int64_t requested_epoch_end = it->second - params_.quarantine_length;
    if (requested_epoch_end > number) {
      ++it;
      continue;
    }
    auto bond = s.bonds.find(it->first);
    const int64_t stake = bond != s.bonds.end() ? bond->second : 0;
    if (bond != s.bonds.end()) s.bonds.erase(bond);
    s.active.erase(it->first);
    s.withdrawers[it->first] = {stake, it->second};
    it = s.pending.erase(it);
  }
  // (3) Quarantines that ended are paid.
  for (auto it = s.withdrawers.begin(); it != s.withdrawers.end();) {
    if (number < it->second.second) {
      ++it;
      continue;
    }
    int64_t amount = it->second.first;
    auto reward = s.rewards.find(it->first);
    if (reward != s.rewards.end()) {
      amount += reward->second;
      s.rewards.erase(reward);
    }
    if (amount > 0) {
      std::optional<std::string> to = crypto::RevAddressFromKeyBytes(it->first);
      if (!to.has_value()) return absl::InternalError("PoS: withdrawer key");
      ASSIGN_OR_RETURN(
          TransferError err,
          ledger_->Transfer(space, PosVaultAddress(), *to, amount));
      if (err != TransferError::kNone) {
        return absl::InternalError(
            absl::StrCat("PoS: withdrawal payment failed: ",
                         std::string(TransferErrorText(err))));
      }
    }
    it = s.withdrawers.erase(it);
  }
  // (4) The next epoch's active set.
  s.active = SelectActive(s.bonds, params_.number_of_active_validators);
  return PutState(space, s);
}

absl::Status ProofOfStake::Slash(interp::NativeSpace& space,
                                 ByteView validator) {
  ASSIGN_OR_RETURN(State s, ReadState(space));
  const Bytes key(validator.begin(), validator.end());
  int64_t stake = 0;
  auto bond = s.bonds.find(key);
  if (bond != s.bonds.end()) stake += bond->second;
  auto withdrawer = s.withdrawers.find(key);
  if (withdrawer != s.withdrawers.end()) stake += withdrawer->second.first;
  if (stake <= 0) return absl::OkStatus();
  std::string coop_address = CoopVaultAddress();
  ASSIGN_OR_RETURN(std::optional<ir::ParPtr> coop, CoopVault(space));
  if (coop.has_value()) {
    coop_address = Exactly(*Exactly(**coop, ir::ExprKind::kTuple)->operands[1],
                           ir::ExprKind::kString)
                       ->text;
  }
  ASSIGN_OR_RETURN(
      TransferError err,
      ledger_->Transfer(space, PosVaultAddress(), coop_address, stake));
  if (err != TransferError::kNone) {
    return absl::InternalError(absl::StrCat(
        "PoS: slash transfer failed: ", std::string(TransferErrorText(err))));
  }
  s.bonds[key] = 0;
  s.active.erase(key);
  s.rewards.erase(key);
  s.pending.erase(key);
  s.withdrawers.erase(key);
  return WriteState(space, s);
}

// --- Native decoding ---

absl::StatusOr<Validators> DecodeValidators(const rspace::ChannelState& state) {
  absl::StatusOr<std::vector<ir::ParPtr>> values = OnlyDatum(state);
  if (!values.ok()) return Malformed(std::string(values.status().message()));
  ASSIGN_OR_RETURN(State s, StateOfDatum(*values));
  Validators v;
  v.bonds.reserve(s.bonds.size());
  for (const auto& [k, stake] : s.bonds) v.bonds.push_back({k, stake});
  v.active.assign(s.active.begin(), s.active.end());
  v.epoch_length = s.params.epoch_length;
  v.quarantine_length = s.params.quarantine_length;
  v.fault_tolerance_threshold_ppm = s.params.fault_tolerance_threshold_ppm;
  return v;
}

absl::StatusOr<std::shared_ptr<const Validators>> ValidatorsCache::Get(
    const Hash32& root) {
  if (std::optional<std::shared_ptr<const Validators>> hit =
          entries_.Get(root)) {
    return *std::move(hit);
  }
  static const absl::StatusOr<Hash32> kChannelHash =
      []() -> absl::StatusOr<Hash32> {
    ASSIGN_OR_RETURN(rspace::TermPtr t,
                     interp::MakeChannelTerm(PosStateChannel()));
    return t->hash();
  }();
  RETURN_IF_ERROR(kChannelHash.status());
  ASSIGN_OR_RETURN(std::optional<Bytes> blob,
                   history_->ReadLeaf(root, *kChannelHash));
  if (!blob.has_value()) {
    return absl::NotFoundError("no PoS state under this root");
  }
  ASSIGN_OR_RETURN(
      rspace::ChannelState state,
      rspace::DecodeChannelState(*blob, interp::StoredTermFactory()));
  ASSIGN_OR_RETURN(Validators v, DecodeValidators(state));
  return entries_.Put(root, std::make_shared<const Validators>(std::move(v)));
}

}  // namespace rnode::casper::contracts
