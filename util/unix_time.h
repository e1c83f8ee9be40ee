// The wall clock in milliseconds since the Unix epoch: block and deploy
// timestamps, validator statements' times.
#ifndef RNODE_UTIL_UNIX_TIME_H_
#define RNODE_UTIL_UNIX_TIME_H_

#include <chrono>
#include <cstdint>

namespace rnode {

inline int64_t UnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace rnode

#endif  // RNODE_UTIL_UNIX_TIME_H_
