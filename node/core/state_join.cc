#include "node/core/state_join.h"

#include <algorithm>
#include <deque>
#include <set>
#include <utility>

#include "CasperMessage.pb.h"
#include "absl/strings/str_cat.h"
#include "casper/consensus/finality.h"
#include "node/core/network.h"
#include "rnode_sync.pb.h"
#include "util/status_macros.h"

namespace rnode::node {
namespace {

using casper::block::Block;

// Dependencies asked for by hash at once.
constexpr size_t kMaxAsked = 64;
// A failed join starts over after this long.
constexpr int kRetrySeconds = 5;

// The blocks `b` needs stored: its parents and justified blocks.
std::vector<Hash32> DepsOf(const Block& b) {
  std::vector<Hash32> deps = b.header.parents;
  for (const auto& j : b.justifications) deps.push_back(j.latest_block);
  return deps;
}

// Adds a trie fetch's counts to the join's.
void AddFetch(JoinProgress& p, const StateFetchProgress& f) {
  p.trie_nodes += f.fetched_nodes;
  p.trie_bytes += f.fetched_bytes;
  p.trie_nodes_found += f.found_stored;
  p.bad_trie_answers += f.bad_answers;
}

bool Bonded(const std::vector<casper::block::Bond>& bonds,
            const crypto::Secp256k1PublicKey& key) {
  return casper::block::StakeOf(bonds, key) > 0;
}

}  // namespace

const char* JoinPhaseName(JoinPhase p) {
  switch (p) {
    case JoinPhase::kChoosing:
      return "choosing";
    case JoinPhase::kBlocks:
      return "blocks";
    case JoinPhase::kStates:
      return "states";
    case JoinPhase::kVerifying:
      return "verifying";
    case JoinPhase::kDone:
      return "done";
    case JoinPhase::kNotNeeded:
      return "not_needed";
    case JoinPhase::kFailed:
      return "failed";
  }
  return "?";
}

StateJoin::StateJoin(Deps deps, StateJoinOptions options)
    : d_(std::move(deps)), options_(options) {
  // Anchored before a restart, not yet verified: only the verification is
  // left, and blocks go to the engine.
  if (d_.dag->UnverifiedAnchor().has_value()) {
    resumed_ = true;
    active_.store(false);
    MutexLock lock(&mu_);
    taking_ = false;
  }
}

StateJoin::~StateJoin() { Stop(); }

void StateJoin::Start(p2p::Transport* t) {
  started_ = Clock::now();
  {
    MutexLock lock(&mu_);
    transport_ = t;
  }
  if (resumed_) {
    const Hash32 anchor = *d_.dag->UnverifiedAnchor();
    absl::StatusOr<std::shared_ptr<const casper::dag::BlockMeta>> meta =
        d_.dag->Meta(anchor);
    anchored_at_ = started_;
    MutexLock lock(&mu_);
    progress_.phase = JoinPhase::kVerifying;
    progress_.anchor = anchor;
    progress_.anchor_number = meta.ok() ? (*meta)->block_number : -1;
    progress_.floor = d_.dag->floor().value_or(-1);
    Log("p2p")->info(
        "joined at #{} before a restart: verifying the anchor's finality by "
        "the blocks above it",
        progress_.anchor_number);
  } else {
    d_.sync->Hold(true);
    Log("p2p")->info(
        "joining from the shard's last finalized state: asking the bonded "
        "peers where it is");
  }
  thread_ = std::thread([this] { Loop(); });
}

void StateJoin::Stop() {
  stop_.Stop();
  if (thread_.joinable()) thread_.join();
  std::unique_ptr<StateFetcher> fetcher;
  {
    MutexLock lock(&mu_);
    fetcher = std::move(fetcher_);
    transport_ = nullptr;
  }
  if (fetcher != nullptr) fetcher->Stop();
}

JoinProgress StateJoin::Progress() const {
  MutexLock lock(&mu_);
  JoinProgress p = progress_;
  p.blocks = blocks_.size();
  if (p.phase == JoinPhase::kChoosing || p.phase == JoinPhase::kBlocks ||
      p.phase == JoinPhase::kStates || p.phase == JoinPhase::kVerifying) {
    p.seconds = std::chrono::duration<double>(Clock::now() - started_).count();
  }
  if (fetcher_ != nullptr) AddFetch(p, fetcher_->Progress());
  return p;
}

bool StateJoin::OnBlock(const p2p::PeerNode& from, Block& block) {
  if (!active_.load()) return false;
  if (const casper::block::SealError e = casper::block::CheckSeal(block);
      e != casper::block::SealError::kNone) {
    p2p::Transport* t = nullptr;
    {
      MutexLock lock(&mu_);
      ++progress_.bad_blocks;
      t = transport_;
    }
    peer_log_.Warn("block {} from {} while joining: {}", HexEncode(block.hash),
                   from.IdHex(), casper::block::SealErrorName(e));
    if (t != nullptr) t->Punish(from.id, "a block whose seal does not check");
    return true;
  }
  if (d_.dag->Contains(block.hash)) return true;
  MutexLock lock(&mu_);
  // Finish took the blocks held: the engine takes this one.
  if (!taking_) return false;
  // Below the floor only the history asked for by hash is held.
  if (progress_.anchor_number >= 0 && block.number() < progress_.floor &&
      !asked_.contains(block.hash)) {
    return true;
  }
  // Bounded whatever peers send: past the bound a block is dropped (one
  // above the anchor comes again by catching up; a window that does not
  // fit is a fault the thread reports, and the join starts over).
  if (blocks_.size() >= options_.max_blocks) return true;
  asked_.erase(block.hash);
  blocks_.emplace(block.hash, std::move(block));
  return true;
}

void StateJoin::OnRangeEnd(const p2p::PeerNode& from, int64_t from_number,
                           int64_t next_number) {
  MutexLock lock(&mu_);
  if (!range_.has_value() || range_->second.peer != from.id ||
      range_->first != from_number) {
    return;
  }
  if (next_number > from_number) {
    next_number_ = std::max(next_number_, next_number);
    range_.reset();
  } else {
    // Nothing sent (its budget spent): another peer next, at once.
    range_->second.at = Clock::time_point{};
  }
}

void StateJoin::OnTrieNodes(const p2p::PeerNode& from,
                            const std::string& content) {
  MutexLock lock(&mu_);
  if (fetcher_ != nullptr) fetcher_->OnAnswer(from, content);
}

std::optional<Bytes> StateJoin::PeerLocked(const Bytes& not_this) {
  if (peers_.empty()) return std::nullopt;
  for (size_t i = 0; i < peers_.size(); ++i) {
    const Bytes& p = peers_[(next_peer_ + i) % peers_.size()];
    if (p != not_this || peers_.size() == 1) {
      next_peer_ = (next_peer_ + i + 1) % peers_.size();
      return p;
    }
  }
  return std::nullopt;
}

void StateJoin::Loop() {
  JoinPhase phase = resumed_ ? JoinPhase::kVerifying : JoinPhase::kChoosing;
  while (!stop_.WaitFor(options_.tick)) {
    const Clock::time_point now = Clock::now();
    JoinPhase next = phase;
    switch (phase) {
      case JoinPhase::kChoosing:
        next = Choose(now);
        break;
      case JoinPhase::kBlocks:
        next = FetchBlocks(now);
        break;
      case JoinPhase::kStates:
        next = FetchStates();
        break;
      case JoinPhase::kVerifying:
        next = Verify(now);
        break;
      default:
        return;
    }
    if (next != phase) {
      MutexLock lock(&mu_);
      progress_.phase = next;
    }
    if (next == JoinPhase::kDone || next == JoinPhase::kNotNeeded) return;
    if (next == JoinPhase::kFailed) {
      // A fault of this node's (its store) or a window too large to hold:
      // said in the progress and the log, then the join starts over.
      std::string error;
      {
        MutexLock lock(&mu_);
        error = progress_.error;
      }
      Log("p2p")->error("joining from state failed ({}); starting over in {} s",
                        error, kRetrySeconds);
      if (stop_.WaitFor(std::chrono::seconds(kRetrySeconds))) return;
      Reset();
      next = JoinPhase::kChoosing;
    }
    phase = next;
  }
}

JoinPhase StateJoin::Choose(Clock::time_point now) {
  std::vector<PeerFinalized> told = d_.sync->PeersFinalized();
  int64_t target = -1;
  {
    MutexLock lock(&mu_);
    if (told.empty()) return JoinPhase::kChoosing;
    if (!first_told_.has_value()) first_told_ = now;
    const bool young =
        std::all_of(told.begin(), told.end(), [&](const PeerFinalized& f) {
          return f.number < options_.min_finalized_number;
        });
    // A young shard is replayed at once (a peer that says so falsely only
    // makes this node replay, which checks everything); otherwise a second
    // peer is waited for a moment.
    if (!young && told.size() < 2 &&
        now - *first_told_ < options_.choose_grace) {
      return JoinPhase::kChoosing;
    }
    // The second highest number when two or more told (one peer alone
    // cannot choose the anchor), and the hash most of its tellers name.
    std::vector<int64_t> numbers;
    numbers.reserve(told.size());
    for (const PeerFinalized& f : told) numbers.push_back(f.number);
    target = ChainSync::Target(numbers);
    std::map<Hash32, int> votes;
    peers_.clear();
    for (const PeerFinalized& f : told) {
      if (f.number == target) ++votes[f.hash];
      if (f.number >= target) peers_.push_back(f.peer);
    }
    const auto best = std::max_element(
        votes.begin(), votes.end(),
        [](const auto& x, const auto& y) { return x.second < y.second; });
    if (target >= options_.min_finalized_number) {
      progress_.anchor = best->first;
      progress_.anchor_number = target;
      progress_.floor = std::max<int64_t>(0, target - options_.window_numbers);
      next_number_ = progress_.floor;
      Log("p2p")->info(
          "joining at the last finalized block #{} {} ({} bonded peers "
          "told); fetching the blocks from #{}",
          target, HexEncode(best->first), told.size(), progress_.floor);
      return JoinPhase::kBlocks;
    }
  }
  Log("p2p")->info(
      "the shard's last finalized block is #{}, under the {} for a join "
      "from state: replaying its blocks from the genesis",
      target, options_.min_finalized_number);
  Finish(JoinPhase::kNotNeeded);
  Settle(JoinPhase::kNotNeeded);
  return JoinPhase::kNotNeeded;
}

std::vector<Hash32> StateJoin::MissingLocked() const {
  std::vector<Hash32> missing;
  std::set<Hash32> seen;
  std::vector<const Block*> stale;
  const std::vector<const Block*> window = WindowLocked(&stale);
  auto need = [&](const Hash32& h) {
    if (blocks_.contains(h) || !seen.insert(h).second) return;
    if (!d_.dag->Contains(h)) missing.push_back(h);
  };
  for (const Block* b : window) {
    if (b->number() <= progress_.floor) continue;
    for (const Hash32& h : DepsOf(*b)) need(h);
  }
  for (const Block* b : stale) {
    for (const auto& j : b->justifications) need(j.latest_block);
  }
  return missing;
}

std::vector<const Block*> StateJoin::StaleLatestLocked(
    const std::vector<const Block*>& window) const {
  std::map<crypto::Secp256k1PublicKey, const Block*> latest;
  for (const Block* b : window) {
    const Block*& best = latest[b->sender];
    if (best == nullptr || b->seq_num > best->seq_num) best = b;
  }
  std::vector<const Block*> out;
  for (const auto& [sender, b] : latest) {
    if (b->number() <= progress_.floor) out.push_back(b);
  }
  return out;
}

std::vector<const Block*> StateJoin::WindowLocked(
    std::vector<const Block*>* stale) const {
  // The blocks numbered up to the anchor's, and what they need of those
  // above it (a justification of a later number is rare, but it must be
  // anchored with them).
  std::set<Hash32> in;
  std::deque<const Block*> queue;
  for (const auto& [h, b] : blocks_) {
    if (b.number() <= progress_.anchor_number) {
      in.insert(h);
      queue.push_back(&b);
    }
  }
  while (!queue.empty()) {
    const Block* b = queue.front();
    queue.pop_front();
    if (b->number() <= progress_.floor) continue;
    for (const Hash32& h : DepsOf(*b)) {
      auto it = blocks_.find(h);
      if (it != blocks_.end() && in.insert(h).second) {
        queue.push_back(&it->second);
      }
    }
  }
  std::vector<const Block*> out;
  out.reserve(in.size());
  for (const Hash32& h : in) out.push_back(&blocks_.at(h));
  // What the latest messages below the floor justify, as the peers'
  // retention keeps it: validating the sender's next block reads it.
  std::vector<const Block*> stale_latest = StaleLatestLocked(out);
  std::vector<const Block*> extra;
  for (const Block* b : stale_latest) {
    for (const auto& j : b->justifications) {
      auto it = blocks_.find(j.latest_block);
      if (it != blocks_.end() && in.insert(j.latest_block).second) {
        extra.push_back(&it->second);
      }
    }
  }
  out.insert(out.end(), extra.begin(), extra.end());
  if (stale != nullptr) *stale = std::move(stale_latest);
  return out;
}

JoinPhase StateJoin::FetchBlocks(Clock::time_point now) {
  MutexLock lock(&mu_);
  p2p::Transport* t = transport_;
  // Without a transport (tests) the requests are recorded, not sent.
  const auto send = [t](const Bytes& peer, const char* type,
                        std::string content) {
    if (t != nullptr) (void)t->Send(peer, type, std::move(content));
  };
  if (blocks_.size() >= options_.max_blocks) {
    progress_.error = absl::StrCat("the window holds more than ",
                                   options_.max_blocks, " blocks");
    return JoinPhase::kFailed;
  }
  if (next_number_ <= progress_.anchor_number) {
    const bool due = !range_.has_value() ||
                     now - range_->second.at >= options_.request_timeout;
    if (due) {
      const Bytes last = range_.has_value() ? range_->second.peer : Bytes{};
      if (std::optional<Bytes> peer = PeerLocked(last)) {
        sync::BlockRangeRequest req;
        req.set_from_number(next_number_);
        req.set_numbers(kMaxRangeNumbers);
        send(*peer, packet::kBlockRangeRequest, req.SerializeAsString());
        range_ = std::make_pair(next_number_, Asked{*peer, now});
      }
    }
    return JoinPhase::kBlocks;
  }
  const std::vector<Hash32> missing = MissingLocked();
  if (missing.empty() && blocks_.contains(progress_.anchor)) {
    return JoinPhase::kStates;
  }
  size_t in_flight = 0;
  for (const auto& [h, a] : asked_) {
    if (now - a.at < options_.request_timeout) ++in_flight;
  }
  for (const Hash32& h : missing) {
    if (in_flight >= kMaxAsked) break;
    auto it = asked_.find(h);
    if (it != asked_.end() && now - it->second.at < options_.request_timeout) {
      continue;
    }
    const Bytes last = it != asked_.end() ? it->second.peer : Bytes{};
    std::optional<Bytes> peer = PeerLocked(last);
    if (!peer.has_value()) break;
    ::casper::BlockRequestProto req;
    req.set_hash(std::string(h.begin(), h.end()));
    send(*peer, packet::kBlockRequest, req.SerializeAsString());
    asked_[h] = Asked{*peer, now};
    ++in_flight;
  }
  // The anchor itself, if no range brought it (a peer that pruned it?).
  if (!blocks_.contains(progress_.anchor) &&
      !asked_.contains(progress_.anchor)) {
    if (std::optional<Bytes> peer = PeerLocked({})) {
      ::casper::BlockRequestProto req;
      req.set_hash(
          std::string(progress_.anchor.begin(), progress_.anchor.end()));
      send(*peer, packet::kBlockRequest, req.SerializeAsString());
      asked_[progress_.anchor] = Asked{*peer, now};
    }
  }
  return JoinPhase::kBlocks;
}

std::vector<Hash32> StateJoin::RootsLocked() const {
  const Block& anchor = blocks_.at(progress_.anchor);
  std::vector<Hash32> roots{anchor.body.state.post_state};
  // The states the blocks above the anchor start from: a merge's base is
  // on its main parent's chain, often a little below the anchor, and its
  // scope's blocks are replayed on their pre-states. Newest first: the
  // anchor's neighbours matter most.
  std::vector<const Block*> recent;
  for (const auto& [h, b] : blocks_) {
    if (b.number() <= progress_.anchor_number &&
        b.number() >= progress_.anchor_number - options_.replayable_numbers) {
      recent.push_back(&b);
    }
  }
  std::sort(recent.begin(), recent.end(), [](const Block* x, const Block* y) {
    return x->number() != y->number() ? x->number() > y->number()
                                      : x->hash < y->hash;
  });
  std::set<Hash32> seen{roots.front()};
  for (const Block* b : recent) {
    for (const Hash32& r :
         {b->body.state.post_state, b->body.state.pre_state}) {
      if (seen.insert(r).second) roots.push_back(r);
    }
  }
  return roots;
}

JoinPhase StateJoin::FetchStates() {
  std::vector<Hash32> roots;
  std::vector<Block> window;
  p2p::Transport* t = nullptr;
  std::vector<Bytes> peers;
  Hash32 anchor{};
  int64_t floor = 0;
  {
    MutexLock lock(&mu_);
    roots = RootsLocked();
    for (const Block* b : WindowLocked()) window.push_back(*b);
    progress_.roots_total = roots.size();
    t = transport_;
    peers = peers_;
    anchor = progress_.anchor;
    floor = progress_.floor;
  }
  // The senders: bonded in the anchor's state, their main parent's or
  // their own block's. A block by anyone else is a peer's forgery: it is
  // dropped, and what needs it asked for again.
  const Block* anchor_block = nullptr;
  std::map<Hash32, const Block*> by_hash;
  for (const Block& b : window) {
    by_hash[b.hash] = &b;
    if (b.hash == anchor) anchor_block = &b;
  }
  std::vector<Hash32> forged;
  for (const Block& b : window) {
    const auto main = b.header.parents.empty()
                          ? by_hash.end()
                          : by_hash.find(b.header.parents.front());
    if (!Bonded(anchor_block->body.state.bonds, b.sender) &&
        !Bonded(b.body.state.bonds, b.sender) &&
        (main == by_hash.end() ||
         !Bonded(main->second->body.state.bonds, b.sender))) {
      forged.push_back(b.hash);
    }
  }
  if (!forged.empty()) {
    MutexLock lock(&mu_);
    for (const Hash32& h : forged) blocks_.erase(h);
    progress_.bad_blocks += forged.size();
    return JoinPhase::kBlocks;
  }
  Log("p2p")->info(
      "joining: {} blocks from #{} to the anchor #{}; fetching {} state "
      "tries",
      window.size(), floor, anchor_block->number(), roots.size());
  // The roots not held yet, fetched together: the tries of nearby blocks
  // share all but a few paths, fetched once, and their levels come in the
  // same round trips.
  std::vector<Hash32> wanted;
  for (const Hash32& root : roots) {
    absl::StatusOr<bool> held = d_.has_root(root);
    if (!held.ok()) {
      Fail(absl::StrCat("the history: ", held.status().ToString()));
      return JoinPhase::kFailed;
    }
    if (!*held) wanted.push_back(root);
  }
  {
    MutexLock lock(&mu_);
    progress_.roots_done = roots.size() - wanted.size();
  }
  if (!wanted.empty()) {
    StateFetchOptions fetch = options_.fetch;
    fetch.complete = &complete_;
    auto fetcher = std::make_unique<StateFetcher>(d_.store, d_.columns, fetch);
    StateFetcher* f = fetcher.get();
    {
      MutexLock lock(&mu_);
      fetcher_ = std::move(fetcher);
    }
    if (absl::Status s = f->Start(t, wanted, peers); !s.ok()) {
      Fail(absl::StrCat("the trie fetch: ", s.ToString()));
      return JoinPhase::kFailed;
    }
    StateFetchProgress p;
    while (!stop_.WaitFor(options_.fetch.tick)) {
      p = f->Progress();
      if (p.done || !p.error.empty()) break;
    }
    if (stop_.stopped()) return JoinPhase::kStates;
    if (!p.error.empty()) {
      Fail(absl::StrCat("the trie fetch: ", p.error));
      return JoinPhase::kFailed;
    }
    std::unique_ptr<StateFetcher> finished;
    {
      MutexLock lock(&mu_);
      finished = std::move(fetcher_);
      AddFetch(progress_, p);
      progress_.roots_done = roots.size();
    }
    finished->Stop();
  }
  if (absl::Status s = d_.dag->Anchor(window, anchor, floor); !s.ok()) {
    Fail(absl::StrCat("anchoring the DAG: ", s.ToString()));
    return JoinPhase::kFailed;
  }
  anchored_at_ = Clock::now();
  Log("p2p")->info(
      "anchored at #{} after {:.1f} s: {} blocks, {} state tries; "
      "verifying the anchor's finality by the blocks above it",
      anchor_block->number(),
      std::chrono::duration<double>(anchored_at_ - started_).count(),
      window.size(), roots.size());
  Finish(JoinPhase::kVerifying);
  return JoinPhase::kVerifying;
}

JoinPhase StateJoin::Verify(Clock::time_point now) {
  if (now - checked_at_ < options_.verify_interval) {
    return JoinPhase::kVerifying;
  }
  checked_at_ = now;
  Hash32 anchor{};
  {
    MutexLock lock(&mu_);
    anchor = progress_.anchor;
  }
  absl::StatusOr<bool> final =
      d_.anchor_final ? d_.anchor_final(anchor) : absl::StatusOr<bool>(true);
  if (final.ok() && *final) {
    // Recorded, so that a restart does not verify again (nor skip it
    // before this).
    if (absl::Status s = d_.dag->SetAnchorVerified(); !s.ok()) {
      Log("p2p")->warn("joining: recording the anchor verified: {}",
                       s.ToString());
      return JoinPhase::kVerifying;
    }
    double seconds = 0;
    {
      MutexLock lock(&mu_);
      seconds = std::chrono::duration<double>(now - started_).count();
      progress_.seconds = seconds;
      progress_.error.clear();
    }
    Log("p2p")->info(
        "joined: the blocks above the anchor make it final ({:.1f} s in "
        "all)",
        seconds);
    Settle(JoinPhase::kDone);
    return JoinPhase::kDone;
  }
  // Not yet (the blocks above it are still coming), or the oracle could
  // not tell (a block it reads is not stored yet): asked again. Overdue,
  // the progress says so: the peers that named the anchor may have lied,
  // and this node will not serve from it.
  if (now - anchored_at_ >= options_.verify_overdue) {
    MutexLock lock(&mu_);
    if (progress_.error.empty()) {
      progress_.error = absl::StrCat(
          "the anchor #", progress_.anchor_number,
          " is not final by the blocks above it after ",
          std::chrono::duration_cast<std::chrono::seconds>(now - anchored_at_)
              .count(),
          " s",
          final.ok() ? std::string()
                     : absl::StrCat(" (", final.status().ToString(), ")"),
          ": the peers that named it may be wrong; this node stays "
          "unready (a new data directory joins again)");
      Log("p2p")->error("joining: {}", progress_.error);
    }
  }
  return JoinPhase::kVerifying;
}

void StateJoin::Fail(std::string error) {
  MutexLock lock(&mu_);
  progress_.phase = JoinPhase::kFailed;
  progress_.error = std::move(error);
}

void StateJoin::Reset() {
  std::unique_ptr<StateFetcher> fetcher;
  {
    MutexLock lock(&mu_);
    fetcher = std::move(fetcher_);
  }
  if (fetcher != nullptr) fetcher->Stop();
  MutexLock lock(&mu_);
  if (fetcher != nullptr) AddFetch(progress_, fetcher->Progress());
  // The last failure stays visible; the counts go on (they are counters).
  JoinProgress next;
  next.error = progress_.error;
  next.bad_blocks = progress_.bad_blocks;
  next.trie_nodes = progress_.trie_nodes;
  next.trie_bytes = progress_.trie_bytes;
  next.trie_nodes_found = progress_.trie_nodes_found;
  next.bad_trie_answers = progress_.bad_trie_answers;
  progress_ = next;
  first_told_.reset();
  peers_.clear();
  blocks_.clear();
  range_.reset();
  asked_.clear();
  next_number_ = 0;
}

void StateJoin::Finish(JoinPhase phase) {
  // Every block held that the DAG did not take (those above the anchor,
  // or all of them when the join was not needed) goes to the engine, as it
  // would have without the join; from here OnBlock lets blocks through.
  std::vector<Block> held;
  {
    MutexLock lock(&mu_);
    progress_.phase = phase;
    taking_ = false;
    for (auto& [h, b] : blocks_) {
      if (!d_.dag->Contains(h)) held.push_back(std::move(b));
    }
    blocks_.clear();
  }
  active_.store(false);
  d_.sync->Hold(false);
  std::sort(held.begin(), held.end(), [](const Block& x, const Block& y) {
    return x.number() < y.number();
  });
  if (!held.empty()) {
    Log("p2p")->info("{} blocks the join held go to the engine", held.size());
  }
  for (Block& b : held) d_.hand_on(std::move(b));
}

void StateJoin::Settle(JoinPhase phase) {
  {
    MutexLock lock(&mu_);
    progress_.phase = phase;
  }
  settled_.store(true);
  if (d_.done) d_.done();
}

absl::StatusOr<bool> AnchorIsFinal(const casper::dag::DagStore& dag,
                                   const Hash32& anchor,
                                   int64_t threshold_ppm) {
  ASSIGN_OR_RETURN(
      casper::consensus::FaultTolerance ft,
      casper::consensus::CliqueOracle(dag, anchor, dag.LatestMessages()));
  return ft.Exceeds(threshold_ppm);
}

}  // namespace rnode::node
