#include "core/raft/wire.h"

#include <gtest/gtest.h>

#include <algorithm>

#include "core/env/random.h"

namespace sluice::raft {
namespace {

Message random_message(Random& rng) {
  Message m;
  m.type = static_cast<MessageType>(rng.uniform(10));  // every type, kPropose included
  m.from = 1 + rng.uniform(5);
  m.to = 1 + rng.uniform(5);
  m.term = rng.next_u64() >> rng.uniform(64);
  m.log_index = rng.next_u64() >> rng.uniform(64);
  m.log_term = rng.uniform(1000);
  m.commit = rng.uniform(1 << 20);
  m.reject = rng.uniform(2) == 1;
  m.hint_index = rng.uniform(100);
  m.hint_term = rng.uniform(100);
  m.transfer = rng.uniform(2) == 1;
  m.incarnation = rng.uniform(50);
  for (uint64_t i = rng.uniform(4); i > 0; --i) {
    // Counts from 1 to a whole Kafka batch's worth and beyond, up to the largest one an entry may cover.
    const Index count = rng.uniform(3) == 0 ? 1 : std::max<Index>(1, rng.next_u64() >> (32 + rng.uniform(32)));
    m.entries.push_back(Entry{.term = rng.uniform(100),
                              .count = count,
                              .payload = std::string(rng.uniform(300), static_cast<char>('a' + i))});
  }
  return m;
}

Result<Frame> decode_whole(const Bytes& frame) {
  EXPECT_GE(frame.size(), kFrameHeaderBytes);
  EXPECT_EQ(frame_length(ByteView(frame).first(kFrameHeaderBytes)), frame.size() - kFrameHeaderBytes);
  return decode_frame(ByteView(frame).subspan(kFrameHeaderBytes));
}

TEST(RaftWire, EveryMessageTypeRoundTripsWithRandomFields) {
  Random rng(3);
  for (int round = 0; round < 200; ++round) {
    std::vector<Envelope> batch;
    for (uint64_t i = 1 + rng.uniform(20); i > 0; --i) batch.push_back(Envelope{rng.next_u64(), random_message(rng)});
    Bytes frame;
    encode_batch(batch, frame);
    Result<Frame> decoded = decode_whole(frame);
    ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
    EXPECT_EQ(decoded->kind, FrameKind::kBatch);
    EXPECT_EQ(decoded->batch, batch);
  }
}

TEST(RaftWire, AHandshakeRoundTrips) {
  Bytes frame;
  encode_handshake(7, frame);
  Result<Frame> decoded = decode_whole(frame);
  ASSERT_TRUE(decoded.ok());
  EXPECT_EQ(decoded->kind, FrameKind::kHandshake);
  EXPECT_EQ(decoded->handshake_from, 7u);
}

TEST(RaftWire, AHeartbeatCostsAboutADozenBytes) {
  Message hb;
  hb.type = MessageType::kHeartbeat;
  hb.from = 1;
  hb.to = 2;
  hb.term = 5;
  hb.commit = 1000;
  hb.incarnation = 2;
  EXPECT_LE(encoded_size(Envelope{42, hb}), 16u);
}

TEST(RaftWire, EveryTruncationAndEveryFlippedByteIsRefusedOrDecodesToSomethingValid) {
  Random rng(5);
  std::vector<Envelope> batch;
  for (int i = 0; i < 5; ++i) batch.push_back(Envelope{static_cast<GroupId>(i), random_message(rng)});
  Bytes frame;
  encode_batch(batch, frame);
  const ByteView body = ByteView(frame).subspan(kFrameHeaderBytes);
  for (size_t cut = 0; cut < body.size(); ++cut) {
    EXPECT_FALSE(decode_frame(body.first(cut)).ok()) << "cut at " << cut;
  }
  for (size_t at = 0; at < body.size(); ++at) {
    Bytes damaged(body.begin(), body.end());
    damaged[at] ^= 0x5a;
    Result<Frame> decoded = decode_frame(damaged);  // must not crash or read out of bounds (ASan)
    if (decoded.ok()) {
      EXPECT_EQ(decoded->kind, FrameKind::kBatch);
    }
  }
}

TEST(RaftWire, AnotherVersionAnUnknownKindAndTrailingBytesAreRefused) {
  Bytes frame;
  encode_handshake(3, frame);
  Bytes body(frame.begin() + kFrameHeaderBytes, frame.end());
  Bytes other_version = body;
  other_version[0] = kWireVersion + 1;
  EXPECT_EQ(decode_frame(other_version).status().code(), Code::kNotSupported);
  Bytes unknown_kind = body;
  unknown_kind[1] = 9;
  EXPECT_EQ(decode_frame(unknown_kind).status().code(), Code::kCorruption);
  Bytes trailing = body;
  trailing.push_back(0);
  EXPECT_EQ(decode_frame(trailing).status().code(), Code::kCorruption);
  Bytes from_zero = body;
  from_zero[2] = 0;
  EXPECT_FALSE(decode_frame(from_zero).ok());
}

// A forwarded proposal carries its entries; the type after it is unknown to this version and refused.
TEST(RaftWire, AForwardedProposalRoundTripsAndTheTypeAfterItIsRefused) {
  Message m{.type = MessageType::kPropose, .from = 2, .to = 1, .term = 4};
  m.entries.push_back(Entry{.term = 0, .count = 1, .payload = "metadata"});
  Bytes frame;
  encode_batch({Envelope{0, m}}, frame);
  Result<Frame> decoded = decode_whole(frame);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  ASSERT_EQ(decoded->batch.size(), 1u);
  EXPECT_EQ(decoded->batch[0].message, m);
  // [length][version][kind][count][group][type]: the type is the sixth byte of the frame when group and count are
  // one-byte varints.
  Bytes unknown(frame.begin() + kFrameHeaderBytes, frame.end());
  ASSERT_EQ(unknown[4], static_cast<uint8_t>(MessageType::kPropose));
  unknown[4] = static_cast<uint8_t>(MessageType::kPropose) + 1;
  EXPECT_EQ(decode_frame(unknown).status().code(), Code::kCorruption);
}

TEST(RaftWire, EntryCountsRoundTripAndAnEntryCoveringNoIndexOrTooManyIsRefused) {
  Message m{.type = MessageType::kAppend, .from = 1, .to = 2, .term = 3, .log_index = 10, .log_term = 2};
  m.entries = {Entry{.term = 3, .count = 1, .payload = "a"}, Entry{.term = 3, .count = kEntryCountMax, .payload = ""},
               Entry{.term = 3, .count = 500, .payload = "batch"}};
  Bytes frame;
  encode_batch({Envelope{9, m}}, frame);
  Result<Frame> decoded = decode_whole(frame);
  ASSERT_TRUE(decoded.ok()) << decoded.status().to_string();
  ASSERT_EQ(decoded->batch.size(), 1u);
  EXPECT_EQ(decoded->batch[0].message, m);

  // One entry of count 1 with an empty payload: its last three bytes are term, count and length.
  Message one{.type = MessageType::kAppend, .from = 1, .to = 2, .term = 3};
  one.entries = {Entry{.term = 3, .count = 1, .payload = ""}};
  Bytes good;
  encode_batch({Envelope{9, one}}, good);
  Bytes body(good.begin() + kFrameHeaderBytes, good.end());
  ASSERT_EQ(body[body.size() - 2], 1u);
  ASSERT_TRUE(decode_frame(body).ok());
  Bytes zero = body;
  zero[zero.size() - 2] = 0;
  EXPECT_EQ(decode_frame(zero).status().code(), Code::kCorruption);
  // A count above kEntryCountMax (2^32 as a varint: 0x80 0x80 0x80 0x80 0x10).
  Bytes over(body.begin(), body.end() - 2);
  for (uint8_t b : {0x80, 0x80, 0x80, 0x80, 0x10}) over.push_back(b);
  over.push_back(0);
  EXPECT_EQ(decode_frame(over).status().code(), Code::kCorruption);
}

TEST(RaftWire, AHugeEntryCountIsRefusedBeforeAnyAllocation) {
  Bytes body = {kWireVersion, static_cast<uint8_t>(FrameKind::kBatch), 1, /*group*/ 1, /*type*/ 0, /*flags*/ 0};
  for (int i = 0; i < 9; ++i) body.push_back(0);
  for (int i = 0; i < 9; ++i) body.push_back(0xff);  // entry count: a varlong near 2^63
  body.push_back(0x7f);
  EXPECT_EQ(decode_frame(body).status().code(), Code::kCorruption);
}

}  // namespace
}  // namespace sluice::raft
