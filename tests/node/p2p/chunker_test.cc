// Streamed packets: blobs, chunking, the LZ4 framing and stream reassembly.
#include "node/p2p/chunker.h"

#include <cstddef>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "node/p2p/peer.h"
#include "routing.pb.h"
#include "tests/test_seed.h"
#include "util/bytes.h"

namespace rnode::node::p2p {
namespace {

using ::testing::HasSubstr;

constexpr char kNetwork[] = "testnet";
// The assembler's limit on typeId (chunker.cc).
constexpr size_t kTypeIdLimit = 64;

PeerNode Sender() {
  PeerNode peer;
  peer.id = Bytes(kNodeIdBytes, 0xab);
  peer.host = "127.0.0.1";
  peer.tcp_port = 40400;
  peer.udp_port = 40404;
  return peer;
}

// Text that LZ4 shrinks well.
std::string Compressible(size_t size) {
  std::string out;
  out.reserve(size);
  for (size_t i = 0; out.size() < size; ++i) {
    out += "block " + std::to_string(i % 97) + " of the chain; ";
  }
  out.resize(size);
  return out;
}

std::string RandomBytes(std::mt19937_64& rng, size_t size) {
  std::string out(size, '\0');
  for (char& c : out) c = static_cast<char>(rng() & 0xff);
  return out;
}

// LZ4_COMPRESSBOUND of lz4.h, plus the 10 bytes allowed for the varint.
size_t CompressedWireBound(size_t content_length) {
  return content_length + content_length / 255 + 16 + 10;
}

::routing::Chunk Header(int32_t content_length, bool compressed = false) {
  Blob blob;
  blob.type_id = "BlockMessage";
  blob.compressed = compressed;
  blob.content_length = static_cast<uint32_t>(content_length);
  ::routing::Chunk chunk;
  FillHeaderChunk(blob, Sender(), kNetwork, &chunk);
  chunk.mutable_header()->set_contentlength(content_length);
  return chunk;
}

::routing::Chunk Data(std::string bytes) {
  ::routing::Chunk chunk;
  chunk.mutable_data()->set_contentdata(std::move(bytes));
  return chunk;
}

// Streams `blob` through a fresh assembler and returns what it assembles.
absl::StatusOr<std::string> Reassemble(const Blob& blob, size_t chunk_bytes,
                                       size_t max_content_bytes) {
  StreamAssembler assembler(kNetwork, max_content_bytes);
  ::routing::Chunk chunk;
  FillHeaderChunk(blob, Sender(), kNetwork, &chunk);
  if (absl::Status s = assembler.Add(chunk); !s.ok()) return s;
  EXPECT_EQ(assembler.sender(), Sender());
  EXPECT_EQ(assembler.type_id(), blob.type_id);
  EXPECT_EQ(assembler.compressed(), blob.compressed);
  EXPECT_EQ(assembler.content_length(), blob.content_length);
  const size_t count = DataChunkCount(blob, chunk_bytes);
  size_t sent = 0;
  for (size_t i = 0; i < count; ++i) {
    chunk.Clear();
    FillDataChunk(blob, i, chunk_bytes, &chunk);
    EXPECT_EQ(chunk.content_case(), ::routing::Chunk::kData);
    EXPECT_LE(chunk.data().contentdata().size(), chunk_bytes);
    if (i + 1 < count) {
      EXPECT_EQ(chunk.data().contentdata().size(), chunk_bytes);
    }
    sent += chunk.data().contentdata().size();
    if (absl::Status s = assembler.Add(chunk); !s.ok()) return s;
    EXPECT_EQ(assembler.received(), sent);
  }
  EXPECT_EQ(sent, blob.wire->size());
  return std::move(assembler).Finish();
}

// --- Blobs and chunks ---

TEST(BlobTest, SmallContentGoesAsItIs) {
  absl::StatusOr<Blob> blob = MakeBlob("BlockMessage", "hello");
  ASSERT_TRUE(blob.ok()) << blob.status();
  EXPECT_EQ(blob->type_id, "BlockMessage");
  EXPECT_FALSE(blob->compressed);
  EXPECT_EQ(blob->content_length, 5u);
  EXPECT_EQ(*blob->wire, "hello");
}

TEST(BlobTest, LargeCompressibleContentIsCompressedAndSmaller) {
  const std::string content = Compressible(kCompressAboveBytes + 100 * 1024);
  absl::StatusOr<Blob> blob = MakeBlob("BlockMessage", content);
  ASSERT_TRUE(blob.ok()) << blob.status();
  EXPECT_TRUE(blob->compressed);
  EXPECT_EQ(blob->content_length, content.size());
  EXPECT_LT(blob->wire->size(), content.size() / 4);
  EXPECT_EQ(*blob->wire, Compress(content));
  absl::StatusOr<std::string> back = Decompress(*blob->wire, content.size());
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, content);
}

TEST(BlobTest, CompressesOnlyAboveTheThreshold) {
  const std::string content = Compressible(1000);
  EXPECT_FALSE(MakeBlob("T", content, 1000)->compressed);
  EXPECT_TRUE(MakeBlob("T", content, 999)->compressed);
  EXPECT_FALSE(MakeBlob("T", content)->compressed);
}

TEST(BlobTest, EmptyContent) {
  absl::StatusOr<Blob> blob = MakeBlob("T", "");
  ASSERT_TRUE(blob.ok());
  EXPECT_EQ(blob->content_length, 0u);
  EXPECT_EQ(*blob->wire, "");
  EXPECT_EQ(DataChunkCount(*blob, 10), 1u);
}

TEST(ChunkTest, DataChunkCountRoundsUpAndIsAtLeastOne) {
  struct Case {
    size_t wire;
    size_t chunk;
    size_t count;
  } cases[] = {{0, 1, 1},    {0, 100, 1},  {1, 1, 1},     {1, 100, 1},
               {10, 1, 10},  {10, 5, 2},   {10, 3, 4},    {10, 10, 1},
               {10, 11, 1},  {100, 99, 2}, {100, 100, 1}, {101, 100, 2},
               {200, 100, 2}};
  for (const Case& c : cases) {
    Blob blob = *MakeBlob("T", std::string(c.wire, 'x'));
    EXPECT_EQ(DataChunkCount(blob, c.chunk), c.count)
        << c.wire << " / " << c.chunk;
  }
}

TEST(ChunkTest, HeaderCarriesTheBlobAndSender) {
  Blob blob = *MakeBlob("BlockMessage", Compressible(2000), 1000);
  ::routing::Chunk chunk;
  FillHeaderChunk(blob, Sender(), kNetwork, &chunk);
  ASSERT_EQ(chunk.content_case(), ::routing::Chunk::kHeader);
  const ::routing::ChunkHeader& header = chunk.header();
  EXPECT_EQ(header.typeid_(), "BlockMessage");
  EXPECT_TRUE(header.compressed());
  EXPECT_EQ(header.contentlength(), 2000);
  EXPECT_EQ(header.networkid(), kNetwork);
  EXPECT_EQ(*PeerFromProto(header.sender()), Sender());
}

TEST(ChunkTest, DataChunksCoverTheWireInOrder) {
  Blob blob = *MakeBlob("T", "abcdefghij");
  std::string joined;
  for (size_t i = 0; i < DataChunkCount(blob, 3); ++i) {
    ::routing::Chunk chunk;
    FillDataChunk(blob, i, 3, &chunk);
    joined += chunk.data().contentdata();
  }
  EXPECT_EQ(joined, "abcdefghij");
  ::routing::Chunk last;
  FillDataChunk(blob, 3, 3, &last);
  EXPECT_EQ(last.data().contentdata(), "j");
}

// --- Reassembly ---

TEST(StreamTest, RoundTripsAtSeveralChunkSizes) {
  std::mt19937_64 rng(rnode::testing::TestSeed(20240611));
  struct Content {
    const char* name;
    std::string bytes;
    size_t compress_above;
  };
  const std::vector<Content> contents = {
      {"empty", "", kCompressAboveBytes},
      {"empty compressed", "", 0},
      {"one byte", "x", kCompressAboveBytes},
      {"one byte compressed", "x", 0},
      {"1000 random", RandomBytes(rng, 1000), kCompressAboveBytes},
      {"1000 random compressed", RandomBytes(rng, 1000), 0},
      {"large compressible", Compressible(kCompressAboveBytes + 4096),
       kCompressAboveBytes},
  };
  for (const Content& c : contents) {
    Blob blob = *MakeBlob("BlockMessage", c.bytes, c.compress_above);
    const size_t wire = blob.wire->size();
    for (size_t chunk_bytes : {size_t{1}, size_t{7}, size_t{250}, size_t{1000},
                               wire, wire + 1, size_t{1} << 20}) {
      if (chunk_bytes == 0) continue;
      absl::StatusOr<std::string> back =
          Reassemble(blob, chunk_bytes, c.bytes.size());
      ASSERT_TRUE(back.ok())
          << c.name << " in chunks of " << chunk_bytes << ": " << back.status();
      EXPECT_EQ(*back, c.bytes) << c.name << " in chunks of " << chunk_bytes;
    }
  }
}

TEST(StreamTest, RandomizedRoundTrips) {
  std::mt19937_64 rng(rnode::testing::TestSeed(7));
  for (int round = 0; round < 60; ++round) {
    // Runs of one byte mixed with noise, so that some of it compresses.
    const size_t size = rng() % 20000;
    std::string content;
    while (content.size() < size) {
      const size_t run = 1 + rng() % 300;
      if (rng() % 2 == 0) {
        content += std::string(run, static_cast<char>(rng()));
      } else {
        content += RandomBytes(rng, run);
      }
    }
    content.resize(size);
    const size_t compress_above = rng() % 2 == 0 ? 0 : kCompressAboveBytes;
    const size_t chunk_bytes = 1 + rng() % 4096;
    Blob blob = *MakeBlob("BlockMessage", content, compress_above);
    absl::StatusOr<std::string> back =
        Reassemble(blob, chunk_bytes, content.size() + rng() % 10);
    ASSERT_TRUE(back.ok()) << "round " << round << ": " << back.status();
    EXPECT_EQ(*back, content) << "round " << round;
  }
}

TEST(StreamTest, FirstChunkMustBeAHeader) {
  StreamAssembler assembler(kNetwork, 100);
  EXPECT_EQ(assembler.Add(Data("abc")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(assembler.Add(Header(3)).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_FALSE(assembler.sender().has_value());
}

TEST(StreamTest, ChunkWithNeitherHeaderNorDataIsRefused) {
  StreamAssembler before(kNetwork, 100);
  EXPECT_EQ(before.Add(::routing::Chunk()).code(),
            absl::StatusCode::kInvalidArgument);
  StreamAssembler after(kNetwork, 100);
  ASSERT_TRUE(after.Add(Header(3)).ok());
  EXPECT_EQ(after.Add(::routing::Chunk()).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(StreamTest, OtherNetworkIsPermissionDenied) {
  StreamAssembler assembler("mainnet", 100);
  EXPECT_EQ(assembler.Add(Header(3)).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_FALSE(assembler.sender().has_value());
}

TEST(StreamTest, ContentLengthMustBeWithinLimits) {
  for (bool compressed : {false, true}) {
    StreamAssembler negative(kNetwork, 100);
    EXPECT_EQ(negative.Add(Header(-1, compressed)).code(),
              absl::StatusCode::kInvalidArgument);
    StreamAssembler above(kNetwork, 100);
    EXPECT_EQ(above.Add(Header(101, compressed)).code(),
              absl::StatusCode::kInvalidArgument);
    StreamAssembler at(kNetwork, 100);
    EXPECT_TRUE(at.Add(Header(100, compressed)).ok());
    EXPECT_EQ(at.content_length(), 100u);
    EXPECT_EQ(at.compressed(), compressed);
  }
}

TEST(StreamTest, SenderMustBeAValidNode) {
  std::vector<::routing::Chunk> headers;
  headers.push_back(Header(3));
  headers.back().mutable_header()->clear_sender();
  headers.push_back(Header(3));
  headers.back().mutable_header()->mutable_sender()->set_id("short");
  headers.push_back(Header(3));
  headers.back().mutable_header()->mutable_sender()->set_host("");
  headers.push_back(Header(3));
  headers.back().mutable_header()->mutable_sender()->set_tcp_port(0);
  headers.push_back(Header(3));
  headers.back().mutable_header()->mutable_sender()->set_udp_port(70000);
  for (const ::routing::Chunk& header : headers) {
    StreamAssembler assembler(kNetwork, 100);
    absl::Status status = assembler.Add(header);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument)
        << header.ShortDebugString();
    EXPECT_THAT(status.message(), HasSubstr("sender"));
  }
}

TEST(StreamTest, TypeIdMustBeShortPrintableAscii) {
  const std::vector<std::string> bad = {"",
                                        std::string(kTypeIdLimit + 1, 'T'),
                                        "Block\nMessage",
                                        std::string("Block\0", 6),
                                        "Bl\xc3\xb6"
                                        "ck",
                                        "Block Message"};
  for (const std::string& type_id : bad) {
    ::routing::Chunk header = Header(3);
    header.mutable_header()->set_typeid_(type_id);
    StreamAssembler assembler(kNetwork, 100);
    EXPECT_EQ(assembler.Add(header).code(), absl::StatusCode::kInvalidArgument)
        << type_id;
  }
  ::routing::Chunk header = Header(3);
  header.mutable_header()->set_typeid_(std::string(kTypeIdLimit, 'T'));
  StreamAssembler assembler(kNetwork, 100);
  EXPECT_TRUE(assembler.Add(header).ok());
}

TEST(StreamTest, UncompressedDataBeyondContentLengthIsRefused) {
  StreamAssembler one_chunk(kNetwork, 100);
  ASSERT_TRUE(one_chunk.Add(Header(10)).ok());
  EXPECT_EQ(one_chunk.Add(Data(std::string(11, 'x'))).code(),
            absl::StatusCode::kInvalidArgument);

  StreamAssembler two_chunks(kNetwork, 100);
  ASSERT_TRUE(two_chunks.Add(Header(10)).ok());
  ASSERT_TRUE(two_chunks.Add(Data(std::string(10, 'x'))).ok());
  ASSERT_TRUE(two_chunks.Add(Data("")).ok());
  EXPECT_EQ(two_chunks.Add(Data("y")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(two_chunks.received(), 10u);
}

TEST(StreamTest, CompressedDataBeyondItsBoundIsRefused) {
  for (int32_t length : {0, 1, 100, 1000}) {
    const size_t bound = CompressedWireBound(length);
    StreamAssembler at(kNetwork, 1000);
    ASSERT_TRUE(at.Add(Header(length, true)).ok());
    EXPECT_TRUE(at.Add(Data(std::string(bound, 'x'))).ok()) << length;
    EXPECT_EQ(at.Add(Data("x")).code(), absl::StatusCode::kInvalidArgument)
        << length;

    StreamAssembler above(kNetwork, 1000);
    ASSERT_TRUE(above.Add(Header(length, true)).ok());
    EXPECT_EQ(above.Add(Data(std::string(bound + 1, 'x'))).code(),
              absl::StatusCode::kInvalidArgument)
        << length;
  }
}

TEST(StreamTest, SecondHeaderIsRefused) {
  StreamAssembler assembler(kNetwork, 100);
  ASSERT_TRUE(assembler.Add(Header(3)).ok());
  ASSERT_TRUE(assembler.Add(Data("ab")).ok());
  EXPECT_EQ(assembler.Add(Header(3)).code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(StreamTest, EveryCallFailsAfterAFault) {
  StreamAssembler assembler(kNetwork, 100);
  ASSERT_TRUE(assembler.Add(Header(3)).ok());
  ASSERT_EQ(assembler.Add(Data("abcd")).code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(assembler.Add(Data("abc")).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(assembler.Add(Header(3)).code(),
            absl::StatusCode::kFailedPrecondition);
  EXPECT_EQ(std::move(assembler).Finish().status().code(),
            absl::StatusCode::kFailedPrecondition);

  StreamAssembler wrong_network("mainnet", 100);
  ASSERT_EQ(wrong_network.Add(Header(0)).code(),
            absl::StatusCode::kPermissionDenied);
  EXPECT_EQ(std::move(wrong_network).Finish().status().code(),
            absl::StatusCode::kFailedPrecondition);
}

TEST(StreamTest, FinishWithoutHeaderIsInvalidArgument) {
  StreamAssembler assembler(kNetwork, 100);
  EXPECT_EQ(std::move(assembler).Finish().status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(StreamTest, FinishWithMissingDataIsInvalidArgument) {
  StreamAssembler none(kNetwork, 100);
  ASSERT_TRUE(none.Add(Header(3)).ok());
  EXPECT_EQ(std::move(none).Finish().status().code(),
            absl::StatusCode::kInvalidArgument);

  StreamAssembler short_data(kNetwork, 100);
  ASSERT_TRUE(short_data.Add(Header(3)).ok());
  ASSERT_TRUE(short_data.Add(Data("ab")).ok());
  EXPECT_EQ(std::move(short_data).Finish().status().code(),
            absl::StatusCode::kInvalidArgument);

  StreamAssembler empty(kNetwork, 100);
  ASSERT_TRUE(empty.Add(Header(0)).ok());
  absl::StatusOr<std::string> nothing = std::move(empty).Finish();
  ASSERT_TRUE(nothing.ok()) << nothing.status();
  EXPECT_EQ(*nothing, "");
}

TEST(StreamTest, CompressedEmptyContent) {
  StreamAssembler assembler(kNetwork, 100);
  ASSERT_TRUE(assembler.Add(Header(0, true)).ok());
  ASSERT_TRUE(assembler.Add(Data(Compress(""))).ok());
  absl::StatusOr<std::string> nothing = std::move(assembler).Finish();
  ASSERT_TRUE(nothing.ok()) << nothing.status();
  EXPECT_EQ(*nothing, "");
}

TEST(StreamTest, FinishOfBadCompressedDataIsInvalidArgument) {
  const std::string content = Compressible(5000);
  const std::string wire = Compress(content);
  const std::vector<std::string> bad = {
      "", wire.substr(0, wire.size() - 1), wire.substr(0, wire.size() / 2),
      Compress(content.substr(1)), std::string(64, '\xff')};
  for (const std::string& data : bad) {
    StreamAssembler assembler(kNetwork, 10000);
    ASSERT_TRUE(assembler.Add(Header(5000, true)).ok());
    ASSERT_TRUE(assembler.Add(Data(data)).ok());
    EXPECT_EQ(std::move(assembler).Finish().status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

// --- LZ4 framing ---

TEST(CompressTest, RoundTripsAndPrefixesTheLength) {
  std::mt19937_64 rng(rnode::testing::TestSeed(99));
  const std::vector<std::string> inputs = {
      "", "a", Compressible(300), RandomBytes(rng, 300), Compressible(1 << 20)};
  for (const std::string& raw : inputs) {
    const std::string wire = Compress(raw);
    absl::StatusOr<std::string> back = Decompress(wire, raw.size());
    ASSERT_TRUE(back.ok()) << raw.size() << ": " << back.status();
    EXPECT_EQ(*back, raw);
  }
  EXPECT_EQ(Compress("")[0], '\0');
  // 300 = 0b10'0101100: LEB128 0xac 0x02.
  EXPECT_EQ(Compress(Compressible(300)).substr(0, 2), "\xac\x02");
}

TEST(CompressTest, TruncatedInputIsInvalidArgument) {
  const std::string raw = Compressible(3000);
  const std::string wire = Compress(raw);
  for (size_t cut = 0; cut < wire.size(); ++cut) {
    EXPECT_EQ(Decompress(wire.substr(0, cut), raw.size()).status().code(),
              absl::StatusCode::kInvalidArgument)
        << "cut at " << cut;
  }
}

TEST(CompressTest, CorruptInputIsInvalidArgument) {
  const std::string raw = Compressible(3000);
  const std::string wire = Compress(raw);
  const std::string prefix = wire.substr(0, 2);  // the varint of 3000
  ASSERT_EQ(prefix, "\xb8\x17");
  for (const std::string& block :
       {std::string(), std::string(16, '\xff'), std::string(1, '\0'),
        // A match before the start of the output.
        std::string("\x1f\x61\xff\xff", 4)}) {
    EXPECT_EQ(Decompress(prefix + block, raw.size()).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
  EXPECT_EQ(Decompress(wire + "x", raw.size()).status().code(),
            absl::StatusCode::kInvalidArgument);
  // Flipped bytes: refused or decoded to the announced length, never more.
  std::mt19937_64 rng(rnode::testing::TestSeed(5));
  for (int i = 0; i < 200; ++i) {
    std::string spoiled = wire;
    const size_t at = 2 + rng() % (wire.size() - 2);
    spoiled[at] = static_cast<char>(spoiled[at] ^ (1 + rng() % 255));
    absl::StatusOr<std::string> back = Decompress(spoiled, raw.size());
    if (back.ok()) {
      EXPECT_EQ(back->size(), raw.size());
    }
  }
}

TEST(CompressTest, LengthPrefixMustAgree) {
  const std::string raw = "hello, hello, hello";
  const std::string wire = Compress(raw);
  for (size_t expected : {raw.size() - 1, raw.size() + 1, size_t{0}}) {
    absl::Status status = Decompress(wire, expected).status();
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(status.message(), HasSubstr("length prefix"));
  }
  // Right length, wrong prefix: the block is of 19 bytes, the varint says 18.
  std::string lying = wire;
  lying[0] = static_cast<char>(raw.size() - 1);
  EXPECT_EQ(Decompress(lying, raw.size() - 1).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(CompressTest, MalformedVarintIsInvalidArgument) {
  for (const std::string& wire :
       {std::string(), std::string("\x80"), std::string("\xff\xff\xff"),
        std::string("\xff\xff\xff\xff\xff\x01")}) {
    EXPECT_EQ(Decompress(wire, 0).status().code(),
              absl::StatusCode::kInvalidArgument);
  }
}

}  // namespace
}  // namespace rnode::node::p2p
