// REV balances: one mergeable number channel per address, read and written
// natively (docs/contracts.md "Balances").
//
// The balance of address A lives on BalanceChannel(A) =
// Unforgeable(GPrivate, blake2b256("rnode/rev-balance/" || A)) as exactly
// one datum `(Int)`, the balance in dust (>= 0); no datum means 0 (a vault
// that never held funds). No program can name the channel: only the ledger
// (behind the vault contract, precharge, refund and genesis) touches it.
// Every change is a Take of the old datum and a Put of the new one through a
// NativeSpace, so it is in the deploy's event log and state change; the
// merger adds concurrent diffs through BalanceCodec.
#ifndef RNODE_CASPER_CONTRACTS_LEDGER_H_
#define RNODE_CASPER_CONTRACTS_LEDGER_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "casper/merge/number_channel.h"
#include "rholang/frontend/ir.h"
#include "rholang/interpreter/system_processes.h"
#include "rspace/history/history.h"
#include "rspace/space.h"
#include "util/bounded_cache.h"
#include "util/bytes.h"

namespace rnode::casper::contracts {

// The channel holding `address`'s balance (not checked for validity).
rholang::ir::ParPtr BalanceChannel(std::string_view address);
// Its hash as RSpace keys it (the channel term's hash).
absl::StatusOr<Hash32> BalanceChannelHash(std::string_view address);

// The balance of `address` in `space`'s current state (overlay included):
// an unrecorded read for tools and tests, outside any deploy and its
// tracking.
absl::StatusOr<int64_t> ReadBalance(rspace::Space& space,
                                    std::string_view address);

// The balance of `address` in the state under `root`, read natively from
// `history` (no space, no interpreter): 0 when the channel holds nothing.
// The history's errors (NotFound for an unknown root), and DataLoss for a
// stored datum that is not a balance.
absl::StatusOr<int64_t> ReadBalanceAt(rspace::History& history,
                                      const Hash32& root,
                                      std::string_view address);

// One number channel's change during a deploy (merge input).
struct NumberDiff {
  Hash32 channel{};
  int64_t delta = 0;
  bool operator==(const NumberDiff&) const = default;
};

// Why a transfer did not happen (nothing moved).
enum class TransferError {
  kNone,
  kInsufficientFunds,
  kNonPositiveAmount,  // amount <= 0
  kOverflow,           // the receiver's balance would exceed INT64_MAX
};

// The message a vault caller sees for `e` ("" for kNone).
std::string_view TransferErrorText(TransferError e);

// Reads and moves balances, and records which balance channels the current
// deploy touched with their start and end values. Not thread-safe: one
// deploy at a time (the runtime's sequential phase and Casper's executor).
//
// Balance reads are not recorded as events (NativeSpace::ReadUnrecorded):
// number channels never conflict in a merge, whose input for them is the
// deploy's diffs (Diffs()); a change is an ordinary Take + Put.
class Ledger {
 public:
  // The balance (0 without a datum). The read is recorded (a peek).
  absl::StatusOr<int64_t> Balance(rholang::interp::NativeSpace& space,
                                  std::string_view address);

  // Moves `amount` from `from` to `to`. A transfer to the same address only
  // checks the funds. Errors are space errors (the deploy fails); a refused
  // transfer returns its reason and changes nothing.
  absl::StatusOr<TransferError> Transfer(rholang::interp::NativeSpace& space,
                                         std::string_view from,
                                         std::string_view to, int64_t amount);

  // Transfer's two halves, for the deploy fee, whose deposit into the PoS
  // vault parallel replay runs apart from the rest of the deploy
  // (casper/execution/block_executor.h). Withdraw checks `from`'s funds
  // (its hold included) and takes `amount` out; Deposit adds `amount` to
  // `to`, refusing an overflow. The events are Transfer's, in its order.
  absl::StatusOr<TransferError> Withdraw(rholang::interp::NativeSpace& space,
                                         std::string_view from, int64_t amount);
  absl::StatusOr<TransferError> Deposit(rholang::interp::NativeSpace& space,
                                        std::string_view to, int64_t amount);

