#include "casper/contracts/helper_contracts.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "casper/contracts/internal/helper_sources.h"
#include "casper/contracts/pos.h"
#include "casper/contracts/registry.h"
#include "crypto/hash.h"
#include "crypto/secp256k1.h"
#include "rholang/frontend/printer.h"
#include "rholang/interpreter/native_contract.h"
#include "rholang/interpreter/native_space.h"
#include "rspace/event_log.h"
#include "util/bytes.h"
#include "util/status_macros.h"

namespace rnode::casper::contracts {
namespace {

// TokenMetadata (rho:system:tokenMetadata): the native token's name,
// symbol and decimals, each by its method, and ("all", ret) as the triple.
// DeployHelperContracts fills in the $$...$$ fields from its TokenInfo.
constexpr std::string_view kTokenMetadata = R"rho(
new TokenMetadata, registered,
    insertSigned(`rho:registry:insertSigned:secp256k1`) in {
  contract TokenMetadata(@"name", ret) = { ret!("$$tokenName$$") } |
  contract TokenMetadata(@"symbol", ret) = { ret!("$$tokenSymbol$$") } |
  contract TokenMetadata(@"decimals", ret) = { ret!($$tokenDecimals$$) } |
  contract TokenMetadata(@"all", ret) = {
    ret!(("$$tokenName$$", "$$tokenSymbol$$", $$tokenDecimals$$))
  } |
  insertSigned!(
    "04856ecb339aa2462bc25f4d4d5f5e5317c58e366222bed85f488c576f423ff7136ba22c4198b1b7b8d5d2c61722b948fee9d8d8e10e468dc52b490d3393444fd0".hexToBytes(),
    (9223372036854775807, bundle+{*TokenMetadata}),
    "3044022065f630061a79b4ae846a705faf6c96dc3f97d90bb9f1dd1dec8d8581d27f50d902207d99a932eee9a9743bef7c7148db938c4ec34bdd4d99b1445db98bc0a61ec851".hexToBytes(),
    *registered)
}
)rho";

// The coop vault's deploy (CreateCoopVault fills in the keys and the
// quorum): the multi-signature vault's create, whose reply goes to a plain
// channel the installer empties at once.
constexpr std::string_view kCoopVault = R"rho(
new lookup(`rho:registry:lookup`), multiSigCh in {
  lookup!(`rho:vault:multiSig`, *multiSigCh) |
  for (@(_, MultiSigVault) <- multiSigCh) {
    @MultiSigVault!("create", [$$keys$$], [], $$quorum$$, "rnode:pos:coopVault")
  }
}
)rho";
constexpr std::string_view kCoopVaultChannel = "rnode:pos:coopVault";
// Any key: the deploy signs nothing.
constexpr std::string_view kCoopVaultDeployerKey =
    "0000000000000000000000000000000000000000000000000000000000000002";

