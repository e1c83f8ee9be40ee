// Fetching a state trie from peers and serving it to them (issue 45's state
// sync; docs/p2p.md "Joining from the last finalized state"). The trie
// work is rspace's (rspace/history/trie_sync.h): TrieServer answers a
// peer's requests for nodes by hash from this node's store, within the
// transport's stream budget; StateFetcher drives a TrieImporter from several
// peers at once, with a bounded number of requests in flight, a timeout after
// which another peer is asked, and punishment of a peer whose answer does not
// check (the hashes go to another peer).
//
// Thread-safe: the transport's dispatchers call TrieServer::Serve and
// StateFetcher::OnAnswer; the fetcher checks and stores answers on its own
// thread.
#ifndef RNODE_NODE_CORE_STATE_SYNC_H_
#define RNODE_NODE_CORE_STATE_SYNC_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "node/p2p/transport.h"
#include "rspace/history/history.h"
#include "rspace/history/trie_sync.h"
#include "rspace/storage/kv_store.h"
#include "util/bytes.h"
#include "util/logging.h"
#include "util/mutex.h"
#include "util/stop_signal.h"

namespace rnode::node {

namespace packet {
inline constexpr char kTrieNodesRequest[] = "TrieNodesRequest";
inline constexpr char kTrieNodes[] = "TrieNodes";
}  // namespace packet

// The most hashes one request may name, and the most bytes of nodes one
// answer carries: a request is at most about 35 KiB, an answer about 1 MiB
// (a few hundred nodes of a state's lower levels).
inline constexpr size_t kMaxTrieNodesPerRequest = 1024;
inline constexpr size_t kMaxTrieAnswerBytes = size_t{1} << 20;

struct TrieServerCounters {
  uint64_t requests = 0;
  uint64_t nodes_served = 0;
  uint64_t bytes_served = 0;
  // Refused: a root not served, or the stream budget to the peer spent.
  uint64_t refused = 0;
  uint64_t malformed = 0;
};

class TrieServer {
 public:
  // `store` (not owned) holds the history in `columns`; `serves_root` says
  // whether a root is one this node answers for (the post-states of its
  // last few finalized blocks: a joiner asks for those).
  TrieServer(rspace::KeyValueStore* store, rspace::HistoryColumns columns,
             std::function<bool(const Hash32&)> serves_root,
             size_t max_answer_bytes = kMaxTrieAnswerBytes);

  // Answers a TrieNodesRequest (`content`) from `from` on `t`: the nodes
  // it stores, streamed under a stream permit, or a small refusal.
  // Undecodable content or a request of more than kMaxTrieNodesPerRequest
  // hashes is punished.
  void Serve(p2p::Transport& t, const p2p::PeerNode& from,
             const std::string& content);

  TrieServerCounters counters() const;

  // The fault campaign's byzantine server (Node::SetCorruptTrie): while
  // set, the first node of each answer is altered or cut short.
  void SetCorrupt(bool corrupt) { corrupt_.store(corrupt); }
  bool corrupt() const { return corrupt_.load(); }

 private:
  rspace::KeyValueStore* const store_;
  const rspace::HistoryColumns columns_;
  const std::function<bool(const Hash32&)> serves_root_;
  const size_t max_answer_bytes_;
  RateLimitedLog log_{"p2p", kPeerLogLinesPerSecond};
  std::atomic<bool> corrupt_{false};
  std::atomic<uint64_t> corrupted_answers_{0};
  mutable Mutex mu_;
  TrieServerCounters counters_ ABSL_GUARDED_BY(mu_);
};

struct StateFetchOptions {
  size_t hashes_per_request = 256;
  // Requests in flight, in all and to one peer.
  size_t max_requests = 8;
  size_t max_requests_per_peer = 2;
  // An unanswered request is given up (its hashes asked of another peer).
  std::chrono::milliseconds request_timeout{5000};
  // A peer that refused, lacked nodes, or timed out is not asked again for
  // this long (unless no other peer is left).
  std::chrono::milliseconds peer_backoff{2000};
  std::chrono::milliseconds tick{20};
  // Nodes heading complete subtrees, shared by fetches one after another
  // (not owned; null: none). With it, the fetch walks past them, adds what
  // it found or stored once done (up to max_complete entries) and records
  // the roots without walking the tries again (rspace::RecordTrieRoot);
  // without it, each root is adopted after a walk of its whole trie
  // (rspace::AdoptTrieRoot).
  rspace::CompleteNodes* complete = nullptr;
  size_t max_complete = size_t{1} << 20;
};

struct StateFetchProgress {
  bool done = false;          // the root is stored and adopted
  std::string error;          // a local fault that stopped the fetch
  uint64_t found_stored = 0;  // nodes stored before this fetch began
  uint64_t fetched_nodes = 0;
  uint64_t fetched_bytes = 0;
  uint64_t queued = 0;
  uint64_t in_flight = 0;
  uint64_t requests = 0;
  uint64_t timeouts = 0;
  uint64_t refusals = 0;
  // Answers with a node that did not check: their senders were punished.
  uint64_t bad_answers = 0;
  // Answers that matched no request in flight (late, or never asked).
  uint64_t unmatched = 0;
};

class StateFetcher {
 public:
  // `store` (not owned) outlives this; the trie goes into `columns`.
  StateFetcher(rspace::KeyValueStore* store, rspace::HistoryColumns columns,
               StateFetchOptions options = {});
  ~StateFetcher();  // Stop()
  StateFetcher(const StateFetcher&) = delete;
  StateFetcher& operator=(const StateFetcher&) = delete;

