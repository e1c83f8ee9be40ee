// Merkle radix trie: canonical shape, copy-on-write updates, node cache.
#include "rspace/history/trie.h"

#include <algorithm>
#include <string>

#include "crypto/hash.h"
#include "util/status_macros.h"
#include "util/worker_pool.h"

namespace rnode::rspace {

const Hash32 kEmptyRoot = crypto::Blake2b256(ByteView());

namespace {

constexpr uint8_t kPtrFlag = 0x80;
// Stored form only: the leaf's value follows its hash (len u32 ‖ bytes).
constexpr uint8_t kInlineFlag = 0x40;
constexpr uint8_t kPrefixMask = 0x3f;
constexpr size_t kKeyBytes = 32;

size_t CommonPrefix(ByteView a, ByteView b) {
  size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  while (i < n && a[i] == b[i]) ++i;
  return i;
}

ByteView KeyFrom(const Hash32& key, size_t from, size_t len) {
  return ByteView(key.data() + from, len);
}

bool HasInline(const TrieNode& node) {
  for (const TrieItem& it : node.items) {
    if (it.blob != nullptr) return true;
  }
  return false;
}

// Items with equal hashes have equal values, so the inline bytes need no
// comparison (only whether they are there: it decides the stored form).
bool SameItems(const std::vector<TrieItem>& a, const std::vector<TrieItem>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].index != b[i].index || a[i].is_ptr != b[i].is_ptr ||
        a[i].hash != b[i].hash || a[i].prefix != b[i].prefix ||
        (a[i].blob == nullptr) != (b[i].blob == nullptr)) {
      return false;
    }
  }
  return true;
}

}  // namespace

namespace {

Bytes EncodeNode(const TrieNode& node, bool stored) {
  Bytes out;
  size_t size = 0;
  for (const auto& it : node.items) {
    size += 2 + it.prefix.size() + 32;
    if (stored && it.blob != nullptr) size += 4 + it.blob->size();
  }
  out.reserve(size);
  for (const auto& it : node.items) {
    const bool inline_value = stored && it.blob != nullptr;
    out.push_back(it.index);
    out.push_back(static_cast<uint8_t>((it.is_ptr ? kPtrFlag : 0) |
                                       (inline_value ? kInlineFlag : 0) |
                                       it.prefix.size()));
    out.insert(out.end(), it.prefix.begin(), it.prefix.end());
    out.insert(out.end(), it.hash.begin(), it.hash.end());
    if (inline_value) {
      const uint32_t n = static_cast<uint32_t>(it.blob->size());
      for (int i = 0; i < 4; ++i)
        out.push_back(static_cast<uint8_t>(n >> (8 * i)));
      out.insert(out.end(), it.blob->begin(), it.blob->end());
    }
  }
  return out;
}

}  // namespace

Bytes EncodeTrieNode(const TrieNode& node) { return EncodeNode(node, false); }

Bytes EncodeStoredTrieNode(const TrieNode& node) {
  return EncodeNode(node, true);
}

absl::StatusOr<TrieNode> DecodeTrieNode(ByteView bytes) {
  TrieNode node;
  size_t pos = 0;
  int last_index = -1;
  while (pos < bytes.size()) {
    if (bytes.size() - pos < 2)
      return absl::DataLossError("trie node: truncated item");
    TrieItem it;
    it.index = bytes[pos];
    uint8_t tag = bytes[pos + 1];
    pos += 2;
    if (static_cast<int>(it.index) <= last_index) {
      return absl::DataLossError("trie node: items out of order");
    }
    last_index = it.index;
    it.is_ptr = (tag & kPtrFlag) != 0;
    const bool inline_value = (tag & kInlineFlag) != 0;
    size_t len = tag & kPrefixMask;
    if (len >= kKeyBytes)
      return absl::DataLossError("trie node: prefix too long");
    if (inline_value && it.is_ptr) {
      return absl::DataLossError("trie node: inline value on a pointer");
    }
    if (bytes.size() - pos < len + 32) {
      return absl::DataLossError("trie node: truncated item");
    }
    it.prefix.assign(bytes.begin() + pos, bytes.begin() + pos + len);
    pos += len;
    std::copy(bytes.begin() + pos, bytes.begin() + pos + 32, it.hash.begin());
    pos += 32;
    if (inline_value) {
      if (bytes.size() - pos < 4) {
        return absl::DataLossError("trie node: truncated inline value");
      }
      size_t n = 0;
      for (int i = 0; i < 4; ++i) n |= size_t{bytes[pos + i]} << (8 * i);
      pos += 4;
      if (bytes.size() - pos < n) {
        return absl::DataLossError("trie node: truncated inline value");
      }
      it.blob = std::make_shared<const Bytes>(bytes.begin() + pos,
                                              bytes.begin() + pos + n);
      pos += n;
    }
    node.items.push_back(std::move(it));
  }
  return node;
}

