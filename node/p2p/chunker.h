// Streamed packets (docs/p2p.md "Streams"): a large packet (a block) goes
// over `TransportLayer.Stream` as one ChunkHeader and then ChunkData
// pieces. The packet is encoded once into a `Blob` that every peer's send
// shares by reference count; a send builds one chunk message at a time,
// just before it writes it, so a block in flight to N peers costs one
// buffer plus one chunk per peer.
//
// Content above kCompressAboveBytes is LZ4-compressed: the wire bytes are
// the varint (LEB128) of the original length followed by one raw LZ4
// block, `compressed` is set and `contentLength` is the original length
// (the public node's format).
#ifndef RNODE_NODE_P2P_CHUNKER_H_
#define RNODE_NODE_P2P_CHUNKER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "node/p2p/peer.h"
#include "routing.pb.h"

namespace rnode::node::p2p {

inline constexpr size_t kCompressAboveBytes = 500 * 1024;

// One packet ready to stream, immutable once made.
struct Blob {
  std::string type_id;
  bool compressed = false;
  // Length of the content before compression.
  uint32_t content_length = 0;
  // The bytes that go over the wire, shared by every send of this blob.
  std::shared_ptr<const std::string> wire;
};

// Makes a blob of `content` (compressed when larger than
// `compress_above`). InvalidArgument when the content is above 2 GiB - 1
// (the wire's int32 length).
absl::StatusOr<Blob> MakeBlob(std::string type_id, std::string content,
                              size_t compress_above = kCompressAboveBytes);

// The most wire bytes MakeBlob makes of `content_bytes` bytes (LZ4 can
// grow incompressible content a little): what a stream's permit must cover
// before the blob is built.
size_t MaxWireBytes(size_t content_bytes,
                    size_t compress_above = kCompressAboveBytes);

// How many data chunks `blob` takes with `chunk_bytes` per chunk (at least
// one, even for empty content). REQUIRES: chunk_bytes > 0.
size_t DataChunkCount(const Blob& blob, size_t chunk_bytes);
void FillHeaderChunk(const Blob& blob, const PeerNode& sender,
                     std::string_view network_id, ::routing::Chunk* out);
// Data chunk `index` (< DataChunkCount).
void FillDataChunk(const Blob& blob, size_t index, size_t chunk_bytes,
                   ::routing::Chunk* out);

// LZ4 in the format above. Compress REQUIRES: raw.size() <=
// LZ4_MAX_INPUT_SIZE (about 1.97 GiB; MakeBlob sends larger content
// uncompressed). Decompress: InvalidArgument unless the bytes decode to
// exactly `expected_length` bytes and the varint agrees; it never
// allocates more than `expected_length`.
std::string Compress(std::string_view raw);
absl::StatusOr<std::string> Decompress(std::string_view wire,
                                       size_t expected_length);

// Reassembles one inbound stream. Not thread-safe (one per stream).
class StreamAssembler {
 public:
  // `network_id`: a header naming another network is refused.
  // `max_content_bytes`: a header announcing more (before or after
  // compression), or data beyond what the header announced, is refused.
  StreamAssembler(std::string network_id, size_t max_content_bytes);

  // The first chunk must be a header, every later one data.
  // InvalidArgument (PermissionDenied for a wrong network id) on the first
  // fault; after a fault every call, Finish too, fails (FailedPrecondition).
  absl::Status Add(const ::routing::Chunk& chunk);

  // After the header: the sender, type and sizes it announced.
  const std::optional<PeerNode>& sender() const { return sender_; }
  const std::string& type_id() const { return type_id_; }
  bool compressed() const { return compressed_; }
  uint32_t content_length() const { return content_length_; }
  // Bytes of wire data received so far.
  size_t received() const { return data_.size(); }

  // The whole content (decompressed). InvalidArgument when no header came,
  // when data is missing, or when decompression fails.
  absl::StatusOr<std::string> Finish() &&;

 private:
  absl::Status AddHeader(const ::routing::ChunkHeader& header);
  absl::Status AddData(std::string_view piece);

  std::string network_id_;
  size_t max_content_bytes_;
  bool failed_ = false;
  std::optional<PeerNode> sender_;
  std::string type_id_;
  bool compressed_ = false;
  uint32_t content_length_ = 0;
  // Most wire bytes the header allows; data_'s capacity never exceeds it.
  size_t wire_bound_ = 0;
  std::string data_;
};

}  // namespace rnode::node::p2p

#endif  // RNODE_NODE_P2P_CHUNKER_H_
