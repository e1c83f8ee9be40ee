#include "node/core/chain_sync.h"

#include <algorithm>
#include <functional>
#include <utility>
#include <vector>

#include "node/core/network.h"
#include "node/p2p/chunker.h"
#include "rnode_sync.pb.h"

namespace rnode::node {
namespace {

int64_t Ms(std::chrono::steady_clock::duration d) {
  return std::chrono::duration_cast<std::chrono::milliseconds>(d).count();
}

}  // namespace

const char* SyncStateName(SyncState s) {
  switch (s) {
    case SyncState::kStarting:
      return "starting";
    case SyncState::kBehind:
      return "behind";
    case SyncState::kCaughtUp:
      return "caught_up";
    case SyncState::kBeyondHistory:
      return "beyond_history";
  }
  return "?";
}

ChainSync::ChainSync(casper::dag::DagStore* dag,
                     const ChainSyncOptions& options)
    : dag_(dag), options_(options), had_history_(dag->MaxHeight() > 0) {
  MutexLock lock(&mu_);
  local_moved_ = created_;
}

ChainSync::~ChainSync() { Stop(); }

void ChainSync::Attach(p2p::Transport* transport) {
  {
    MutexLock lock(&mu_);
    transport_ = transport;
  }
  if (!thread_.joinable()) thread_ = std::thread([this] { Loop(); });
}

void ChainSync::Stop() {
  stop_.Stop();
  if (thread_.joinable()) thread_.join();
  MutexLock lock(&mu_);
  transport_ = nullptr;
}

p2p::Transport* ChainSync::CurrentTransport() const {
  MutexLock lock(&mu_);
  return transport_;
}

bool ChainSync::Handles(std::string_view type_id) {
  return type_id == packet::kChainHeightRequest ||
         type_id == packet::kChainHeight ||
         type_id == packet::kBlockRangeRequest ||
         type_id == packet::kBlockRangeEnd;
}

int64_t ChainSync::Target(std::vector<int64_t> heights) {
  if (heights.empty()) return -1;
  std::sort(heights.begin(), heights.end(), std::greater<>());
  return heights.size() == 1 ? heights[0] : heights[1];
}

SyncProgress ChainSync::Progress() const {
  const int64_t local = dag_->MaxHeight();
  MutexLock lock(&mu_);
  SyncProgress p;
  p.local = local;
  const Clock::time_point now = Clock::now();
  p.target = TargetLocked(now);
  if (held_) {
    p.state = SyncState::kStarting;
  } else if (!heard_) {
    p.state = AloneLocked(now) ? SyncState::kCaughtUp : SyncState::kStarting;
  } else {
    // The thread marks the node behind on its next tick; a height heard
    // since counts already (a node that just heard it is far below must
    // not look ready until then).
    const bool far = p.target >= 0 && p.target - local > EnterBehindLocked();
    p.state = behind_ || far ? SyncState::kBehind : SyncState::kCaughtUp;
    if (behind_ && beyond_floor_ >= 0) {
      p.state = SyncState::kBeyondHistory;
      p.peers_floor = beyond_floor_;
    }
  }
  return p;
}

SyncCounters ChainSync::counters() const {
  MutexLock lock(&mu_);
  return counters_;
}

int64_t ChainSync::TargetLocked(Clock::time_point now) const {
  std::vector<int64_t> fresh;
  for (const auto& [peer, h] : heights_) {
    if (now - h.heard <= options_.height_ttl) fresh.push_back(h.max_number);
  }
  return Target(std::move(fresh));
}

std::optional<int64_t> ChainSync::FloorAboveLocked(
    int64_t from, Clock::time_point now) const {
  std::optional<int64_t> lowest;
  for (const auto& [peer, h] : heights_) {
    if (now - h.heard > options_.height_ttl || h.max_number < from) continue;
    if (h.floor <= from) return std::nullopt;
    lowest = std::min(lowest.value_or(h.floor), h.floor);
  }
  return lowest;
}

void ChainSync::Loop() {
  while (!stop_.WaitFor(options_.tick)) Tick(Clock::now());
}

void ChainSync::Tick(Clock::time_point now) {
  p2p::Transport* t = CurrentTransport();
  if (t == nullptr) return;
  const int64_t local = dag_->MaxHeight();
  bool ask = false;
  bool ask_tips = false;
  {
    MutexLock lock(&mu_);
    if (local != last_local_) {
      last_local_ = local;
      local_moved_ = now;
    }
    std::erase_if(heights_, [&](const auto& entry) {
      return now - entry.second.heard > options_.height_ttl;
    });
    const int64_t target = TargetLocked(now);
    // Held (a joining node): heights are asked, nothing is fetched.
    const SyncState state =
        held_ ? SyncState::kStarting : StateLocked(local, target, now);
    const auto interval = state == SyncState::kCaughtUp
                              ? options_.ask_interval
                              : options_.ask_interval_behind;
    if (now - last_ask_ >= interval) {
      last_ask_ = now;
      ask = true;
      // Near but below the peers (ranges stop at near_numbers, and a tip
      // asked for on connecting can be lost while the peer has not yet
      // taken the link): their tips, whose parents the engine asks for,
      // bring the rest.
      ask_tips = state == SyncState::kCaughtUp && target > local;
    }
    ask_tips = !held_ && (ask_tips || std::exchange(tips_due_, false));
    if (behind_ && !held_) {
      // The next number is `local + 1`: whether a peer above still keeps
      // it.
      const int64_t beyond =
          FloorAboveLocked(local + 1, now).value_or(int64_t{-1});
      if (beyond >= 0 && beyond_floor_ < 0) {
        // Peers' answers set it (they may flip it): rate-limited.
        peer_log_.Warn(
            "this node (at #{}) is further behind than its peers keep "
            "blocks (the lowest floor among them: #{}): it cannot catch up "
            "by height; join it again from the shard's last finalized state "
            "(docs/p2p.md \"Joining\")",
            local, beyond);
      }
      beyond_floor_ = beyond;
      RequestLocked(t, local, target, now);
    } else {
      beyond_floor_ = -1;
    }
  }
  if (ask) {
    t->SendToAll(packet::kChainHeightRequest,
                 sync::ChainHeightRequest().SerializeAsString());
  }
  if (ask_tips) t->SendToAll(packet::kForkChoiceTipRequest, "");
}

SyncState ChainSync::StateLocked(int64_t local, int64_t target,
                                 Clock::time_point now) {
  if (!heard_) {
    if (!AloneLocked(now)) return SyncState::kStarting;
    if (had_history_ && !said_alone_) {
      said_alone_ = true;
      Log("p2p")->info(
          "no peer told its height in {} ms; going on as the shard's first "
          "node (a peer's height later still makes this node catch up)",
          Ms(options_.alone_grace));
    }
    return SyncState::kCaughtUp;
  }
  // Every peer's height expired (the peers are gone): nothing to be
  // behind of.
  const int64_t gap = target < 0 ? 0 : target - local;
  if (!behind_ && gap > EnterBehindLocked()) {
    behind_ = true;
    behind_since_ = now;
    behind_from_ = local;
    next_from_ = local + 1;
    outstanding_.reset();
    Log("p2p")->info(
        "{} numbers below its peers (at #{}, this node at #{}); fetching "
        "the blocks by height",
        gap, target, local);
  } else if (behind_ && gap <= options_.near_numbers) {
    behind_ = false;
    // The peers' tips at once: the last ranges may have left blocks of
    // the top numbers out (cut by a stream budget, or not yet made when
    // asked), and the tips' parents lead to them.
    tips_due_ = true;
    outstanding_.reset();
    const double seconds =
        std::chrono::duration<double>(now - behind_since_).count();
    ++counters_.catch_ups;
    counters_.caught_up_numbers +=
        static_cast<uint64_t>(std::max<int64_t>(0, local - behind_from_));
    counters_.last_catch_up_seconds = seconds;
    Log("p2p")->info(
        "caught up with its peers: #{} to #{} in {:.1f} s ({} ranges asked, "
        "{} timed out)",
        behind_from_, local, seconds, counters_.ranges_asked,
        counters_.range_timeouts);
  }
  if (!behind_) synced_once_ = true;
  return behind_ ? SyncState::kBehind : SyncState::kCaughtUp;
}

bool ChainSync::AloneLocked(Clock::time_point now) const {
  return !options_.has_bootstrap &&
         (!had_history_ || now - created_ >= options_.alone_grace);
}

int64_t ChainSync::EnterBehindLocked() const {
  return synced_once_ ? options_.behind_numbers : options_.near_numbers;
}

void ChainSync::RequestLocked(p2p::Transport* t, int64_t local, int64_t target,
                              Clock::time_point now) {
  if (outstanding_.has_value()) {
    if (now - outstanding_->asked < options_.request_timeout) return;
    ++counters_.range_timeouts;
    slow_peer_ = outstanding_->peer;
    peer_log_.Info(
        "range from #{} asked of {}: no end in {} ms; asking another",
        outstanding_->from, HexEncode(outstanding_->peer),
        Ms(options_.request_timeout));
    next_from_ = std::min(next_from_, outstanding_->from);
    outstanding_.reset();
  }
  if (next_from_ > local + 1 && now - local_moved_ >= options_.stall_timeout) {
    // What was asked did not all arrive (a stream lost with its peer):
    // from the highest stored block again.
    peer_log_.Info(
        "no block stored in {} ms while behind; asking again "
        "from #{}",
        Ms(options_.stall_timeout), local + 1);
    next_from_ = local + 1;
    local_moved_ = now;
  }
  const int64_t from = std::max(next_from_, local + 1);
  if (from > target || from > local + options_.ahead) return;
  // The peers whose height reaches `from`, the slow one last; rotated so
  // that the requests spread.
  std::vector<const Bytes*> fast;
  const Bytes* slow = nullptr;
  for (const auto& [peer, h] : heights_) {
    // A peer whose floor is above `from` deleted the blocks asked for.
    if (h.max_number < from || h.floor > from) continue;
    if (peer == slow_peer_) {
      slow = &peer;
    } else {
      fast.push_back(&peer);
    }
  }
  const Bytes* pick =
      fast.empty() ? slow : fast[counters_.ranges_asked % fast.size()];
  if (pick == nullptr) return;
  sync::BlockRangeRequest req;
  req.set_from_number(from);
  req.set_numbers(options_.window);
  if (!t->Send(*pick, packet::kBlockRangeRequest, req.SerializeAsString())
           .ok()) {
    return;  // its queue is full or it left: the next tick tries again
  }
  outstanding_ = Outstanding{*pick, from, now};
  ++counters_.ranges_asked;
}

void ChainSync::OnConnected(const p2p::PeerNode& peer) {
  p2p::Transport* t = CurrentTransport();
  if (t == nullptr) return;
  (void)t->Send(peer.id, packet::kChainHeightRequest,
                sync::ChainHeightRequest().SerializeAsString());
}

void ChainSync::Malformed(const p2p::PeerNode& from, std::string_view what) {
  p2p::Transport* t = nullptr;
  {
    MutexLock lock(&mu_);
    ++counters_.malformed;
    t = transport_;
  }
  if (t != nullptr) t->Punish(from.id, what);
}

void ChainSync::OnPacket(const p2p::PeerNode& from, std::string_view type_id,
                         const std::string& content) {
  if (type_id == packet::kChainHeightRequest) {
    sync::ChainHeightRequest req;
    if (!req.ParseFromString(content)) return Malformed(from, type_id);
    return SendHeight(from);
  }
  if (type_id == packet::kChainHeight) {
    sync::ChainHeight msg;
    // A floor is below the last finalized block, so never above the top.
    if (!msg.ParseFromString(content) || msg.max_number() < 0 ||
        msg.floor() < 0 || msg.floor() > msg.max_number()) {
      return Malformed(from, type_id);
    }
    PeerHeight told{.max_number = msg.max_number(),
                    .floor = msg.floor(),
                    .finalized_number = msg.finalized_number()};
    if (msg.finalized_hash().size() == told.finalized_hash.size()) {
      std::copy(msg.finalized_hash().begin(), msg.finalized_hash().end(),
                told.finalized_hash.begin());
    } else if (!msg.finalized_hash().empty()) {
      return Malformed(from, type_id);
    } else {
      told.finalized_number = -1;  // a node from before the hash was told
    }
    return OnHeight(from, told);
  }
  if (type_id == packet::kBlockRangeRequest) {
    sync::BlockRangeRequest req;
    if (!req.ParseFromString(content) || req.from_number() < 0) {
      return Malformed(from, type_id);
    }
    return ServeRange(from, req.from_number(), req.numbers());
  }
  if (type_id == packet::kBlockRangeEnd) {
    sync::BlockRangeEnd msg;
    if (!msg.ParseFromString(content) || msg.from_number() < 0 ||
        msg.next_number() < msg.from_number() ||
        msg.next_number() - msg.from_number() > kMaxRangeNumbers ||
        msg.max_number() < 0) {
      return Malformed(from, type_id);
    }
    return OnRangeEnd(from, msg.from_number(), msg.next_number(),
                      msg.max_number());
  }
}

void ChainSync::SendHeight(const p2p::PeerNode& to) {
  p2p::Transport* t = CurrentTransport();
  if (t == nullptr) return;
  sync::ChainHeight msg;
  msg.set_max_number(std::max<int64_t>(0, dag_->MaxHeight()));
  msg.set_floor(std::max<int64_t>(0, dag_->floor().value_or(0)));
  if (std::optional<Hash32> lfb = dag_->LastFinalized()) {
    absl::StatusOr<std::shared_ptr<const casper::dag::BlockMeta>> meta =
        dag_->Meta(*lfb);
    if (meta.ok()) {
      msg.set_finalized_number((*meta)->block_number);
      msg.set_finalized_hash(std::string(lfb->begin(), lfb->end()));
    }
  }
  (void)t->Send(to.id, packet::kChainHeight, msg.SerializeAsString());
}

void ChainSync::OnHeight(const p2p::PeerNode& from, const PeerHeight& told) {
  // Asked before taking mu_: the transport has locks of its own.
  bool counts = true;
  if (options_.bonded_only) {
    p2p::Transport* t = CurrentTransport();
    counts = t != nullptr && t->BondedValidatorOf(from.id).has_value();
  }
  MutexLock lock(&mu_);
  if (!counts) {
    ++counters_.heights_ignored;
    return;
  }
  ++counters_.heights_heard;
  auto it = heights_.find(from.id);
  if (it == heights_.end()) {
    if (heights_.size() >= kMaxPeerHeights) return;
    it = heights_.emplace(from.id, PeerHeight{}).first;
  }
  it->second = told;
  it->second.heard = Clock::now();
  heard_ = true;
}

std::vector<PeerFinalized> ChainSync::PeersFinalized() const {
  MutexLock lock(&mu_);
  const Clock::time_point now = Clock::now();
  std::vector<PeerFinalized> out;
  for (const auto& [peer, h] : heights_) {
    if (now - h.heard > options_.height_ttl || h.finalized_number < 0) {
      continue;
    }
    out.push_back(PeerFinalized{peer, h.finalized_number, h.finalized_hash});
  }
  return out;
}

void ChainSync::Hold(bool held) {
  MutexLock lock(&mu_);
  if (held_ && !held) {
    // Fetching starts again from what the DAG holds now.
    behind_ = false;
    outstanding_.reset();
  }
  held_ = held;
}

void ChainSync::SetRangeEndListener(RangeEndListener listener) {
  range_end_listener_ = std::move(listener);
}

void ChainSync::OnRangeEnd(const p2p::PeerNode& from, int64_t from_number,
                           int64_t next_number, int64_t max_number) {
  if (range_end_listener_) range_end_listener_(from, from_number, next_number);
  MutexLock lock(&mu_);
  // The peer's height, as fresh as its answer (only a peer whose height
  // counted has an entry).
  if (auto it = heights_.find(from.id); it != heights_.end()) {
    it->second.max_number = max_number;
    it->second.heard = Clock::now();
  }
  if (!outstanding_.has_value() || outstanding_->peer != from.id ||
      outstanding_->from != from_number) {
    return;  // late, or not asked
  }
  if (next_number > from_number) {
    next_from_ = std::max(next_from_, next_number);
  } else {
    slow_peer_ = from.id;  // busy, or nothing there: another peer next
  }
  outstanding_.reset();
}

void ChainSync::ServeRange(const p2p::PeerNode& to, int64_t from,
                           uint32_t numbers) {
  p2p::Transport* t = CurrentTransport();
  if (t == nullptr) return;
  numbers = std::clamp<uint32_t>(numbers, 1, kMaxRangeNumbers);
  const int64_t top = dag_->MaxHeight();
  // Past the top (any `from` a peer sends) nothing is read; below it the
  // sum cannot overflow.
  const int64_t stop = from > top ? from : std::min(top + 1, from + numbers);
  int64_t n = from;
  uint32_t blocks = 0;
  bool cut = false;
  // Whole numbers only, at least one: a number is sent again from its
  // start when the budget cuts it.
  for (; n < stop && !cut; ++n) {
    if (blocks >= options_.max_range_blocks) break;
    for (const Hash32& h : dag_->AtHeight(n)) {
      absl::StatusOr<std::optional<Bytes>> stored = dag_->GetBlockBytes(h);
      if (!stored.ok() || !stored->has_value()) continue;
      const Bytes& encoded = **stored;
      absl::StatusOr<p2p::Transport::Permit> permit =
          t->ReserveStream(to.id, p2p::MaxWireBytes(encoded.size()));
      if (!permit.ok()) {
        cut = true;
        break;
      }
      absl::StatusOr<p2p::Blob> blob = p2p::MakeBlob(
          packet::kBlockMessage, std::string(encoded.begin(), encoded.end()));
      if (!blob.ok()) continue;
      if (!t->Stream(to.id, *std::move(permit), *blob).ok()) {
        cut = true;
        break;
      }
      ++blocks;
    }
    if (cut) break;
  }
  {
    MutexLock lock(&mu_);
    ++counters_.ranges_served;
    counters_.range_blocks_served += blocks;
    if (cut) ++counters_.serve_busy;
  }
  sync::BlockRangeEnd end;
  end.set_from_number(from);
  end.set_next_number(std::max(n, from));
  end.set_blocks(blocks);
  end.set_max_number(std::max<int64_t>(0, top));
  (void)t->Send(to.id, packet::kBlockRangeEnd, end.SerializeAsString());
}

}  // namespace rnode::node
