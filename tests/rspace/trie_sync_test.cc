// Moving a state trie between stores by node hash (rspace/history/
// trie_sync.h): every node and value checked against the hash that names
// it, resumable without fetching a stored node again, and the serving side
// bounded by bytes.
#include "rspace/history/trie_sync.h"

#include <algorithm>
#include <iostream>
#include <memory>
#include <optional>
#include <random>
#include <span>
#include <string>
#include <vector>

#include "crypto/hash.h"
#include "gtest/gtest.h"
#include "rspace/storage/fault_store.h"
#include "tests/test_seed.h"

namespace rnode::rspace {
namespace {

HistoryOptions Options() {
  HistoryOptions o;
  o.node_cache_entries = 0;  // every read goes to the store
  o.node_cache_bytes = 0;
  return o;
}

// A store with a history in it.
struct Side {
  InMemoryStore store{3};
  std::unique_ptr<History> history = *History::Open(&store, Options());
};

// Random channel states: mostly small (stored inline with their leaf),
// every fifth larger than the inline bound (stored out of line).
std::vector<LeafUpdate> RandomUpdates(std::mt19937_64& rng, size_t n) {
  std::vector<LeafUpdate> out(n);
  for (LeafUpdate& u : out) {
    for (uint8_t& b : u.key) b = static_cast<uint8_t>(rng());
    const size_t size = rng() % 5 == 0 ? 300 + rng() % 400 : 20 + rng() % 150;
    Bytes blob(size);
    for (uint8_t& b : blob) b = static_cast<uint8_t>(rng());
    u.blob_hash = crypto::Blake2b256(blob);
    u.blob = std::move(blob);
  }
  std::sort(
      out.begin(), out.end(),
      [](const LeafUpdate& a, const LeafUpdate& b) { return a.key < b.key; });
  out.erase(std::unique(out.begin(), out.end(),
                        [](const LeafUpdate& a, const LeafUpdate& b) {
                          return a.key == b.key;
                        }),
            out.end());
  return out;
}

class TrieSyncTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const uint64_t seed = rnode::testing::TestSeed(9051);
    rng_.seed(seed);
    updates_ = RandomUpdates(rng_, 3000);
    auto root = source_.history->Commit(kEmptyRoot, updates_);
    ASSERT_TRUE(root.ok()) << root.status();
    root_ = *root;
  }

  // Asks `source_` for up to `per_request` hashes at a time and hands the
  // answers to `importer`, at most `rounds` times (all: until done); counts
  // the requests in `asked_rounds`.
  void Pump(TrieImporter& importer, size_t per_request = 64,
            size_t rounds = SIZE_MAX, size_t* asked_rounds = nullptr) {
    for (size_t r = 0; r < rounds && !importer.done(); ++r) {
      if (asked_rounds != nullptr) ++*asked_rounds;
      const std::vector<Hash32> asked = importer.Next(per_request);
      ASSERT_FALSE(asked.empty());
      auto answer =
          ExportTrieNodes(source_.store, HistoryColumns{}, asked, 1 << 20);
      ASSERT_TRUE(answer.ok()) << answer.status();
      ASSERT_TRUE(answer->missing.empty());
      auto accepted = importer.Accept(answer->items);
      ASSERT_TRUE(accepted.ok()) << accepted.status();
      ASSERT_TRUE(accepted->rejected.empty())
          << accepted->rejected.front().reason;
      std::vector<Hash32> unanswered(asked.begin() + answer->items.size(),
                                     asked.end());
      importer.GiveBack(unanswered);
    }
  }

  // Imports the whole trie into `side` and adopts its root.
  void ImportAll(Side& side, uint64_t* fetched = nullptr) {
    auto importer = TrieImporter::Start(&side.store, {}, root_);
    ASSERT_TRUE(importer.ok()) << importer.status();
    Pump(**importer);
    ASSERT_TRUE((*importer)->done());
    if (fetched != nullptr) *fetched = (*importer)->fetched_nodes();
    ASSERT_TRUE(AdoptTrieRoot(side.store, {}, root_).ok());
  }

  // The nodes of the trie: what a clean import into an empty store fetches.
  uint64_t NodesOfTrie() {
    Side fresh;
    uint64_t all = 0;
    ImportAll(fresh, &all);
    return all;
  }