struct MerkleTrie::Ctx {
  WriteBatch* batch;
  std::vector<std::pair<Hash32, std::shared_ptr<const TrieNode>>> created;
};

size_t TrieNodeBytes(const TrieNode& node) {
  size_t n = sizeof(TrieNode) + node.items.capacity() * sizeof(TrieItem);
  // Prefixes are inline in TrieItem; blobs are separate allocations.
  for (const TrieItem& it : node.items) {
    if (it.blob != nullptr) n += sizeof(Bytes) + it.blob->capacity();
  }
  return n;
}

MerkleTrie::MerkleTrie(KeyValueStore* store, ColumnId nodes_column,
                       size_t cache_entries, size_t cache_bytes)
    : store_(store),
      column_(nodes_column),
      shard_count_(std::clamp<size_t>(cache_entries, 1, kTrieCacheShards)),
      shard_capacity_(cache_entries / shard_count_),
      shard_bytes_(cache_bytes / shard_count_) {}

size_t MerkleTrie::CachedBytes() const {
  size_t n = 0;
  for (const CacheShard& s : cache_) {
    MutexLock lock(&s.mu);
    n += s.bytes;
  }
  return n;
}

size_t MerkleTrie::CachedNodes() const {
  size_t n = 0;
  for (const CacheShard& s : cache_) {
    MutexLock lock(&s.mu);
    n += s.index.size();
  }
  return n;
}

void MerkleTrie::CachePut(const Hash32& hash,
                          std::shared_ptr<const TrieNode> node) {
  if (shard_capacity_ == 0) return;
  CacheShard& s = ShardOf(hash);
  MutexLock lock(&s.mu);
  auto it = s.index.find(hash);
  if (it != s.index.end()) {
    s.lru.splice(s.lru.begin(), s.lru, it->second);
    return;
  }
  const size_t bytes = TrieNodeBytes(*node);
  s.lru.push_front(CacheEntry{hash, std::move(node), bytes});
  s.index[hash] = s.lru.begin();
  s.bytes += bytes;
  // The newest entry stays even when it alone is over the byte share.
  while (s.index.size() > shard_capacity_ ||
         (s.bytes > shard_bytes_ && s.lru.size() > 1)) {
    s.bytes -= s.lru.back().bytes;
    s.index.erase(s.lru.back().hash);
    s.lru.pop_back();
  }
}

absl::StatusOr<std::shared_ptr<const TrieNode>> MerkleTrie::Load(
    const Hash32& hash) {
  if (hash == kEmptyRoot) return std::make_shared<const TrieNode>();
  if (shard_capacity_ > 0) {
    CacheShard& s = ShardOf(hash);
    MutexLock lock(&s.mu);
    auto it = s.index.find(hash);
    if (it != s.index.end()) {
      s.lru.splice(s.lru.begin(), s.lru, it->second);
      return it->second->node;
    }
  }
  auto bytes = store_->Get(column_, hash);
  if (!bytes.ok()) return bytes.status();
  if (!bytes->has_value()) {
    return absl::DataLossError("trie node " + HexEncode(hash) + " is missing");
  }
  auto node = DecodeTrieNode(**bytes);
  if (!node.ok()) return node.status();
  auto shared = std::make_shared<const TrieNode>(*std::move(node));
  CachePut(hash, shared);
  return shared;
}

namespace {

std::optional<Hash32> HashOf(const std::optional<TrieLeaf>& leaf) {
  if (!leaf.has_value()) return std::nullopt;
  return leaf->hash;
}

}  // namespace

