// Grouping of (32-byte key, item) records by sorting flat records instead of
// probing a hash table per key: a bucket pass on the key's leading bits
// (keys are hashes, so buckets stay small apart from hot keys) and a
// comparison sort inside each bucket. Sequential memory traffic.
#ifndef RNODE_CASPER_MERGE_INTERNAL_KEY_SORT_H_
#define RNODE_CASPER_MERGE_INTERNAL_KEY_SORT_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "util/bytes.h"

namespace rnode::casper::merge::internal {

// The key is copied in as four big-endian words, so comparing records
// never follows a pointer (hot keys put thousands of equal keys in one
// bucket).
struct KeyRecord {
  uint64_t w[4] = {0, 0, 0, 0};
  uint32_t item = 0;
  uint32_t tag = 0;  // Caller-defined; part of the order.

  static KeyRecord Make(const Hash32& key, uint32_t item, uint32_t tag) {
    KeyRecord r;
    std::memcpy(r.w, key.data(), 32);
    for (uint64_t& x : r.w) x = __builtin_bswap64(x);
    r.item = item;
    r.tag = tag;
    return r;
  }
};

// Make and KeyOf turn the key into big-endian words with memcpy and a byte
// swap, which is right on a little-endian host only.
static_assert(std::endian::native == std::endian::little,
              "KeyRecord assumes a little-endian host");

// The key a record was made from.
inline Hash32 KeyOf(const KeyRecord& r) {
  uint64_t w[4];
  for (int i = 0; i < 4; ++i) w[i] = __builtin_bswap64(r.w[i]);
  Hash32 key;
  std::memcpy(key.data(), w, 32);
  return key;
}

// The first eight bytes of `data` as a big-endian word, zero-padded: a sort
// key whose order agrees with the byte order of `data` where the words
// differ.
inline uint64_t PrefixKey(const uint8_t* data, size_t size) {
  uint64_t w = 0;
  std::memcpy(&w, data, std::min<size_t>(size, 8));
  return __builtin_bswap64(w);
}

inline bool SameKey(const KeyRecord& x, const KeyRecord& y) {
  return ((x.w[0] ^ y.w[0]) | (x.w[1] ^ y.w[1]) | (x.w[2] ^ y.w[2]) |
          (x.w[3] ^ y.w[3])) == 0;
}

// Total order: key bytes, then tag, then item.
inline bool KeyRecordLess(const KeyRecord& x, const KeyRecord& y) {
  for (int i = 0; i < 4; ++i) {
    if (x.w[i] != y.w[i]) return x.w[i] < y.w[i];
  }
  if (x.tag != y.tag) return x.tag < y.tag;
  return x.item < y.item;
}

// Orders records by their key only.
inline bool KeyWordsLess(const KeyRecord& x, const KeyRecord& y) {
  for (int i = 0; i < 4; ++i) {
    if (x.w[i] != y.w[i]) return x.w[i] < y.w[i];
  }
  return false;
}

// Collapses `sorted` (ascending by key) to its distinct keys: appends each
// key once to `keys` with item = its index there and tag 0, and calls
// on_record(record, index) for every record of `sorted`, in order.
template <typename OnRecord>
void DistinctKeys(const std::vector<KeyRecord>& sorted,
                  std::vector<KeyRecord>& keys, OnRecord on_record) {
  for (size_t i = 0; i < sorted.size();) {
    const uint32_t index = static_cast<uint32_t>(keys.size());
    KeyRecord key = sorted[i];
    key.item = index;
    key.tag = 0;
    keys.push_back(key);
    size_t j = i;
    for (; j < sorted.size() && SameKey(sorted[j], sorted[i]); ++j)
      on_record(sorted[j], index);
    i = j;
  }
}

// Below this many records a plain comparison sort is cheaper than a bucket
// pass.
inline constexpr size_t kKeySortBucketMin = 512;
// At most 2^20 buckets (4 MiB of counters): enough for a million keys.
inline constexpr int kKeySortMaxBucketBits = 20;

// Buckets with at most this many ascending runs are merged run by run
// (linear per run) instead of sorted: a hot key's records arrive in item
// order, so its bucket is a few runs (the hot key and the odd other key).
inline constexpr size_t kKeySortMaxMergedRuns = 8;

// Buckets of at most this many records are insertion-sorted in place: keys
// are hashes, so most buckets hold one to three records, and merging runs
// (std::inplace_merge takes a temporary buffer from the heap) or an
// introsort costs more than a few moves there.
inline constexpr ptrdiff_t kKeySortInsertionMax = 16;

template <typename It>
void SortBucket(It first, It last) {
  auto less = [](const KeyRecord& x, const KeyRecord& y) {
    return KeyRecordLess(x, y);
  };
  if (last - first <= kKeySortInsertionMax) {
    for (It it = first + 1; it < last; ++it) {
      if (!less(*it, *(it - 1))) continue;
      KeyRecord r = *it;
      It hole = it;
      do {
        *hole = *(hole - 1);
        --hole;
      } while (hole != first && less(r, *(hole - 1)));
      *hole = r;
    }
    return;
  }
  size_t runs = 1;
  for (It it = first + 1; it != last && runs <= kKeySortMaxMergedRuns; ++it) {
    runs += less(*it, *(it - 1));
  }
  if (runs == 1) return;
  if (runs > kKeySortMaxMergedRuns) {
    std::sort(first, last, less);
    return;
  }
  // [first, sorted_end) is sorted; append the next run and merge.
  It sorted_end = first + 1;
  while (sorted_end != last && !less(*sorted_end, *(sorted_end - 1))) {
    ++sorted_end;
  }
  while (sorted_end != last) {
    It run_end = sorted_end + 1;
    while (run_end != last && !less(*run_end, *(run_end - 1))) ++run_end;
    std::inplace_merge(first, sorted_end, run_end, less);
    sorted_end = run_end;
  }
}

// Scratch vectors kept between merges (in a MergeContext) keep at most this
// much capacity after a merge by default; a larger one (left by an unusually
// large merge) is released, so one big merge does not pin its memory for the
// context's life. 16 MiB of records is about 400,000 keys: several times a
// 10,000-chain merge.
inline constexpr size_t kMaxKeptScratchBytes = size_t{16} << 20;

// Releases `v` if its capacity is above `max_bytes`.
template <typename T>
void TrimScratch(std::vector<T>& v, size_t max_bytes = kMaxKeptScratchBytes) {
  if (v.capacity() * sizeof(T) > max_bytes) std::vector<T>().swap(v);
}

// The scratch space of SortKeyRecords: a record buffer and the bucket
// counters. Owned by the caller (a MergeContext, or a local for one-off
// sorts) so repeated sorts reuse its pages; not thread-safe.
struct KeySortScratch {
  std::vector<KeyRecord> buffer;
  std::vector<uint32_t> start;
  std::vector<uint32_t> fill;

