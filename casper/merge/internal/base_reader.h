// Base channel states a merge reads from history, noted in sorted batches
// and read with one trie walk per batch (docs/merge.md §8).
#ifndef RNODE_CASPER_MERGE_INTERNAL_BASE_READER_H_
#define RNODE_CASPER_MERGE_INTERNAL_BASE_READER_H_

#include <algorithm>
#include <cstdint>
#include <deque>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "casper/merge/internal/hash_key.h"
#include "casper/merge/internal/key_sort.h"
#include "rspace/channel_codec.h"
#include "rspace/history/history.h"
#include "rspace/types.h"
#include "util/bytes.h"

namespace rnode::casper::merge::internal {

struct BaseLeaf {
  rspace::ChannelState state;
  std::optional<Bytes> blob;  // nullopt: no leaf in the base.
  bool loaded = false;        // Read from history (else only noted).
};

// Orders records by their key only.
inline bool KeyWordsLess(const KeyRecord& x, const KeyRecord& y) {
  for (int i = 0; i < 4; ++i) {
    if (x.w[i] != y.w[i]) return x.w[i] < y.w[i];
  }
  return false;
}

// Channels are noted in batches of sorted key records (no hash table: the
// batches are sorted anyway for the trie walk), or one at a time; each
// distinct channel gets one leaf index for the reader's life, and noted
// leaves are read by ReadPending. Not thread-safe; ReadPending may run on
// another thread while the owner leaves the reader alone.
class BaseReader {
 public:
  // A null `factory` builds terms with Term::Make and datum values from
  // their stored hashes (no hashing: the merger only compares and
  // re-encodes base data).
  BaseReader(rspace::History& history, const Hash32& root,
             rspace::TermFactory factory);

  // Notes the channels of `records` (sorted here unless `sorted`; items and
  // tags are the caller's) and calls set(record, leaf index) for each, in
  // key order. New channels are read by ReadPending.
  template <typename Fn>
  void Resolve(std::vector<KeyRecord>& records, bool sorted, Fn&& set);

  // Notes one channel (read by ReadPending if new); returns its leaf index.
  uint32_t Want(const Hash32& channel);

  // Number of noted leaves not read yet.
  size_t pending() const { return pending_.size(); }

  // The leaf of a noted channel. REQUIRES: ReadPending ran after the note.
  const BaseLeaf& At(uint32_t index) const { return leaves_[index]; }

  // Reads every noted leaf not read yet with one trie walk over the sorted
  // channels. Touches only the pending leaves.
  absl::Status ReadPending();

  // The leaf of `channel`, read now if needed.
  absl::StatusOr<const BaseLeaf*> Get(const Hash32& channel);

  size_t reads() const { return leaves_.size(); }
  int64_t read_ns() const { return read_ns_; }

 private:
  uint32_t NewLeaf() {
    leaves_.emplace_back();
    return static_cast<uint32_t>(leaves_.size() - 1);
  }

  rspace::History& history_;
  const Hash32 root_;
  const rspace::ValueHashes value_hashes_;
  const rspace::TermFactory factory_;
  // Channels noted by Resolve, by key; item = leaf index.
  std::vector<KeyRecord> known_;
  // Channels noted by Want and absent from known_ then.
  Hash32Map<uint32_t> singles_;
  std::deque<BaseLeaf> leaves_;  // Stable addresses.
  // Noted, not read yet; item = leaf index.
  std::vector<KeyRecord> pending_;
  int64_t read_ns_ = 0;
};

template <typename Fn>
void BaseReader::Resolve(std::vector<KeyRecord>& records, bool sorted,
                         Fn&& set) {
  if (!sorted) SortKeyRecords(records);
  thread_local std::vector<KeyRecord> added;
  added.clear();
  size_t k = 0;  // Position in known_.
  for (size_t i = 0; i < records.size();) {
    const KeyRecord& first = records[i];
    while (k < known_.size() && KeyWordsLess(known_[k], first)) ++k;
    uint32_t leaf = UINT32_MAX;
    if (k < known_.size() && SameKey(known_[k], first)) {
      leaf = known_[k].item;
    } else if (!singles_.empty()) {
      auto it = singles_.find(KeyOf(first));
      if (it != singles_.end()) leaf = it->second;
    }
    if (leaf == UINT32_MAX) {
      leaf = NewLeaf();
      KeyRecord r = first;
      r.item = leaf;
      r.tag = 0;
      added.push_back(r);
      pending_.push_back(r);
    }
    for (; i < records.size() && SameKey(records[i], first); ++i)
      set(records[i], leaf);
  }
  if (added.empty()) return;
  if (known_.empty()) {
    known_.swap(added);
    return;
  }
  std::vector<KeyRecord> merged(known_.size() + added.size());
  std::merge(known_.begin(), known_.end(), added.begin(), added.end(),
             merged.begin(), KeyWordsLess);
  known_.swap(merged);
  TrimScratch(added);
}

}  // namespace rnode::casper::merge::internal

#endif  // RNODE_CASPER_MERGE_INTERNAL_BASE_READER_H_
