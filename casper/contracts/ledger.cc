#include "casper/contracts/ledger.h"

#include <limits>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "casper/contracts/names.h"
#include "crypto/hash.h"
#include "rholang/interpreter/native_contract.h"
#include "rholang/interpreter/term_codec.h"
#include "rspace/channel_codec.h"
#include "rspace/event_log.h"
#include "util/status_macros.h"

namespace rnode::casper::contracts {
namespace {

namespace ir = rholang::ir;
namespace interp = rholang::interp;

constexpr std::string_view kBalanceDomain = "rnode/rev-balance/";

// The value of a balance datum: exactly one Int >= 0.
absl::StatusOr<int64_t> BalanceOf(const std::vector<ir::ParPtr>& values) {
  if (values.size() == 1) {
    const ir::Expr* e = values[0]->SingleExpr();
    if (e != nullptr && e->kind == ir::ExprKind::kInt && e->int_value >= 0) {
      return e->int_value;
    }
  }
  return absl::FailedPreconditionError("malformed balance datum");
}

}  // namespace

ir::ParPtr BalanceChannel(std::string_view address) {
  Bytes pre(kBalanceDomain.begin(), kBalanceDomain.end());
  pre.insert(pre.end(), address.begin(), address.end());
  Hash32 id = crypto::Blake2b256(pre);
  return interp::UnforgeablePar(ir::UnforgeableKind::kPrivate, id);
}

absl::StatusOr<Hash32> BalanceChannelHash(std::string_view address) {
  ASSIGN_OR_RETURN(rspace::TermPtr t,
                   interp::MakeChannelTerm(BalanceChannel(address)));
  return t->hash();
}

absl::StatusOr<int64_t> ReadBalance(rspace::Space& space,
                                    std::string_view address) {
  ASSIGN_OR_RETURN(Hash32 channel, BalanceChannelHash(address));
  rspace::ChannelState state;
  ASSIGN_OR_RETURN(state.data, space.GetData(channel));
  return BalanceCodec().Read(state);
}

absl::StatusOr<int64_t> ReadBalanceAt(rspace::History& history,
                                      const Hash32& root,
                                      std::string_view address) {
  ASSIGN_OR_RETURN(Hash32 channel, BalanceChannelHash(address));
  ASSIGN_OR_RETURN(std::optional<Bytes> blob, history.ReadLeaf(root, channel));
  if (!blob.has_value()) return 0;
  absl::StatusOr<rspace::ChannelState> state =
      rspace::DecodeChannelState(*blob, interp::StoredTermFactory());
  if (!state.ok()) {
    return absl::DataLossError(
        absl::StrCat("the balance of ", std::string(address),
                     " does not decode: ", state.status().message()));
  }
  absl::StatusOr<int64_t> balance = BalanceCodec().Read(*state);
  if (!balance.ok()) {
    return absl::DataLossError(
        absl::StrCat("the balance of ", std::string(address),
                     " is not a balance: ", balance.status().message()));
  }
  return balance;
}

std::string_view TransferErrorText(TransferError e) {
  switch (e) {
    case TransferError::kNone:
      return "";
    case TransferError::kInsufficientFunds:
      return "Insufficient funds";
    case TransferError::kNonPositiveAmount:
      return "Amount must be positive value";
    case TransferError::kOverflow:
      return "Balance overflow";
  }
  return "";
}

absl::StatusOr<Ledger::Channel> Ledger::ChannelOf(std::string_view address) {
  std::string key(address);
  if (std::optional<Channel> hit = channels_.Get(key)) return *std::move(hit);
  Channel c;
  c.par = BalanceChannel(address);
  ASSIGN_OR_RETURN(rspace::TermPtr t, interp::MakeChannelTerm(c.par));
  c.hash = t->hash();
  return channels_.Put(key, std::move(c));
}

absl::StatusOr<int64_t> Ledger::Read(interp::NativeSpace& space,
                                     const Channel& channel, bool take) {
  ASSIGN_OR_RETURN(
      std::optional<std::vector<ir::ParPtr>> datum,
      take ? space.Take(channel.par) : space.ReadUnrecorded(channel.par));
  int64_t value = 0;
  if (datum.has_value()) {
    ASSIGN_OR_RETURN(value, BalanceOf(*datum));
  }
  touched_.try_emplace(channel.hash, value, value);
  return value;
}

absl::Status Ledger::Write(interp::NativeSpace& space, const Channel& channel,
                           int64_t value) {
  RETURN_IF_ERROR(space.Put(channel.par, {interp::IntPar(value)}));
  touched_[channel.hash].second = value;
  return absl::OkStatus();
}

absl::Status Ledger::Add(interp::NativeSpace& space, const Channel& channel,
                         int64_t delta) {
  ASSIGN_OR_RETURN(int64_t taken, Read(space, channel, /*take=*/true));
  return Write(space, channel, taken + delta);
}

absl::StatusOr<int64_t> Ledger::Balance(interp::NativeSpace& space,
                                        std::string_view address) {
  ASSIGN_OR_RETURN(Channel c, ChannelOf(address));
  ASSIGN_OR_RETURN(int64_t raw, Read(space, c, /*take=*/false));
  return raw - HeldFrom(address);
}

void Ledger::Hold(std::string_view address, int64_t amount) {
  hold_address_ = std::string(address);
  hold_amount_ = amount;
}

absl::StatusOr<TransferError> Ledger::Transfer(interp::NativeSpace& space,
                                               std::string_view from,
                                               std::string_view to,
                                               int64_t amount) {
  if (amount <= 0) return TransferError::kNonPositiveAmount;
  ASSIGN_OR_RETURN(Channel from_ch, ChannelOf(from));
  ASSIGN_OR_RETURN(int64_t from_balance, Read(space, from_ch, false));
  if (from_balance - HeldFrom(from) < amount) {
    return TransferError::kInsufficientFunds;
  }
  if (from == to) return TransferError::kNone;
  ASSIGN_OR_RETURN(Channel to_ch, ChannelOf(to));
  ASSIGN_OR_RETURN(int64_t to_balance, Read(space, to_ch, false));
  if (to_balance > std::numeric_limits<int64_t>::max() - amount) {
    return TransferError::kOverflow;
  }
  RETURN_IF_ERROR(Add(space, from_ch, -amount));
  RETURN_IF_ERROR(Add(space, to_ch, amount));
  return TransferError::kNone;
}

absl::StatusOr<TransferError> Ledger::Withdraw(interp::NativeSpace& space,
                                               std::string_view from,
                                               int64_t amount) {
  if (amount <= 0) return TransferError::kNonPositiveAmount;
  ASSIGN_OR_RETURN(Channel ch, ChannelOf(from));
  ASSIGN_OR_RETURN(int64_t balance, Read(space, ch, false));
  if (balance - HeldFrom(from) < amount) {
    return TransferError::kInsufficientFunds;
  }
  RETURN_IF_ERROR(Add(space, ch, -amount));
  return TransferError::kNone;
}

absl::StatusOr<TransferError> Ledger::Deposit(interp::NativeSpace& space,
                                              std::string_view to,
                                              int64_t amount) {
  if (amount <= 0) return TransferError::kNonPositiveAmount;
  ASSIGN_OR_RETURN(Channel ch, ChannelOf(to));
  ASSIGN_OR_RETURN(int64_t balance, Read(space, ch, false));
  if (balance > std::numeric_limits<int64_t>::max() - amount) {
    return TransferError::kOverflow;
  }
  RETURN_IF_ERROR(Add(space, ch, amount));
  return TransferError::kNone;
}

absl::Status Ledger::Mint(interp::NativeSpace& space, std::string_view address,
                          int64_t amount) {
  if (amount < 0) return absl::InvalidArgumentError("mint: negative amount");
  ASSIGN_OR_RETURN(Channel c, ChannelOf(address));
  ASSIGN_OR_RETURN(int64_t balance, Read(space, c, /*take=*/true));
  if (balance > std::numeric_limits<int64_t>::max() - amount) {
    return absl::InvalidArgumentError("mint: balance overflow");
  }
  return Write(space, c, balance + amount);
}

std::optional<std::string> Ledger::KnownAddress(const Hash32& channel) const {
  std::optional<std::string> found;
  channels_.ForEach([&](const std::string& address, const Channel& c) {
    if (!found.has_value() && c.hash == channel) found = address;
  });
  return found;
}

std::vector<NumberDiff> Ledger::DiffsOf(const Snapshot& touched) {
  std::vector<NumberDiff> out;
  out.reserve(touched.size());
  for (const auto& [channel, values] : touched) {
    out.push_back(NumberDiff{channel, values.second - values.first});
  }
  return out;
}

absl::StatusOr<int64_t> BalanceCodec::Read(
    const rspace::ChannelState& state) const {
  if (state.empty()) return 0;
  ASSIGN_OR_RETURN(std::vector<ir::ParPtr> values, OnlyDatum(state));
  return BalanceOf(values);
}

absl::StatusOr<rspace::ChannelState> BalanceCodec::Write(const Hash32& channel,
                                                         int64_t value) const {
  if (value < 0) {
    return absl::InvalidArgumentError("balance codec: negative value");
  }
  interp::DataValue data;
  data.pars.push_back(interp::IntPar(value));
  ASSIGN_OR_RETURN(rspace::TermPtr term, interp::MakeDataTerm(std::move(data)));
  rspace::ChannelState state;
  rspace::Datum d;
  d.source = rspace::HashProduce(channel, term->hash(), false, 0);
  d.value = std::move(term);
  state.data.push_back(std::move(d));
  return state;
}

}  // namespace rnode::casper::contracts
