#include "core/storage/compression.h"

#include <lz4frame.h>
#include <snappy-c.h>
#include <zlib.h>
#include <zstd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <memory>
#include <string>

#include "core/base/assert.h"

namespace sluice::storage {
namespace {

constexpr size_t kMinGrowthBytes = 64 * 1024;

// The output of a streaming decoder. It grows on demand up to one byte past the bound, so that a decoder with more
// to say than the bound allows is caught after at most max + 1 bytes.
class BoundedOutput {
 public:
  BoundedOutput(size_t max_bytes, size_t size_hint)
      : max_bytes_(max_bytes), limit_(max_bytes == SIZE_MAX ? SIZE_MAX : max_bytes + 1) {
    bytes_.resize(std::min(limit_, std::max(size_hint, kMinGrowthBytes)));
  }

  // Where the decoder writes next; never empty (the buffer grows when full) unless the bound is already exceeded.
  MutableByteView room() {
    if (used_ == bytes_.size() && bytes_.size() < limit_) {
      const size_t grown = bytes_.size() > limit_ / 2 ? limit_ : bytes_.size() * 2;
      const size_t size = std::min(std::max(grown, kMinGrowthBytes), limit_);
      // Exactly that much: resize alone would let the vector double its capacity past the limit (to twice the
      // bound, for the last step from the bound to the bound + 1).
      bytes_.reserve(size);
      bytes_.resize(size);
    }
    return MutableByteView(bytes_).subspan(used_);
  }
  void produced(size_t n) {
    SLUICE_ASSERT(n <= bytes_.size() - used_);
    used_ += n;
  }
  bool exceeded() const { return used_ > max_bytes_; }
  Status exceeded_error(const char* codec) const {
    return corruption(std::string(codec) + ": decompressed size exceeds " + std::to_string(max_bytes_) + " bytes");
  }
  Bytes take() && {
    bytes_.resize(used_);
    return std::move(bytes_);
  }

 private:
  size_t max_bytes_;
  size_t limit_;
  size_t used_ = 0;
  Bytes bytes_;
};

uint32_t read_be32(const uint8_t* p) {
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | uint32_t{p[3]};
}

// --- gzip ---

Result<Bytes> gzip_compress(ByteView input) {
  if (input.size() > UINT_MAX) return invalid_argument("gzip: input over 4 GiB");
  z_stream z{};
  if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, MAX_WBITS + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
    return invalid_argument("gzip: deflateInit2 failed");
  }
  Bytes out(deflateBound(&z, input.size()));
  z.next_in = const_cast<Bytef*>(input.data());  // zlib's API is not const-correct; it does not write the input
  z.avail_in = static_cast<uInt>(input.size());
  z.next_out = out.data();
  z.avail_out = static_cast<uInt>(out.size());
  const int rc = deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  if (rc != Z_STREAM_END) return invalid_argument("gzip: deflate failed with " + std::to_string(rc));
  return out;
}

struct InflateGuard {
  z_stream* z;
  ~InflateGuard() { inflateEnd(z); }
};

Result<Bytes> gzip_decompress(ByteView input, size_t max_bytes) {
  if (input.size() > UINT_MAX) return corruption("gzip: input over 4 GiB");
  z_stream z{};
  if (inflateInit2(&z, MAX_WBITS + 16) != Z_OK) return corruption("gzip: inflateInit2 failed");
  InflateGuard guard{&z};
  z.next_in = const_cast<Bytef*>(input.data());
  z.avail_in = static_cast<uInt>(input.size());
  BoundedOutput out(max_bytes, input.size() * 4);
  while (true) {
    MutableByteView room = out.room();
    z.next_out = room.data();
    z.avail_out = static_cast<uInt>(std::min<size_t>(room.size(), UINT_MAX));
    const uInt offered = z.avail_out;
    const int rc = inflate(&z, Z_NO_FLUSH);
    out.produced(offered - z.avail_out);
    if (out.exceeded()) return out.exceeded_error("gzip");
    if (rc == Z_STREAM_END) {
      if (z.avail_in == 0) break;
      // Another member follows (gzip streams may be concatenated); anything else fails in the next inflate.
      if (inflateReset(&z) != Z_OK) return corruption("gzip: inflateReset failed");
      continue;
    }
    // Z_BUF_ERROR with output room left means the input ended inside the stream.
    if (rc == Z_BUF_ERROR) return corruption("gzip: truncated stream");
    if (rc != Z_OK) return corruption(std::string("gzip: ") + (z.msg != nullptr ? z.msg : "inflate failed"));
  }
  return std::move(out).take();
}

// --- snappy ---

constexpr uint8_t kXerialMagic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};
constexpr size_t kXerialHeaderBytes = 16;  // magic, int32 version, int32 compatible version

