// The transport's link table and each link's life cycle: made on first
// contact, connected and disconnected, banned, dropped and reaped, and all
// stopped at the end.
#include <algorithm>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "node/p2p/internal/transport_impl.h"
#include "util/host_address.h"
#include "util/logging.h"

namespace rnode::node::p2p {

using Link = internal::Link;

void Transport::Impl::Announce(const std::shared_ptr<Link>& link,
                               bool connected) {
  Event e;
  e.kind = connected ? Event::Kind::kConnected : Event::Kind::kDisconnected;
  e.from = link->node;
  Post(std::move(e), false);
  if (m.peers != nullptr) m.peers->Add(connected ? 1 : -1);
  if (!connected) {
    ++disconnects;
    P2pMetrics::Inc(m.disconnects);
  }
}

bool Transport::Impl::IsBanned(ByteView id) {
  auto it = banned.find(Bytes(id.begin(), id.end()));
  if (it == banned.end()) return false;
  if (Clock::now() >= it->second) {
    banned.erase(it);
    return false;
  }
  return true;
}

bool Transport::Impl::IsHostBanned(const std::string& host) {
  if (host.empty()) return false;
  auto it = banned_hosts.find(host);
  if (it == banned_hosts.end()) return false;
  if (Clock::now() >= it->second) {
    banned_hosts.erase(it);
    return false;
  }
  return true;
}

std::shared_ptr<Link> Transport::Impl::Find(ByteView id) {
  MutexLock lock(&mu);
  auto it = links.find(Bytes(id.begin(), id.end()));
  return it == links.end() ? nullptr : it->second;
}

std::shared_ptr<Link> Transport::Impl::EvictionCandidate() {
  std::shared_ptr<Link> victim;
  for (const auto& [id, link] : links) {
    if (link->reserved.load() || link->persistent) continue;
    if (victim == nullptr ||
        link->last_heard_ns.load() < victim->last_heard_ns.load()) {
      victim = link;
    }
  }
  return victim;
}

std::shared_ptr<Link> Transport::Impl::SilentCandidate() {
  // Three missed heartbeats and a send's timeout: a live peer is heard
  // from (a call, or an answer to one) well within it.
  const int64_t silent_ns =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          options.heartbeat_interval * options.heartbeat_failures +
          options.network_timeout)
          .count();
  const int64_t now = Clock::now().time_since_epoch().count();
  std::shared_ptr<Link> victim = EvictionCandidate();
  if (victim == nullptr || now - victim->last_heard_ns.load() < silent_ns) {
    return nullptr;
  }
  return victim;
}

size_t Transport::Impl::UnreservedLinks() {
  size_t others = 0;
  for (const auto& [id, link] : links) others += link->reserved.load() ? 0 : 1;
  return others;
}

size_t Transport::Impl::UnreservedSlots() const {
  return options.max_peers > options.reserved_validator_slots
             ? options.max_peers - options.reserved_validator_slots
             : 0;
}

