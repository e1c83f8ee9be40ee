// A peer that poses as another node at its own address (docs/security.md
// "poisoning a peer's address"): a discovery server whose lookup answers
// name the victim's node id at the impostor's protocol and discovery
// ports, and a transport of its own (its own key) listening there. It
// pings the target's discovery port so that the target looks it up. A node
// that pins its connections to the id it dials never completes a
// handshake with the impostor under the victim's id; one that does not
// hands the victim's link to it.
#ifndef RNODE_INTEGRATION_BADPEER_IMPOSTOR_H_
#define RNODE_INTEGRATION_BADPEER_IMPOSTOR_H_

#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "node/p2p/peer.h"
#include "util/bytes.h"

namespace rnode::badpeer {

class Impostor {
 public:
  // Starts on 127.0.0.1 (ephemeral ports) on `network_id`, answering
  // lookups with `victim_id` at its own address, and pings `target`'s
  // discovery port once. Unavailable when the ping is not answered.
  static absl::StatusOr<std::unique_ptr<Impostor>> Start(
      const node::p2p::PeerNode& target, const std::string& network_id,
      const Bytes& victim_id);
  ~Impostor();

  // Whether `id` has looked the impostor up (a lookup's sender is kept).
  bool LookedUpBy(const Bytes& id) const;
  // Inbound calls its transport took: handshakes and heartbeats (each a
  // peer connected to it), packets and streams.
  uint64_t Handshakes() const;
  uint64_t PacketsIn() const;
  // Its own rnode:// address (its own id).
  std::string Address() const;

  struct Impl;

 private:
  explicit Impostor(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace rnode::badpeer

#endif  // RNODE_INTEGRATION_BADPEER_IMPOSTOR_H_