  size_t capacity_bytes() const {
    return buffer.capacity() * sizeof(KeyRecord) +
           (start.capacity() + fill.capacity()) * sizeof(uint32_t);
  }
  // Releases each vector whose capacity is above `max_bytes`.
  void Trim(size_t max_bytes) {
    TrimScratch(buffer, max_bytes);
    TrimScratch(start, max_bytes);
    TrimScratch(fill, max_bytes);
  }
};

// Sorts `records` by KeyRecordLess, with `scratch` as working space (its
// capacity is kept for the next call; see KeySortScratch::Trim).
inline void SortKeyRecords(std::vector<KeyRecord>& records,
                           KeySortScratch& scratch) {
  const size_t n = records.size();
  if (n < kKeySortBucketMin) {
    std::sort(records.begin(), records.end(),
              [](const KeyRecord& x, const KeyRecord& y) {
                return KeyRecordLess(x, y);
              });
    return;
  }
  std::vector<uint32_t>& start = scratch.start;
  std::vector<uint32_t>& fill = scratch.fill;
  const int bits =
      std::min(kKeySortMaxBucketBits, static_cast<int>(std::bit_width(n - 1)));
  const int shift = 64 - bits;
  start.assign((size_t{1} << bits) + 1, 0);
  for (const KeyRecord& r : records) ++start[(r.w[0] >> shift) + 1];
  for (size_t b = 1; b < start.size(); ++b) start[b] += start[b - 1];
  scratch.buffer.resize(n);
  fill.assign(start.begin(), start.end() - 1);
  for (const KeyRecord& r : records)
    scratch.buffer[fill[r.w[0] >> shift]++] = r;
  for (size_t b = 0; b + 1 < start.size(); ++b) {
    if (start[b + 1] - start[b] > 1) {
      SortBucket(scratch.buffer.begin() + start[b],
                 scratch.buffer.begin() + start[b + 1]);
    }
  }
  records.swap(scratch.buffer);
}

// SortKeyRecords with scratch space of its own (freed on return): for
// one-off sorts outside a merge.
inline void SortKeyRecords(std::vector<KeyRecord>& records) {
  KeySortScratch scratch;
  SortKeyRecords(records, scratch);
}

}  // namespace rnode::casper::merge::internal

#endif  // RNODE_CASPER_MERGE_INTERNAL_KEY_SORT_H_
