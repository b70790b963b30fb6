// The four Kafka record codecs (docs/kafka-protocol.md §3, "Compression by client"): what a batch's records section
// holds when its attributes name a codec. Pure functions over memory; no state survives a call.
//
// Decompression reads untrusted bytes from the network or disk: it fails with kCorruption on any malformed input,
// trailing bytes, or an output that would exceed `max_output_bytes`. Memory use is bounded by that limit (plus the
// libraries' fixed working state), so a small "zip bomb" cannot make the broker allocate without bound.
#pragma once

#include <cstddef>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/storage/record_batch.h"

namespace sluice::storage {

// The default decompression bound. Kafka's default max.message.bytes is 1 MiB, so this allows ratios of 64:1 at
// that size; callers with a larger batch limit pass their own.
inline constexpr size_t kMaxDecompressedBytes = size_t{64} << 20;

// What each codec writes:
//   gzip    an RFC 1952 stream (zlib, default level);
//   snappy  one raw snappy block, as librdkafka writes it (every client decodes that form);
//   lz4     an LZ4 frame with independent 64 KiB blocks and no content size, as the Java client writes it;
//   zstd    one zstd frame (level 3).
// kNone copies. Fails with kInvalidArgument for a codec number outside 0..4 or a library failure.
Result<Bytes> compress(Compression codec, ByteView input);

// Accepts what the clients send:
//   gzip    one or more concatenated gzip members;
//   snappy  a raw block, or xerial framing (magic 82 'SNAPPY' 00, int32 version, int32 compatible version, then
//           [int32 big-endian length, raw block]...) as the Java client and kafka-python send;
//   lz4     one or more LZ4 frames (skippable frames too);
//   zstd    one or more frames, with or without a content size in their headers.
// kNone copies (and is bounded too). Fails with kCorruption on malformed input, an unknown codec number, or an
// output larger than `max_output_bytes`.
Result<Bytes> decompress(Compression codec, ByteView input, size_t max_output_bytes = kMaxDecompressedBytes);

}  // namespace sluice::storage