  // The same channel states under the root in `side` as in the source.
  void ExpectSameState(Side& side) {
    auto reopened = History::Open(&side.store, Options());
    ASSERT_TRUE(reopened.ok());
    EXPECT_TRUE((*reopened)->VerifyRoot(root_).ok());
    for (size_t i = 0; i < updates_.size(); i += 97) {
      auto leaf = (*reopened)->ReadLeaf(root_, updates_[i].key);
      ASSERT_TRUE(leaf.ok()) << leaf.status();
      EXPECT_EQ(*leaf, updates_[i].blob) << i;
    }
  }

  // The source's honest answer to `asked`, with no byte budget.
  std::vector<TrieSyncItem> Answer(const std::vector<Hash32>& asked) {
    auto answer =
        ExportTrieNodes(source_.store, HistoryColumns{}, asked, 1 << 30);
    EXPECT_TRUE(answer.ok());
    return answer.ok() ? answer->items : std::vector<TrieSyncItem>{};
  }

  std::mt19937_64 rng_;
  std::vector<LeafUpdate> updates_;
  Side source_;
  Hash32 root_{};
};

TEST_F(TrieSyncTest, AWholeTrieMovesAndItsRootIsAdopted) {
  Side dest;
  uint64_t fetched = 0;
  ImportAll(dest, &fetched);
  EXPECT_GT(fetched, 20u);
  ExpectSameState(dest);
  // The roots table takes it: a space can reset to it.
  auto has = dest.history->HasRoot(root_);
  ASSERT_TRUE(has.ok());
  EXPECT_TRUE(*has);
}

TEST_F(TrieSyncTest, TheEmptyTrieNeedsNothing) {
  Side dest;
  auto importer = TrieImporter::Start(&dest.store, {}, kEmptyRoot);
  ASSERT_TRUE(importer.ok());
  EXPECT_TRUE((*importer)->done());
  EXPECT_TRUE((*importer)->Next(10).empty());
}

// A node whose bytes, inline value or out-of-line value was altered, a
// truncated node, a missing value, a node nobody asked for: each rejected
// with its reason, nothing of it stored, and its hash asked again; the rest
// of the same answer is stored.
TEST_F(TrieSyncTest, AlteredAnswersAreRejectedAndAskedAgain) {
  Side dest;
  auto importer = TrieImporter::Start(&dest.store, {}, root_);
  ASSERT_TRUE(importer.ok());
  TrieImporter& imp = **importer;
  // Down to nodes with leaves: fetch until some answer has an inline and
  // an out-of-line value.
  Pump(imp, 64, 2);
  std::vector<Hash32> asked = imp.Next(256);
  std::vector<TrieSyncItem> items = Answer(asked);
  ASSERT_EQ(items.size(), asked.size());
  // Pick the victims: one with an out-of-line value, one with an inline
  // value, and three others.
  std::optional<size_t> with_value, with_inline;
  for (size_t i = 0; i < items.size(); ++i) {
    auto node = DecodeTrieNode(items[i].node);
    ASSERT_TRUE(node.ok());
    bool has_inline = false;
    for (const TrieItem& it : node->items) has_inline |= it.blob != nullptr;
    if (!with_value && !items[i].values.empty()) {
      with_value = i;
    } else if (!with_inline && has_inline) {
      with_inline = i;
    }
  }
  ASSERT_TRUE(with_value.has_value() && with_inline.has_value());
  std::vector<size_t> others;
  for (size_t i = 0; i < items.size() && others.size() < 3; ++i) {
    if (i != *with_value && i != *with_inline) others.push_back(i);
  }
  ASSERT_EQ(others.size(), 3u);
  std::vector<TrieSyncItem> sent = items;
  sent[*with_value].values[0][0] ^= 1;  // an out-of-line value altered
  {
    // An inline value altered: the node's hash does not cover it.
    TrieNode node = *DecodeTrieNode(sent[*with_inline].node);
    for (TrieItem& it : node.items) {
      if (it.blob != nullptr) {
        Bytes changed = *it.blob;
        changed[0] ^= 1;
        it.blob = std::make_shared<const Bytes>(std::move(changed));
        break;
      }
    }
    sent[*with_inline].node = EncodeStoredTrieNode(node);
    ASSERT_EQ(crypto::Blake2b256(EncodeTrieNode(node)),
              sent[*with_inline].hash);
  }
  sent[others[0]].node[3] ^= 0x10;  // altered bytes
  sent[others[1]].node.resize(sent[others[1]].node.size() / 2);  // cut
  sent[others[2]].values.push_back(Bytes{1, 2, 3});  // a value extra
  TrieSyncItem stranger = items.front();
  stranger.hash[0] ^= 1;  // nobody asked for it
  sent.push_back(stranger);
  auto accepted = imp.Accept(sent);
  ASSERT_TRUE(accepted.ok()) << accepted.status();
  EXPECT_EQ(accepted->nodes, items.size() - 5);
  ASSERT_EQ(accepted->rejected.size(), 6u);
  for (const auto& r : accepted->rejected) {
    SCOPED_TRACE(r.reason);
    auto stored = dest.store.Get(HistoryColumns{}.nodes, r.hash);
    ASSERT_TRUE(stored.ok());
    EXPECT_FALSE(stored->has_value());
  }
  EXPECT_NE(accepted->rejected[5].reason.find("not asked"), std::string::npos);
  for (size_t i = 0; i < 5; ++i) EXPECT_TRUE(accepted->rejected[i].asked);
  EXPECT_FALSE(accepted->rejected[5].asked);
  // The honest answers to the five complete the trie.
  Pump(imp);
  ASSERT_TRUE(imp.done());
  ASSERT_TRUE(AdoptTrieRoot(dest.store, {}, root_).ok());
  ExpectSameState(dest);
}

