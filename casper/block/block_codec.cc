// Block and event log wire mapping.
#include "casper/block/block_codec.h"

#include <algorithm>
#include <string>
#include <utility>

#include "CasperMessage.pb.h"
#include "absl/strings/str_cat.h"
#include "rspace/types.h"
#include "util/limits.h"
#include "util/status_macros.h"

namespace rnode::casper::block {
namespace {

using rspace::CommBind;
using rspace::CommEvent;
using rspace::ConsumeEvent;
using rspace::Event;
using rspace::ProduceEvent;

std::string Str(ByteView b) { return std::string(AsChars(b)); }

absl::Status Bad(std::string_view field, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat(std::string(field), ": ", std::string(what)));
}

absl::StatusOr<Hash32> ReadHash(const std::string& s, std::string_view field) {
  if (s.size() != 32) {
    return Bad(field, absl::StrCat("expected 32 bytes, got ", s.size()));
  }
  Hash32 h;
  std::copy(s.begin(), s.end(), h.begin());
  return h;
}

absl::StatusOr<std::optional<Hash32>> ReadOptionalHash(const std::string& s,
                                                       std::string_view field) {
  if (s.empty()) return std::optional<Hash32>();
  ASSIGN_OR_RETURN(Hash32 h, ReadHash(s, field));
  return std::optional<Hash32>(h);
}

absl::StatusOr<crypto::Secp256k1PublicKey> ReadKey(const std::string& s,
                                                   std::string_view field) {
  if (s.size() != limits::kSecp256k1PublicKeyBytes || s[0] != 0x04) {
    return Bad(field,
               absl::StrCat("expected a 65-byte uncompressed secp256k1 key "
                            "(0x04 first), got ",
                            s.size(), " bytes"));
  }
  crypto::Secp256k1PublicKey k;
  std::copy(s.begin(), s.end(), k.begin());
  return k;
}

absl::StatusOr<Bytes> ReadSig(const std::string& s, std::string_view field) {
  if (s.empty() || s.size() > limits::kMaxDerSignatureBytes) {
    return Bad(field,
               absl::StrCat("expected 1 to ", limits::kMaxDerSignatureBytes,
                            " bytes, got ", s.size()));
  }
  return Bytes(s.begin(), s.end());
}

absl::StatusOr<uint32_t> ReadRepeat(int32_t v, std::string_view field) {
  if (v < 0) return Bad(field, absl::StrCat("negative repeat count ", v));
  return static_cast<uint32_t>(v);
}

// ---- Events ----

void ProduceToProto(const ProduceEvent& e, ::casper::ProduceEventProto* p) {
  p->set_channelshash(Str(e.channel));
  p->set_hash(Str(e.hash));
  p->set_persistent(e.persist);
  p->set_timesrepeated(static_cast<int32_t>(e.repeat));
  p->set_datahash(Str(e.data));
}

void ConsumeToProto(const ConsumeEvent& e, ::casper::ConsumeEventProto* p) {
  for (const Hash32& c : e.channels) p->add_channelshashes(Str(c));
  p->set_hash(Str(e.hash));
  p->set_persistent(e.persist);
  for (const Hash32& q : e.patterns) p->add_patternhashes(Str(q));
  p->set_continuationhash(Str(e.continuation));
  p->set_peek(e.peek);
  p->set_timesrepeated(static_cast<int32_t>(e.repeat));
}

void CommToProto(const CommEvent& e, ::casper::CommEventProto* p) {
  ::casper::ConsumeEventProto* c = p->mutable_consume();
  c->set_hash(Str(e.consume));
  c->set_persistent(e.consume_persist);
  for (const CommBind& b : e.binds) {
    ::casper::ProduceEventProto* q = p->add_produces();
    q->set_channelshash(Str(b.channel));
    q->set_hash(Str(b.produce));
    q->set_persistent(b.persist);
  }
  if (e.peek) {
    for (size_t i = 0; i < e.binds.size(); ++i) {
      p->add_peeks()->set_channelindex(static_cast<int32_t>(i));
    }
  }
  p->set_hash(Str(e.hash));
}

absl::StatusOr<Event> ProduceFromProto(const ::casper::ProduceEventProto& p) {
  ProduceEvent e;
  ASSIGN_OR_RETURN(e.channel, ReadHash(p.channelshash(), "produce.channel"));
  ASSIGN_OR_RETURN(e.hash, ReadHash(p.hash(), "produce.hash"));
  ASSIGN_OR_RETURN(e.data, ReadHash(p.datahash(), "produce.dataHash"));
  e.persist = p.persistent();
  ASSIGN_OR_RETURN(e.repeat,
                   ReadRepeat(p.timesrepeated(), "produce.timesRepeated"));
  return Event(e);
}

absl::StatusOr<Event> ConsumeFromProto(const ::casper::ConsumeEventProto& p) {
  const int n = p.channelshashes_size();
  if (n == 0 || static_cast<size_t>(n) > rspace::kMaxJoinArity) {
    return Bad("consume.channelsHashes",
               absl::StrCat("expected 1 to ", rspace::kMaxJoinArity,
                            " channels, got ", n));
  }
  if (p.patternhashes_size() != n) {
    return Bad(
        "consume.patternHashes",
        absl::StrCat(p.patternhashes_size(), " patterns for ", n, " channels"));
  }
  ConsumeEvent e;
  e.channels.reserve(n);
  e.patterns.reserve(n);
  for (int i = 0; i < n; ++i) {
    ASSIGN_OR_RETURN(Hash32 c,
                     ReadHash(p.channelshashes(i), "consume.channelsHashes"));
    ASSIGN_OR_RETURN(Hash32 q,
                     ReadHash(p.patternhashes(i), "consume.patternHashes"));
    e.channels.push_back(c);
    e.patterns.push_back(q);
  }
  ASSIGN_OR_RETURN(e.hash, ReadHash(p.hash(), "consume.hash"));
  ASSIGN_OR_RETURN(e.continuation,
                   ReadHash(p.continuationhash(), "consume.continuationHash"));
  e.persist = p.persistent();
  e.peek = p.peek();
  ASSIGN_OR_RETURN(e.repeat,
                   ReadRepeat(p.timesrepeated(), "consume.timesRepeated"));
  return Event(std::move(e));
}

absl::StatusOr<Event> CommFromProto(const ::casper::CommEventProto& p) {
  const int n = p.produces_size();
  if (n == 0 || static_cast<size_t>(n) > rspace::kMaxJoinArity) {
    return Bad("comm.produces",
               absl::StrCat("expected 1 to ", rspace::kMaxJoinArity,
                            " binds, got ", n));
  }
  CommEvent e;
  ASSIGN_OR_RETURN(e.hash, ReadHash(p.hash(), "comm.hash"));
  ASSIGN_OR_RETURN(e.consume, ReadHash(p.consume().hash(), "comm.consume"));
  e.consume_persist = p.consume().persistent();
  e.binds.reserve(n);
  for (const auto& q : p.produces()) {
    CommBind b;
    ASSIGN_OR_RETURN(b.channel, ReadHash(q.channelshash(), "comm.channel"));
    ASSIGN_OR_RETURN(b.produce, ReadHash(q.hash(), "comm.produce"));
    b.persist = q.persistent();
    e.binds.push_back(b);
  }
  // A peeking COMM lists every bind index once, in order; others none.
  if (p.peeks_size() != 0) {
    if (p.peeks_size() != n) {
      return Bad("comm.peeks", absl::StrCat(p.peeks_size(), " peeks for ", n,
                                            " binds (expected none or all)"));
    }
    for (int i = 0; i < n; ++i) {
      if (p.peeks(i).channelindex() != i) {
        return Bad("comm.peeks", "bind indexes out of order");
      }
    }
    e.peek = true;
  }
  return Event(std::move(e));
}

// ---- Deploys ----

void DeployToProto(const ProcessedDeploy& d,
                   ::casper::ProcessedDeployProto* p) {
  ::casper::DeployDataProto* dd = p->mutable_deploy();
  dd->set_deployer(Str(d.deployer));
  dd->set_term(d.data.term);
  dd->set_timestamp(d.data.timestamp);
  dd->set_sig(Str(d.sig));
  dd->set_sigalgorithm(std::string(SigAlgorithmName(d.sig_algorithm)));
  dd->set_phloprice(d.data.phlo_price);
  dd->set_phlolimit(d.data.phlo_limit);
  dd->set_validafterblocknumber(d.data.valid_after_block_number);
  dd->set_shardid(d.data.shard_id);
  dd->set_language(d.data.language);
  dd->set_expirationtimestamp(d.data.expiration_timestamp);
  p->mutable_cost()->set_cost(static_cast<uint64_t>(d.cost));
  for (const Event& e : d.events) EventToProto(e, p->add_deploylog());
  p->set_errored(d.errored);
  p->set_systemdeployerror(d.system_deploy_error);
}

absl::StatusOr<std::vector<Event>> EventsFromProto(
    const google::protobuf::RepeatedPtrField<::casper::EventProto>& log) {
  if (static_cast<size_t>(log.size()) > rspace::kMaxEventsPerLog) {
    return Bad("deployLog", absl::StrCat(log.size(), " events, limit ",
                                         rspace::kMaxEventsPerLog));
  }
  std::vector<Event> out;
  out.reserve(log.size());
  for (const auto& e : log) {
    ASSIGN_OR_RETURN(Event ev, EventFromProto(e));
    out.push_back(std::move(ev));
  }
  return out;
}

absl::StatusOr<ProcessedDeploy> DeployFromProto(
    const ::casper::ProcessedDeployProto& p) {
  const ::casper::DeployDataProto& dd = p.deploy();
  ProcessedDeploy d;
  d.data.term = dd.term();
  d.data.timestamp = dd.timestamp();
  d.data.phlo_price = dd.phloprice();
  d.data.phlo_limit = dd.phlolimit();
  d.data.valid_after_block_number = dd.validafterblocknumber();
  d.data.shard_id = dd.shardid();
  d.data.expiration_timestamp = dd.expirationtimestamp();
  d.data.language = dd.language();
  RETURN_IF_ERROR(ValidateDeployData(d.data));
  ASSIGN_OR_RETURN(d.deployer, ReadKey(dd.deployer(), "deploy.deployer"));
  ASSIGN_OR_RETURN(d.sig, ReadSig(dd.sig(), "deploy.sig"));
  ASSIGN_OR_RETURN(d.sig_algorithm, ParseSigAlgorithm(dd.sigalgorithm()));
  if (p.cost().cost() > static_cast<uint64_t>(INT64_MAX)) {
    return Bad("deploy.cost", "above INT64_MAX");
  }
  d.cost = static_cast<int64_t>(p.cost().cost());
  d.errored = p.errored();
  d.system_deploy_error = p.systemdeployerror();
  ASSIGN_OR_RETURN(d.events, EventsFromProto(p.deploylog()));
  return d;
}

void SystemDeployToProto(const ProcessedSystemDeploy& d,
                         ::casper::ProcessedSystemDeployProto* p) {
  ::casper::SystemDeployDataProto* s = p->mutable_systemdeploy();
  if (const auto* slash = std::get_if<SlashDeploy>(&d.deploy)) {
    ::casper::SlashSystemDeployDataProto* q = s->mutable_slashsystemdeploy();
    q->set_invalidblockhash(Str(slash->invalid_block));
    q->set_issuerpublickey(Str(slash->issuer));
    q->set_targetactivationepoch(slash->target_activation_epoch);
  } else {
    s->mutable_closeblocksystemdeploy();
  }
  for (const Event& e : d.events) EventToProto(e, p->add_deploylog());
  p->set_errormsg(d.error);
}

absl::StatusOr<ProcessedSystemDeploy> SystemDeployFromProto(
    const ::casper::ProcessedSystemDeployProto& p) {
  ProcessedSystemDeploy d;
  const ::casper::SystemDeployDataProto& s = p.systemdeploy();
  switch (s.systemDeploy_case()) {
    case ::casper::SystemDeployDataProto::kSlashSystemDeploy: {
      const auto& q = s.slashsystemdeploy();
      SlashDeploy slash;
      ASSIGN_OR_RETURN(slash.invalid_block, ReadHash(q.invalidblockhash(),
                                                     "slash.invalidBlockHash"));
      ASSIGN_OR_RETURN(slash.issuer,
                       ReadKey(q.issuerpublickey(), "slash.issuerPublicKey"));
      slash.target_activation_epoch = q.targetactivationepoch();
      d.deploy = slash;
      break;
    }
    case ::casper::SystemDeployDataProto::kCloseBlockSystemDeploy:
      d.deploy = CloseBlockDeploy{};
      break;
    default:
      return Bad("systemDeploy", "neither slash nor closeBlock");
  }
  ASSIGN_OR_RETURN(d.events, EventsFromProto(p.deploylog()));
  d.error = p.errormsg();
  return d;
}

}  // namespace