absl::StatusOr<std::optional<Hash32>> MerkleTrie::Get(const Hash32& root,
                                                      const Hash32& key) {
  ASSIGN_OR_RETURN(std::optional<TrieLeaf> leaf, GetLeaf(root, key));
  return HashOf(leaf);
}

absl::StatusOr<std::optional<Hash32>> MerkleTrie::Get(const TrieNode& root,
                                                      const Hash32& key) {
  ASSIGN_OR_RETURN(std::optional<TrieLeaf> leaf, GetLeaf(root, key));
  return HashOf(leaf);
}

absl::StatusOr<std::optional<TrieLeaf>> MerkleTrie::GetLeaf(const Hash32& root,
                                                            const Hash32& key) {
  if (root == kEmptyRoot) return std::optional<TrieLeaf>();
  auto node = Load(root);
  if (!node.ok()) return node.status();
  return GetLeaf(**node, key);
}

absl::StatusOr<std::optional<TrieLeaf>> MerkleTrie::GetLeaf(
    const TrieNode& root, const Hash32& key) {
  std::shared_ptr<const TrieNode> held;  // keeps a loaded child alive
  const TrieNode* node = &root;
  size_t depth = 0;
  while (true) {
    const auto& items = node->items;
    auto it = std::lower_bound(
        items.begin(), items.end(), key[depth],
        [](const TrieItem& i, uint8_t b) { return i.index < b; });
    if (it == items.end() || it->index != key[depth]) {
      return std::optional<TrieLeaf>();
    }
    size_t p = depth + 1;
    if (p + it->prefix.size() > kKeyBytes ||
        !std::equal(it->prefix.begin(), it->prefix.end(), key.begin() + p)) {
      return std::optional<TrieLeaf>();
    }
    if (!it->is_ptr) {
      if (p + it->prefix.size() != kKeyBytes) {
        return absl::DataLossError("trie leaf at wrong depth");
      }
      return std::optional<TrieLeaf>(TrieLeaf{it->hash, it->blob});
    }
    depth = p + it->prefix.size();
    if (depth >= kKeyBytes) return absl::DataLossError("trie pointer too deep");
    auto child = Load(it->hash);
    if (!child.ok()) return child.status();
    held = *std::move(child);
    node = held.get();
  }
}

absl::Status MerkleTrie::GetMany(const Hash32& root,
                                 std::span<const Hash32> keys,
                                 std::span<std::optional<Hash32>> out) {
  if (out.size() != keys.size()) {
    return absl::InvalidArgumentError("trie GetMany: output size mismatch");
  }
  std::vector<std::optional<TrieLeaf>> leaves(keys.size());
  RETURN_IF_ERROR(GetManyLeaves(root, keys, std::span(leaves)));
  for (size_t i = 0; i < keys.size(); ++i) out[i] = HashOf(leaves[i]);
  return absl::OkStatus();
}

absl::Status MerkleTrie::GetManyLeaves(const Hash32& root,
                                       std::span<const Hash32> keys,
                                       std::span<std::optional<TrieLeaf>> out) {
  if (out.size() != keys.size()) {
    return absl::InvalidArgumentError("trie GetMany: output size mismatch");
  }
  for (size_t i = 1; i < keys.size(); ++i) {
    if (!(keys[i - 1] < keys[i])) {
      return absl::InvalidArgumentError(
          "trie GetMany: keys must be sorted and unique; offending key " +
          HexEncode(keys[i]));
    }
  }
  if (keys.empty()) return absl::OkStatus();
  return GetRange(root, 0, keys, out);
}