// Stopped part way (kill -9: nothing but the store survives) and started
// again: the walk of what is stored finds exactly what is missing, and no
// node is fetched twice over the two runs.
TEST_F(TrieSyncTest, ARestartFetchesNoStoredNodeAgain) {
  const uint64_t all = NodesOfTrie();
  Side dest;
  uint64_t first = 0;
  {
    auto importer = TrieImporter::Start(&dest.store, {}, root_);
    ASSERT_TRUE(importer.ok());
    Pump(**importer, 16, 6);
    first = (*importer)->fetched_nodes();
    // Hashes in flight at the crash are lost with the process.
    (*importer)->Next(16);
  }
  ASSERT_GT(first, 0u);
  ASSERT_LT(first, all);
  auto again = TrieImporter::Start(&dest.store, {}, root_);
  ASSERT_TRUE(again.ok());
  EXPECT_EQ((*again)->found_stored(), first);
  Pump(**again);
  ASSERT_TRUE((*again)->done());
  EXPECT_EQ(first + (*again)->fetched_nodes(), all);
  ASSERT_TRUE(AdoptTrieRoot(dest.store, {}, root_).ok());
  ExpectSameState(dest);
}

// A store that already holds an older state (the genesis, for a joining
// node) fetches only the nodes the new root does not share with it.
TEST_F(TrieSyncTest, NodesSharedWithAStoredStateAreNotFetched) {
  const uint64_t all = NodesOfTrie();
  Side dest;
  // The old state: the same channels but one in fifty.
  std::vector<LeafUpdate> older;
  for (size_t i = 0; i < updates_.size(); ++i) {
    if (i % 50 != 0) older.push_back(updates_[i]);
  }
  ASSERT_TRUE(dest.history->Commit(kEmptyRoot, older).ok());
  uint64_t fetched = 0;
  ImportAll(dest, &fetched);
  EXPECT_LT(fetched, all);
  ExpectSameState(dest);
}