void EventToProto(const Event& event, ::casper::EventProto* out) {
  if (const auto* p = std::get_if<ProduceEvent>(&event)) {
    ProduceToProto(*p, out->mutable_produce());
  } else if (const auto* c = std::get_if<ConsumeEvent>(&event)) {
    ConsumeToProto(*c, out->mutable_consume());
  } else {
    CommToProto(std::get<CommEvent>(event), out->mutable_comm());
  }
}

absl::StatusOr<Event> EventFromProto(const ::casper::EventProto& proto) {
  absl::StatusOr<Event> e = absl::InvalidArgumentError("event: empty");
  switch (proto.event_instance_case()) {
    case ::casper::EventProto::kProduce:
      e = ProduceFromProto(proto.produce());
      break;
    case ::casper::EventProto::kConsume:
      e = ConsumeFromProto(proto.consume());
      break;
    case ::casper::EventProto::kComm:
      e = CommFromProto(proto.comm());
      break;
    default:
      break;
  }
  if (!e.ok()) return e.status();
  RETURN_IF_ERROR(rspace::VerifyEventHash(*e));
  return e;
}

void BlockToProto(const Block& b, ::casper::BlockMessageProto* out) {
  out->set_blockhash(Str(b.hash));
  ::casper::HeaderProto* h = out->mutable_header();
  for (const Hash32& p : b.header.parents) h->add_parentshashlist(Str(p));
  h->set_timestamp(b.header.timestamp);
  h->set_version(b.header.version);
  h->set_extrabytes(Str(b.header.extra));
  ::casper::BodyProto* body = out->mutable_body();
  ::casper::RChainStateProto* st = body->mutable_state();
  st->set_prestatehash(Str(b.body.state.pre_state));
  st->set_poststatehash(Str(b.body.state.post_state));
  for (const Bond& bond : b.body.state.bonds) {
    ::casper::BondProto* q = st->add_bonds();
    q->set_validator(Str(bond.validator));
    q->set_stake(bond.stake);
  }
  st->set_blocknumber(b.body.state.block_number);
  for (const ProcessedDeploy& d : b.body.deploys) {
    DeployToProto(d, body->add_deploys());
  }
  for (const ProcessedSystemDeploy& d : b.body.system_deploys) {
    SystemDeployToProto(d, body->add_systemdeploys());
  }
  body->set_extrabytes(Str(b.body.extra));
  for (const RejectedDeploy& r : b.body.rejected) {
    ::casper::RejectedDeployProto* q = body->add_rejecteddeploys();
    q->set_sig(Str(r.sig));
    q->set_duplicate(r.duplicate);
    if (r.carrier.has_value()) q->set_carrier(Str(*r.carrier));
  }
  for (const Bytes& sig : b.body.applied_from_scope) {
    body->add_appliedfromscope(Str(sig));
  }
  if (b.body.merge_base.has_value()) {
    body->set_mergebase(Str(*b.body.merge_base));
  }
  for (const Justification& j : b.justifications) {
    ::casper::JustificationProto* q = out->add_justifications();
    q->set_validator(Str(j.validator));
    q->set_latestblockhash(Str(j.latest_block));
  }
  if (b.sender != crypto::Secp256k1PublicKey{}) out->set_sender(Str(b.sender));
  out->set_seqnum(b.seq_num);
  out->set_sig(Str(b.sig));
  out->set_sigalgorithm(b.sig_algorithm);
  out->set_shardid(b.shard_id);
  out->set_extrabytes(Str(b.extra));
}

