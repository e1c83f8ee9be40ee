// RSpace's mutex names, forwarded to util/mutex.h (the annotated std::mutex
// that replaced this header's own copy) until rspace includes it directly.
#ifndef RNODE_RSPACE_INTERNAL_MUTEX_H_
#define RNODE_RSPACE_INTERNAL_MUTEX_H_

#include "util/mutex.h"

namespace rnode::rspace::internal {

using ::rnode::Mutex;
using ::rnode::MutexLock;

}  // namespace rnode::rspace::internal

#endif  // RNODE_RSPACE_INTERNAL_MUTEX_H_