// REQUIRES: `keys` ascending, non-empty, all sharing their first `depth`
// bytes (the path to the node).
absl::Status MerkleTrie::GetRange(const Hash32& node_hash, size_t depth,
                                  std::span<const Hash32> keys,
                                  std::span<std::optional<TrieLeaf>> out) {
  auto node = Load(node_hash);
  if (!node.ok()) return node.status();
  const auto& items = (*node)->items;
  // Leaves are answered in this pass; the pointers to descend are noted and
  // their nodes fetched in one batch before the descent.
  struct Descent {
    Hash32 child;
    size_t depth, begin, end;
  };
  std::vector<Descent> descents;
  auto it = items.begin();
  size_t i = 0;
  while (i < keys.size()) {
    const uint8_t b = keys[i][depth];
    size_t j = i + 1;
    while (j < keys.size() && keys[j][depth] == b) ++j;
    // Keys ascend, so the items they fall under ascend too.
    while (it != items.end() && it->index < b) ++it;
    if (it == items.end() || it->index != b) {
      for (size_t k = i; k < j; ++k) out[k].reset();
      i = j;
      continue;
    }
    const size_t p = depth + 1;
    const TriePrefix& prefix = it->prefix;
    auto matches = [&](const Hash32& key) {
      return p + prefix.size() <= kKeyBytes &&
             std::equal(prefix.begin(), prefix.end(), key.begin() + p);
    };
    if (!it->is_ptr) {
      for (size_t k = i; k < j; ++k) {
        if (!matches(keys[k])) {
          out[k].reset();
          continue;
        }
        if (p + prefix.size() != kKeyBytes) {
          return absl::DataLossError("trie leaf at wrong depth");
        }
        out[k] = TrieLeaf{it->hash, it->blob};
      }
      i = j;
      continue;
    }
    // The keys under the pointer's compressed path are contiguous.
    size_t k = i;
    while (k < j) {
      if (!matches(keys[k])) {
        out[k].reset();
        ++k;
        continue;
      }
      size_t e = k + 1;
      while (e < j && matches(keys[e])) ++e;
      const size_t child_depth = p + prefix.size();
      if (child_depth >= kKeyBytes) {
        return absl::DataLossError("trie pointer too deep");
      }
      descents.push_back(Descent{it->hash, child_depth, k, e});
      k = e;
    }
    i = j;
  }
  if (descents.size() > 1) {
    std::vector<Hash32> children;
    children.reserve(descents.size());
    for (const Descent& d : descents) children.push_back(d.child);
    RETURN_IF_ERROR(Prefetch(children));
  }
  for (const Descent& d : descents) {
    RETURN_IF_ERROR(GetRange(d.child, d.depth,
                             keys.subspan(d.begin, d.end - d.begin),
                             out.subspan(d.begin, d.end - d.begin)));
  }
  return absl::OkStatus();
}

bool MerkleTrie::Cached(const Hash32& hash) const {
  const CacheShard& s = ShardOf(hash);
  MutexLock lock(&s.mu);
  return s.index.contains(hash);
}

absl::Status MerkleTrie::Prefetch(std::span<const Hash32> hashes) {
  if (shard_capacity_ == 0) return absl::OkStatus();
  std::vector<ByteView> missing;
  for (const Hash32& h : hashes) {
    if (h != kEmptyRoot && !Cached(h)) missing.push_back(ByteView(h));
  }
  if (missing.size() < 2) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::vector<std::optional<Bytes>> bytes,
                   store_->MultiGet(column_, missing));
  for (size_t i = 0; i < missing.size(); ++i) {
    Hash32 h;
    std::copy(missing[i].begin(), missing[i].end(), h.begin());
    if (!bytes[i].has_value()) {
      return absl::DataLossError("trie node " + HexEncode(h) + " is missing");
    }
    ASSIGN_OR_RETURN(TrieNode node, DecodeTrieNode(*bytes[i]));
    CachePut(h, std::make_shared<const TrieNode>(std::move(node)));
  }
  return absl::OkStatus();
}

Hash32 MerkleTrie::Store(TrieNode node, Ctx& ctx) {
  Bytes bytes = EncodeTrieNode(node);
  Hash32 h = crypto::Blake2b256(bytes);
  if (HasInline(node)) bytes = EncodeStoredTrieNode(node);
  ctx.created.emplace_back(h,
                           std::make_shared<const TrieNode>(std::move(node)));
  ctx.batch->Put(column_, Bytes(h.begin(), h.end()), std::move(bytes));
  return h;
}

// A leaf of a subtree being rebuilt: its full key, value hash and inline
// value (or null).
struct MerkleTrie::LeafEntry {
  Hash32 key{};
  Hash32 value{};
  std::shared_ptr<const Bytes> blob;
};

