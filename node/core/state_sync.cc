// Fetching a state trie from peers and serving it to them.
#include "node/core/state_sync.h"

#include <algorithm>
#include <utility>

#include "node/p2p/chunker.h"
#include "rnode_sync.pb.h"
#include "util/logging.h"

namespace rnode::node {
namespace {

std::optional<Hash32> HashFrom(const std::string& bytes) {
  if (bytes.size() != 32) return std::nullopt;
  Hash32 h;
  std::copy(bytes.begin(), bytes.end(), h.begin());
  return h;
}

std::string AsString(ByteView b) { return std::string(b.begin(), b.end()); }

Bytes AsBytesOf(const std::string& s) { return Bytes(s.begin(), s.end()); }

}  // namespace

TrieServer::TrieServer(rspace::KeyValueStore* store,
                       rspace::HistoryColumns columns,
                       std::function<bool(const Hash32&)> serves_root,
                       size_t max_answer_bytes)
    : store_(store),
      columns_(columns),
      serves_root_(std::move(serves_root)),
      max_answer_bytes_(std::min(max_answer_bytes, kMaxTrieAnswerBytes)) {}

TrieServerCounters TrieServer::counters() const {
  MutexLock lock(&mu_);
  return counters_;
}

void TrieServer::Serve(p2p::Transport& t, const p2p::PeerNode& from,
                       const std::string& content) {
  sync::TrieNodesRequest request;
  std::vector<Hash32> hashes;
  std::optional<Hash32> root;
  bool ok =
      request.ParseFromString(content) &&
      request.hashes_size() <= static_cast<int>(kMaxTrieNodesPerRequest) &&
      (root = HashFrom(request.root())).has_value();
  for (int i = 0; ok && i < request.hashes_size(); ++i) {
    std::optional<Hash32> h = HashFrom(request.hashes(i));
    ok = h.has_value();
    if (ok) hashes.push_back(*h);
  }
  if (!ok) {
    {
      MutexLock lock(&mu_);
      ++counters_.malformed;
    }
    t.Punish(from.id, "malformed TrieNodesRequest");
    return;
  }
  sync::TrieNodes answer;
  answer.set_id(request.id());
  answer.set_root(request.root());
  auto refuse = [&] {
    {
      MutexLock lock(&mu_);
      ++counters_.refused;
    }
    answer.clear_nodes();
    answer.clear_missing();
    answer.set_refused(true);
    (void)t.Send(from.id, packet::kTrieNodes, answer.SerializeAsString());
  };
  {
    MutexLock lock(&mu_);
    ++counters_.requests;
  }
  if (!serves_root_(*root)) return refuse();
  absl::StatusOr<rspace::TrieExport> exported =
      rspace::ExportTrieNodes(*store_, columns_, hashes, max_answer_bytes_);
  if (!exported.ok()) {
    log_.Warn("serving trie nodes of {}: {}", HexEncode(*root),
              exported.status().ToString());
    return refuse();
  }
  for (const Hash32& h : exported->missing) answer.add_missing(AsString(h));
  uint64_t bytes = 0;
  for (const rspace::TrieSyncItem& item : exported->items) {
    sync::TrieNodeItem* out = answer.add_nodes();
    out->set_hash(AsString(item.hash));
    out->set_node(AsString(item.node));
    for (const Bytes& v : item.values) out->add_values(AsString(v));
    bytes += item.size();
  }
  if (corrupt_.load() && answer.nodes_size() > 0) {
    // The fault: the first node altered (one answer in two) or cut short.
    std::string* node = answer.mutable_nodes(0)->mutable_node();
    if (corrupted_answers_.fetch_add(1) % 2 == 0 && !node->empty()) {
      (*node)[node->size() / 2] ^= 0x5a;
    } else {
      node->resize(node->size() / 2);
    }
  }
  std::string encoded = answer.SerializeAsString();
  if (exported->items.empty()) {
    (void)t.Send(from.id, packet::kTrieNodes, std::move(encoded));
    return;
  }
  absl::StatusOr<p2p::Transport::Permit> permit =
      t.ReserveStream(from.id, p2p::MaxWireBytes(encoded.size()));
  if (!permit.ok()) return refuse();
  absl::StatusOr<p2p::Blob> blob =
      p2p::MakeBlob(packet::kTrieNodes, std::move(encoded));
  if (!blob.ok() || !t.Stream(from.id, *std::move(permit), *blob).ok()) {
    return refuse();
  }
  MutexLock lock(&mu_);
  counters_.nodes_served += exported->items.size();
  counters_.bytes_served += bytes;
}

StateFetcher::StateFetcher(rspace::KeyValueStore* store,
                           rspace::HistoryColumns columns,
                           StateFetchOptions options)
    : store_(store), columns_(columns), options_(options) {}

StateFetcher::~StateFetcher() { Stop(); }

absl::Status StateFetcher::Start(p2p::Transport* t, std::vector<Hash32> roots,
                                 std::vector<Bytes> peers) {
  if (thread_.joinable() || importer_ != nullptr) {
    return absl::FailedPreconditionError("the state fetch already started");
  }
  absl::StatusOr<std::unique_ptr<rspace::TrieImporter>> importer =
      rspace::TrieImporter::Start(store_, columns_, roots, options_.complete);
  if (!importer.ok()) return importer.status();
  importer_ = *std::move(importer);
  {
    MutexLock lock(&mu_);
    transport_ = t;
    root_ = roots.front();
    for (Bytes& p : peers) peers_.emplace(std::move(p), PeerState{});
    progress_.found_stored = importer_->found_stored();
    progress_.queued = importer_->queued();
  }
  thread_ = std::thread([this] { Loop(); });
  return absl::OkStatus();
}

void StateFetcher::Stop() {
  stop_.Stop();
  if (thread_.joinable()) thread_.join();
}

void StateFetcher::AddPeer(const Bytes& peer) {
  MutexLock lock(&mu_);
  peers_.emplace(peer, PeerState{});
}

StateFetchProgress StateFetcher::Progress() const {
  MutexLock lock(&mu_);
  return progress_;
}

void StateFetcher::OnAnswer(const p2p::PeerNode& from,
                            const std::string& content) {
  // Only the id is read here (the dispatcher's thread): the rest is parsed
  // and checked on the fetcher's.
  sync::TrieNodes head;
  uint64_t id = 0;
  if (head.ParsePartialFromString(content)) id = head.id();
  MutexLock lock(&mu_);
  auto it = requests_.find(id);
  const bool queued_already =
      std::any_of(answers_.begin(), answers_.end(),
                  [&](const Answer& a) { return a.id == id; });
  if (it == requests_.end() || it->second.peer != from.id || queued_already) {
    ++progress_.unmatched;
    return;
  }
  answers_.push_back({from.id, id, content});
}

void StateFetcher::Loop() {
  while (!stop_.WaitFor(options_.tick)) {
    Round(Clock::now());
    MutexLock lock(&mu_);
    if (progress_.done || !progress_.error.empty()) return;
  }
}

void StateFetcher::Round(Clock::time_point now) {
  std::deque<Answer> answers;
  {
    MutexLock lock(&mu_);
    answers.swap(answers_);
  }
  for (const Answer& a : answers) Handle(a, now);
  // Timeouts: the hashes go back to be asked of another peer.
  std::vector<Hash32> timed_out;
  {
    MutexLock lock(&mu_);
    for (auto it = requests_.begin(); it != requests_.end();) {
      if (now - it->second.sent < options_.request_timeout) {
        ++it;
        continue;
      }
      ++progress_.timeouts;
      if (auto p = peers_.find(it->second.peer); p != peers_.end()) {
        p->second.in_flight -= std::min<size_t>(p->second.in_flight, 1);
      }
      Backoff(it->second.peer, now);
      timed_out.insert(timed_out.end(), it->second.hashes.begin(),
                       it->second.hashes.end());
      it = requests_.erase(it);
    }
  }
  importer_->GiveBack(timed_out);
  if (importer_->done()) return Finish();
  // New requests while there is room.
  for (;;) {
    p2p::Transport* t = nullptr;
    std::optional<Bytes> peer;
    uint64_t id = 0;
    {
      MutexLock lock(&mu_);
      if (requests_.size() >= options_.max_requests) break;
      peer = PickPeerLocked(now);
      if (!peer.has_value()) break;
      t = transport_;
      id = next_id_++;
    }
    std::vector<Hash32> hashes = importer_->Next(
        std::min(options_.hashes_per_request, kMaxTrieNodesPerRequest));
    if (hashes.empty()) break;
    sync::TrieNodesRequest request;
    Hash32 root;
    {
      MutexLock lock(&mu_);
      root = root_;
    }
    request.set_root(AsString(root));
    request.set_id(id);
    for (const Hash32& h : hashes) request.add_hashes(AsString(h));
    if (!t->Send(*peer, packet::kTrieNodesRequest, request.SerializeAsString())
             .ok()) {
      importer_->GiveBack(hashes);
      MutexLock lock(&mu_);
      Backoff(*peer, now);
      continue;
    }
    MutexLock lock(&mu_);
    ++progress_.requests;
    if (auto p = peers_.find(*peer); p != peers_.end()) {
      ++p->second.in_flight;
      p->second.last_asked = id;
    }
    requests_.emplace(id, Request{*peer, std::move(hashes), now});
  }
  MutexLock lock(&mu_);
  progress_.queued = importer_->queued();
  progress_.in_flight = importer_->in_flight();
}

void StateFetcher::Handle(const Answer& answer, Clock::time_point now) {
  Request request;
  p2p::Transport* t = nullptr;
  {
    MutexLock lock(&mu_);
    auto it = requests_.find(answer.id);
    if (it == requests_.end()) return;  // timed out meanwhile
    request = std::move(it->second);
    requests_.erase(it);
    if (auto p = peers_.find(request.peer); p != peers_.end()) {
      p->second.in_flight -= std::min<size_t>(p->second.in_flight, 1);
    }
    t = transport_;
  }
  sync::TrieNodes message;
  std::vector<rspace::TrieSyncItem> items;
  std::string fault;
  if (!message.ParseFromString(answer.content)) {
    fault = "undecodable TrieNodes";
  } else {
    items.reserve(message.nodes_size());
    for (const sync::TrieNodeItem& n : message.nodes()) {
      std::optional<Hash32> h = HashFrom(n.hash());
      if (!h.has_value()) {
        fault = "a TrieNodes item without a hash";
        break;
      }
      rspace::TrieSyncItem item;
      item.hash = *h;
      item.node = AsBytesOf(n.node());
      for (const std::string& v : n.values())
        item.values.push_back(AsBytesOf(v));
      items.push_back(std::move(item));
    }
  }
  // Whatever the answer, every asked hash not stored below is asked again.
  absl::StatusOr<rspace::TrieImporter::Accepted> accepted =
      fault.empty() ? importer_->Accept(items)
                    : rspace::TrieImporter::Accepted{};
  if (!accepted.ok()) {
    MutexLock lock(&mu_);
    progress_.error = "storing trie nodes: " + accepted.status().ToString();
    return;
  }
  for (const auto& r : accepted->rejected) {
    if (r.asked && fault.empty()) fault = r.reason;
  }
  importer_->GiveBack(request.hashes);  // those not stored
  if (!fault.empty() && t != nullptr) t->Punish(request.peer, fault);
  MutexLock lock(&mu_);
  progress_.fetched_nodes = importer_->fetched_nodes();
  progress_.fetched_bytes = importer_->fetched_bytes();
  if (!fault.empty()) {
    ++progress_.bad_answers;
    peers_.erase(request.peer);
    return;
  }
  if (message.refused()) ++progress_.refusals;
  if (message.refused() || message.missing_size() > 0 || accepted->nodes == 0) {
    Backoff(request.peer, now);
  }
}

void StateFetcher::Finish() {
  if (options_.complete != nullptr) {
    importer_->MarkComplete(*options_.complete, options_.max_complete);
  }
  absl::Status adopted;
  Hash32 failed{};
  for (const Hash32& root : importer_->roots()) {
    adopted = options_.complete != nullptr
                  ? rspace::RecordTrieRoot(*store_, columns_, root)
                  : rspace::AdoptTrieRoot(*store_, columns_, root);
    if (!adopted.ok()) {
      failed = root;
      break;
    }
  }
  MutexLock lock(&mu_);
  progress_.queued = 0;
  progress_.in_flight = 0;
  if (adopted.ok()) {
    progress_.done = true;
  } else {
    progress_.error =
        "adopting root " + HexEncode(failed) + ": " + adopted.ToString();
  }
}

std::optional<Bytes> StateFetcher::PickPeerLocked(Clock::time_point now) {
  // The peer with the fewest requests in flight, not backed off, then
  // any with room (a backed-off peer is better than none); of equals, the
  // one asked longest ago (each peer gets its turn, also one request at a
  // time).
  const Bytes* best = nullptr;
  const Bytes* fallback = nullptr;
  std::pair<size_t, uint64_t> best_load{SIZE_MAX, 0};
  std::pair<size_t, uint64_t> fallback_load{SIZE_MAX, 0};
  for (const auto& [id, state] : peers_) {
    if (state.in_flight >= options_.max_requests_per_peer) continue;
    const std::pair<size_t, uint64_t> load{state.in_flight, state.last_asked};
    if (state.backoff_until <= now) {
      if (load < best_load) {
        best = &id;
        best_load = load;
      }
    } else if (load < fallback_load) {
      fallback = &id;
      fallback_load = load;
    }
  }
  if (best != nullptr) return *best;
  // A backed-off peer only when nothing is in flight: else wait.
  if (fallback != nullptr && requests_.empty()) return *fallback;
  return std::nullopt;
}

void StateFetcher::Backoff(const Bytes& peer, Clock::time_point now) {
  if (auto it = peers_.find(peer); it != peers_.end()) {
    it->second.backoff_until = now + options_.peer_backoff;
  }
}

}  // namespace rnode::node
