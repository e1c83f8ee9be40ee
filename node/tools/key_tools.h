// Offline tools of the `rnode` binary that need no running node: key
// generation, REV addresses, deploy signing and verification. Each returns
// the process exit code and writes its result to `out`, errors to `err`.
#ifndef RNODE_NODE_TOOLS_KEY_TOOLS_H_
#define RNODE_NODE_TOOLS_KEY_TOOLS_H_

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "casper/deploy.h"

namespace rnode::node {

// Prints a fresh secp256k1 key pair and its REV address, one per line:
// "private: <hex>", "public: <hex>", "address: <rev address>".
int RunKeygen(std::ostream& out, std::ostream& err);

// Prints the REV address of a public key (65-byte hex) or a private key.
int RunRevAddress(const std::string& public_key_hex,
                  const std::string& private_key_hex, std::ostream& out,
                  std::ostream& err);

// Signs `data` and prints the deploy as JSON. The key is either given in
// hex or read from the file at `private_key_file` (hex, at most
// kMaxSigningKeyFileBytes; a key on the command line is visible to every
// user of the machine), exactly one of them.
inline constexpr uintmax_t kMaxSigningKeyFileBytes = 4096;
int RunSignDeploy(const casper::DeployData& data,
                  const std::string& private_key_hex,
                  const std::string& private_key_file,
                  const std::string& sig_algorithm, std::ostream& out,
                  std::ostream& err);

// Reads a JSON deploy from `in` (at most kMaxDeployJsonBytes), prints
// "valid" (exit 0) or "invalid: <reason>" to `err` (exit 1).
int RunVerifyDeploy(std::istream& in, std::ostream& out, std::ostream& err);

// The JSON deploy text of `path` ("-": all of `stdin_stream`), at most
// kMaxDeployJsonBytes. NotFound / the OS error for a file that cannot be
// read, ResourceExhausted when larger.
absl::StatusOr<std::string> ReadDeployJson(const std::string& path,
                                           std::istream& stdin_stream);

// Largest JSON deploy read by verify-deploy: the term limit, doubled for
// JSON escapes, plus room for the other fields.
inline constexpr size_t kMaxDeployJsonBytes = (2u << 20) + 4096;

}  // namespace rnode::node

#endif  // RNODE_NODE_TOOLS_KEY_TOOLS_H_