namespace {

// The list sizes of util/limits.h, checked before any is read.
absl::Status CheckBlockLists(const ::casper::BlockMessageProto& p) {
  const auto over = [](std::string_view field, size_t n, size_t limit,
                       std::string_view unit) -> absl::Status {
    if (n <= limit) return absl::OkStatus();
    return Bad(field,
               absl::StrCat(n, " ", std::string(unit), ", limit ", limit));
  };
  RETURN_IF_ERROR(over("header.parentsHashList",
                       p.header().parentshashlist_size(),
                       limits::kMaxBlockParents, "entries"));
  RETURN_IF_ERROR(over("justifications", p.justifications_size(),
                       limits::kMaxBlockValidators, "entries"));
  RETURN_IF_ERROR(over("state.bonds", p.body().state().bonds_size(),
                       limits::kMaxBlockValidators, "entries"));
  RETURN_IF_ERROR(over("header.extraBytes", p.header().extrabytes().size(),
                       limits::kMaxBlockExtraBytes, "bytes"));
  RETURN_IF_ERROR(over("body.extraBytes", p.body().extrabytes().size(),
                       limits::kMaxBlockExtraBytes, "bytes"));
  return over("extraBytes", p.extrabytes().size(), limits::kMaxBlockExtraBytes,
              "bytes");
}

}  // namespace