TrieItem MerkleTrie::Build(std::span<const LeafEntry> set, size_t p, Ctx& ctx) {
  TrieItem out;
  const Hash32& first = set.front().key;
  if (set.size() == 1) {
    out.is_ptr = false;
    out.prefix.assign(first.begin() + p, first.end());
    out.hash = set.front().value;
    out.blob = set.front().blob;
    return out;
  }
  const Hash32& last = set.back().key;
  size_t m = CommonPrefix(KeyFrom(first, p, kKeyBytes - p),
                          KeyFrom(last, p, kKeyBytes - p));
  size_t q = p + m;
  TrieNode node;
  size_t i = 0;
  while (i < set.size()) {
    size_t j = i;
    uint8_t b = set[i].key[q];
    while (j < set.size() && set[j].key[q] == b) ++j;
    TrieItem child = Build(set.subspan(i, j - i), q + 1, ctx);
    child.index = b;
    node.items.push_back(std::move(child));
    i = j;
  }
  out.is_ptr = true;
  out.prefix.assign(first.begin() + p, first.begin() + q);
  out.hash = Store(std::move(node), ctx);
  return out;
}

std::optional<TrieItem> MerkleTrie::Normalize(Bytes path, TrieNode node,
                                              Ctx& ctx) {
  if (node.items.empty()) return std::nullopt;
  TrieItem out;
  if (node.items.size() == 1) {
    TrieItem& only = node.items.front();
    out.is_ptr = only.is_ptr;
    out.prefix.assign(path.begin(), path.end());
    out.prefix.push_back(only.index);
    out.prefix.append(only.prefix.begin(), only.prefix.end());
    out.hash = only.hash;
    out.blob = std::move(only.blob);
    return out;
  }
  out.is_ptr = true;
  out.prefix.assign(path.begin(), path.end());
  out.hash = Store(std::move(node), ctx);
  return out;
}

absl::StatusOr<std::optional<TrieItem>> MerkleTrie::ApplyItem(
    const std::optional<TrieItem>& existing, size_t p,
    std::span<const TrieChange> changes, Ctx& ctx) {
  if (changes.size() == 1 &&
      (!existing.has_value() ||
       (!existing->is_ptr && existing->prefix.size() == kKeyBytes - p))) {
    // One change at a leaf or an empty slot (the common case): the same
    // result as the general path below without building the set.
    const TrieChange& c = changes.front();
    auto leaf = [&](const Hash32& value) {
      TrieItem out;
      out.prefix.assign(c.key.begin() + p, c.key.end());
      out.hash = value;
      out.blob = c.blob;
      return std::optional<TrieItem>(std::move(out));
    };
    if (!existing.has_value()) {
      if (!c.value.has_value()) return std::optional<TrieItem>();
      return leaf(*c.value);
    }
    const bool same_key = std::equal(existing->prefix.begin(),
                                     existing->prefix.end(), c.key.begin() + p);
    if (same_key) {
      if (!c.value.has_value()) return std::optional<TrieItem>();
      if (*c.value == existing->hash &&
          (c.blob == nullptr) == (existing->blob == nullptr)) {
        return existing;
      }
      return leaf(*c.value);
    }
    if (!c.value.has_value()) return existing;
  }
  if (!existing.has_value() || !existing->is_ptr) {
    std::vector<LeafEntry> set;
    set.reserve(changes.size() + 1);
    if (existing.has_value()) {
      Hash32 full = changes.front().key;
      std::copy(existing->prefix.begin(), existing->prefix.end(),
                full.begin() + p);
      set.push_back(LeafEntry{full, existing->hash, existing->blob});
    }
    for (const auto& c : changes) {
      auto it = std::lower_bound(
          set.begin(), set.end(), c.key,
          [](const LeafEntry& e, const Hash32& k) { return e.key < k; });
      bool found = it != set.end() && it->key == c.key;
      if (c.value.has_value()) {
        if (found) {
          it->value = *c.value;
          it->blob = c.blob;
        } else {
          set.insert(it, LeafEntry{c.key, *c.value, c.blob});
        }
      } else if (found) {
        set.erase(it);
      }
    }
    if (set.empty()) return std::optional<TrieItem>();
    if (existing.has_value() && set.size() == 1 &&
        set.front().value == existing->hash &&
        (set.front().blob == nullptr) == (existing->blob == nullptr) &&
        std::equal(existing->prefix.begin(), existing->prefix.end(),
                   set.front().key.begin() + p)) {
      return existing;
    }
    return std::optional<TrieItem>(Build(set, p, ctx));
  }
  const TriePrefix& path = existing->prefix;
  size_t k = path.size();
  for (const auto& c : changes) {
    k = std::min(k,
                 CommonPrefix(path.view(), KeyFrom(c.key, p, kKeyBytes - p)));
  }
  TrieNode node;
  std::shared_ptr<const TrieNode> original;
  if (k == path.size()) {
    auto child = Load(existing->hash);
    if (!child.ok()) return child.status();
    original = *std::move(child);
    node = *original;
  } else {
    TrieItem moved;
    moved.index = path[k];
    moved.is_ptr = true;
    moved.prefix.assign(path.begin() + k + 1, path.end());
    moved.hash = existing->hash;
    node.items.push_back(std::move(moved));
  }
  auto applied = ApplyNode(std::move(node), p + k, changes, ctx);
  if (!applied.ok()) return applied.status();
  if (k == path.size() && applied->items.size() >= 2) {
    // Unchanged child: keep the pointer without re-storing the node.
    if (SameItems(original->items, applied->items)) return existing;
  }
  return std::optional<TrieItem>(Normalize(
      Bytes(path.begin(), path.begin() + k), *std::move(applied), ctx));
}

