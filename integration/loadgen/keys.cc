// Keys file parsing.
#include "integration/loadgen/keys.h"

#include <fstream>
#include <utility>

#include <nlohmann/json.hpp>

#include "absl/strings/str_cat.h"
#include "util/bytes.h"

namespace rnode::loadgen {
namespace {

using json = nlohmann::json;

absl::Status EntryError(size_t index, std::string_view what) {
  return absl::InvalidArgumentError(
      absl::StrCat("keys[", index, "]: ", std::string(what)));
}

}  // namespace

absl::StatusOr<std::vector<crypto::Secp256k1PrivateKey>> ParseKeys(
    std::string_view json_text) {
  const json doc = json::parse(json_text.begin(), json_text.end(), nullptr,
                               /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return absl::InvalidArgumentError("keys file: not JSON");
  }
  if (!doc.is_object() || !doc.contains("keys") || !doc["keys"].is_array()) {
    return absl::InvalidArgumentError(
        "keys file: expected {\"keys\": [{\"private\": HEX}, ...]}");
  }
  const json& entries = doc["keys"];
  if (entries.empty()) {
    return absl::InvalidArgumentError("keys file: no keys");
  }
  if (entries.size() > kMaxKeys) {
    return absl::InvalidArgumentError(absl::StrCat(
        "keys file: ", entries.size(), " keys; at most ", kMaxKeys));
  }
  std::vector<crypto::Secp256k1PrivateKey> keys;
  for (size_t i = 0; i < entries.size(); ++i) {
    const json& entry = entries[i];
    const json* hex = &entry;
    if (entry.is_object()) {
      auto it = entry.find("private");
      if (it == entry.end()) return EntryError(i, "no \"private\"");
      hex = &*it;
    }
    if (!hex->is_string()) {
      return EntryError(i, "the private key is not a hex string");
    }
    absl::StatusOr<Bytes> bytes = HexDecode(hex->get<std::string>());
    if (!bytes.ok()) {
      return EntryError(i, absl::StrCat("private key: ",
                                        std::string(bytes.status().message())));
    }
    absl::StatusOr<crypto::Secp256k1PrivateKey> key =
        crypto::ParseSecp256k1PrivateKey(*bytes);
    if (!key.ok()) {
      return EntryError(i, absl::StrCat("private key: ",
                                        std::string(key.status().message())));
    }
    keys.push_back(*key);
  }
  return keys;
}

absl::StatusOr<std::vector<crypto::Secp256k1PrivateKey>> LoadKeysFile(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::string text;
  char buf[4096];
  while (in.read(buf, sizeof(buf)) || in.gcount() > 0) {
    text.append(buf, static_cast<size_t>(in.gcount()));
    if (text.size() > kMaxKeysFileBytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, " is larger than ", kMaxKeysFileBytes, " bytes"));
    }
  }
  absl::StatusOr<std::vector<crypto::Secp256k1PrivateKey>> keys =
      ParseKeys(text);
  if (!keys.ok()) {
    return absl::Status(
        keys.status().code(),
        absl::StrCat(path, ": ", std::string(keys.status().message())));
  }
  return keys;
}

}  // namespace rnode::loadgen
