// Streamed packets: blobs, chunks, LZ4 framing and reassembly.
#include "node/p2p/chunker.h"

#include <lz4.h>

#include <algorithm>
#include <limits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "util/check.h"
#include "util/status_macros.h"

namespace rnode::node::p2p {
namespace {

// The wire's contentLength is an int32.
constexpr size_t kMaxContentBytes = std::numeric_limits<int32_t>::max();
// A varint of a length below 2^32 takes at most 5 bytes; longer is corrupt.
constexpr size_t kMaxVarintBytes = 5;
// Allowance for the varint prefix in the bound on compressed wire bytes
// (more than kMaxVarintBytes, so a sender padding its varint is read and
// then refused by Decompress rather than cut off).
constexpr size_t kVarintAllowanceBytes = 10;
// Longest typeId accepted: the names of CasperMessage.proto messages are
// under 40 characters.
constexpr size_t kMaxTypeIdBytes = 64;
// What a stream's buffer starts with before data arrives, at most. A header
// alone must not make the node commit the whole announced size; the buffer
// then doubles up to the announced bound.
constexpr size_t kInitialReserveBytes = 1 << 20;

// Printable ASCII without spaces.
bool IsGraphicAscii(std::string_view s) {
  for (char c : s) {
    if (c < 0x21 || c > 0x7e) return false;
  }
  return true;
}

void AppendVarint(uint64_t value, std::string* out) {
  while (value >= 0x80) {
    out->push_back(static_cast<char>((value & 0x7f) | 0x80));
    value >>= 7;
  }
  out->push_back(static_cast<char>(value));
}

// Reads a LEB128 varint from the front of `*in` and consumes it. False when
// it is cut off or longer than kMaxVarintBytes.
bool ReadVarint(std::string_view* in, uint64_t* value) {
  uint64_t result = 0;
  for (size_t i = 0; i < kMaxVarintBytes && i < in->size(); ++i) {
    const auto byte = static_cast<uint8_t>((*in)[i]);
    result |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
    if ((byte & 0x80) == 0) {
      in->remove_prefix(i + 1);
      *value = result;
      return true;
    }
  }
  return false;
}

// Most wire bytes a stream announcing `content_length` may send.
size_t WireBound(bool compressed, size_t content_length) {
  if (!compressed) return content_length;
  return static_cast<size_t>(
             LZ4_compressBound(static_cast<int>(content_length))) +
         kVarintAllowanceBytes;
}

}  // namespace

absl::StatusOr<Blob> MakeBlob(std::string type_id, std::string content,
                              size_t compress_above) {
  if (content.size() > kMaxContentBytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("content of ", content.size(), " bytes; at most ",
                     kMaxContentBytes, " fit the wire"));
  }
  Blob blob;
  blob.type_id = std::move(type_id);
  blob.content_length = static_cast<uint32_t>(content.size());
  // LZ4 takes at most LZ4_MAX_INPUT_SIZE; larger content goes as it is,
  // which every receiver accepts too.
  blob.compressed = content.size() > compress_above &&
                    content.size() <= static_cast<size_t>(LZ4_MAX_INPUT_SIZE);
  blob.wire = std::make_shared<const std::string>(
      blob.compressed ? Compress(content) : std::move(content));
  return blob;
}

size_t MaxWireBytes(size_t content_bytes, size_t compress_above) {
  if (content_bytes <= compress_above ||
      content_bytes > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) {
    return content_bytes;
  }
  // The varint of the length (at most 5 bytes) and LZ4's own bound.
  return 5 + static_cast<size_t>(
                 LZ4_compressBound(static_cast<int>(content_bytes)));
}

size_t DataChunkCount(const Blob& blob, size_t chunk_bytes) {
  DCHECK(chunk_bytes > 0, "a chunk holds at least one byte");
  const size_t size = blob.wire == nullptr ? 0 : blob.wire->size();
  return std::max<size_t>(1, (size + chunk_bytes - 1) / chunk_bytes);
}

void FillHeaderChunk(const Blob& blob, const PeerNode& sender,
                     std::string_view network_id, ::routing::Chunk* out) {
  ::routing::ChunkHeader* header = out->mutable_header();
  PeerToProto(sender, header->mutable_sender());
  header->set_typeid_(blob.type_id);
  header->set_compressed(blob.compressed);
  header->set_contentlength(static_cast<int32_t>(blob.content_length));
  header->set_networkid(std::string(network_id));
}

void FillDataChunk(const Blob& blob, size_t index, size_t chunk_bytes,
                   ::routing::Chunk* out) {
  DCHECK(index < DataChunkCount(blob, chunk_bytes),
         "chunk index past the blob");
  const std::string_view wire =
      blob.wire == nullptr ? std::string_view() : std::string_view(*blob.wire);
  const size_t offset = std::min(index * chunk_bytes, wire.size());
  const std::string_view piece = wire.substr(offset, chunk_bytes);
  out->mutable_data()->set_contentdata(piece.data(), piece.size());
}

std::string Compress(std::string_view raw) {
  CHECK(raw.size() <= static_cast<size_t>(LZ4_MAX_INPUT_SIZE),
        "callers compress at most LZ4_MAX_INPUT_SIZE bytes");
  const int raw_size = static_cast<int>(raw.size());
  const int bound = LZ4_compressBound(raw_size);
  std::string out;
  AppendVarint(raw.size(), &out);
  const size_t prefix = out.size();
  out.resize(prefix + static_cast<size_t>(bound));
  const int written =
      LZ4_compress_default(raw.data(), out.data() + prefix, raw_size, bound);
  CHECK(written > 0,
        "LZ4 cannot fail with a destination of LZ4_compressBound bytes");
  out.resize(prefix + static_cast<size_t>(std::max(written, 0)));
  return out;
}