absl::StatusOr<Block> BlockFromProto(const ::casper::BlockMessageProto& p) {
  RETURN_IF_ERROR(CheckBlockLists(p));
  Block b;
  ASSIGN_OR_RETURN(b.hash, ReadHash(p.blockhash(), "blockHash"));
  const ::casper::HeaderProto& h = p.header();
  b.header.parents.reserve(h.parentshashlist_size());
  for (const std::string& parent : h.parentshashlist()) {
    ASSIGN_OR_RETURN(Hash32 ph, ReadHash(parent, "header.parentsHashList"));
    b.header.parents.push_back(ph);
  }
  b.header.timestamp = h.timestamp();
  b.header.version = h.version();
  b.header.extra = Bytes(h.extrabytes().begin(), h.extrabytes().end());
  const ::casper::BodyProto& body = p.body();
  const ::casper::RChainStateProto& st = body.state();
  ASSIGN_OR_RETURN(b.body.state.pre_state,
                   ReadHash(st.prestatehash(), "state.preStateHash"));
  ASSIGN_OR_RETURN(b.body.state.post_state,
                   ReadHash(st.poststatehash(), "state.postStateHash"));
  b.body.state.bonds.reserve(st.bonds_size());
  for (const auto& q : st.bonds()) {
    Bond bond;
    ASSIGN_OR_RETURN(bond.validator, ReadKey(q.validator(), "bond.validator"));
    bond.stake = q.stake();
    b.body.state.bonds.push_back(bond);
  }
  b.body.state.block_number = st.blocknumber();
  b.body.deploys.reserve(body.deploys_size());
  for (const auto& q : body.deploys()) {
    ASSIGN_OR_RETURN(ProcessedDeploy d, DeployFromProto(q));
    b.body.deploys.push_back(std::move(d));
  }
  b.body.system_deploys.reserve(body.systemdeploys_size());
  for (const auto& q : body.systemdeploys()) {
    ASSIGN_OR_RETURN(ProcessedSystemDeploy d, SystemDeployFromProto(q));
    b.body.system_deploys.push_back(std::move(d));
  }
  b.body.extra = Bytes(body.extrabytes().begin(), body.extrabytes().end());
  b.body.rejected.reserve(body.rejecteddeploys_size());
  for (const auto& q : body.rejecteddeploys()) {
    RejectedDeploy r;
    ASSIGN_OR_RETURN(r.sig, ReadSig(q.sig(), "rejectedDeploy.sig"));
    r.duplicate = q.duplicate();
    ASSIGN_OR_RETURN(r.carrier,
                     ReadOptionalHash(q.carrier(), "rejectedDeploy.carrier"));
    b.body.rejected.push_back(std::move(r));
  }
  b.body.applied_from_scope.reserve(body.appliedfromscope_size());
  for (const std::string& sig : body.appliedfromscope()) {
    ASSIGN_OR_RETURN(Bytes s, ReadSig(sig, "appliedFromScope"));
    b.body.applied_from_scope.push_back(std::move(s));
  }
  ASSIGN_OR_RETURN(b.body.merge_base,
                   ReadOptionalHash(body.mergebase(), "body.mergeBase"));
  b.justifications.reserve(p.justifications_size());
  for (const auto& q : p.justifications()) {
    Justification j;
    ASSIGN_OR_RETURN(j.validator,
                     ReadKey(q.validator(), "justification.validator"));
    ASSIGN_OR_RETURN(j.latest_block, ReadHash(q.latestblockhash(),
                                              "justification.latestBlockHash"));
    b.justifications.push_back(j);
  }
  // A block without a sender (the genesis block) keeps the all-zero key.
  if (!p.sender().empty()) {
    ASSIGN_OR_RETURN(b.sender, ReadKey(p.sender(), "sender"));
  }
  b.seq_num = p.seqnum();
  // An unsigned block (the genesis block) has an empty sig.
  if (!p.sig().empty()) {
    ASSIGN_OR_RETURN(b.sig, ReadSig(p.sig(), "sig"));
  }
  b.sig_algorithm = p.sigalgorithm();
  b.shard_id = p.shardid();
  if (b.shard_id.size() > limits::kMaxShardIdBytes) {
    return Bad("shardId", absl::StrCat(b.shard_id.size(), " bytes, limit ",
                                       limits::kMaxShardIdBytes));
  }
  b.extra = Bytes(p.extrabytes().begin(), p.extrabytes().end());
  return b;
}

