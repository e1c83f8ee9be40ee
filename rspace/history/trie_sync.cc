// Moving a state trie between stores by node hash.
#include "rspace/history/trie_sync.h"

#include <algorithm>
#include <utility>

#include "crypto/hash.h"
#include "rspace/history/trie.h"
#include "util/status_macros.h"

namespace rnode::rspace {
namespace {

constexpr size_t kKeyBytes = 32;

// The key bytes below an item of a node at `depth`: its index byte and its
// prefix.
size_t DepthBelow(uint8_t depth, const TrieItem& item) {
  return size_t{depth} + 1 + item.prefix.size();
}

// Whether the items of a node at `depth` fit a key: a pointer leaves room
// for a child, a leaf ends at the key's last byte.
bool FitsKey(const TrieNode& node, uint8_t depth) {
  for (const TrieItem& it : node.items) {
    const size_t below = DepthBelow(depth, it);
    if (it.is_ptr ? below >= kKeyBytes : below != kKeyBytes) return false;
  }
  return true;
}

}  // namespace

size_t TrieSyncItem::size() const {
  size_t n = hash.size() + node.size();
  for (const Bytes& v : values) n += v.size();
  return n;
}

absl::StatusOr<TrieExport> ExportTrieNodes(KeyValueStore& store,
                                           const HistoryColumns& columns,
                                           std::span<const Hash32> hashes,
                                           size_t max_bytes) {
  TrieExport out;
  std::vector<ByteView> keys;
  keys.reserve(hashes.size());
  for (const Hash32& h : hashes) keys.emplace_back(h.data(), h.size());
  ASSIGN_OR_RETURN(std::vector<std::optional<Bytes>> nodes,
                   store.MultiGet(columns.nodes, keys));
  size_t bytes = 0;
  for (size_t i = 0; i < hashes.size(); ++i) {
    if (!nodes[i].has_value()) {
      out.missing.push_back(hashes[i]);
      continue;
    }
    TrieSyncItem item;
    item.hash = hashes[i];
    absl::StatusOr<TrieNode> node = DecodeTrieNode(*nodes[i]);
    if (!node.ok()) {
      return absl::DataLossError("stored trie node " + HexEncode(hashes[i]) +
                                 ": " + std::string(node.status().message()));
    }
    std::vector<ByteView> value_keys;
    for (const TrieItem& it : node->items) {
      if (!it.is_ptr && it.blob == nullptr) {
        value_keys.emplace_back(it.hash.data(), it.hash.size());
      }
    }
    if (!value_keys.empty()) {
      ASSIGN_OR_RETURN(std::vector<std::optional<Bytes>> values,
                       store.MultiGet(columns.values, value_keys));
      for (size_t k = 0; k < values.size(); ++k) {
        if (!values[k].has_value()) {
          return absl::DataLossError("value " + HexEncode(value_keys[k]) +
                                     " of stored trie node " +
                                     HexEncode(hashes[i]) + " is not stored");
        }
        item.values.push_back(*std::move(values[k]));
      }
    }
    item.node = *std::move(nodes[i]);
    const size_t size = item.size();
    if (!out.items.empty() && bytes + size > max_bytes) break;
    bytes += size;
    out.items.push_back(std::move(item));
  }
  return out;
}

absl::StatusOr<std::unique_ptr<TrieImporter>> TrieImporter::Start(
    KeyValueStore* store, HistoryColumns columns, std::span<const Hash32> roots,
    const CompleteNodes* complete) {
  if (roots.empty()) {
    return absl::InvalidArgumentError("a trie import needs a root");
  }
  std::unique_ptr<TrieImporter> importer(new TrieImporter(
      store, columns, std::vector<Hash32>(roots.begin(), roots.end()),
      complete));
  for (const Hash32& root : roots) {
    if (root != kEmptyRoot) RETURN_IF_ERROR(importer->Rescan({root, 0}));
  }
  return importer;
}

void TrieImporter::Saw(const Hash32& h) {
  if (seen_.size() < kMaxSeen) seen_.insert(h);
}

void TrieImporter::Queue(const Pending& p) {
  if (in_flight_.contains(p) || !queued_.insert(p.hash).second) return;
  queue_.push_back(p);
}

absl::Status TrieImporter::Rescan(const Pending& from) {
  std::vector<Pending> stack{from};
  while (!stack.empty()) {
    const Pending p = stack.back();
    stack.pop_back();
    if (complete_ != nullptr && complete_->contains(p.hash)) continue;
    if (seen_.contains(p.hash)) continue;
    ASSIGN_OR_RETURN(std::optional<Bytes> bytes,
                     store_->Get(columns_.nodes, p.hash));
    if (!bytes.has_value()) {
      Queue(p);
      continue;
    }
    absl::StatusOr<TrieNode> node = DecodeTrieNode(*bytes);
    if (!node.ok() || !FitsKey(*node, p.depth)) {
      return absl::DataLossError(
          "stored trie node " + HexEncode(p.hash) + " of root " +
          HexEncode(root()) + " is malformed" +
          (node.ok() ? "" : ": " + std::string(node.status().message())));
    }
    ++found_stored_;
    Saw(p.hash);
    for (const TrieItem& it : node->items) {
      if (it.is_ptr) {
        stack.push_back(
            {it.hash, static_cast<uint8_t>(DepthBelow(p.depth, it))});
      }
    }
  }
  return absl::OkStatus();
}

std::vector<Hash32> TrieImporter::Next(size_t n) {
  std::vector<Hash32> out;
  while (out.size() < n && !queue_.empty()) {
    const Pending p = queue_.back();
    queue_.pop_back();
    queued_.erase(p.hash);
    in_flight_.insert(p);
    out.push_back(p.hash);
  }
  return out;
}

void TrieImporter::GiveBack(std::span<const Hash32> hashes) {
  for (const Hash32& h : hashes) {
    auto it = in_flight_.find(Pending{h, 0});
    if (it == in_flight_.end()) continue;
    const Pending p = *it;
    in_flight_.erase(it);
    Queue(p);
  }
}

std::string TrieImporter::Check(const TrieSyncItem& item, uint8_t depth,
                                TrieNode& node) const {
  absl::StatusOr<TrieNode> decoded = DecodeTrieNode(item.node);
  if (!decoded.ok()) {
    return "does not decode: " + std::string(decoded.status().message());
  }
  node = *std::move(decoded);
  if (node.items.empty() ||
      crypto::Blake2b256(EncodeTrieNode(node)) != item.hash) {
    return "does not match its hash";
  }
  if (!FitsKey(node, depth)) return "is deeper or shallower than a key";
  size_t next_value = 0;
  for (const TrieItem& it : node.items) {
    if (it.is_ptr) continue;
    if (it.blob != nullptr) {
      if (crypto::Blake2b256(*it.blob) != it.hash) {
        return "has an inline value that does not match its hash";
      }
      continue;
    }
    if (next_value == item.values.size()) {
      return "comes with " + std::to_string(item.values.size()) +
             " out-of-line values, too few for its leaves";
    }
    if (crypto::Blake2b256(item.values[next_value++]) != it.hash) {
      return "comes with a value that does not match its leaf's hash";
    }
  }
  if (next_value != item.values.size()) {
    return "comes with " + std::to_string(item.values.size()) +
           " out-of-line values for " + std::to_string(next_value) + " leaves";
  }
  return "";
}

absl::StatusOr<TrieImporter::Accepted> TrieImporter::Accept(
    std::span<const TrieSyncItem> items) {
  Accepted out;
  WriteBatch batch;
  std::vector<Pending> passed;
  std::vector<Pending> children;
  uint64_t bytes = 0;
  for (const TrieSyncItem& item : items) {
    auto flying = in_flight_.find(Pending{item.hash, 0});
    if (flying == in_flight_.end()) {
      out.rejected.push_back(
          {item.hash,
           "trie node " + HexEncode(item.hash) + " was not asked for", false});
      continue;
    }
    const Pending p = *flying;
    TrieNode node;
    std::string why = Check(item, p.depth, node);
    if (!why.empty()) {
      out.rejected.push_back({item.hash, "trie node " + HexEncode(item.hash) +
                                             " " + std::move(why)});
      in_flight_.erase(flying);
      Queue(p);
      continue;
    }
    in_flight_.erase(flying);
    passed.push_back(p);
    batch.Put(columns_.nodes, item.hash, item.node);
    size_t next_value = 0;
    for (const TrieItem& it : node.items) {
      if (it.is_ptr) {
        children.push_back(
            {it.hash, static_cast<uint8_t>(DepthBelow(p.depth, it))});
      } else if (it.blob == nullptr) {
        batch.Put(columns_.values, it.hash, item.values[next_value++]);
      }
    }
    bytes += item.size();
  }
  // The children already stored (another root's, or this one's shared
  // subtrees) are walked, not fetched.
  std::vector<ByteView> keys;
  keys.reserve(children.size());
  for (const Pending& c : children) keys.emplace_back(c.hash.data(), 32);
  absl::StatusOr<std::vector<std::optional<Bytes>>> stored =
      store_->MultiGet(columns_.nodes, keys);
  absl::Status written =
      stored.ok() ? store_->WriteOwned(std::move(batch)) : stored.status();
  if (!written.ok()) {
    for (const Pending& p : passed) Queue(p);
    return written;
  }
  out.nodes = passed.size();
  for (const Pending& p : passed) Saw(p.hash);
  fetched_nodes_ += passed.size();
  fetched_bytes_ += bytes;
  for (size_t i = 0; i < children.size(); ++i) {
    if ((*stored)[i].has_value()) {
      RETURN_IF_ERROR(Rescan(children[i]));
    } else {
      Queue(children[i]);
    }
  }
  return out;
}

void TrieImporter::MarkComplete(CompleteNodes& complete, size_t max) const {
  if (!done()) return;
  for (const Hash32& h : seen_) {
    if (complete.size() >= max) return;
    complete.insert(h);
  }
}

absl::Status RecordTrieRoot(KeyValueStore& store, const HistoryColumns& columns,
                            const Hash32& root) {
  WriteBatch batch;
  batch.Put(columns.roots, root, Bytes(8, 0));
  return store.Write(batch);
}

absl::Status AdoptTrieRoot(KeyValueStore& store, const HistoryColumns& columns,
                           const Hash32& root) {
  // A small cache: the walk reads each node once.
  MerkleTrie trie(&store, columns.nodes, /*cache_entries=*/64,
                  /*cache_bytes=*/1 << 20);
  RETURN_IF_ERROR(trie.VerifyLeaves(
      root, [&](const Hash32& key, const TrieLeaf& leaf) -> absl::Status {
        if (leaf.blob != nullptr) {
          if (crypto::Blake2b256(*leaf.blob) == leaf.hash) {
            return absl::OkStatus();
          }
        } else {
          ASSIGN_OR_RETURN(std::optional<Bytes> value,
                           store.Get(columns.values, leaf.hash));
          if (!value.has_value()) {
            return absl::DataLossError("value " + HexEncode(leaf.hash) +
                                       " of channel " + HexEncode(key) +
                                       " is not stored");
          }
          if (crypto::Blake2b256(*value) == leaf.hash) return absl::OkStatus();
        }
        return absl::DataLossError("value " + HexEncode(leaf.hash) +
                                   " of channel " + HexEncode(key) +
                                   " does not match its hash");
      }));
  return RecordTrieRoot(store, columns, root);
}

}  // namespace rnode::rspace