absl::StatusOr<TrieNode> MerkleTrie::ApplyNode(
    TrieNode node, size_t depth, std::span<const TrieChange> changes,
    Ctx& ctx) {
  std::vector<TrieItem> out;
  out.reserve(node.items.size() + changes.size());
  size_t ni = 0;
  size_t ci = 0;
  while (ci < changes.size()) {
    uint8_t b = changes[ci].key[depth];
    size_t cj = ci;
    while (cj < changes.size() && changes[cj].key[depth] == b) ++cj;
    while (ni < node.items.size() && node.items[ni].index < b) {
      out.push_back(std::move(node.items[ni++]));
    }
    std::optional<TrieItem> existing;
    if (ni < node.items.size() && node.items[ni].index == b) {
      existing = std::move(node.items[ni++]);
    }
    auto item =
        ApplyItem(existing, depth + 1, changes.subspan(ci, cj - ci), ctx);
    if (!item.ok()) return item.status();
    if (item->has_value()) {
      (*item)->index = b;
      out.push_back(**std::move(item));
    }
    ci = cj;
  }
  while (ni < node.items.size()) out.push_back(std::move(node.items[ni++]));
  node.items = std::move(out);
  return node;
}

// The root's items are independent subtrees: each group of changes under
// one first key byte is applied by its own task into its own batch and node
// list, appended to ctx's in key-byte order afterwards, which is the order
// ApplyNode would have produced them in.
absl::StatusOr<TrieNode> MerkleTrie::ApplyRootInParallel(
    const TrieNode& root, std::span<const TrieChange> changes, Ctx& ctx,
    WorkerPool& pool) {
  struct Group {
    size_t begin = 0;
    size_t end = 0;
    uint8_t index = 0;
    std::optional<TrieItem> existing;
    WriteBatch batch;
    Ctx ctx{nullptr, {}};
    absl::StatusOr<std::optional<TrieItem>> result;
  };
  std::vector<Group> groups;
  size_t ni = 0;
  for (size_t ci = 0; ci < changes.size();) {
    const uint8_t b = changes[ci].key[0];
    size_t cj = ci;
    while (cj < changes.size() && changes[cj].key[0] == b) ++cj;
    while (ni < root.items.size() && root.items[ni].index < b) ++ni;
    Group& g = groups.emplace_back();
    g.begin = ci;
    g.end = cj;
    g.index = b;
    if (ni < root.items.size() && root.items[ni].index == b) {
      g.existing = root.items[ni];
    }
    ci = cj;
  }
  pool.ParallelFor(groups.size(), [&](size_t i) {
    Group& g = groups[i];
    g.ctx.batch = &g.batch;
    g.result = ApplyItem(g.existing, 1,
                         changes.subspan(g.begin, g.end - g.begin), g.ctx);
  });
  TrieNode out;
  out.items.reserve(root.items.size() + groups.size());
  size_t ri = 0;
  for (Group& g : groups) {
    if (!g.result.ok()) return g.result.status();
    while (ri < root.items.size() && root.items[ri].index < g.index) {
      out.items.push_back(root.items[ri++]);
    }
    if (ri < root.items.size() && root.items[ri].index == g.index) ++ri;
    if (g.result->has_value()) {
      TrieItem& item = **g.result;
      item.index = g.index;
      out.items.push_back(std::move(item));
    }
    ctx.batch->Append(std::move(g.batch));
    for (auto& created : g.ctx.created)
      ctx.created.push_back(std::move(created));
  }
  while (ri < root.items.size()) out.items.push_back(root.items[ri++]);
  return out;
}

