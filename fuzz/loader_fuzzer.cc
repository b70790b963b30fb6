// libFuzzer target: the on-disk loaders. One input is a partition directory (partition_image.h: segment .log,
// .index and .timeindex files at several base offsets, a cleaner's .swap, partition.state, the clean-shutdown
// marker, leader-epoch-checkpoint, and the data directory's cleaner-offset-checkpoint), written into an in-memory
// file system (fuzz_env.h); no real file is touched.
//
// Then, as a broker's open does: LogLoader::load (the recovery scan, index loading and rebuilding, the swap, the
// torn-tail cut, partition.state), the leader epoch checkpoint brought in line with the loaded log, the cleaner
// checkpoint, and reads of every loaded segment (batch headers, a read from its start, a timestamp lookup).
// Optionally LogLoader::repair on the same image.
//
// Any input is loaded or refused with a named error: a crash, an assertion, a sanitizer report, a hang
// (-timeout) or an allocation over -malloc_limit_mb is a finding. What loads must load again the same way: a log
// recovered from an unclean stop, reopened unclean, has the same log start and end.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <string>

#include "core/base/crc32c.h"
#include "core/storage/cleaner_checkpoint.h"
#include "core/storage/leader_epoch_cache.h"
#include "core/storage/log_loader.h"
#include "fuzz/fuzz_env.h"
#include "fuzz/partition_image.h"

namespace sluice::fuzz {
namespace {

using storage::kBatchHeaderBytes;

[[noreturn]] void fail(const std::string& what) {
  std::fprintf(stderr, "loader_fuzzer: %s\n", what.c_str());
  std::abort();
}

void put_be32(uint8_t* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[3 - i] = static_cast<uint8_t>(v >> (8 * i));
}

// Rewrites the CRC of every whole batch from the start, up to the first one that does not fit.
void fix_batch_crcs(Bytes& log) {
  size_t at = 0;
  while (log.size() - at >= kBatchHeaderBytes) {
    const int32_t length = static_cast<int32_t>(storage::get_be(log.data() + at + 8, 4));
    if (length < static_cast<int32_t>(kBatchHeaderBytes - storage::kBatchLogOverheadBytes)) return;
    const size_t size = storage::kBatchLogOverheadBytes + static_cast<size_t>(length);
    if (size > log.size() - at) return;
    MutableByteView batch(log.data() + at, size);
    put_be32(batch.data() + storage::kBatchCrcOffset, storage::compute_batch_crc(batch));
    at += size;
  }
}

void fix_sealed_crc(Bytes& file) {
  if (file.size() < 4) return;
  put_be32(file.data() + file.size() - 4, crc32c(ByteView(file.data(), file.size() - 4)));
}

// The image's files, written into `fs`.
void write_image(uint8_t flags, ByteView entries, MemFileSystem& fs) {
  static_cast<void>(fs.create_dirs(std::string(kPartitionDir)));
  std::map<std::string, Bytes> files;
  while (entries.size() >= 3) {
    const uint8_t kind = entries[0];
    const size_t length = std::min<size_t>(size_t{entries[1]} << 8 | entries[2], entries.size() - 3);
    files[image_path(kind)] = Bytes(entries.begin() + 3, entries.begin() + 3 + static_cast<std::ptrdiff_t>(length));
    entries = entries.subspan(3 + length);
  }
  for (auto& [path, bytes] : files) {
    const bool log = path.ends_with(".log") || path.ends_with(".log.swap");
    if (log && (flags & kFixBatchCrcs) != 0) fix_batch_crcs(bytes);
    const bool sealed = path.ends_with("partition.state") || path.ends_with(".sluice_cleanshutdown");
    if (sealed && (flags & kFixStateCrcs) != 0) fix_sealed_crc(bytes);
    fs.put(path, bytes);
  }
}

// What a broker reads of a loaded log: every segment's headers, its first batches, a timestamp lookup.
void read_loaded(const storage::LoadedLog& loaded) {
  for (const auto& [base, segment] : loaded.segments) {
    static_cast<void>(segment->for_each_batch_header([](const storage::BatchHeader& header) {
      if (header.last_offset() < header.base_offset) fail("a loaded batch ends before it starts");
      return Status();
    }));
    static_cast<void>(segment->read(0, 64 * 1024, INT64_MAX));
    static_cast<void>(segment->read_from(loaded.log_start_offset, 64 * 1024, INT64_MAX));
    static_cast<void>(segment->find_offset_for_timestamp(0, loaded.log_start_offset));
    static_cast<void>(segment->batch_header_at_or_after(segment->base_offset()));
  }
}

// PartitionLog::open's use of the leader epoch checkpoint: loaded, then cut to the log's range.
void load_epochs(MemFileSystem& fs, const storage::LoadedLog& loaded) {
  Result<std::optional<std::vector<storage::EpochEntry>>> entries =
      storage::read_leader_epoch_checkpoint(fs, std::string(kPartitionDir));
  if (!entries.ok() || !entries->has_value()) return;
  if (!storage::valid_epoch_entries(**entries)) fail("a checkpoint that decodes holds invalid entries");
  storage::LeaderEpochCache cache(std::move(**entries));
  const int64_t end = loaded.segments.empty() ? 0 : loaded.segments.rbegin()->second->next_offset();
  cache.truncate_from_end(end);
  cache.truncate_from_start(loaded.log_start_offset);
  static_cast<void>(cache.end_offset_for(cache.latest_epoch().value_or(0), end));
}

void close_all(storage::LoadedLog& loaded) {
  for (auto& [base, segment] : loaded.segments) static_cast<void>(segment->close());
}

void fuzz_image(uint8_t flags, ByteView entries) {
  storage::SegmentConfig config;
  config.index_bytes = kIndexBytes[(flags >> 4) & 3];
  const std::string dir(kPartitionDir);
  {
    FuzzWorld world;
    write_image(flags, entries, world.fs());
    static_cast<void>(storage::read_cleaner_checkpoints(world.fs(), std::string(kDataDir)));
    Result<storage::LoadedLog> loaded = storage::LogLoader::load(world.env(), dir, config);
    if (!loaded.ok()) return;
    read_loaded(*loaded);
    load_epochs(world.fs(), *loaded);
    const bool clean = loaded->stats.clean_shutdown;
    const int64_t start = loaded->log_start_offset;
    const int64_t end = loaded->recovery_point;
    std::string layout;  // for the failure message
    for (const auto& [base, segment] : loaded->segments) {
      layout += " [" + std::to_string(base) + ", " + std::to_string(segment->next_offset()) + ")";
    }
    close_all(*loaded);
    // Reopened (the marker is gone, so unclean): what one recovery left, the next keeps.
    Result<storage::LoadedLog> again = storage::LogLoader::load(world.env(), dir, config);
    if (!clean) {
      if (!again.ok()) fail("a recovered log does not load again: " + again.status().to_string());
      if (again->log_start_offset != start || again->recovery_point != end) {
        fail("a recovered log loads again as [" + std::to_string(again->log_start_offset) + ", " +
             std::to_string(again->recovery_point) + "), first [" + std::to_string(start) + ", " +
             std::to_string(end) + ") in segments" + layout);
      }
    }
    if (again.ok()) close_all(*again);
  }
  if ((flags & kRunRepair) != 0) {
    FuzzWorld world;
    write_image(flags, entries, world.fs());
    static_cast<void>(storage::LogLoader::repair(world.env(), dir, config));
  }
}

}  // namespace
}  // namespace sluice::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  sluice::fuzz::fuzz_image(data[0], sluice::ByteView(data + 1, size - 1));
  return 0;
}
