// Deploys a client must not get in (docs/reliability.md "hostile"): signed
// deploys that break the node's admission rules, sent over the external
// gRPC API from several threads at once. Each must be refused with the
// rule's message; a good client's deploys sent meanwhile must not suffer.
#ifndef RNODE_INTEGRATION_BADPEER_API_ABUSE_H_
#define RNODE_INTEGRATION_BADPEER_API_ABUSE_H_

#include <cstdint>
#include <map>
#include <string>

namespace rnode::badpeer {

// What one kind of bad deploy got.
struct AbuseTally {
  int64_t sent = 0;
  int64_t accepted = 0;  // Success replies: each one a defence that failed.
  // Refusals by the reply's message cut at its first digit (so that one
  // rule's messages, which differ in their numbers, count together), and
  // failed calls by their gRPC status ("grpc N").
  std::map<std::string, int64_t> refused;
};

// Sends `count` deploys of each kind to `grpc_target` (host:port) from
// `threads` threads, signed for shard `shard_id` by fresh random keys
// (drawn from `seed`):
//   unfunded  a key with no funds (phlo limit 100,000 at price 1);
//   horizon   validAfterBlockNumber 10^12, far past any height;
//   free      phlo price 0 and phlo limit 2^62.
// Returns the tallies by kind.
std::map<std::string, AbuseTally> AbuseDeployApi(const std::string& grpc_target,
                                                 const std::string& shard_id,
                                                 int count, int threads,
                                                 uint64_t seed);

}  // namespace rnode::badpeer

#endif  // RNODE_INTEGRATION_BADPEER_API_ABUSE_H_
