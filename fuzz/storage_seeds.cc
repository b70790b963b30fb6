// Seeds of the storage fuzz targets, built with the broker's own code: batches in every codec (batch_fuzzer) and
// partition directories written by Segment and the checkpoint writers (loader_fuzzer), so that each target
// starts from inputs that load.
#include "fuzz/storage_seeds.h"

#include <cstdio>
#include <string>
#include <vector>

#include "core/storage/cleaner_checkpoint.h"
#include "core/storage/leader_epoch_cache.h"
#include "core/storage/log_loader.h"
#include "core/storage/record_batch.h"
#include "core/storage/segment.h"
#include "fuzz/fuzz_env.h"
#include "fuzz/partition_image.h"

namespace sluice::fuzz {
namespace {

Bytes text(std::string_view s) { return Bytes(s.begin(), s.end()); }

// A few records with keys, a tombstone and headers, from `offset` on, timestamps one second apart.
std::vector<storage::Record> sample_records(int64_t offset, int count) {
  std::vector<storage::Record> records;
  for (int i = 0; i < count; ++i) {
    storage::Record record;
    record.offset = offset + i;
    record.timestamp = 1'700'000'000'000 + 1000 * i;
    record.key = text("key-" + std::to_string(i % 3));
    if (i % 4 != 3) record.value = text("value " + std::to_string(i) + std::string(static_cast<size_t>(i) * 7, 'x'));
    if (i % 2 == 0) record.headers.push_back({"h", text("v")});
    records.push_back(std::move(record));
  }
  return records;
}

Bytes batch_or_die(const std::vector<storage::Record>& records, const storage::BatchOptions& options) {
  Result<Bytes> batch = storage::build_batch(records, options);
  SLUICE_ASSERT_MSG(batch.ok(), batch.status().to_string().c_str());
  return std::move(batch).value();
}

// One segment of `batches` batches of 3 records from `base`, sealed and flushed; returns its next offset.
int64_t write_segment(Env env, int64_t base, int batches, storage::Compression codec) {
  storage::SegmentConfig config;
  config.index_interval_bytes = 64;  // an index entry for (almost) every batch
  auto segment = std::move(storage::Segment::create(env, std::string(kPartitionDir), base, config)).value();
  int64_t next = base;
  for (int i = 0; i < batches; ++i) {
    storage::BatchOptions options;
    options.compression = i % 2 == 0 ? storage::Compression::kNone : codec;
    options.partition_leader_epoch = 1 + i / 2;
    const Bytes batch = batch_or_die(sample_records(next, 3), options);
    const storage::BatchSpan span{std::move(storage::parse_batch_header(batch)).value(), 0};
    const ByteView part(batch);
    SLUICE_ASSERT(segment->append(std::span<const ByteView>(&part, 1), std::span<const storage::BatchSpan>(&span, 1))
                      .ok());
    next = span.header.last_offset() + 1;
  }
  SLUICE_ASSERT(segment->seal().ok());
  SLUICE_ASSERT(segment->flush().ok());
  SLUICE_ASSERT(segment->close().ok());
  return next;
}

// The image of every file of `fs` that an image can hold.
Bytes image_of(uint8_t flags, const MemFileSystem& fs) {
  Bytes image{flags};
  for (const auto& [path, contents] : fs.files()) {
    if (std::optional<uint8_t> kind = image_kind(path)) append_entry(&image, *kind, *contents);
  }
  return image;
}

struct Layout {
  const char* name;
  bool clean;             // a clean-shutdown marker
  bool second_segment;    // a rolled segment at base 10 (kBases[2]) after the one at 0
  bool swap;              // a cleaner's .log.swap at base 0 covering the first segment
  storage::Compression codec;
};

Bytes partition_seed(const Layout& layout) {
  FuzzWorld world;
  Env env = world.env();
  SLUICE_ASSERT(world.fs().create_dirs(std::string(kPartitionDir)).ok());
  int64_t end = write_segment(env, 0, 3, layout.codec);  // offsets 0-8
  if (layout.second_segment) end = write_segment(env, kBases[2], 2, layout.codec);
  if (layout.swap) {
    world.fs().put(std::string(kPartitionDir) + "/00000000000000000000.log",
                   *world.fs().files().at(std::string(kPartitionDir) + "/00000000000000000000.log"));
    SLUICE_ASSERT(world.fs().rename(std::string(kPartitionDir) + "/00000000000000000000.log",
                                    std::string(kPartitionDir) + "/00000000000000000000.log.swap").ok());
    SLUICE_ASSERT(write_segment(env, 0, 3, layout.codec) == 9);
  }
  SLUICE_ASSERT(storage::write_partition_state(world.fs(), std::string(kPartitionDir), {1, end}).ok());
  SLUICE_ASSERT(storage::write_leader_epoch_checkpoint(world.fs(), std::string(kPartitionDir),
                                                       {{1, 0}, {2, 3}, {5, 6}}).ok());
  SLUICE_ASSERT(
      storage::write_cleaner_checkpoints(world.fs(), std::string(kDataDir), {{{"orders", 0}, 3}, {{"other", 2}, 7}})
          .ok());
  if (layout.clean) {
    world.fs().put(std::string(kPartitionDir) + "/.sluice_cleanshutdown", storage::encode_clean_shutdown(end));
  }
  return image_of(kFixBatchCrcs | kFixStateCrcs | (layout.clean ? 0 : kRunRepair), world.fs());
}

}  // namespace

std::vector<std::pair<std::string, Bytes>> batch_seeds() {
  std::vector<std::pair<std::string, Bytes>> seeds;
  const char* names[] = {"none", "gzip", "snappy", "lz4", "zstd"};
  for (uint8_t codec = 0; codec <= 4; ++codec) {
    storage::BatchOptions options;
    options.compression = static_cast<storage::Compression>(codec);
    options.producer_id = 7;
    options.producer_epoch = 0;
    options.base_sequence = 0;
    const Bytes batch = batch_or_die(sample_records(100, 5), options);
    // As it is (CRC and all), and with the header fix-up and the codec named by the control byte.
    for (uint8_t control : {uint8_t{0x07}, static_cast<uint8_t>(0x08 | codec)}) {
      Bytes seed{control};
      seed.insert(seed.end(), batch.begin(), batch.end());
      seeds.emplace_back(std::string(names[codec]) + (control & 0x08 ? "-fixed" : "-raw"), std::move(seed));
    }
  }
  return seeds;
}

std::vector<std::pair<std::string, Bytes>> loader_seeds() {
  const Layout layouts[] = {
      {"unclean-one-segment", false, false, false, storage::Compression::kGzip},
      {"clean-two-segments", true, true, false, storage::Compression::kZstd},
      {"unclean-two-segments", false, true, false, storage::Compression::kSnappy},
      {"unclean-swap", false, false, true, storage::Compression::kLz4},
  };
  std::vector<std::pair<std::string, Bytes>> seeds;
  for (const Layout& layout : layouts) seeds.emplace_back(layout.name, partition_seed(layout));
  return seeds;
}

}  // namespace sluice::fuzz
