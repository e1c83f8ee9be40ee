#include "casper/genesis/genesis_files.h"

#include <cerrno>
#include <charconv>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <system_error>

#include "absl/strings/str_cat.h"
#include "crypto/rev_address.h"
#include "util/status_macros.h"

namespace rnode::casper::genesis {
namespace {

// Calls fn(line_number, line) for each non-blank line, without its '\r'.
template <typename Fn>
absl::Status ForEachLine(std::string_view text, Fn fn) {
  size_t line_no = 0;
  while (!text.empty()) {
    ++line_no;
    size_t end = text.find('\n');
    std::string_view line = text.substr(0, end);
    text = end == std::string_view::npos ? std::string_view()
                                         : text.substr(end + 1);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (line.find_first_not_of(" \t") == std::string_view::npos) continue;
    RETURN_IF_ERROR(fn(line_no, line));
  }
  return absl::OkStatus();
}

// Debian's abseil has its own string_view, so std::string_view arguments go
// through std::string.
std::string S(std::string_view s) { return std::string(s); }
std::string S(absl::string_view s) { return std::string(s); }

absl::Status LineError(std::string_view file, size_t line,
                       std::string_view reason) {
  return absl::InvalidArgumentError(
      absl::StrCat(S(file), ":", line, ": ", S(reason)));
}

// A decimal integer in [min, INT64_MAX]: digits only, no sign or spaces.
absl::StatusOr<int64_t> ParseAmount(std::string_view s, int64_t min,
                                    std::string_view what) {
  if (s.empty() ||
      s.find_first_not_of("0123456789") != std::string_view::npos) {
    return absl::InvalidArgumentError(
        absl::StrCat(S(what), " `", S(s), "` is not a decimal number"));
  }
  int64_t v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec == std::errc::result_out_of_range) {
    return absl::InvalidArgumentError(
        absl::StrCat(S(what), " ", S(s), " is above the largest Int (",
                     std::numeric_limits<int64_t>::max(), ")"));
  }
  if (ec != std::errc() || ptr != s.data() + s.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat(S(what), " `", S(s), "` is not a decimal number"));
  }
  if (v < min) {
    return absl::InvalidArgumentError(
        absl::StrCat(S(what), " must be at least ", min, ", got ", v));
  }
  return v;
}

}  // namespace

absl::StatusOr<std::vector<Bond>> ParseBonds(std::string_view text,
                                             std::string_view file_name) {
  std::vector<Bond> bonds;
  std::map<crypto::Secp256k1PublicKey, size_t> first_line;
  RETURN_IF_ERROR(
      ForEachLine(text, [&](size_t n, std::string_view line) -> absl::Status {
        if (bonds.size() == kMaxBonds) {
          return absl::ResourceExhaustedError(absl::StrCat(
              S(file_name), ":", n, ": more than ", kMaxBonds, " validators"));
        }
        size_t space = line.find(' ');
        if (space == std::string_view::npos ||
            line.find(' ', space + 1) != std::string_view::npos) {
          return LineError(file_name, n,
                           "expected `<public key hex> <stake>` (one space)");
        }
        absl::StatusOr<Bytes> key_bytes = HexDecode(line.substr(0, space));
        if (!key_bytes.ok()) {
          return LineError(
              file_name, n,
              absl::StrCat("public key: ", key_bytes.status().message()));
        }
        absl::StatusOr<crypto::Secp256k1PublicKey> key =
            crypto::ParseSecp256k1PublicKey(*key_bytes);
        if (!key.ok()) {
          return LineError(
              file_name, n,
              absl::StrCat("public key: ", key.status().message()));
        }
        absl::StatusOr<int64_t> stake =
            ParseAmount(line.substr(space + 1), 1, "stake");
        if (!stake.ok())
          return LineError(file_name, n, S(stake.status().message()));
        auto [it, inserted] = first_line.emplace(*key, n);
        if (!inserted) {
          return LineError(
              file_name, n,
              absl::StrCat("validator already bonded on line ", it->second));
        }
        bonds.push_back(Bond{*key, *stake});
        return absl::OkStatus();
      }));
  if (bonds.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        S(file_name), ": no validators (a shard needs at least one bond)"));
  }
  return bonds;
}

absl::StatusOr<std::vector<Wallet>> ParseWallets(std::string_view text,
                                                 std::string_view file_name) {
  std::vector<Wallet> wallets;
  std::map<Hash32, size_t> first_line;
  RETURN_IF_ERROR(
      ForEachLine(text, [&](size_t n, std::string_view line) -> absl::Status {
        if (wallets.size() == kMaxWallets) {
          return absl::ResourceExhaustedError(absl::StrCat(
              S(file_name), ":", n, ": more than ", kMaxWallets, " wallets"));
        }
        size_t comma = line.find(',');
        if (comma == std::string_view::npos ||
            line.find(',', comma + 1) != std::string_view::npos) {
          return LineError(file_name, n, "expected `<REV address>,<balance>`");
        }
        std::string_view address = line.substr(0, comma);
        absl::StatusOr<Hash32> key_hash = crypto::ParseRevAddress(address);
        if (!key_hash.ok()) {
          return LineError(file_name, n,
                           absl::StrCat("address `", S(address),
                                        "`: ", key_hash.status().message()));
        }
        absl::StatusOr<int64_t> balance =
            ParseAmount(line.substr(comma + 1), 0, "balance");
        if (!balance.ok())
          return LineError(file_name, n, S(balance.status().message()));
        auto [it, inserted] = first_line.emplace(*key_hash, n);
        if (!inserted) {
          return LineError(
              file_name, n,
              absl::StrCat("address already listed on line ", it->second));
        }
        wallets.push_back(Wallet{std::string(address), *key_hash, *balance});
        return absl::OkStatus();
      }));
  return wallets;
}

absl::StatusOr<std::string> ReadGenesisFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    int err = errno;
    if (err == ENOENT) {
      return absl::NotFoundError(absl::StrCat(path, ": no such file"));
    }
    return absl::UnavailableError(
        absl::StrCat(path, ": cannot open: ", std::strerror(err)));
  }
  std::string data;
  char buf[1 << 16];
  while (in) {
    in.read(buf, sizeof(buf));
    data.append(buf, static_cast<size_t>(in.gcount()));
    if (data.size() > kMaxGenesisFileBytes) {
      return absl::ResourceExhaustedError(
          absl::StrCat(path, ": larger than ", kMaxGenesisFileBytes, " bytes"));
    }
  }
  if (in.bad()) return absl::DataLossError(absl::StrCat(path, ": read error"));
  return data;
}

}  // namespace rnode::casper::genesis
