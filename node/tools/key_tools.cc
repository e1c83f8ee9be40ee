// Offline key and deploy tools.
#include "node/tools/key_tools.h"

#include <sys/random.h>

#include <fstream>
#include <istream>
#include <iterator>
#include <ostream>
#include <utility>

#include "crypto/rev_address.h"
#include "crypto/secp256k1.h"
#include "node/tools/deploy_json.h"
#include "util/file_io.h"

namespace rnode::node {
namespace {

absl::StatusOr<crypto::Secp256k1PrivateKey> KeyFromHex(const std::string& hex) {
  return crypto::ParseSecp256k1PrivateKeyHex(hex);
}

}  // namespace

int RunKeygen(std::ostream& out, std::ostream& err) {
  for (int attempt = 0; attempt < 8; ++attempt) {
    uint8_t seed[32];
    if (getrandom(seed, sizeof seed, 0) != sizeof seed) {
      err << "error: no entropy available from getrandom\n";
      return 1;
    }
    absl::StatusOr<crypto::Secp256k1PrivateKey> key =
        crypto::ParseSecp256k1PrivateKey(ByteView(seed, sizeof seed));
    if (!key.ok()) continue;  // Out of range: astronomically rare; redraw.
    crypto::Secp256k1PublicKey pub = crypto::Secp256k1PublicKeyOf(*key);
    out << "private: " << HexEncode(*key) << "\n"
        << "public: " << HexEncode(pub) << "\n"
        << "address: " << crypto::RevAddressFromPublicKey(pub) << "\n";
    return 0;
  }
  err << "error: could not draw a valid key\n";
  return 1;
}

int RunRevAddress(const std::string& public_key_hex,
                  const std::string& private_key_hex, std::ostream& out,
                  std::ostream& err) {
  if (public_key_hex.empty() == private_key_hex.empty()) {
    err << "error: give exactly one of --public-key or --private-key\n";
    return 1;
  }
  absl::StatusOr<crypto::Secp256k1PublicKey> pub;
  if (!private_key_hex.empty()) {
    absl::StatusOr<crypto::Secp256k1PrivateKey> key =
        KeyFromHex(private_key_hex);
    if (!key.ok()) {
      err << "error: private key: " << key.status().message() << "\n";
      return 1;
    }
    pub = crypto::Secp256k1PublicKeyOf(*key);
  } else {
    absl::StatusOr<Bytes> raw = HexDecode(public_key_hex);
    pub = raw.ok() ? crypto::ParseSecp256k1PublicKey(*raw)
                   : absl::StatusOr<crypto::Secp256k1PublicKey>(raw.status());
  }
  if (!pub.ok()) {
    err << "error: public key: " << pub.status().message() << "\n";
    return 1;
  }
  out << crypto::RevAddressFromPublicKey(*pub) << "\n";
  return 0;
}

int RunSignDeploy(const casper::DeployData& data,
                  const std::string& private_key_hex,
                  const std::string& private_key_file,
                  const std::string& sig_algorithm, std::ostream& out,
                  std::ostream& err) {
  if (private_key_hex.empty() == private_key_file.empty()) {
    err << "error: give exactly one of --private-key and "
           "--private-key-file\n";
    return 1;
  }
  std::string hex = private_key_hex;
  if (!private_key_file.empty()) {
    absl::StatusOr<std::string> text =
        ReadSmallFile(private_key_file, kMaxSigningKeyFileBytes);
    if (!text.ok()) {
      err << "error: private key file: " << text.status().message() << "\n";
      return 1;
    }
    hex = *std::move(text);
  }
  absl::StatusOr<crypto::Secp256k1PrivateKey> key = KeyFromHex(hex);
  if (!key.ok()) {
    err << "error: private key: " << key.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<casper::SigAlgorithm> alg =
      casper::ParseSigAlgorithm(sig_algorithm);
  if (!alg.ok()) {
    err << "error: " << alg.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<casper::SignedDeploy> deploy =
      casper::SignedDeploy::Sign(data, *key, *alg);
  if (!deploy.ok()) {
    err << "error: " << deploy.status().message() << "\n";
    return 1;
  }
  out << DeployToJson(*deploy) << "\n";
  return 0;
}

namespace {

// All of `in`, at most kMaxDeployJsonBytes.
absl::StatusOr<std::string> ReadBounded(std::istream& in) {
  std::string text;
  char buf[1 << 16];
  while (in.read(buf, sizeof buf) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxDeployJsonBytes) {
      return absl::ResourceExhaustedError(
          "input exceeds " + std::to_string(kMaxDeployJsonBytes) + " bytes");
    }
  }
  return text;
}

}  // namespace

absl::StatusOr<std::string> ReadDeployJson(const std::string& path,
                                           std::istream& stdin_stream) {
  if (path == "-") return ReadBounded(stdin_stream);
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError("cannot open " + path);
  return ReadBounded(file);
}

int RunVerifyDeploy(std::istream& in, std::ostream& out, std::ostream& err) {
  absl::StatusOr<std::string> text = ReadBounded(in);
  if (!text.ok()) {
    err << "invalid: " << text.status().message() << "\n";
    return 1;
  }
  absl::StatusOr<casper::SignedDeploy> deploy = DeployFromJson(*text);
  if (!deploy.ok()) {
    err << "invalid: " << deploy.status().message() << "\n";
    return 1;
  }
  out << "valid\n";
  return 0;
}

}  // namespace rnode::node
