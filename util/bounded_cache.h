// A thread-safe map with a fixed capacity that evicts its least recently
// used entry: the one cache type for derived values (REV addresses of keys,
// channel terms of names, validators of a state root).
#ifndef RNODE_UTIL_BOUNDED_CACHE_H_
#define RNODE_UTIL_BOUNDED_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <list>
#include <optional>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/hash/hash.h"
#include "util/mutex.h"

namespace rnode {

// Holds at most capacity() entries; a Put into a full cache evicts the entry
// used longest ago (Get and Put are uses). Values are returned by copy, so V
// should be cheap to copy (a shared_ptr, a short string). Thread-safe; every
// call takes one mutex, so keep values derived from costly work only.
template <typename K, typename V, typename Hash = absl::Hash<K>>
class BoundedCache {
 public:
  // `capacity` >= 1 (0 is treated as 1).
  explicit BoundedCache(size_t capacity)
      : capacity_(capacity == 0 ? 1 : capacity) {}
  BoundedCache(const BoundedCache&) = delete;
  BoundedCache& operator=(const BoundedCache&) = delete;

  // The value under `key`, if cached (counted as a hit or a miss).
  std::optional<V> Get(const K& key) {
    MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it == index_.end()) {
      ++misses_;
      return std::nullopt;
    }
    ++hits_;
    order_.splice(order_.begin(), order_, it->second);
    return it->second->second;
  }

  // Stores `value` under `key` unless the key is already cached, and returns
  // the cached value (the earlier one if there was one, so concurrent
  // computations of one key agree on a single result).
  V Put(const K& key, V value) {
    MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it != index_.end()) {
      order_.splice(order_.begin(), order_, it->second);
      return it->second->second;
    }
    if (index_.size() >= capacity_) {
      index_.erase(order_.back().first);
      order_.pop_back();
    }
    order_.emplace_front(key, std::move(value));
    index_.emplace(key, order_.begin());
    return order_.front().second;
  }

  // Calls fn(key, value) for every entry, most recently used first, with
  // the cache locked (fn must not call back into it). Linear: for reports,
  // not hot paths.
  template <typename Fn>
  void ForEach(Fn fn) const {
    MutexLock lock(&mu_);
    for (const auto& [key, value] : order_) fn(key, value);
  }

  void Clear() {
    MutexLock lock(&mu_);
    index_.clear();
    order_.clear();
  }

  size_t capacity() const { return capacity_; }
  size_t size() const {
    MutexLock lock(&mu_);
    return index_.size();
  }
  uint64_t hits() const {
    MutexLock lock(&mu_);
    return hits_;
  }
  uint64_t misses() const {
    MutexLock lock(&mu_);
    return misses_;
  }

 private:
  using Order = std::list<std::pair<K, V>>;

  const size_t capacity_;
  mutable Mutex mu_;
  Order order_ ABSL_GUARDED_BY(mu_);  // most recently used first
  absl::flat_hash_map<K, typename Order::iterator, Hash> index_
      ABSL_GUARDED_BY(mu_);
  uint64_t hits_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t misses_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace rnode

#endif  // RNODE_UTIL_BOUNDED_CACHE_H_
