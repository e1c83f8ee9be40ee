// Tests for the block model: the wire mapping round trip, the hash rule,
// the seal (hash + signature) and the decoder's refusals.
#include "casper/block/block.h"

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "CasperMessage.pb.h"
#include "casper/block/block_codec.h"
#include "crypto/hash.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/casper/test_key.h"

namespace rnode::casper::block {
namespace {

using ::testing::HasSubstr;
using testing::MakeTestKey;

Hash32 H(uint8_t tag, uint8_t i = 0) {
  Bytes b{tag, i};
  return crypto::Blake2b256(b);
}

rspace::ProduceEvent Produce(uint8_t i, bool persist = false) {
  rspace::ProduceEvent e;
  e.channel = H(1, i);
  e.data = H(2, i);
  e.persist = persist;
  e.repeat = i % 2;
  e.hash = rspace::HashProduce(e.channel, e.data, e.persist, e.repeat);
  return e;
}

rspace::ConsumeEvent Consume(uint8_t i, int arity, bool peek) {
  rspace::ConsumeEvent e;
  for (int k = 0; k < arity; ++k) {
    e.channels.push_back(H(3, static_cast<uint8_t>(i + k)));
    e.patterns.push_back(H(4, static_cast<uint8_t>(i + k)));
  }
  e.continuation = H(5, i);
  e.peek = peek;
  e.repeat = 1;
  e.hash = rspace::HashConsume(
      rspace::HashConsumeBase(e.channels, e.patterns, e.continuation, e.persist,
                              e.peek),
      e.repeat);
  return e;
}

rspace::CommEvent Comm(const rspace::ConsumeEvent& c) {
  rspace::CommEvent e;
  e.consume = c.hash;
  e.consume_persist = c.persist;
  e.peek = c.peek;
  for (size_t k = 0; k < c.channels.size(); ++k) {
    e.binds.push_back({c.channels[k], H(6, static_cast<uint8_t>(k)), k == 0});
  }
  e.hash = rspace::HashComm(e.consume, e.consume_persist, e.peek, e.binds);
  return e;
}

ProcessedDeploy Deploy(uint8_t seed) {
  auto key = MakeTestKey(seed);
  DeployData data;
  data.term = "@0!(" + std::to_string(seed) + ")";
  data.timestamp = 1'700'000'000'000 + seed;
  data.phlo_price = 1;
  data.phlo_limit = 100'000;
  data.valid_after_block_number = 3;
  data.shard_id = "root";
  auto signed_deploy = SignedDeploy::Sign(data, key.sk);
  EXPECT_TRUE(signed_deploy.ok());
  auto consume = Consume(seed, 2, /*peek=*/seed % 2 == 1);
  std::vector<rspace::Event> events{Produce(seed), Produce(seed + 1, true),
                                    consume, Comm(consume)};
  return MakeProcessedDeploy(*signed_deploy, 1234 + seed, seed % 3 == 0, "",
                             std::move(events));
}

// A block with every field set to something other than its default.
Block Sample() {
  Block b;
  b.header.parents = {H(10), H(11)};
  b.header.timestamp = 1'700'000'123'456;
  b.header.extra = {1, 2};
  b.body.state.pre_state = H(12);
  b.body.state.post_state = H(13);
  b.body.state.bonds = {{MakeTestKey(1).pk, 100}, {MakeTestKey(2).pk, 200}};
  b.body.state.block_number = 7;
  b.body.deploys = {Deploy(1), Deploy(2)};
  b.body.system_deploys.push_back(
      {SlashDeploy{H(14), MakeTestKey(3).pk, 2}, {Produce(9)}, ""});
  b.body.system_deploys.push_back({CloseBlockDeploy{}, {Produce(10)}, "boom"});
  b.body.extra = {3};
  b.body.rejected = {{Bytes{1, 2, 3}, true, H(15)}, {Bytes{4}, false, {}}};
  b.body.applied_from_scope = {Bytes{5, 6}};
  b.body.merge_base = H(16);
  b.justifications = {{MakeTestKey(1).pk, H(17)}, {MakeTestKey(2).pk, H(18)}};
  b.seq_num = 4;
  b.shard_id = "root";
  b.extra = {9};
  EXPECT_TRUE(SignBlock(b, MakeTestKey(1).sk).ok());
  return b;
}

TEST(BlockTest, RoundTripsThroughTheWireEncoding) {
  const Block b = Sample();
  const Bytes bytes = EncodeBlock(b);
  auto decoded = DecodeBlock(bytes);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, b);
  EXPECT_EQ(EncodeBlock(*decoded), bytes);
}

TEST(BlockTest, SignedBlockHasAValidSeal) {
  const Block b = Sample();
  EXPECT_EQ(b.sender, MakeTestKey(1).pk);
  EXPECT_EQ(b.hash, ComputeBlockHash(b));
  EXPECT_EQ(CheckSeal(b), SealError::kNone);
  EXPECT_EQ(CheckSeal(*DecodeBlock(EncodeBlock(b))), SealError::kNone);
}

TEST(BlockTest, HashIsBlake2bOfTheEncodingWithoutHashAndSig) {
  Block b = Sample();
  ::casper::BlockMessageProto p;
  BlockToProto(b, &p);
  p.clear_blockhash();
  p.clear_sig();
  std::string preimage = p.SerializeAsString();
  EXPECT_EQ(ComputeBlockHash(b), crypto::Blake2b256(AsBytes(preimage)));
}

TEST(BlockTest, HashCoversEveryFieldButHashAndSig) {
  const Block base = Sample();
  const Hash32 h = ComputeBlockHash(base);
  const std::vector<std::pair<std::string, std::function<void(Block&)>>>
      changes = {
          {"parents", [](Block& b) { b.header.parents.pop_back(); }},
          {"timestamp", [](Block& b) { ++b.header.timestamp; }},
          {"version", [](Block& b) { ++b.header.version; }},
          {"header extra", [](Block& b) { b.header.extra.push_back(0); }},
          {"pre-state", [](Block& b) { b.body.state.pre_state = H(99); }},
          {"post-state", [](Block& b) { b.body.state.post_state = H(99); }},
          {"bonds", [](Block& b) { ++b.body.state.bonds[1].stake; }},
          {"block number", [](Block& b) { ++b.body.state.block_number; }},
          {"deploy cost", [](Block& b) { ++b.body.deploys[0].cost; }},
          {"deploy errored",
           [](Block& b) {
             b.body.deploys[1].errored = !b.body.deploys[1].errored;
           }},
          {"deploy system error",
           [](Block& b) { b.body.deploys[0].system_deploy_error = "x"; }},
          {"deploy log", [](Block& b) { b.body.deploys[0].events.pop_back(); }},
          {"deploy order",
           [](Block& b) { std::swap(b.body.deploys[0], b.body.deploys[1]); }},
          {"system deploy error",
           [](Block& b) { b.body.system_deploys[1].error = ""; }},
          {"slash epoch",
           [](Block& b) {
             std::get<SlashDeploy>(b.body.system_deploys[0].deploy)
                 .target_activation_epoch = 3;
           }},
          {"body extra", [](Block& b) { b.body.extra.clear(); }},
          {"rejected duplicate",
           [](Block& b) { b.body.rejected[0].duplicate = false; }},
          {"rejected carrier",
           [](Block& b) { b.body.rejected[1].carrier = H(98); }},
          {"applied from scope",
           [](Block& b) { b.body.applied_from_scope.clear(); }},
          {"merge base", [](Block& b) { b.body.merge_base.reset(); }},
          {"justifications",
           [](Block& b) { b.justifications[1].latest_block = H(97); }},
          {"sender", [](Block& b) { b.sender = MakeTestKey(5).pk; }},
          {"seq num", [](Block& b) { ++b.seq_num; }},
          {"sig algorithm", [](Block& b) { b.sig_algorithm = "other"; }},
          {"shard id", [](Block& b) { b.shard_id = "rootx"; }},
          {"extra", [](Block& b) { b.extra.clear(); }},
      };
  for (const auto& [name, change] : changes) {
    Block b = base;
    change(b);
    EXPECT_NE(ComputeBlockHash(b), h) << name;
  }
  Block resigned = base;
  resigned.sig = Bytes{1, 2, 3};
  resigned.hash = H(96);
  EXPECT_EQ(ComputeBlockHash(resigned), h);
}

TEST(BlockTest, SealErrorsNameWhatIsWrong) {
  Block b = Sample();
  b.justifications.pop_back();  // Covered by the hash: now a mismatch.
  EXPECT_EQ(CheckSeal(b), SealError::kHashMismatch);

  Block other_signer = Sample();
  Block by_2 = other_signer;
  ASSERT_TRUE(SignBlock(by_2, MakeTestKey(2).sk).ok());
  other_signer.sig = by_2.sig;  // Key 2's signature over another hash.
  EXPECT_EQ(CheckSeal(other_signer), SealError::kBadSignature);

  Block garbage = Sample();
  garbage.sig = Bytes{0x30, 0x01, 0x00};
  EXPECT_EQ(CheckSeal(garbage), SealError::kBadSignature);

  Block algorithm = Sample();
  algorithm.sig_algorithm = "ed25519";
  algorithm.hash = ComputeBlockHash(algorithm);
  EXPECT_EQ(CheckSeal(algorithm), SealError::kUnknownSigAlgorithm);
  EXPECT_EQ(SealErrorName(SealError::kBadSignature), "bad signature");
}

// Each malformed encoding is refused with the field it names.
TEST(BlockTest, DecoderRefusesMalformedBlocks) {
  const std::vector<
      std::tuple<std::string, std::function<void(::casper::BlockMessageProto&)>,
                 std::string>>
      cases = {
          {"short hash", [](auto& p) { p.set_blockhash("abc"); },
           "blockHash: expected 32 bytes, got 3"},
          {"parent",
           [](auto& p) { p.mutable_header()->add_parentshashlist("x"); },
           "header.parentsHashList"},
          {"post-state",
           [](auto& p) {
             p.mutable_body()->mutable_state()->clear_poststatehash();
           },
           "state.postStateHash"},
          {"compressed sender",
           [](auto& p) { p.set_sender(std::string(33, '\x02')); },
           "sender: expected a 65-byte uncompressed secp256k1 key"},
          {"bond key",
           [](auto& p) {
             p.mutable_body()->mutable_state()->mutable_bonds(0)->set_validator(
                 "k");
           },
           "bond.validator"},
          {"long sig", [](auto& p) { p.set_sig(std::string(73, 's')); },
           "sig: expected 1 to 72 bytes, got 73"},
          {"deploy algorithm",
           [](auto& p) {
             p.mutable_body()
                 ->mutable_deploys(0)
                 ->mutable_deploy()
                 ->set_sigalgorithm("rsa");
           },
           "unsupported signature algorithm 'rsa'"},
          {"empty term",
           [](auto& p) {
             p.mutable_body()
                 ->mutable_deploys(0)
                 ->mutable_deploy()
                 ->clear_term();
           },
           "term must not be empty"},
          {"event hash",
           [](auto& p) {
             p.mutable_body()
                 ->mutable_deploys(0)
                 ->mutable_deploylog(0)
                 ->mutable_produce()
                 ->set_datahash(std::string(32, 'z'));
           },
           "does not match its fields"},
          {"empty event",
           [](auto& p) {
             p.mutable_body()
                 ->mutable_deploys(0)
                 ->mutable_deploylog(0)
                 ->Clear();
           },
           "event: empty"},
          {"negative repeat",
           [](auto& p) {
             p.mutable_body()
                 ->mutable_deploys(0)
                 ->mutable_deploylog(0)
                 ->mutable_produce()
                 ->set_timesrepeated(-1);
           },
           "produce.timesRepeated: negative repeat count -1"},
          {"consume patterns",
           [](auto& p) {
             p.mutable_body()
                 ->mutable_deploys(0)
                 ->mutable_deploylog(2)
                 ->mutable_consume()
                 ->mutable_patternhashes()
                 ->RemoveLast();
           },
           "consume.patternHashes: 1 patterns for 2 channels"},
          {"comm peeks",
           [](auto& p) {
             // Deploy(1)'s COMM peeks both binds; one listed is malformed.
             p.mutable_body()
                 ->mutable_deploys(0)
                 ->mutable_deploylog(3)
                 ->mutable_comm()
                 ->mutable_peeks()
                 ->RemoveLast();
           },
           "comm.peeks: 1 peeks for 2 binds"},
          {"comm binds",
           [](auto& p) {
             p.mutable_body()
                 ->mutable_deploys(0)
                 ->mutable_deploylog(3)
                 ->mutable_comm()
                 ->clear_produces();
           },
           "comm.produces: expected 1 to 32 binds, got 0"},
          {"system deploy",
           [](auto& p) {
             p.mutable_body()->mutable_systemdeploys(0)->clear_systemdeploy();
           },
           "systemDeploy: neither slash nor closeBlock"},
          {"slash target",
           [](auto& p) {
             p.mutable_body()
                 ->mutable_systemdeploys(0)
                 ->mutable_systemdeploy()
                 ->mutable_slashsystemdeploy()
                 ->set_invalidblockhash("q");
           },
           "slash.invalidBlockHash"},
          {"carrier",
           [](auto& p) {
             p.mutable_body()->mutable_rejecteddeploys(0)->set_carrier("c");
           },
           "rejectedDeploy.carrier"},
          {"merge base", [](auto& p) { p.mutable_body()->set_mergebase("m"); },
           "body.mergeBase"},
          {"justification",
           [](auto& p) {
             p.mutable_justifications(0)->set_latestblockhash("j");
           },
           "justification.latestBlockHash"},
          {"shard id", [](auto& p) { p.set_shardid(std::string(257, 'r')); },
           "shardId: 257 bytes, limit 256"},
          // Issue 43: list sizes are bounded before any entry is read.
          {"parents",
           [](auto& p) {
             for (int i = 0; i < 257; ++i) {
               p.mutable_header()->add_parentshashlist(std::string(32, 'p'));
             }
           },
           "header.parentsHashList: 259 entries, limit 256"},
          {"justifications",
           [](auto& p) {
             const auto j = p.justifications(0);
             while (p.justifications_size() <= 1024)
               *p.add_justifications() = j;
           },
           "justifications: 1025 entries, limit 1024"},
          {"bonds",
           [](auto& p) {
             auto* st = p.mutable_body()->mutable_state();
             const auto b = st->bonds(0);
             while (st->bonds_size() <= 1024) *st->add_bonds() = b;
           },
           "state.bonds: 1025 entries, limit 1024"},
          {"header extra",
           [](auto& p) {
             p.mutable_header()->set_extrabytes(std::string(4097, 'x'));
           },
           "header.extraBytes: 4097 bytes, limit 4096"},
          {"body extra",
           [](auto& p) {
             p.mutable_body()->set_extrabytes(std::string(4097, 'x'));
           },
           "body.extraBytes: 4097 bytes"},
          {"extra", [](auto& p) { p.set_extrabytes(std::string(4097, 'x')); },
           "extraBytes: 4097 bytes"},
      };
  ::casper::BlockMessageProto good;
  BlockToProto(Sample(), &good);
  ASSERT_TRUE(BlockFromProto(good).ok());
  for (const auto& [name, corrupt, message] : cases) {
    ::casper::BlockMessageProto p = good;
    corrupt(p);
    auto r = DecodeBlock(AsBytes(p.SerializeAsString()));
    ASSERT_FALSE(r.ok()) << name;
    EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << name;
    EXPECT_THAT(std::string(r.status().message()), HasSubstr(message)) << name;
  }
}

TEST(BlockTest, DecoderRefusesBytesThatAreNotABlockOrTooLarge) {
  Bytes junk{0xff, 0xff, 0xff, 0xff, 0x0f};
  auto r = DecodeBlock(junk);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("not a BlockMessageProto"));
  const Bytes bytes = EncodeBlock(Sample());
  EXPECT_TRUE(DecodeBlock(bytes, bytes.size()).ok());
  r = DecodeBlock(bytes, bytes.size() - 1);
  ASSERT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("block is " + std::to_string(bytes.size()) +
                        " bytes, limit " + std::to_string(bytes.size() - 1)));
}

// The rule must not drift: a fixed block keeps this hash on every machine.
TEST(BlockTest, HashOfAFixedBlockIsPinned) {
  Block b;
  b.header.parents = {H(10)};
  b.header.timestamp = 1'700'000'000'000;
  b.body.state.pre_state = H(12);
  b.body.state.post_state = H(13);
  b.body.state.bonds = {{MakeTestKey(1).pk, 100}};
  b.body.state.block_number = 1;
  b.justifications = {{MakeTestKey(1).pk, H(10)}};
  b.sender = MakeTestKey(1).pk;
  b.seq_num = 1;
  b.shard_id = "root";
  EXPECT_EQ(HexEncode(ComputeBlockHash(b)),
            "0714cba5ee5e1133ad642af0784b1f6784641ac78de3b385743e1b683e5ba3e5");
}

}  // namespace
}  // namespace rnode::casper::block