Result<Bytes> snappy_compress_raw(ByteView input) {
  size_t length = snappy_max_compressed_length(input.size());
  Bytes out(length);
  if (snappy_compress(reinterpret_cast<const char*>(input.data()), input.size(), reinterpret_cast<char*>(out.data()),
                      &length) != SNAPPY_OK) {
    return invalid_argument("snappy: compression failed");
  }
  out.resize(length);
  return out;
}

// The most a raw snappy block can expand: its densest element, a copy with a 2-byte offset, is 3 bytes long and
// stands for at most 64 bytes of output.
constexpr size_t kSnappyMaxExpansion = 22;

// Appends the raw block `block` to `out`, within `max_bytes` in all.
Status snappy_append_block(ByteView block, size_t max_bytes, Bytes* out) {
  const char* in = reinterpret_cast<const char*>(block.data());
  size_t length = 0;
  if (snappy_uncompressed_length(in, block.size(), &length) != SNAPPY_OK) {
    return corruption("snappy: bad block length");
  }
  // The output is allocated at the length the block declares: a small block may not claim more than it can hold.
  if (length / kSnappyMaxExpansion > block.size()) {
    return corruption("snappy: a block of " + std::to_string(block.size()) + " bytes claims " +
                      std::to_string(length) + " bytes of output");
  }
  if (length > max_bytes - out->size()) {
    return corruption("snappy: decompressed size exceeds " + std::to_string(max_bytes) + " bytes");
  }
  const size_t start = out->size();
  out->resize(start + length);
  if (snappy_uncompress(in, block.size(), reinterpret_cast<char*>(out->data() + start), &length) != SNAPPY_OK) {
    return corruption("snappy: malformed block");
  }
  SLUICE_ASSERT(length == out->size() - start);
  return Status();
}

Result<Bytes> snappy_decompress(ByteView input, size_t max_bytes) {
  Bytes out;
  const bool xerial = input.size() >= sizeof(kXerialMagic) &&
                      std::memcmp(input.data(), kXerialMagic, sizeof(kXerialMagic)) == 0;
  if (!xerial) {
    SLUICE_TRY(snappy_append_block(input, max_bytes, &out));
    return out;
  }
  // The version fields are not checked: every xerial version so far frames chunks the same way.
  if (input.size() < kXerialHeaderBytes) return corruption("snappy: truncated xerial header");
  ByteView rest = input.subspan(kXerialHeaderBytes);
  while (!rest.empty()) {
    if (rest.size() < 4) return corruption("snappy: truncated xerial chunk length");
    const uint32_t length = read_be32(rest.data());
    rest = rest.subspan(4);
    if (length > rest.size()) {
      return corruption("snappy: xerial chunk of " + std::to_string(length) + " bytes truncated");
    }
    SLUICE_TRY(snappy_append_block(rest.first(length), max_bytes, &out));
    rest = rest.subspan(length);
  }
  return out;
}

// --- lz4 ---

Result<Bytes> lz4_compress(ByteView input) {
  LZ4F_preferences_t prefs;
  std::memset(&prefs, 0, sizeof(prefs));
  prefs.frameInfo.blockSizeID = LZ4F_max64KB;  // the Java client's block size, which its reader handles best
  prefs.frameInfo.blockMode = LZ4F_blockIndependent;
  Bytes out(LZ4F_compressFrameBound(input.size(), &prefs));
  const size_t rc = LZ4F_compressFrame(out.data(), out.size(), input.data(), input.size(), &prefs);
  if (LZ4F_isError(rc)) return invalid_argument(std::string("lz4: ") + LZ4F_getErrorName(rc));
  out.resize(rc);
  return out;
}

using Lz4Context = std::unique_ptr<LZ4F_dctx, decltype(&LZ4F_freeDecompressionContext)>;

