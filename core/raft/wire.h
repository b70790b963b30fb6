// The raft transport's frames. Every frame: [u32 big-endian length of what follows][u8 version][u8 kind][body].
// Kinds: a handshake (the dialer's node id, once, first) and a batch (envelopes: group id and message; a message's
// entries as term, index count and payload). Integers are unsigned varints, so a heartbeat costs about a dozen
// bytes; decoding is total: malformed input (an entry covering no index included) is an error, never an assertion
// or a read past the end.
#pragma once

#include <cstdint>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/raft/envelope.h"

namespace sluice::raft {

// 2: each entry carries its index count (term, count, payload); message types up to kPropose (a forwarded
// proposal, added before version 2 was ever released). 3: every message carries log_start after the incarnation
// (a low watermark, issue 22 step 6) and flag 4 (from_log_start). A node refuses frames of another version.
inline constexpr uint8_t kWireVersion = 3;
inline constexpr size_t kFrameHeaderBytes = 4;  // the length; version and kind count in it

enum class FrameKind : uint8_t { kHandshake = 1, kBatch = 2 };

// Appends one whole frame (header included) to `out`.
void encode_handshake(NodeId self, Bytes& out);
void encode_batch(const std::vector<Envelope>& batch, Bytes& out);
// One envelope's body bytes (its share of a batch frame).
size_t encoded_size(const Envelope& envelope);

struct Frame {
  FrameKind kind = FrameKind::kBatch;
  NodeId handshake_from = kNoNode;  // kHandshake
  std::vector<Envelope> batch;      // kBatch
};

// `body` is what follows the length: version, kind, payload. kCorruption on anything malformed, kNotSupported on
// another version.
Result<Frame> decode_frame(ByteView body);
// The length field of a frame header. REQUIRES header.size() == kFrameHeaderBytes.
uint32_t frame_length(ByteView header);

}  // namespace sluice::raft
