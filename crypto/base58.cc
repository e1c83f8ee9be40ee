// Base58 by repeated division in base 256 / base 58 digit arrays.
#include "crypto/base58.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace rnode::crypto {
namespace {

constexpr char kAlphabet[] =
    "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz";

int DigitOf(char c) {
  const char* p = std::find(kAlphabet, kAlphabet + 58, c);
  return p == kAlphabet + 58 ? -1 : static_cast<int>(p - kAlphabet);
}

}  // namespace

bool IsBase58Text(std::string_view text) {
  for (char c : text) {
    if (DigitOf(c) < 0) return false;
  }
  return true;
}

std::string Base58Encode(ByteView data) {
  size_t zeros = 0;
  while (zeros < data.size() && data[zeros] == 0) ++zeros;
  // Base-58 digits, least significant first; log(256)/log(58) < 1.37.
  std::vector<uint8_t> digits;
  digits.reserve(data.size() * 137 / 100 + 1);
  for (size_t i = zeros; i < data.size(); ++i) {
    uint32_t carry = data[i];
    for (uint8_t& d : digits) {
      carry += static_cast<uint32_t>(d) << 8;
      d = static_cast<uint8_t>(carry % 58);
      carry /= 58;
    }
    while (carry > 0) {
      digits.push_back(static_cast<uint8_t>(carry % 58));
      carry /= 58;
    }
  }
  std::string out(zeros, '1');
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    out.push_back(kAlphabet[*it]);
  }
  return out;
}

absl::StatusOr<Bytes> Base58Decode(std::string_view text) {
  if (text.size() > kMaxBase58Chars) {
    return absl::InvalidArgumentError(absl::StrCat(
        "base58 text is ", text.size(), " chars, limit ", kMaxBase58Chars));
  }
  size_t ones = 0;
  while (ones < text.size() && text[ones] == '1') ++ones;
  std::vector<uint8_t> bytes;  // Base 256, least significant first.
  for (size_t i = ones; i < text.size(); ++i) {
    int digit = DigitOf(text[i]);
    if (digit < 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid base58 character at position ", i));
    }
    uint32_t carry = static_cast<uint32_t>(digit);
    for (uint8_t& b : bytes) {
      carry += static_cast<uint32_t>(b) * 58;
      b = static_cast<uint8_t>(carry & 0xff);
      carry >>= 8;
    }
    while (carry > 0) {
      bytes.push_back(static_cast<uint8_t>(carry & 0xff));
      carry >>= 8;
    }
  }
  Bytes out(ones, 0);
  out.insert(out.end(), bytes.rbegin(), bytes.rend());
  return out;
}

}  // namespace rnode::crypto