Result<Bytes> lz4_decompress(ByteView input, size_t max_bytes) {
  LZ4F_dctx* raw = nullptr;
  if (LZ4F_isError(LZ4F_createDecompressionContext(&raw, LZ4F_VERSION))) return corruption("lz4: no context");
  Lz4Context context(raw, &LZ4F_freeDecompressionContext);
  BoundedOutput out(max_bytes, input.size() * 4);
  size_t position = 0;
  size_t hint = 1;  // what LZ4F_decompress last returned: 0 when a frame just ended
  while (position < input.size() || hint != 0) {
    MutableByteView room = out.room();
    size_t consumed = input.size() - position;
    size_t written = room.size();
    hint = LZ4F_decompress(context.get(), room.data(), &written, input.data() + position, &consumed, nullptr);
    if (LZ4F_isError(hint)) return corruption(std::string("lz4: ") + LZ4F_getErrorName(hint));
    position += consumed;
    out.produced(written);
    if (out.exceeded()) return out.exceeded_error("lz4");
    // No progress while a frame is open (or input remains) means the input ended inside a frame.
    if (consumed == 0 && written == 0 && (hint != 0 || position < input.size())) {
      return corruption("lz4: truncated frame");
    }
  }
  return std::move(out).take();
}

// --- zstd ---

Result<Bytes> zstd_compress(ByteView input) {
  Bytes out(ZSTD_compressBound(input.size()));
  const size_t rc = ZSTD_compress(out.data(), out.size(), input.data(), input.size(), 3);
  if (ZSTD_isError(rc)) return invalid_argument(std::string("zstd: ") + ZSTD_getErrorName(rc));
  out.resize(rc);
  return out;
}

// A window larger than the whole output is never needed, so the window a frame may demand (and the decoder then
// allocates) follows the bound: at least 2^23 (what levels up to 19 use), at most zstd's default limit of 2^27.
int zstd_window_log_max(size_t max_bytes) {
  int log = 23;
  while (log < 27 && (size_t{1} << log) < max_bytes) ++log;
  return log;
}

using ZstdContext = std::unique_ptr<ZSTD_DCtx, decltype(&ZSTD_freeDCtx)>;

Result<Bytes> zstd_decompress(ByteView input, size_t max_bytes) {
  ZstdContext context(ZSTD_createDCtx(), &ZSTD_freeDCtx);
  if (context == nullptr) return corruption("zstd: no context");
  if (ZSTD_isError(ZSTD_DCtx_setParameter(context.get(), ZSTD_d_windowLogMax, zstd_window_log_max(max_bytes)))) {
    return corruption("zstd: cannot bound the window");
  }
  BoundedOutput out(max_bytes, input.size() * 4);
  ZSTD_inBuffer in{input.data(), input.size(), 0};
  size_t hint = 1;  // 0 when a frame was just fully decoded and flushed
  while (in.pos < in.size || hint != 0) {
    MutableByteView room = out.room();
    ZSTD_outBuffer dst{room.data(), room.size(), 0};
    const size_t before = in.pos;
    hint = ZSTD_decompressStream(context.get(), &dst, &in);
    if (ZSTD_isError(hint)) return corruption(std::string("zstd: ") + ZSTD_getErrorName(hint));
    out.produced(dst.pos);
    if (out.exceeded()) return out.exceeded_error("zstd");
    if (in.pos == before && dst.pos == 0 && (hint != 0 || in.pos < in.size)) {
      return corruption("zstd: truncated frame");
    }
  }
  return std::move(out).take();
}

}  // namespace

Result<Bytes> compress(Compression codec, ByteView input) {
  switch (codec) {
    case Compression::kNone: return Bytes(input.begin(), input.end());
    case Compression::kGzip: return gzip_compress(input);
    case Compression::kSnappy: return snappy_compress_raw(input);
    case Compression::kLz4: return lz4_compress(input);
    case Compression::kZstd: return zstd_compress(input);
  }
  return invalid_argument("unknown compression codec " + std::to_string(static_cast<int>(codec)));
}

Result<Bytes> decompress(Compression codec, ByteView input, size_t max_output_bytes) {
  switch (codec) {
    case Compression::kNone:
      if (input.size() > max_output_bytes) return corruption("records exceed " + std::to_string(max_output_bytes));
      return Bytes(input.begin(), input.end());
    case Compression::kGzip: return gzip_decompress(input, max_output_bytes);
    case Compression::kSnappy: return snappy_decompress(input, max_output_bytes);
    case Compression::kLz4: return lz4_decompress(input, max_output_bytes);
    case Compression::kZstd: return zstd_decompress(input, max_output_bytes);
  }
  return corruption("unknown compression codec " + std::to_string(static_cast<int>(codec)));
}

}  // namespace sluice::storage
