#include "core/storage/log_format.h"

#include "core/base/assert.h"
#include "core/base/crc32c.h"
#include "core/protocol/error_codes.h"
#include "core/storage/agreeing_reads.h"

namespace sluice::storage {

void put_be(uint8_t* out, uint64_t value, size_t bytes) {
  SLUICE_ASSERT(bytes <= 8);
  for (size_t i = 0; i < bytes; ++i) out[bytes - 1 - i] = static_cast<uint8_t>(value >> (8 * i));
}

uint64_t get_be(const uint8_t* in, size_t bytes) {
  SLUICE_ASSERT(bytes <= 8);
  uint64_t value = 0;
  for (size_t i = 0; i < bytes; ++i) value = (value << 8) | in[i];
  return value;
}

std::string segment_file_name(int64_t base_offset, std::string_view suffix) {
  SLUICE_ASSERT(base_offset >= 0);
  std::string digits = std::to_string(base_offset);
  SLUICE_ASSERT(digits.size() <= kSegmentNameDigits);
  std::string name(kSegmentNameDigits - digits.size(), '0');
  name += digits;
  name += suffix;
  return name;
}

std::optional<SegmentFileName> parse_segment_file_name(std::string_view name) {
  if (name.size() <= kSegmentNameDigits || name[kSegmentNameDigits] != '.') return std::nullopt;
  int64_t base = 0;
  for (size_t i = 0; i < kSegmentNameDigits; ++i) {
    const char c = name[i];
    if (c < '0' || c > '9') return std::nullopt;
    // 20 digits can exceed int64: such a name is not one of ours.
    if (base > (INT64_MAX - (c - '0')) / 10) return std::nullopt;
    base = base * 10 + (c - '0');
  }
  return SegmentFileName{base, std::string(name.substr(kSegmentNameDigits))};
}

namespace {

// magic, version, payload, crc of everything before the crc.
Bytes seal(uint32_t magic, uint16_t version, std::initializer_list<int64_t> fields) {
  Bytes out(4 + 2 + 8 * fields.size() + 4);
  put_be(out.data(), magic, 4);
  put_be(out.data() + 4, version, 2);
  size_t at = 6;
  for (int64_t field : fields) {
    put_be(out.data() + at, static_cast<uint64_t>(field), 8);
    at += 8;
  }
  put_be(out.data() + at, crc32c(ByteView(out.data(), at)), 4);
  return out;
}

Status check_sealed(ByteView bytes, size_t size, uint32_t magic, std::string_view what) {
  if (bytes.size() != size) {
    return corruption(std::string(what) + ": " + std::to_string(bytes.size()) + " bytes, expected " +
                      std::to_string(size));
  }
  if (get_be(bytes.data(), 4) != magic) return corruption(std::string(what) + ": bad magic");
  if (get_be(bytes.data() + 4, 2) != kStateVersion) return corruption(std::string(what) + ": unknown version");
  const size_t crc_at = size - 4;
  if (get_be(bytes.data() + crc_at, 4) != crc32c(bytes.subspan(0, crc_at))) {
    return corruption(std::string(what) + ": CRC mismatch");
  }
  return Status();
}

}  // namespace

Bytes encode_partition_state(const PartitionState& state) {
  SLUICE_ASSERT(state.log_start_offset >= 0);
  SLUICE_ASSERT(state.recovery_point >= 0);
  Bytes out = seal(kStateMagic, kStateVersion, {state.log_start_offset, state.recovery_point});
  SLUICE_ASSERT(out.size() == kStateFileBytes);
  return out;
}

Result<PartitionState> decode_partition_state(ByteView bytes) {
  SLUICE_TRY(check_sealed(bytes, kStateFileBytes, kStateMagic, kStateFileName));
  PartitionState state;
  state.log_start_offset = static_cast<int64_t>(get_be(bytes.data() + 6, 8));
  state.recovery_point = static_cast<int64_t>(get_be(bytes.data() + 14, 8));
  if (state.log_start_offset < 0 || state.recovery_point < 0) return corruption("partition.state: negative offset");
  return state;
}

Bytes encode_clean_shutdown(int64_t log_end_offset) {
  SLUICE_ASSERT(log_end_offset >= 0);
  Bytes out = seal(kCleanShutdownMagic, kStateVersion, {log_end_offset});
  SLUICE_ASSERT(out.size() == kCleanShutdownFileBytes);
  return out;
}

Result<int64_t> decode_clean_shutdown(ByteView bytes) {
  SLUICE_TRY(check_sealed(bytes, kCleanShutdownFileBytes, kCleanShutdownMagic, ".sluice_cleanshutdown"));
  const int64_t end = static_cast<int64_t>(get_be(bytes.data() + 6, 8));
  if (end < 0) return corruption(".sluice_cleanshutdown: negative log end offset");
  return end;
}

namespace {

Result<Bytes> read_whole_file_once(File& file) {
  SLUICE_ASSIGN_OR_RETURN(uint64_t size, file.size());
  Bytes out(size);
  size_t done = 0;
  while (done < out.size()) {
    SLUICE_ASSIGN_OR_RETURN(size_t got, file.pread(done, MutableByteView(out).subspan(done)));
    if (got == 0) break;  // shrank meanwhile: return what is there
    done += got;
  }
  out.resize(done);
  return out;
}

}  // namespace

// Every caller loads state the broker then acts on (offsets, epochs, configs, indexes), and not every format has a
// checksum: a device or its path can hand back one bad copy of good bytes, so a copy is believed only once a second
// read agrees with it. The files are small, and they are read once per load.
Result<Bytes> read_whole_file(File& file) {
  constexpr int kReads = 8;
  Result<Bytes> bytes = read_until_two_agree<Bytes>(
      kReads, "a file", [&file] { return read_whole_file_once(file); },
      [] { SLUICE_PROBE("log_format.whole_file_reads_disagreed"); });
  if (bytes.ok() || bytes.status().code() != Code::kCorruption) return bytes;
  return Status(Code::kIoError, "no two of " + std::to_string(kReads) + " reads of a file agreed",
                wire_code(ErrorCode::kKafkaStorageError));
}

Status sync_failure(Status status) {
  if (status.ok() || status.code() == Code::kIoError) return status;
  return Status(Code::kIoError, "sync failed: " + status.message(), status.protocol_error());
}

Status replace_file_durably(FileSystem& fs, const std::string& path, const std::string& temp_path, ByteView data) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, fs.open(temp_path, OpenMode::kCreateTruncate));
  SLUICE_TRY(file->append(data));
  SLUICE_TRY(sync_failure(file->sync()));
  SLUICE_TRY(file->close());
  SLUICE_TRY(fs.rename(temp_path, path));
  return sync_failure(fs.sync_dir(parent_dir(path)));
}

}  // namespace sluice::storage
