#include "core/raft/wire.h"

#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/base/varint.h"

namespace sluice::raft {
namespace {

constexpr uint8_t kMaxMessageType = static_cast<uint8_t>(MessageType::kPropose);
// Flags byte of a message.
constexpr uint8_t kFlagReject = 1;
constexpr uint8_t kFlagTransfer = 2;
constexpr uint8_t kFlagFromLogStart = 4;

Status malformed(std::string what) { return Status(Code::kCorruption, "raft frame: " + what); }

void put_string(Bytes& out, const std::string& s) {
  put_unsigned_varlong(&out, s.size());
  out.insert(out.end(), s.begin(), s.end());
}

void put_message(Bytes& out, GroupId group, const Message& m) {
  put_unsigned_varlong(&out, group);
  out.push_back(static_cast<uint8_t>(m.type));
  out.push_back(static_cast<uint8_t>((m.reject ? kFlagReject : 0) | (m.transfer ? kFlagTransfer : 0) |
                                     (m.from_log_start ? kFlagFromLogStart : 0)));
  for (uint64_t v : {m.from, m.to, m.term, m.log_index, m.log_term, m.commit, m.hint_index, m.hint_term,
                     m.incarnation, m.log_start}) {
    put_unsigned_varlong(&out, v);
  }
  put_unsigned_varlong(&out, m.entries.size());
  for (const Entry& e : m.entries) {
    SLUICE_ASSERT(e.count >= 1);
    SLUICE_ASSERT(e.count <= kEntryCountMax);
    put_unsigned_varlong(&out, e.term);
    put_unsigned_varlong(&out, e.count);
    put_string(out, e.payload);
  }
}

void start_frame(Bytes& out, FrameKind kind, size_t& length_at) {
  length_at = out.size();
  out.insert(out.end(), {0, 0, 0, 0, kWireVersion, static_cast<uint8_t>(kind)});
}

void finish_frame(Bytes& out, size_t length_at) {
  const size_t length = out.size() - length_at - kFrameHeaderBytes;
  SLUICE_ASSERT(length >= 2);
  SLUICE_ASSERT(length <= UINT32_MAX);
  for (int i = 0; i < 4; ++i) out[length_at + i] = static_cast<uint8_t>(length >> (24 - 8 * i));
}

Result<uint64_t> read_u64(ByteView& in, const char* field) {
  Result<uint64_t> v = read_unsigned_varlong(&in);
  if (!v.ok()) return malformed(fmt::format("bad {}", field));
  return v;
}

Result<Envelope> read_envelope(ByteView& in) {
  Envelope envelope;
  SLUICE_ASSIGN_OR_RETURN(envelope.group, read_u64(in, "group"));
  if (in.size() < 2) return malformed("truncated message");
  if (in[0] > kMaxMessageType) return malformed(fmt::format("unknown message type {}", in[0]));
  if ((in[1] & ~(kFlagReject | kFlagTransfer | kFlagFromLogStart)) != 0) return malformed("unknown message flags");
  Message& m = envelope.message;
  m.type = static_cast<MessageType>(in[0]);
  m.reject = (in[1] & kFlagReject) != 0;
  m.transfer = (in[1] & kFlagTransfer) != 0;
  m.from_log_start = (in[1] & kFlagFromLogStart) != 0;
  in = in.subspan(2);
  for (uint64_t* field : {&m.from, &m.to, &m.term, &m.log_index, &m.log_term, &m.commit, &m.hint_index, &m.hint_term,
                          &m.incarnation, &m.log_start}) {
    SLUICE_ASSIGN_OR_RETURN(*field, read_u64(in, "message field"));
  }
  SLUICE_ASSIGN_OR_RETURN(uint64_t entries, read_u64(in, "entry count"));
  // Each entry takes at least three bytes: a count past that is damage, not a reason to reserve memory.
  if (entries > in.size() / 3) return malformed("entry count past the frame");
  m.entries.reserve(entries);
  for (uint64_t i = 0; i < entries; ++i) {
    Entry e;
    SLUICE_ASSIGN_OR_RETURN(e.term, read_u64(in, "entry term"));
    SLUICE_ASSIGN_OR_RETURN(e.count, read_u64(in, "entry index count"));
    if (e.count == 0 || e.count > kEntryCountMax) return malformed(fmt::format("entry covering {} indexes", e.count));
    SLUICE_ASSIGN_OR_RETURN(uint64_t size, read_u64(in, "payload length"));
    if (size > in.size()) return malformed("payload past the frame");
    e.payload.assign(reinterpret_cast<const char*>(in.data()), size);
    in = in.subspan(size);
    m.entries.push_back(std::move(e));
  }
  return envelope;
}

}  // namespace

void encode_handshake(NodeId self, Bytes& out) {
  SLUICE_ASSERT(self != kNoNode);
  size_t at = 0;
  start_frame(out, FrameKind::kHandshake, at);
  put_unsigned_varlong(&out, self);
  finish_frame(out, at);
}

void encode_batch(const std::vector<Envelope>& batch, Bytes& out) {
  SLUICE_ASSERT(!batch.empty());
  size_t at = 0;
  start_frame(out, FrameKind::kBatch, at);
  put_unsigned_varlong(&out, batch.size());
  for (const Envelope& e : batch) put_message(out, e.group, e.message);
  finish_frame(out, at);
}

size_t encoded_size(const Envelope& envelope) {
  Bytes scratch;
  put_message(scratch, envelope.group, envelope.message);
  return scratch.size();
}

uint32_t frame_length(ByteView header) {
  SLUICE_ASSERT(header.size() == kFrameHeaderBytes);
  return (uint32_t{header[0]} << 24) | (uint32_t{header[1]} << 16) | (uint32_t{header[2]} << 8) | header[3];
}

Result<Frame> decode_frame(ByteView body) {
  if (body.size() < 2) return malformed("shorter than its version and kind");
  if (body[0] != kWireVersion) {
    return Status(Code::kNotSupported, fmt::format("raft frame: version {} (this node speaks {})", body[0],
                                                   kWireVersion));
  }
  Frame frame;
  ByteView in = body.subspan(2);
  switch (body[1]) {
    case static_cast<uint8_t>(FrameKind::kHandshake): {
      frame.kind = FrameKind::kHandshake;
      SLUICE_ASSIGN_OR_RETURN(frame.handshake_from, read_u64(in, "node id"));
      if (frame.handshake_from == kNoNode) return malformed("handshake from node 0");
      break;
    }
    case static_cast<uint8_t>(FrameKind::kBatch): {
      frame.kind = FrameKind::kBatch;
      SLUICE_ASSIGN_OR_RETURN(uint64_t count, read_u64(in, "batch count"));
      if (count == 0 || count > in.size() / 12) return malformed("batch count out of range");
      frame.batch.reserve(count);
      for (uint64_t i = 0; i < count; ++i) {
        SLUICE_ASSIGN_OR_RETURN(Envelope e, read_envelope(in));
        frame.batch.push_back(std::move(e));
      }
      break;
    }
    default:
      return malformed(fmt::format("unknown frame kind {}", body[1]));
  }
  if (!in.empty()) return malformed(fmt::format("{} bytes past the frame's content", in.size()));
  return frame;
}

}  // namespace sluice::raft