std::shared_ptr<Link> Transport::Impl::Ensure(const PeerNode& peer,
                                              bool persistent, bool validator) {
  if (peer.id == self.id) return nullptr;
  std::shared_ptr<Link> evicted;
  {
    MutexLock lock(&mu);
    if (stopped || IsBanned(peer.id) || IsHostBanned(peer.host)) {
      return nullptr;
    }
    auto it = links.find(peer.id);
    if (it != links.end()) return it->second;
    if (validator && links.size() >= options.max_peers) {
      evicted = EvictionCandidate();
    } else if (!validator && (links.size() >= options.max_peers ||
                              UnreservedLinks() >= UnreservedSlots())) {
      // Peers that left (a sybil flood that stopped) keep their links
      // until reconnecting gives up, minutes later: a silent one makes
      // room for a peer that is here.
      evicted = SilentCandidate();
    }
  }
  if (evicted != nullptr) {
    peer_log.Info("peer {} makes room for node {}{}",
                  LogText(FormatPeerAddress(evicted->node)), HexEncode(peer.id),
                  validator ? " (a validator)" : "");
    ++peers_evicted;
    P2pMetrics::Inc(m.peers_evicted);
    Drop(evicted);
  }
  MutexLock lock(&mu);
  if (stopped || IsBanned(peer.id) || IsHostBanned(peer.host)) return nullptr;
  auto it = links.find(peer.id);
  if (it != links.end()) return it->second;
  if (links.size() >= options.max_peers ||
      (!validator && UnreservedLinks() >= UnreservedSlots())) {
    ++peers_refused;
    P2pMetrics::Inc(m.peers_refused);
    return nullptr;
  }
  auto link = std::make_shared<Link>(peer, persistent,
                                     options.outbound_stream_bytes_per_peer);
  link->in_budget =
      std::make_shared<Budget>(options.inbound_stream_bytes_per_peer);
  link->client = internal::OpenClient(peer, options);
  link->reserved = validator;
  link->last_heard_ns = Clock::now().time_since_epoch().count();
  links.emplace(peer.id, link);
  link->control = std::thread([this, link] { ControlLoop(link); });
  link->bulk = std::thread([this, link] { BulkLoop(link); });
  return link;
}

std::shared_ptr<Link> Transport::Impl::Readdress(
    const std::shared_ptr<Link>& link, const PeerNode& sender) {
  if (link->persistent || link->node == sender) return link;
  if (link->readdressed.load() &&
      Clock::now() - link->created < internal::kReaddressInterval) {
    return link;
  }
  {
    MutexLock lock(&link->mu);
    if (link->connected) return link;
  }
  peer_log.Info("peer {} is at {}, not at {} as heard", HexEncode(sender.id),
                LogText(FormatPeerAddress(sender)),
                LogText(FormatPeerAddress(link->node)));
  const bool validator = link->reserved.load();
  Drop(link);
  ++readdressed;
  P2pMetrics::Inc(m.readdressed);
  std::shared_ptr<Link> moved = Ensure(sender, false, validator);
  if (moved != nullptr) moved->readdressed = true;
  return moved;
}

void Transport::Impl::Drop(const std::shared_ptr<Link>& link) {
  bool was_connected = false;
  {
    MutexLock lock(&link->mu);
    if (link->stopping) return;
    link->stopping = true;
    was_connected = link->connected;
    link->connected = false;
    link->cv.SignalAll();
  }
  if (was_connected) Announce(link, false);
  MutexLock lock(&mu);
  auto it = links.find(link->node.id);
  if (it != links.end() && it->second == link) links.erase(it);
  dead.push_back(link);
  reaper_cv.Signal();
}

void Transport::Impl::MarkConnected(const std::shared_ptr<Link>& link) {
  bool newly = false;
  {
    MutexLock lock(&link->mu);
    if (link->stopping) return;
    newly = !link->connected;
    link->connected = true;
    link->last_heard_ns = Clock::now().time_since_epoch().count();
    link->failures = 0;
    link->reconnect_failures = 0;
    link->backoff = std::chrono::milliseconds(0);
    link->cv.SignalAll();
  }
  if (newly) Announce(link, true);
}

void Transport::Impl::SendFailed(const std::shared_ptr<Link>& link) {
  ++send_failures;
  P2pMetrics::Inc(m.send_failures);
  bool disconnected = false;
  {
    MutexLock lock(&link->mu);
    if (!link->connected) return;
    if (++link->failures < options.heartbeat_failures) return;
    link->connected = false;
    disconnected = true;
    link->backoff = options.reconnect_min;
    link->next_attempt = Clock::now() + link->backoff;
    // Queued packets go with the connection (counted).
    const size_t lost = link->packets.size() + link->streams.size();
    link->packets.clear();
    link->streams.clear();
    send_failures += lost;
    P2pMetrics::Inc(m.send_failures, lost);
  }
  if (disconnected) {
    peer_log.Info("peer {} disconnected after failed sends",
                  LogText(FormatPeerAddress(link->node)));
    Announce(link, false);
  }
}