namespace {

Bytes Serialize(const ::casper::BlockMessageProto& p) {
  Bytes out(p.ByteSizeLong());
  p.SerializeWithCachedSizesToArray(out.data());
  return out;
}

}  // namespace

Bytes EncodeBlock(const Block& block) {
  ::casper::BlockMessageProto p;
  BlockToProto(block, &p);
  return Serialize(p);
}

size_t EncodedBlockSize(const Block& block) {
  ::casper::BlockMessageProto p;
  BlockToProto(block, &p);
  return p.ByteSizeLong();
}

size_t EncodedDeploySize(const ProcessedDeploy& deploy) {
  ::casper::ProcessedDeployProto p;
  DeployToProto(deploy, &p);
  const size_t body = p.ByteSizeLong();
  // A repeated message field: one tag byte (fields below 16) and a varint
  // length.
  size_t length_bytes = 1;
  for (size_t v = body; v >= 0x80; v >>= 7) ++length_bytes;
  return 1 + length_bytes + body;
}

Bytes BlockHashPreimage(const Block& block) {
  ::casper::BlockMessageProto p;
  BlockToProto(block, &p);
  p.clear_blockhash();
  p.clear_sig();
  return Serialize(p);
}

absl::StatusOr<Block> DecodeBlock(ByteView bytes, size_t max_bytes) {
  if (bytes.size() > max_bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("block is ", bytes.size(), " bytes, limit ", max_bytes));
  }
  ::casper::BlockMessageProto p;
  if (!p.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("block: not a BlockMessageProto");
  }
  return BlockFromProto(p);
}

}  // namespace rnode::casper::block