// The sources of all but TokenMetadata are casper/contracts/rho/*.rho.
const HelperContract kHelpers[] = {
    // TreeHashMap (rho:lang:treeHashMap): a map spread over one channel per
    // node of a tree of hash prefixes, so that writers of different keys rarely
    // touch the same channel: init(depth), get, set, contains, update, delete,
    // getOrElse, fastUnsafeGet, toMap, depth. The public registry stores it
    // under the plain URI (no signed insert), so it is exported for the
    // installer. Any deployer: nothing it does is signed.
    {"TreeHashMap", "rho:lang:treeHashMap", "rho:lang:treeHashMap",
     "0000000000000000000000000000000000000000000000000000000000000001",
     1559156000000, rho::kTreeHashMapText},
    // ListOps (rho:lang:listOps): list helpers over user contracts. Every
    // method
    // replies on its last argument. fold calls step!(x, acc, r) left to right;
    // partialFold's step replies (stop, acc) and the fold ends at the first
    // stop, replying (stopped, acc); map, filter, forall and exists call the
    // contract one element at a time in order (forall and exists stop at the
    // first answer that decides); parMap starts every call at once and keeps
    // list order; unorderedParMap keeps completion order; foreach replies true
    // after the last acknowledgement. The *Clean variants take a state passed
    // as the first argument of every call.
    {"ListOps", "rho:lang:listOps", "",
     "867c21c6a3245865444d80e49cac08a1c11e23b35965b566bbe9f49bb9897511",
     1559156082324, rho::kListOpsText},
    // Either (rho:lang:either): (true, value) is Right, (false, error) Left;
    // lifting, map, mapLeft, flatMap, map2 (over a receive process), productR,
    // compose, their Clean and "<-" (read the arguments from channels) forms.
    {"Either", "rho:lang:either", "",
     "5248f8913f8572d8227a3c7787b54bd8263389f7209adc1422e36bb2beb160dc",
     1559156217509, rho::kEitherText},
    // NonNegativeNumber (rho:lang:nonNegativeNumber): a counter that never goes
    // below 0 or above the largest Int.
    {"NonNegativeNumber", "rho:lang:nonNegativeNumber", "",
     "e33c9f1e925819d04733db4ec8539a84507c9e9abd32822059349449fe03997d",
     1559156251792, rho::kNonNegativeNumberText},
    // AuthKey (rho:system:authKey): keys that prove they were made for a shape
    // without revealing it.
    {"AuthKey", "rho:system:authKey", "",
     "f450b26bac63e5dd9343cd46f5fae1986d367a893cd21eedd98a4cb3ac699abc",
     1559156356769, rho::kAuthKeyText},
    // Stack (rho:lang:stack): init, push, pop ((true, top) or (false, "stack is
    // empty")), size, isEmpty, toList (bottom first).
    {"Stack", "rho:lang:stack", "",
     "c94e647de6876c954ebb7b64c40a220227770f9be003635edfe3336a1a2c8605",
     1751539590099, rho::kStackText},
    // MakeMint (rho:system:makeMint): mints and their purses (makePurse,
    // getBalance, deposit, split, sprout, setLog and the decr protocol between
    // purses of one mint). Looks up NonNegativeNumber, so it comes after it.
    {"MakeMint", "rho:system:makeMint", "",
     "de19d53f28d4cdee74bad062342d8486a90a652055f3de4b2efa5eb2fccc9d53",
     1559156452968, rho::kMakeMintText},
    // The multi-signature vault (rho:vault:multiSig): a system vault at the
    // address of a private name, spent by a quorum of signers. A signer is a
    // public key (it authorises with the key `deployerAuthKey` makes for its
    // deployer) or an unsealer of a sealer/unsealer pair (it authorises with a
    // box sealing the exact call: (vault, target, amount, ret) for transfer,
    // (vault, target, amount, nonce, ret) for confirm). With quorum 1 a
    // transfer moves the funds at once and replies (true, (false, "done"));
    // otherwise it replies (true, (true, nonce)) and the funds move at the
    // quorum-th confirm. Finished nonces are forgotten (the map stays small).
    {"MultiSigVault", "rho:vault:multiSig", "",
     "2a2eaa76d6fea9f502629e32b0f8eea19b9de8e2188ec0d589fcafa98fb1f031",
     1571408470880, rho::kMultiSigVaultText},
    {"TokenMetadata", "rho:system:tokenMetadata", "",
     "8f9a1c3b2d4e5f6a7b8c9d0e1f2a3b4c5d6e7f8a9b0c1d2e3f4a5b6c7d8e9f0a",
     1737500000000, kTokenMetadata},
};

}  // namespace

std::span<const HelperContract> HelperContracts() { return kHelpers; }

absl::Status InstallLiteralEntry(const HelperContract& helper,
                                 rholang::interp::NativeSpace& space) {
  if (helper.literal_uri.empty()) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::optional<std::vector<rholang::ir::ParPtr>> exported,
                   space.Take(rholang::interp::StringPar(
                       std::string(kHelperExportChannel))));
  if (!exported.has_value() || exported->size() != 1) {
    return absl::FailedPreconditionError(absl::StrCat(
        "helper contract ", std::string(helper.name), " exported nothing on \"",
        std::string(kHelperExportChannel), "\""));
  }
  return space.Put(RegistryEntryChannel(helper.literal_uri),
                   {std::move((*exported)[0])});
}

absl::StatusOr<rholang::interp::DeployInfo> SourceDeploy(
    std::string_view source, int64_t timestamp, std::string_view key_hex) {
  absl::StatusOr<crypto::Secp256k1PrivateKey> key = HexDecodeFixed<32>(key_hex);
  if (!key.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("deployer key: ", key.status().message()));
  }
  const crypto::Secp256k1PublicKey pk = crypto::Secp256k1PublicKeyOf(*key);
  rholang::interp::DeployInfo d;
  d.timestamp = timestamp;
  d.deployer_public_key.assign(pk.begin(), pk.end());
  const Hash32 id = crypto::Blake2b256(AsBytes(source));
  d.deploy_id.assign(id.begin(), id.end());
  return d;
}

absl::Status CheckTokenInfo(const TokenInfo& token) {
  auto plain = [](std::string_view text) {
    if (text.empty() || text.size() > kMaxTokenTextBytes) return false;
    for (char c : text) {
      if (c < 0x20 || c > 0x7e || c == '"' || c == '\\') return false;
    }
    return true;
  };
  if (!plain(token.name) || !plain(token.symbol)) {
    return absl::InvalidArgumentError(
        absl::StrCat("token name and symbol: 1 to ", kMaxTokenTextBytes,
                     " printable ASCII characters without \" or \\"));
  }
  if (token.decimals < 0 || token.decimals > kMaxTokenDecimals) {
    return absl::InvalidArgumentError(
        absl::StrCat("token decimals: 0 to ", kMaxTokenDecimals));
  }
  return absl::OkStatus();
}