absl::StatusOr<Hash32> MerkleTrie::Apply(const Hash32& root,
                                         std::span<const TrieChange> changes,
                                         WriteBatch* batch, WorkerPool* pool) {
  for (size_t i = 1; i < changes.size(); ++i) {
    if (!(changes[i - 1].key < changes[i].key)) {
      return absl::InvalidArgumentError(
          "trie changes must be sorted with unique keys; offending key " +
          HexEncode(changes[i].key));
    }
  }
  {
    MutexLock lock(&pending_mu_);
    pending_.clear();
  }
  Ctx ctx{batch, {}};
  auto root_node = Load(root);
  if (!root_node.ok()) return root_node.status();
  if (changes.empty()) return root;
  const bool parallel = pool != nullptr && pool->threads() > 1 &&
                        changes.size() >= kParallelTrieApplyMin;
  auto applied = parallel
                     ? ApplyRootInParallel(**root_node, changes, ctx, *pool)
                     : ApplyNode(**root_node, 0, changes, ctx);
  if (!applied.ok()) return applied.status();
  Hash32 new_root =
      applied->items.empty() ? kEmptyRoot : Store(*std::move(applied), ctx);
  {
    MutexLock lock(&pending_mu_);
    pending_ = std::move(ctx.created);
  }
  return new_root;
}

void MerkleTrie::Committed() {
  std::vector<std::pair<Hash32, std::shared_ptr<const TrieNode>>> nodes;
  {
    MutexLock lock(&pending_mu_);
    nodes.swap(pending_);
  }
  for (auto& [h, n] : nodes) CachePut(h, std::move(n));
}

absl::Status MerkleTrie::Walk(
    const Hash32& node_hash, Bytes& path, bool verify,
    const std::function<absl::Status(const Hash32&, const TrieItem&)>& fn) {
  auto node = Load(node_hash);
  if (!node.ok()) return node.status();
  if (verify && node_hash != kEmptyRoot &&
      crypto::Blake2b256(EncodeTrieNode(**node)) != node_hash) {
    return absl::DataLossError("trie node " + HexEncode(node_hash) +
                               " does not match its hash");
  }
  for (const auto& it : (*node)->items) {
    size_t saved = path.size();
    path.push_back(it.index);
    path.insert(path.end(), it.prefix.begin(), it.prefix.end());
    if (it.is_ptr) {
      if (path.size() >= kKeyBytes)
        return absl::DataLossError("trie pointer too deep");
      absl::Status s = Walk(it.hash, path, verify, fn);
      if (!s.ok()) return s;
    } else {
      if (path.size() != kKeyBytes)
        return absl::DataLossError("trie leaf at wrong depth");
      Hash32 key;
      std::copy(path.begin(), path.end(), key.begin());
      absl::Status s = fn(key, it);
      if (!s.ok()) return s;
    }
    path.resize(saved);
  }
  return absl::OkStatus();
}

absl::Status MerkleTrie::ForEachLeaf(
    const Hash32& root,
    const std::function<absl::Status(const Hash32&, const Hash32&)>& fn) {
  Bytes path;
  return Walk(root, path, /*verify=*/false,
              [&](const Hash32& key, const TrieItem& item) {
                return fn(key, item.hash);
              });
}

absl::Status MerkleTrie::VerifyLeaves(
    const Hash32& root,
    const std::function<absl::Status(const Hash32&, const TrieLeaf&)>& fn) {
  Bytes path;
  return Walk(root, path, /*verify=*/true,
              [&](const Hash32& key, const TrieItem& item) {
                return fn(key, TrieLeaf{item.hash, item.blob});
              });
}

}  // namespace rnode::rspace