void Transport::Impl::ReaperLoop() {
  for (;;) {
    std::vector<std::shared_ptr<Link>> todo;
    {
      MutexLock lock(&mu);
      while (!stopped && dead.empty()) reaper_cv.Wait(&mu);
      todo.swap(dead);
      if (todo.empty() && stopped) return;
    }
    for (auto& link : todo) {
      if (link->control.joinable()) link->control.join();
      if (link->bulk.joinable()) link->bulk.join();
      // Its queued streams release their permits with it.
    }
  }
}

namespace {

// Adds `key` to `bans` until `until`, keeping at most internal::kMaxBans:
// expired ones go first, then the soonest to expire.
template <typename Key>
void AddBan(std::map<Key, Clock::time_point>& bans, Key key,
            Clock::time_point until) {
  bans[std::move(key)] = until;
  if (bans.size() <= internal::kMaxBans) return;
  const auto now = Clock::now();
  std::erase_if(bans, [now](const auto& b) { return b.second <= now; });
  while (bans.size() > internal::kMaxBans) {
    bans.erase(std::min_element(
        bans.begin(), bans.end(),
        [](const auto& a, const auto& b) { return a.second < b.second; }));
  }
}

}  // namespace

void Transport::Impl::Punish(ByteView id, std::string_view reason,
                             const std::string& host) {
  ++malformed;
  P2pMetrics::Inc(m.malformed);
  std::shared_ptr<Link> link = Find(id);
  std::string from = host;
  if (from.empty() && link != nullptr) {
    MutexLock lock(&link->mu);
    from = link->last_host;
  }
  const bool ban_host =
      !from.empty() && (options.ban_loopback_hosts || !IsLoopbackHost(from));
  peer_log.Warn(
      "peer {}{} refused for {} ms: {}", HexEncode(id),
      ban_host ? absl::StrCat(" and host ", LogText(from)) : std::string(),
      options.ban.count(), LogText(reason));
  {
    MutexLock lock(&mu);
    const auto until = Clock::now() + options.ban;
    AddBan(banned, Bytes(id.begin(), id.end()), until);
    if (ban_host) AddBan(banned_hosts, from, until);
  }
  if (ban_host) {
    ++hosts_banned;
    P2pMetrics::Inc(m.hosts_banned);
  }
  if (link != nullptr) Drop(link);
}

void Transport::Impl::StopAll() {
  {
    MutexLock lock(&mu);
    if (stopped) return;
    stopped = true;
  }
  if (server != nullptr) {
    server->Shutdown(std::chrono::system_clock::now() +
                     std::chrono::milliseconds(500));
    server->Wait();
  }
  std::vector<std::shared_ptr<Link>> all;
  {
    MutexLock lock(&mu);
    for (auto& [id, link] : links) all.push_back(link);
    links.clear();
  }
  // A link Drop() stopped meanwhile is in `dead`: the reaper joins it,
  // so only the links stopped here are joined here.
  std::vector<std::shared_ptr<Link>> mine;
  for (auto& link : all) {
    MutexLock lock(&link->mu);
    if (link->stopping) continue;
    link->stopping = true;
    link->cv.SignalAll();
    mine.push_back(link);
  }
  for (auto& link : mine) {
    if (link->control.joinable()) link->control.join();
    if (link->bulk.joinable()) link->bulk.join();
  }
  {
    MutexLock lock(&mu);
    reaper_cv.SignalAll();
  }
  if (reaper.joinable()) reaper.join();
  {
    MutexLock lock(&queue_mu);
    queue_stopping = true;
    queue_cv.SignalAll();
  }
  if (small_dispatcher.joinable()) small_dispatcher.join();
  if (large_dispatcher.joinable()) large_dispatcher.join();
  MutexLock lock(&queue_mu);
  small.clear();
  large.clear();
}

}  // namespace rnode::node::p2p