absl::Status DeployHelperContracts(rholang::interp::Runtime& runtime,
                                   rspace::Space& space,
                                   const rholang::interp::BlockInfo& block,
                                   const TokenInfo& token) {
  RETURN_IF_ERROR(CheckTokenInfo(token));
  // Far above what any helper spends: a bound only against one that loops.
  constexpr int64_t kPhloLimit = 1'000'000'000;
  for (const HelperContract& h : HelperContracts()) {
    absl::StatusOr<rholang::interp::DeployInfo> d =
        SourceDeploy(h.source, h.timestamp, h.deployer_key);
    if (!d.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "helper contract ", std::string(h.name), ": ", d.status().message()));
    }
    const std::string source = absl::StrReplaceAll(
        absl::string_view(h.source.data(), h.source.size()),
        {{"$$tokenName$$", token.name},
         {"$$tokenSymbol$$", token.symbol},
         {"$$tokenDecimals$$", absl::StrCat(token.decimals)}});
    rspace::EventLog log;
    rholang::interp::EvalResult r =
        runtime.EvaluateSource(source, *d, kPhloLimit, &log, &block);
    if (r.failed()) {
      return absl::InternalError(absl::StrCat("the helper contract ",
                                              std::string(h.name),
                                              " failed: ", r.error.message()));
    }
    rholang::interp::SpaceNative native(
        &space, rspace::OpContext{&log, &runtime.matcher()},
        /*meter=*/nullptr, runtime.channel_terms());
    RETURN_IF_ERROR(InstallLiteralEntry(h, native));
  }
  return absl::OkStatus();
}

absl::Status CreateCoopVault(rholang::interp::Runtime& runtime,
                             rspace::Space& space,
                             const rholang::interp::BlockInfo& block,
                             std::span<const Bytes> public_keys,
                             int64_t quorum) {
  if (public_keys.empty()) {
    return absl::InvalidArgumentError("coop vault: no public key");
  }
  if (quorum < 1 || quorum > static_cast<int64_t>(public_keys.size())) {
    return absl::InvalidArgumentError(
        absl::StrCat("coop vault: the quorum ", quorum, " is not in 1..",
                     public_keys.size(), " (the number of keys)"));
  }
  std::string keys;
  for (const Bytes& k : public_keys) {
    if (k.size() != 65) {
      return absl::InvalidArgumentError(
          "coop vault: a public key is not 65 bytes");
    }
    absl::StrAppend(&keys, keys.empty() ? "" : ", ", "\"", HexEncode(k),
                    "\".hexToBytes()");
  }
  const std::string source = absl::StrReplaceAll(
      absl::string_view(kCoopVault.data(), kCoopVault.size()),
      {{"$$keys$$", keys}, {"$$quorum$$", absl::StrCat(quorum)}});
  ASSIGN_OR_RETURN(
      rholang::interp::DeployInfo d,
      SourceDeploy(source, block.timestamp, kCoopVaultDeployerKey));
  constexpr int64_t kPhloLimit = 1'000'000'000;
  rspace::EventLog log;
  rholang::interp::EvalResult r =
      runtime.EvaluateSource(source, d, kPhloLimit, &log, &block);
  if (r.failed()) {
    return absl::InternalError(
        absl::StrCat("the coop vault's deploy failed: ", r.error.message()));
  }
  rholang::interp::SpaceNative native(
      &space, rspace::OpContext{&log, &runtime.matcher()},
      /*meter=*/nullptr, runtime.channel_terms());
  ASSIGN_OR_RETURN(
      std::optional<std::vector<rholang::ir::ParPtr>> reply,
      native.Take(rholang::interp::StringPar(std::string(kCoopVaultChannel))));
  // (true, (multiSigVault, address, systemVault)) or (false, reason).
  const rholang::ir::Expr* either =
      reply.has_value() && reply->size() == 1
          ? rholang::interp::SingleOfKind(*(*reply)[0],
                                          rholang::ir::ExprKind::kTuple)
          : nullptr;
  if (either == nullptr || either->operands.size() != 2) {
    return absl::FailedPreconditionError(
        "coop vault: the multi-signature vault did not reply");
  }
  const rholang::ir::Expr* ok = rholang::interp::SingleOfKind(
      *either->operands[0], rholang::ir::ExprKind::kBool);
  if (ok == nullptr || !ok->bool_value) {
    absl::StatusOr<std::string> why = rholang::Print(*either->operands[1]);
    return absl::FailedPreconditionError(
        absl::StrCat("coop vault: the multi-signature vault refused: ",
                     why.ok() ? *why : "(no reason)"));
  }
  return native.Put(CoopVaultChannel(), {either->operands[1]});
}

}  // namespace rnode::casper::contracts
