// Proof of stake, native (docs/contracts.md "Proof of stake"): the
// `rho:system:pos` object with the public method names, the state it keeps,
// the system operations Casper runs per block (closeBlock, slash), genesis,
// and the native decoding of bonds from a state root.
//
// State: one datum on PosStateChannel() (a GPrivate no program can name)
// holding one Rholang map value (layout in docs/contracts.md), read with
// NativeSpace::Peek and replaced with Take + Put. Stakes are held by the PoS
// vault (PosVaultAddress()) through the Ledger.
#ifndef RNODE_CASPER_CONTRACTS_POS_H_
#define RNODE_CASPER_CONTRACTS_POS_H_

#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "casper/contracts/ledger.h"
#include "rholang/frontend/ir.h"
#include "rholang/interpreter/system_processes.h"
#include "rspace/history/history.h"
#include "util/bounded_cache.h"
#include "util/bytes.h"

namespace rnode::casper::contracts {

// Genesis parameters (the public node's defaults.conf names and defaults).
struct PosParams {
  int64_t minimum_bond = 1;
  int64_t maximum_bond = std::numeric_limits<int64_t>::max();
  int64_t epoch_length = 10'000;
  int64_t quarantine_length = 50'000;
  int64_t number_of_active_validators = 100;
  // Fault tolerance threshold in parts per million
  // (getFaultToleranceThresholdPpm).
  int64_t fault_tolerance_threshold_ppm = 100'000;
  // The 65-byte public key whose deployer may spend the PoS vault with
  // posVaultTransfer; empty: no one (the public node's PoS names a key it
  // never fills in, so there no one can either).
  Bytes vault_transfer_key;
  bool operator==(const PosParams&) const = default;
};

// A validator's stake; public keys are 65-byte uncompressed secp256k1.
struct Bond {
  Bytes validator;
  int64_t stake = 0;
  bool operator==(const Bond&) const = default;
};

// What the state says about validators (ascending by key).
struct Validators {
  std::vector<Bond> bonds;    // allBonds (slashed ones with stake 0)
  std::vector<Bytes> active;  // activeValidators
  int64_t epoch_length = 0;
  int64_t quarantine_length = 0;
  int64_t fault_tolerance_threshold_ppm = 0;
};

// The channel holding the PoS state.
rholang::ir::ParPtr PosStateChannel();
// The channel holding the coop vault (a GPrivate no program can name): one
// datum, the tuple (multiSigVault, address, systemVault) rho:vault:multiSig
// made at genesis (CreateCoopVault in helper_contracts.h). getCoopVault
// replies it and slashed stakes go to its address.
rholang::ir::ParPtr CoopVaultChannel();

class ProofOfStake {
 public:
  ProofOfStake(Ledger* ledger, PosParams params)
      : ledger_(ledger), params_(params) {}

  // The rho:system:pos object (kind kPosObject). Methods (the reply channel
  // is always last): getBonds, getActiveValidators, getEpochLength,
  // getQuarantineLength, getFaultToleranceThresholdPpm,
  // getCurrentEpochRewards, getRewards, getWithdrawers,
  // getPendingWithdrawer, getInitialPosVault, getCoopVault,
  // bond(deployerId, amount), withdraw(deployerId),
  // posVaultTransfer(target, amount, deployerId), closeBlock(sysAuthToken),
  // slash(deployerId, blockHash, sysAuthToken); replies and error strings
  // as the public node (docs/contracts-pos.md).
  rholang::interp::NativeObjectDef Object();

  const PosParams& params() const { return params_; }

  // Genesis: writes the initial state (bonds active at once) and mints the
  // sum of the stakes into the PoS vault. InvalidArgument for a stake out of
  // [minimum_bond, maximum_bond], a key that is not 65 bytes or a
  // duplicate key.
  absl::Status Genesis(rholang::interp::NativeSpace& space,
                       const std::vector<Bond>& bonds);

  // Casper's per-block system operation (block number from the block
  // data): at an epoch boundary commits rewards, moves and pays
  // withdrawals, rotates the active set; otherwise reads nothing.
  absl::Status CloseBlock(rholang::interp::NativeSpace& space,
                          const rholang::interp::BlockInfo& block);
  // Slashes `validator`: its stake goes to the coop vault (the address in
  // CoopVaultChannel, or CoopVaultAddress() on a state made without one),
  // stake 0, out of the active set, rewards dropped. A validator without
  // stake: no change.
  absl::Status Slash(rholang::interp::NativeSpace& space, ByteView validator);

 private:
  Ledger* ledger_;
  PosParams params_;
};

// Decodes the PoS state datum of a channel state read from history.
absl::StatusOr<Validators> DecodeValidators(const rspace::ChannelState& state);

// Validators per state root, read natively from history (no interpreter)
// and cached: at most `capacity` roots, the least recently used evicted
// first. Thread-safe.
class ValidatorsCache {
 public:
  // Roots kept by default: the tips and recent ancestors a node validates
  // and proposes on (a few per validator), far fewer than 64 in practice.
  static constexpr size_t kDefaultCapacity = 64;

  // `history` is not owned and must outlive the cache.
  explicit ValidatorsCache(rspace::History* history,
                           size_t capacity = kDefaultCapacity)
      : history_(history), entries_(capacity) {}

  // NotFound if the root has no PoS state.
  absl::StatusOr<std::shared_ptr<const Validators>> Get(const Hash32& root);

  size_t hits() const { return entries_.hits(); }
  size_t misses() const { return entries_.misses(); }

 private:
  rspace::History* history_;
  BoundedCache<Hash32, std::shared_ptr<const Validators>, Hash32Hasher>
      entries_;
};

}  // namespace rnode::casper::contracts

#endif  // RNODE_CASPER_CONTRACTS_POS_H_