  // Starts fetching the tries at `roots` (at least one) together, from
  // `peers` (ids), on `t` (not owned; outlives this until Stop): what the
  // store holds of them is walked, not fetched, and a node the tries share
  // is fetched once. Once every node is stored the roots are adopted
  // (rspace::AdoptTrieRoot, or RecordTrieRoot with options.complete) and
  // Progress says done. Requests name the first root (a peer serves nodes
  // of the roots it holds). Errors: the store's (nothing started);
  // InvalidArgument without a root; FailedPrecondition if already started.
  absl::Status Start(p2p::Transport* t, std::vector<Hash32> roots,
                     std::vector<Bytes> peers);
  absl::Status Start(p2p::Transport* t, const Hash32& root,
                     std::vector<Bytes> peers) {
    return Start(t, std::vector<Hash32>{root}, std::move(peers));
  }
  // Stops and joins the thread. Idempotent.
  void Stop();

  // A peer's TrieNodes packet (either channel). Answers that match no
  // request in flight from that peer are dropped; the others are checked
  // and stored on the fetcher's thread.
  void OnAnswer(const p2p::PeerNode& from, const std::string& content);

  // Adds a peer to ask (a peer that connected later).
  void AddPeer(const Bytes& peer);

  StateFetchProgress Progress() const;

 private:
  using Clock = std::chrono::steady_clock;
  struct Request {
    Bytes peer;
    std::vector<Hash32> hashes;
    Clock::time_point sent{};
  };
  struct Answer {
    Bytes peer;
    uint64_t id = 0;
    std::string content;
  };
  struct PeerState {
    size_t in_flight = 0;
    uint64_t last_asked = 0;  // the id of the last request sent to it
    Clock::time_point backoff_until{};
  };

  void Loop();
  // One round: answers handled, timeouts given back, requests sent.
  void Round(Clock::time_point now);
  void Handle(const Answer& answer, Clock::time_point now);
  void Finish();
  // The peer to ask next, if any has room (backed-off peers last).
  std::optional<Bytes> PickPeerLocked(Clock::time_point now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Backoff(const Bytes& peer, Clock::time_point now)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  rspace::KeyValueStore* const store_;
  const rspace::HistoryColumns columns_;
  const StateFetchOptions options_;
  StopSignal stop_;
  std::thread thread_;
  // Owned by the thread once started (Start sets it before the thread).
  std::unique_ptr<rspace::TrieImporter> importer_;

  mutable Mutex mu_;
  p2p::Transport* transport_ ABSL_GUARDED_BY(mu_) = nullptr;
  // The first root: requests name it.
  Hash32 root_ ABSL_GUARDED_BY(mu_){};
  std::map<Bytes, PeerState> peers_ ABSL_GUARDED_BY(mu_);
  std::map<uint64_t, Request> requests_ ABSL_GUARDED_BY(mu_);
  uint64_t next_id_ ABSL_GUARDED_BY(mu_) = 1;
  // Answers to requests in flight, waiting for the thread: at most one per
  // request.
  std::deque<Answer> answers_ ABSL_GUARDED_BY(mu_);
  StateFetchProgress progress_ ABSL_GUARDED_BY(mu_);
};

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_STATE_SYNC_H_
