// A bounds-checked reader of little-endian binary records, for the decoders
// of our storage formats. Every read returns false (and reads nothing) when
// the bytes left are too few; counts are checked against the bytes left so
// a corrupt count cannot make a decoder allocate.
#ifndef RNODE_UTIL_BYTE_READER_H_
#define RNODE_UTIL_BYTE_READER_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>

#include "util/bytes.h"

namespace rnode {

class ByteReader {
 public:
  explicit ByteReader(ByteView b) : b_(b) {}

  bool U8(uint8_t& v) {
    if (b_.size() - pos_ < 1) return false;
    v = b_[pos_++];
    return true;
  }
  bool U32(uint32_t& v) {
    if (b_.size() - pos_ < 4) return false;
    v = 0;
    for (int i = 0; i < 4; ++i) v |= uint32_t{b_[pos_ + i]} << (8 * i);
    pos_ += 4;
    return true;
  }
  bool I64(int64_t& v) {
    if (b_.size() - pos_ < 8) return false;
    uint64_t u = 0;
    for (int i = 0; i < 8; ++i) u |= uint64_t{b_[pos_ + i]} << (8 * i);
    pos_ += 8;
    v = static_cast<int64_t>(u);
    return true;
  }
  // N bytes as they are (hashes, keys).
  template <size_t N>
  bool Fixed(std::array<uint8_t, N>& a) {
    if (b_.size() - pos_ < N) return false;
    std::copy(b_.begin() + pos_, b_.begin() + pos_ + N, a.begin());
    pos_ += N;
    return true;
  }
  // A U32 length, then that many bytes.
  bool Blob(Bytes& out) {
    uint32_t n;
    if (!U32(n) || b_.size() - pos_ < n) return false;
    out.assign(b_.begin() + pos_, b_.begin() + pos_ + n);
    pos_ += n;
    return true;
  }
  // A U32 count of items of at least `min_item_bytes` each, which the
  // bytes left must be able to hold.
  bool Count(uint32_t& n, size_t min_item_bytes) {
    return U32(n) && n <= (b_.size() - pos_) / min_item_bytes;
  }
  bool done() const { return pos_ == b_.size(); }

 private:
  ByteView b_;
  size_t pos_ = 0;
};

}  // namespace rnode

#endif  // RNODE_UTIL_BYTE_READER_H_