// Importing the tries of two nearby states (a joining node fetches a few
// dozen blocks' states, which share all but a few paths): with the nodes
// the first import found complete, the second walks past them, reading
// only the nodes it does not share, fetches only those, and its root is
// recorded; every state reads back whole.
TEST_F(TrieSyncTest, ASecondRootWalksPastTheFirstOnesCompleteSubtrees) {
  Side dest;
  CompleteNodes complete;
  {
    auto first = TrieImporter::Start(&dest.store, {}, root_, &complete);
    ASSERT_TRUE(first.ok()) << first.status();
    Pump(**first);
    ASSERT_TRUE((*first)->done());
    (*first)->MarkComplete(complete, SIZE_MAX);
    ASSERT_TRUE(RecordTrieRoot(dest.store, {}, root_).ok());
  }
  const size_t first_nodes = complete.size();
  EXPECT_GT(first_nodes, 100u);
  // The next state: ten channels across the trie changed.
  std::vector<LeafUpdate> changed;
  for (size_t i = 0; i < updates_.size(); i += updates_.size() / 10) {
    LeafUpdate& u = updates_[i];
    u.blob->push_back(1);
    u.blob_hash = crypto::Blake2b256(*u.blob);
    changed.push_back(u);
  }
  auto next = source_.history->Commit(root_, changed);
  ASSERT_TRUE(next.ok()) << next.status();
  const Hash32 first_root = root_;
  root_ = *next;
  auto second = TrieImporter::Start(&dest.store, {}, root_, &complete);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_EQ((*second)->found_stored(), 0u);  // nothing of it stored yet
  Pump(**second);
  ASSERT_TRUE((*second)->done());
  // Only the changed paths: the root and the few nodes under it on the
  // ten channels' paths; not the hundreds the trie has.
  EXPECT_GT((*second)->fetched_nodes(), 1u);
  EXPECT_LT((*second)->fetched_nodes(), first_nodes / 5);
  // The stored subtrees under the new paths were walked past, not read.
  EXPECT_LT((*second)->found_stored(), first_nodes / 5);
  (*second)->MarkComplete(complete, SIZE_MAX);
  EXPECT_EQ(complete.size(), first_nodes + (*second)->fetched_nodes());
  // Started again: without the set, the whole stored trie is read; with
  // it, nothing.
  auto walked = TrieImporter::Start(&dest.store, {}, root_);
  ASSERT_TRUE(walked.ok());
  EXPECT_GE((*walked)->found_stored(), first_nodes);
  auto skipped = TrieImporter::Start(&dest.store, {}, root_, &complete);
  ASSERT_TRUE(skipped.ok());
  EXPECT_EQ((*skipped)->found_stored(), 0u);
  EXPECT_TRUE((*skipped)->done());
  ASSERT_TRUE(RecordTrieRoot(dest.store, {}, root_).ok());
  ExpectSameState(dest);
  auto reopened = History::Open(&dest.store, Options());
  ASSERT_TRUE(reopened.ok());
  EXPECT_TRUE((*reopened)->VerifyRoot(first_root).ok());
  // A bound on the set is kept.
  CompleteNodes bounded;
  (*second)->MarkComplete(bounded, 1);
  EXPECT_EQ(bounded.size(), 1u);
}