  // The precharge of the deploy being run: `amount` of `address`'s balance
  // is held, so every read of that balance through the ledger (the vault's
  // "balance", a transfer's funds check) sees balance - amount, as if it
  // had been moved out; the executor settles the hold after the program
  // with one transfer of the fee. One hold at a time.
  void Hold(std::string_view address, int64_t amount);
  void ReleaseHold() {
    hold_amount_ = 0;
    hold_address_.clear();
  }

  // Adds `amount` (>= 0) to `address` out of nothing: genesis only.
  absl::Status Mint(rholang::interp::NativeSpace& space,
                    std::string_view address, int64_t amount);

  // The address of a balance channel this ledger has used recently (its
  // memory of channels), for reports; nullopt if not remembered. Linear in
  // the memory's size: not for hot paths.
  std::optional<std::string> KnownAddress(const Hash32& channel) const;

  // --- Number-channel tracking (merge input) ---
  // Starts a deploy: forgets what was touched.
  void BeginDeploy() { touched_.clear(); }
  // The touched balance channels of the deploy so far, ascending by
  // channel, with end - start (0 for a read-only touch).
  std::vector<NumberDiff> Diffs() const { return DiffsOf(touched_); }
  // Save / restore around a phase the space may revert (a failed program).
  using Snapshot = std::map<Hash32, std::pair<int64_t, int64_t>>;
  Snapshot Save() const { return touched_; }
  // Diffs() of a saved snapshot.
  static std::vector<NumberDiff> DiffsOf(const Snapshot& touched);
  void Restore(Snapshot s) { touched_ = std::move(s); }

 private:
  struct Channel {
    rholang::ir::ParPtr par;
    Hash32 hash{};  // the channel term's hash
  };
  // The balance channel of `address`, remembered in channels_.
  absl::StatusOr<Channel> ChannelOf(std::string_view address);
  // Addresses whose balance channel is remembered: the deployers and
  // recipients of many blocks (each costs an encoding and a hash).
  static constexpr size_t kCachedChannels = size_t{1} << 14;

  // Reads the balance datum; `take` consumes it (recorded), otherwise the
  // read is unrecorded.
  absl::StatusOr<int64_t> Read(rholang::interp::NativeSpace& space,
                               const Channel& channel, bool take);
  absl::Status Write(rholang::interp::NativeSpace& space,
                     const Channel& channel, int64_t value);
  // Takes the datum and puts it back with `delta` added (a balance move;
  // the caller checked the bounds).
  absl::Status Add(rholang::interp::NativeSpace& space, const Channel& channel,
                   int64_t delta);

  // The held amount if `address` holds one, else 0.
  int64_t HeldFrom(std::string_view address) const {
    return hold_amount_ != 0 && address == hold_address_ ? hold_amount_ : 0;
  }

  BoundedCache<std::string, Channel> channels_{kCachedChannels};
  std::string hold_address_;
  int64_t hold_amount_ = 0;

  // channel -> (value at first touch, current value).
  Snapshot touched_;
};

// The merger's codec for balance channels (casper/merge/number_channel.h):
// no datum reads 0; one non-persistent datum `(Int >= 0)` reads its value;
// anything else is FailedPrecondition. Write builds that one datum with the
// all-zero generator state and the produce hash of a first produce.
class BalanceCodec final : public merge::NumberChannelCodec {
 public:
  absl::StatusOr<int64_t> Read(
      const rspace::ChannelState& state) const override;
  absl::StatusOr<rspace::ChannelState> Write(const Hash32& channel,
                                             int64_t value) const override;
};

}  // namespace rnode::casper::contracts

#endif  // RNODE_CASPER_CONTRACTS_LEDGER_H_
