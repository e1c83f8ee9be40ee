// Blocks and event logs to and from the wire schema (casper.BlockMessageProto,
// casper.EventProto; docs/formats/block.md).
//
// Decoding checks shape only, with an InvalidArgument naming the field:
// hashes of 32 bytes, public keys of 65 bytes starting 0x04, signatures of
// at most limits::kMaxDerSignatureBytes, known algorithm names, events whose
// lists agree in length and whose hashes are those of their fields. The
// canonical encoding (EncodeBlock) is what the block hash and the block
// store use: decoding and re-encoding a canonical block gives its bytes back.
#ifndef RNODE_CASPER_BLOCK_BLOCK_CODEC_H_
#define RNODE_CASPER_BLOCK_BLOCK_CODEC_H_

#include <cstddef>

#include "absl/status/statusor.h"
#include "casper/block/block.h"
#include "rspace/event_log.h"
#include "util/bytes.h"
#include "util/limits.h"

namespace casper {
class BlockMessageProto;
class EventProto;
}  // namespace casper

namespace rnode::casper::block {

// Largest encoded block DecodeBlock accepts by default (util/limits.h); a
// node decodes its peers' blocks with its shard's lower max-block-bytes.
inline constexpr size_t kMaxBlockBytes = limits::kMaxBlockBytes;

void BlockToProto(const Block& block, ::casper::BlockMessageProto* out);
absl::StatusOr<Block> BlockFromProto(const ::casper::BlockMessageProto& proto);

// The canonical encoding: the proto3 encoding of BlockToProto, fields in
// number order, defaults omitted.
Bytes EncodeBlock(const Block& block);
// EncodeBlock(block).size(), without making the bytes.
size_t EncodedBlockSize(const Block& block);
// What `deploy` adds to its block's encoding (its record, tag and length
// included).
size_t EncodedDeploySize(const ProcessedDeploy& deploy);
// The canonical encoding without blockHash and sig (absent, not zero):
// what the block hash is the Blake2b-256 of.
Bytes BlockHashPreimage(const Block& block);
// InvalidArgument for bytes that are not a BlockMessageProto, are larger
// than `max_bytes`, or fail BlockFromProto.
absl::StatusOr<Block> DecodeBlock(ByteView bytes,
                                  size_t max_bytes = kMaxBlockBytes);

void EventToProto(const rspace::Event& event, ::casper::EventProto* out);
absl::StatusOr<rspace::Event> EventFromProto(const ::casper::EventProto& proto);

}  // namespace rnode::casper::block

#endif  // RNODE_CASPER_BLOCK_BLOCK_CODEC_H_
