// The wall clock as the chain reads it: milliseconds since the Unix
// epoch (block and deploy timestamps; util/unix_time.h).
#ifndef RNODE_NODE_CORE_CLOCK_H_
#define RNODE_NODE_CORE_CLOCK_H_

#include "util/unix_time.h"

namespace rnode::node {

using ::rnode::UnixMs;

}  // namespace rnode::node

#endif  // RNODE_NODE_CORE_CLOCK_H_