// A joining node fetches the tries of a few dozen nearby blocks' states:
// imported together, each node they share is fetched once (as many as one
// after another with the complete set), their levels come in the same
// requests (far fewer round trips than one root after another), and every
// root is recorded and reads back whole.
TEST_F(TrieSyncTest, SeveralRootsImportTogetherSharingTheirNodes) {
  // Five states, each changing ten channels of the one before.
  std::vector<Hash32> roots{root_};
  std::vector<std::vector<LeafUpdate>> states{updates_};
  for (int k = 1; k < 5; ++k) {
    std::vector<LeafUpdate> changed;
    for (size_t i = k; i < updates_.size(); i += updates_.size() / 10) {
      LeafUpdate& u = updates_[i];
      u.blob->push_back(static_cast<uint8_t>(k));
      u.blob_hash = crypto::Blake2b256(*u.blob);
      changed.push_back(u);
    }
    auto next = source_.history->Commit(roots.back(), changed);
    ASSERT_TRUE(next.ok()) << next.status();
    roots.push_back(*next);
    states.push_back(updates_);
  }
  // One after another, with the complete set: the distinct nodes.
  Side one_by_one;
  CompleteNodes complete;
  uint64_t fetched_one_by_one = 0;
  size_t rounds_one_by_one = 0;
  for (const Hash32& root : roots) {
    auto importer = TrieImporter::Start(&one_by_one.store, {}, root, &complete);
    ASSERT_TRUE(importer.ok()) << importer.status();
    Pump(**importer, 1024, SIZE_MAX, &rounds_one_by_one);
    ASSERT_TRUE((*importer)->done());
    (*importer)->MarkComplete(complete, SIZE_MAX);
    fetched_one_by_one += (*importer)->fetched_nodes();
  }
  // Together.
  Side dest;
  auto together = TrieImporter::Start(&dest.store, {}, roots);
  ASSERT_TRUE(together.ok()) << together.status();
  EXPECT_EQ((*together)->roots(), roots);
  size_t rounds = 0;
  Pump(**together, 1024, SIZE_MAX, &rounds);
  ASSERT_TRUE((*together)->done());
  EXPECT_EQ((*together)->fetched_nodes(), fetched_one_by_one);
  EXPECT_LT(rounds * 2, rounds_one_by_one);
  std::cout << "five roots: " << fetched_one_by_one << " nodes; requests of "
            << "1024 hashes: " << rounds << " together, " << rounds_one_by_one
            << " one after another\n";
  // Started again, everything is stored: nothing queued, nothing walked
  // twice (each stored node found once, for all five roots).
  auto again = TrieImporter::Start(&dest.store, {}, roots);
  ASSERT_TRUE(again.ok());
  EXPECT_TRUE((*again)->done());
  EXPECT_EQ((*again)->found_stored(), fetched_one_by_one);
  for (size_t k = 0; k < roots.size(); ++k) {
    ASSERT_TRUE(RecordTrieRoot(dest.store, {}, roots[k]).ok());
    root_ = roots[k];
    updates_ = states[k];
    ExpectSameState(dest);
  }
  EXPECT_EQ(TrieImporter::Start(&dest.store, {}, std::span<const Hash32>())
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(TrieSyncTest, AFailedWriteStoresNothingAndTheHashesAreAskedAgain) {
  Side dest;
  FaultInjectingStore faulty(&dest.store);
  auto importer = TrieImporter::Start(&faulty, {}, root_);
  ASSERT_TRUE(importer.ok());
  TrieImporter& imp = **importer;
  const std::vector<Hash32> asked = imp.Next(8);
  faulty.FailWritesAfter(0);
  auto accepted = imp.Accept(Answer(asked));
  EXPECT_FALSE(accepted.ok());
  for (const Hash32& h : asked) {
    auto stored = dest.store.Get(HistoryColumns{}.nodes, h);
    ASSERT_TRUE(stored.ok());
    EXPECT_FALSE(stored->has_value());
  }
  EXPECT_EQ(imp.in_flight(), 0u);
  faulty.Heal();
  Pump(imp);
  ASSERT_TRUE(imp.done());
  ASSERT_TRUE(AdoptTrieRoot(dest.store, {}, root_).ok());
  ExpectSameState(dest);
}

TEST_F(TrieSyncTest, AnIncompleteTrieIsNotAdopted) {
  Side dest;
  auto importer = TrieImporter::Start(&dest.store, {}, root_);
  ASSERT_TRUE(importer.ok());
  Pump(**importer, 16, 3);
  ASSERT_FALSE((*importer)->done());
  const absl::Status adopted = AdoptTrieRoot(dest.store, {}, root_);
  EXPECT_EQ(adopted.code(), absl::StatusCode::kDataLoss) << adopted;
  auto has = dest.history->HasRoot(root_);
  ASSERT_TRUE(has.ok());
  EXPECT_FALSE(*has);
}

// The serving side: the first node always, then as many as fit the bytes;
// what is not stored is listed, what did not fit is left for a new request.
TEST_F(TrieSyncTest, AnExportStopsAtItsByteBudget) {
  Side dest;
  auto importer = TrieImporter::Start(&dest.store, {}, root_);
  ASSERT_TRUE(importer.ok());
  Pump(**importer, 64, 2);
  std::vector<Hash32> asked = (*importer)->Next(32);
  ASSERT_GE(asked.size(), 8u);
  Hash32 unknown{};
  unknown[0] = 0x77;
  asked.insert(asked.begin() + 1, unknown);
  auto one = ExportTrieNodes(source_.store, {}, asked, 1);
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->items.size(), 1u);
  EXPECT_EQ(one->items[0].hash, asked[0]);
  EXPECT_EQ(one->missing, std::vector<Hash32>{unknown});
  size_t two_items = one->items[0].size();
  auto all = ExportTrieNodes(source_.store, {}, asked, SIZE_MAX);
  ASSERT_TRUE(all.ok());
  ASSERT_EQ(all->items.size(), asked.size() - 1);
  two_items += all->items[1].size();
  auto two = ExportTrieNodes(source_.store, {}, asked, two_items);
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(two->items.size(), 2u);
}

}  // namespace
}  // namespace rnode::rspace
