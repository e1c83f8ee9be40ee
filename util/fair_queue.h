// A FIFO per sender, served in turn: what a dispatcher uses so that one
// sender with a long backlog cannot hold back the others (a flooding peer
// delays another peer's next item by at most one of its own per turn).
#ifndef RNODE_UTIL_FAIR_QUEUE_H_
#define RNODE_UTIL_FAIR_QUEUE_H_

#include <cstddef>
#include <deque>
#include <map>
#include <utility>

namespace rnode {

// Items keep their order per key; Pop takes the front item of the key
// whose turn it is, and a key that still has items goes to the back of the
// turn. A key leaves the turn (and the map) when its last item is taken,
// so memory is bounded by the items held. Not thread-safe. `Key` needs
// operator<.
template <typename Key, typename T>
class FairQueue {
 public:
  void Push(const Key& key, T item) {
    auto [it, fresh] = queues_.try_emplace(key);
    it->second.push_back(std::move(item));
    if (fresh) turn_.push_back(it);
    ++size_;
  }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  // Keys with items waiting.
  size_t keys() const { return turn_.size(); }

  // The next item in turn. Requires !empty().
  T Pop() {
    auto it = turn_.front();
    turn_.pop_front();
    T item = std::move(it->second.front());
    it->second.pop_front();
    --size_;
    if (it->second.empty()) {
      queues_.erase(it);
    } else {
      turn_.push_back(it);
    }
    return item;
  }

  void clear() {
    turn_.clear();
    queues_.clear();
    size_ = 0;
  }

 private:
  using Map = std::map<Key, std::deque<T>>;
  Map queues_;
  // Every key of queues_ once, in turn order (map iterators stay valid
  // until their own erase).
  std::deque<typename Map::iterator> turn_;
  size_t size_ = 0;
};

}  // namespace rnode

#endif  // RNODE_UTIL_FAIR_QUEUE_H_