absl::StatusOr<std::string> Decompress(std::string_view wire,
                                       size_t expected_length) {
  uint64_t announced = 0;
  if (!ReadVarint(&wire, &announced)) {
    return absl::InvalidArgumentError("compressed data: bad length prefix");
  }
  if (announced != expected_length) {
    return absl::InvalidArgumentError(
        absl::StrCat("compressed data: length prefix says ", announced,
                     " bytes, expected ", expected_length));
  }
  if (expected_length > static_cast<size_t>(LZ4_MAX_INPUT_SIZE) ||
      wire.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return absl::InvalidArgumentError("compressed data: too large for LZ4");
  }
  std::string out(expected_length, '\0');
  const int n = LZ4_decompress_safe(wire.data(), out.data(),
                                    static_cast<int>(wire.size()),
                                    static_cast<int>(expected_length));
  if (n < 0) {
    return absl::InvalidArgumentError("compressed data: corrupt LZ4 block");
  }
  if (static_cast<size_t>(n) != expected_length) {
    return absl::InvalidArgumentError(
        absl::StrCat("compressed data: decodes to ", n, " bytes, expected ",
                     expected_length));
  }
  return out;
}

StreamAssembler::StreamAssembler(std::string network_id,
                                 size_t max_content_bytes)
    : network_id_(std::move(network_id)),
      max_content_bytes_(max_content_bytes) {}

absl::Status StreamAssembler::Add(const ::routing::Chunk& chunk) {
  if (failed_) return absl::FailedPreconditionError("stream already failed");
  absl::Status status;
  switch (chunk.content_case()) {
    case ::routing::Chunk::kHeader:
      status = AddHeader(chunk.header());
      break;
    case ::routing::Chunk::kData:
      status = AddData(chunk.data().contentdata());
      break;
    case ::routing::Chunk::CONTENT_NOT_SET:
      status =
          absl::InvalidArgumentError("chunk holds neither header nor data");
      break;
  }
  if (!status.ok()) failed_ = true;
  return status;
}

absl::Status StreamAssembler::AddHeader(const ::routing::ChunkHeader& header) {
  if (sender_.has_value()) {
    return absl::InvalidArgumentError("second header in one stream");
  }
  if (header.networkid() != network_id_) {
    // The peer's id is not echoed: it is unbounded and may be binary.
    return absl::PermissionDeniedError(
        absl::StrCat("stream names a network other than '", network_id_, "'"));
  }
  if (header.contentlength() < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("negative contentLength ", header.contentlength()));
  }
  const auto content_length = static_cast<size_t>(header.contentlength());
  if (content_length > max_content_bytes_) {
    return absl::InvalidArgumentError(
        absl::StrCat("stream announces ", content_length, " bytes; at most ",
                     max_content_bytes_, " accepted"));
  }
  if (header.compressed() &&
      content_length > static_cast<size_t>(LZ4_MAX_INPUT_SIZE)) {
    return absl::InvalidArgumentError(
        "compressed stream larger than LZ4 can hold");
  }
  absl::StatusOr<PeerNode> sender = PeerFromProto(header.sender());
  if (!sender.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("stream sender: ", sender.status().message()));
  }
  const std::string& type_id = header.typeid_();
  if (type_id.empty() || type_id.size() > kMaxTypeIdBytes ||
      !IsGraphicAscii(type_id)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "typeId must be 1..", kMaxTypeIdBytes, " bytes of printable ASCII"));
  }
  sender_ = *std::move(sender);
  type_id_ = type_id;
  compressed_ = header.compressed();
  content_length_ = static_cast<uint32_t>(content_length);
  wire_bound_ = WireBound(compressed_, content_length);
  data_.reserve(std::min(wire_bound_, kInitialReserveBytes));
  return absl::OkStatus();
}

absl::Status StreamAssembler::AddData(std::string_view piece) {
  if (!sender_.has_value()) {
    return absl::InvalidArgumentError("stream does not start with a header");
  }
  if (piece.size() > wire_bound_ - data_.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("stream sends more than the ", wire_bound_,
                     " bytes its header allows"));
  }
  const size_t needed = data_.size() + piece.size();
  if (needed > data_.capacity()) {
    // Grow by doubling, but never past the bound (std::string's own growth
    // could): a fresh string reserves exactly what it is asked.
    std::string bigger;
    bigger.reserve(
        std::min(wire_bound_, std::max(needed, 2 * data_.capacity())));
    bigger.append(data_);
    data_.swap(bigger);
  }
  data_.append(piece);
  return absl::OkStatus();
}

absl::StatusOr<std::string> StreamAssembler::Finish() && {
  if (failed_) return absl::FailedPreconditionError("stream already failed");
  if (!sender_.has_value()) {
    return absl::InvalidArgumentError("stream ended without a header");
  }
  if (!compressed_) {
    if (data_.size() != content_length_) {
      return absl::InvalidArgumentError(
          absl::StrCat("stream ended after ", data_.size(), " of ",
                       content_length_, " bytes"));
    }
    return std::move(data_);
  }
  return Decompress(data_, content_length_);
}

}  // namespace rnode::node::p2p
