// On-disk names, sizes and small file codecs of a partition directory. The format is specified in
// docs/formats.md; change both together. Integers are big-endian, as in Kafka.
//
//   <dir>/00000000000000000042.log         record batches (record_batch.h), exactly as on the wire
//   <dir>/00000000000000000042.index       sparse offset index: 8-byte entries (int32 relative offset, int32 position)
//   <dir>/00000000000000000042.timeindex   sparse time index: 12-byte entries (int64 timestamp, int32 relative
//                                          offset), both monotonic
//   <dir>/partition.state                  log start offset and recovery point (kStateFileBytes, CRC32C)
//   <dir>/.sluice_cleanshutdown            written last by a graceful close, removed first by the next open
//   <dir>/leader-epoch-checkpoint          Kafka's text file: the first offset of each leader epoch
//   suffixes .cleaned .swap .deleted       temporary names (the cleaner's swap, asynchronous deletion)
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/env/file_system.h"

namespace sluice::storage {

inline constexpr size_t kOffsetIndexEntryBytes = 8;  // int32 relative offset, int32 position
inline constexpr size_t kTimeIndexEntryBytes = 12;   // int64 timestamp, int32 relative offset
inline constexpr size_t kSegmentNameDigits = 20;     // zero-padded base offset
static_assert(kOffsetIndexEntryBytes == sizeof(int32_t) + sizeof(int32_t));
static_assert(kTimeIndexEntryBytes == sizeof(int64_t) + sizeof(int32_t));

inline constexpr std::string_view kLogSuffix = ".log";
inline constexpr std::string_view kIndexSuffix = ".index";
inline constexpr std::string_view kTimeIndexSuffix = ".timeindex";
inline constexpr std::string_view kCleanedSuffix = ".cleaned";
inline constexpr std::string_view kSwapSuffix = ".swap";
inline constexpr std::string_view kDeletedSuffix = ".deleted";

inline constexpr std::string_view kStateFileName = "partition.state";
inline constexpr std::string_view kStateTempFileName = "partition.state.tmp";
inline constexpr std::string_view kCleanShutdownFileName = ".sluice_cleanshutdown";
// Kafka's leader epoch cache (leader_epoch_cache.h): a version line, a count line, "epoch start_offset" lines.
inline constexpr std::string_view kLeaderEpochFileName = "leader-epoch-checkpoint";
inline constexpr std::string_view kLeaderEpochTempFileName = "leader-epoch-checkpoint.tmp";

// partition.state: magic "SLPS", u16 version, i64 log start offset, i64 recovery point, u32 CRC32C of the rest.
inline constexpr uint32_t kStateMagic = 0x534c5053;
inline constexpr uint16_t kStateVersion = 1;
inline constexpr size_t kStateFileBytes = 4 + 2 + 8 + 8 + 4;
static_assert(kStateFileBytes == 26);

// .sluice_cleanshutdown: magic "SLCS", u16 version, i64 log end offset, u32 CRC32C of the rest.
inline constexpr uint32_t kCleanShutdownMagic = 0x534c4353;
inline constexpr size_t kCleanShutdownFileBytes = 4 + 2 + 8 + 4;
static_assert(kCleanShutdownFileBytes == 18);

// Kafka's limit on a segment's offset span: relative offsets in the indexes are int32.
inline constexpr int64_t kMaxRelativeOffset = INT32_MAX;

// "00000000000000000042" + suffix. REQUIRES: base_offset >= 0.
std::string segment_file_name(int64_t base_offset, std::string_view suffix);

// A file name split into its base offset and suffix ("42", ".log.deleted" for "0…042.log.deleted").
struct SegmentFileName {
  int64_t base_offset = 0;
  std::string suffix;  // everything after the 20 digits, e.g. ".log", ".index.swap"
};
// nullopt when `name` does not start with 20 digits followed by a '.'.
std::optional<SegmentFileName> parse_segment_file_name(std::string_view name);

struct PartitionState {
  int64_t log_start_offset = 0;
  int64_t recovery_point = 0;
  bool operator==(const PartitionState&) const = default;
};
Bytes encode_partition_state(const PartitionState& state);
// kCorruption on a wrong size, magic, version or CRC (a torn or foreign file).
Result<PartitionState> decode_partition_state(ByteView bytes);

Bytes encode_clean_shutdown(int64_t log_end_offset);
Result<int64_t> decode_clean_shutdown(ByteView bytes);

// Big-endian helpers shared by the index files and the codecs above.
void put_be(uint8_t* out, uint64_t value, size_t bytes);
uint64_t get_be(const uint8_t* in, size_t bytes);

// The whole content of a small file (an index, the state file).
Result<Bytes> read_whole_file(File& file);

// A failed sync is final (fsyncgate: the pages it dropped stay lost whatever a later sync says): as kIoError
// whatever the OS said (ENOSPC from fdatasync too), so that callers never take it for a full disk a later try may
// pass. OK and kIoError pass through.
Status sync_failure(Status status);
// write_file_atomically (a temporary file, its sync, the rename, the directory's sync) for the files a log's
// recovery trusts (partition.state, leader-epoch-checkpoint, cleaner-offset-checkpoint): a failed sync comes back
// as sync_failure says, and the caller takes its log offline. A failure before the temporary file's sync (a full
// disk while writing it) changed nothing a reader trusts.
Status replace_file_durably(FileSystem& fs, const std::string& path, const std::string& temp_path, ByteView data);

}  // namespace sluice::storage
