// Space: the overlay's entries and loading, installs, checkpoints, reset
// and the readers. Matching and COMMs are in space_comm.cc, reverts in
// space_revert.cc.
#include "rspace/space.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "crypto/hash.h"
#include "rspace/channel_codec.h"
#include "rspace/internal/overlay.h"
#include "util/status_macros.h"

namespace rnode::rspace {

using internal::AddJoin;
using internal::BindHashes;
using internal::CheckBinds;
using internal::Hex;

JoinGroup MakeJoinGroup(const std::vector<TermPtr>& channels) {
  JoinGroup g;
  g.reserve(channels.size());
  for (const auto& c : channels) g.push_back(c->hash());
  std::sort(g.begin(), g.end());
  return g;
}

Space::Space(std::unique_ptr<History> history, SpaceOptions options)
    : history_(std::move(history)),
      options_(std::move(options)),
      root_(history_->last_root()),
      shards_(new Shard[kOverlayShards]) {
  SetRoot(root_);
  auto empty = std::make_unique<const InstallTable>();
  installs_.store(empty.get(), std::memory_order_release);
  MutexLock lock(&install_mu_);
  install_versions_.push_back(std::move(empty));
  if (!options_.term_factory) {
    options_.term_factory = [](Bytes b) -> absl::StatusOr<TermPtr> {
      return Term::Make(std::move(b));
    };
  }
}

Space::~Space() = default;

absl::StatusOr<std::unique_ptr<Space>> Space::Open(KeyValueStore* store,
                                                   SpaceOptions options) {
  ASSIGN_OR_RETURN(std::unique_ptr<History> history,
                   History::Open(store, options.history));
  return std::unique_ptr<Space>(
      new Space(std::move(history), std::move(options)));
}

Space::Shard& Space::ShardFor(const Hash32& channel) {
  return shards_[channel[2] % kOverlayShards];
}

Space::Entry* Space::GetEntry(const Hash32& channel) {
  Shard& s = ShardFor(channel);
  MutexLock lock(&s.mu);
  auto& slot = s.map[channel];
  if (slot == nullptr) {
    const InstallTable* installs = installs_.load(std::memory_order_acquire);
    auto it = installs->find(channel);
    slot = it == installs->end()
               ? std::make_unique<Entry>(channel)
               : std::make_unique<Entry>(channel, it->second.continuations,
                                         it->second.joins);
  }
  return slot.get();
}

absl::Status Space::EnsureLoaded(Entry& e) {
  e.mu.AssertHeld();
  if (e.loaded) return absl::OkStatus();
  ASSIGN_OR_RETURN(std::optional<TrieLeaf> leaf,
                   root_node_ != nullptr
                       ? history_->trie().GetLeaf(*root_node_, e.hash)
                       : history_->trie().GetLeaf(root_, e.hash));
  if (leaf.has_value()) {
    if (leaf->blob != nullptr) {
      ASSIGN_OR_RETURN(e.state,
                       DecodeChannelState(*leaf->blob, options_.term_factory));
    } else {
      ASSIGN_OR_RETURN(Bytes blob, history_->LeafBlob(e.hash, *leaf));
      ASSIGN_OR_RETURN(e.state,
                       DecodeChannelState(blob, options_.term_factory));
    }
    e.base_leaf = leaf->hash;
  }
  e.loaded = true;
  return absl::OkStatus();
}

void Space::TouchAll(const OpContext& ctx, const LockedSet& locks) {
  if (ctx.scope == nullptr) return;
  for (const Entry* e : locks.entries()) ctx.scope->Touch(e->hash);
}

std::vector<std::pair<Hash32, Hash32>> Space::InstalledSources() const {
  const InstallTable* installs = installs_.load(std::memory_order_acquire);
  std::vector<std::pair<Hash32, Hash32>> out;
  for (const auto& [channel, installed] : *installs) {
    for (const WaitingContinuation& k : installed.continuations) {
      out.emplace_back(channel, k.source);
    }
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::Status Space::Install(const Matcher& matcher,
                            const std::vector<TermPtr>& channels,
                            const std::vector<TermPtr>& patterns,
                            const TermPtr& continuation) {
  if (continuation == nullptr) {
    return absl::InvalidArgumentError("install: missing continuation");
  }
  ASSIGN_OR_RETURN(BindHashes binds, CheckBinds("install", channels, patterns));
  std::vector<Entry*> entries;
  for (const Hash32& h : binds.channels) entries.push_back(GetEntry(h));
  LockedSet locks(std::move(entries));
  for (Entry* x : locks.entries()) RETURN_IF_ERROR(EnsureLoaded(*x));
  WaitingContinuation k;
  k.channels = channels;
  k.patterns = patterns;
  k.continuation = continuation;
  k.persist = true;
  k.peek = false;
  k.source = HashConsume(HashConsumeBase(binds.channels, binds.patterns,
                                         continuation->hash(), true, false),
                         0);
  k.group = MakeJoinGroup(channels);
  EventLog scratch;
  OpContext ctx{&scratch, &matcher};
  ASSIGN_OR_RETURN(auto chosen,
                   TryMatch(ctx, k, locks, nullptr, nullptr, nullptr));
  if (chosen.has_value()) {
    return absl::FailedPreconditionError(
        "install: stored data already matches; installing can only be done "
        "at startup");
  }
  Entry* owner = locks.Find(k.group.front());
  MutexLock ilock(&install_mu_);
  auto next = std::make_unique<InstallTable>(
      *installs_.load(std::memory_order_acquire));
  for (size_t j = 0; j < k.group.size(); ++j) {
    if (j > 0 && k.group[j] == k.group[j - 1]) continue;
    Entry* x = locks.Find(k.group[j]);
    x->mu.AssertHeld();
    AddJoin(x->installed_joins, k.group);
    AddJoin((*next)[k.group[j]].joins, k.group);
  }
  owner->mu.AssertHeld();
  owner->installed.push_back(k);
  (*next)[k.group.front()].continuations.push_back(std::move(k));
  // An entry created before this store (under its shard lock) is updated
  // above under its entry lock; one created after sees the new table.
  installs_.store(next.get(), std::memory_order_release);
  install_versions_.push_back(std::move(next));
  return absl::OkStatus();
}

void Space::DropOverlay() {
  for (size_t i = 0; i < kOverlayShards; ++i) {
    Shard& s = shards_[i];
    MutexLock lock(&s.mu);
    s.map.clear();
  }
  {
    // Quiescent: no reader holds an older install table.
    MutexLock lock(&install_mu_);
    if (install_versions_.size() > 1) {
      install_versions_.erase(install_versions_.begin(),
                              install_versions_.end() - 1);
    }
  }
  generation_.fetch_add(1, std::memory_order_acq_rel);
}

absl::StatusOr<Hash32> Space::CreateCheckpoint() {
  // Entry locks are never taken under a shard lock (an operation takes the
  // shard lock under its entry locks): collect, then look at each entry.
  std::vector<Entry*> dirty;
  for (size_t i = 0; i < kOverlayShards; ++i) {
    Shard& s = shards_[i];
    MutexLock lock(&s.mu);
    for (auto& [h, e] : s.map) dirty.push_back(e.get());
  }
  dirty.erase(std::remove_if(dirty.begin(), dirty.end(),
                             [](Entry* e) {
                               MutexLock lock(&e->mu);
                               return !e->dirty;
                             }),
              dirty.end());
  std::sort(dirty.begin(), dirty.end(),
            [](const Entry* a, const Entry* b) { return a->hash < b->hash; });
  std::vector<LeafUpdate> updates;
  updates.reserve(dirty.size());
  for (Entry* e : dirty) {
    MutexLock lock(&e->mu);
    if (e->state.empty()) {
      if (e->base_leaf.has_value())
        updates.push_back(LeafUpdate{e->hash, {}, {}});
      continue;
    }
    Bytes blob = EncodeChannelState(e->state);
    Hash32 h = crypto::Blake2b256(blob);
    if (e->base_leaf == h) continue;
    updates.push_back(LeafUpdate{e->hash, std::move(blob), h});
  }
  ASSIGN_OR_RETURN(Hash32 root, history_->Commit(root_, updates));
  DropOverlay();
  SetRoot(root);
  return root;
}

absl::Status Space::Reset(const Hash32& root) {
  ASSIGN_OR_RETURN(bool known, history_->HasRoot(root));
  if (!known) {
    return absl::NotFoundError("reset: root " + Hex(root) +
                               " is not in the roots table");
  }
  DropOverlay();
  SetRoot(root);
  return absl::OkStatus();
}

void Space::SetRoot(const Hash32& root) {
  root_ = root;
  absl::StatusOr<std::shared_ptr<const TrieNode>> node =
      history_->trie().Node(root);
  root_node_ = node.ok() ? *std::move(node) : nullptr;
}

absl::Status Space::Clear() { return Reset(kEmptyRoot); }

Hash32 Space::root() const { return root_; }

absl::StatusOr<std::vector<Datum>> Space::GetData(const Hash32& channel,
                                                  DeployScope* scope) {
  Entry* e = GetEntry(channel);
  MutexLock lock(&e->mu);
  RETURN_IF_ERROR(EnsureLoaded(*e));
  if (scope != nullptr) scope->Touch(channel);
  return e->state.data;
}

absl::StatusOr<std::vector<WaitingContinuation>> Space::GetContinuations(
    const std::vector<TermPtr>& channels) {
  if (channels.empty()) return absl::InvalidArgumentError("no channels");
  JoinGroup g = MakeJoinGroup(channels);
  Entry* e = GetEntry(g.front());
  MutexLock lock(&e->mu);
  RETURN_IF_ERROR(EnsureLoaded(*e));
  std::vector<WaitingContinuation> out;
  for (const auto& k : e->installed) {
    if (k.group == g) out.push_back(k);
  }
  for (const auto& k : e->state.continuations) {
    if (k.group == g) out.push_back(k);
  }
  return out;
}

absl::StatusOr<std::vector<JoinGroup>> Space::GetJoins(const Hash32& channel) {
  Entry* e = GetEntry(channel);
  MutexLock lock(&e->mu);
  RETURN_IF_ERROR(EnsureLoaded(*e));
  std::vector<JoinGroup> out = e->installed_joins;
  out.insert(out.end(), e->state.joins.begin(), e->state.joins.end());
  return out;
}

size_t Space::OverlaySize() const {
  size_t n = 0;
  for (size_t i = 0; i < kOverlayShards; ++i) {
    Shard& s = shards_[i];
    MutexLock lock(&s.mu);
    n += s.map.size();
  }
  return n;
}

}  // namespace rnode::rspace
