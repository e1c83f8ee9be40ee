// The wall clock as the chain reads it: milliseconds since the Unix
// epoch (block and deploy timestamps).
#ifndef RNODE_NODE_CORE_CLOCK_H_
#define RNODE_NODE_CORE_CLOCK_H_

#include <chrono>
#include <cstdint>

namespace rnode::node {

inline int64_t UnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_CLOCK_H_
