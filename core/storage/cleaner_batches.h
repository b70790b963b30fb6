// Internal to the cleaner (cleaner.cc): the log read batch by batch in bounded chunks, the keys of a batch put in
// the key→offset map, and one batch filtered through the retention rules — all over the batch bytes as they are,
// without materialising Records (a pass touches every record of the dirty section twice).
#pragma once

#include <cstdint>
#include <vector>

#include "core/base/bytes.h"
#include "core/base/result.h"
#include "core/storage/key_offset_map.h"
#include "core/storage/partition_log.h"
#include "core/storage/record_batch.h"

namespace sluice::storage {

// What a read of the log asks for at a time: bounded memory whatever the segment size (a larger batch still comes
// whole).
inline constexpr size_t kCleanerChunkBytes = size_t{1} << 20;

// The whole batches of `log` from the one holding `from` up to (not including) the first one reaching `to`.
// REQUIRES: log start <= from.
class BatchStream {
 public:
  BatchStream(PartitionLog& log, int64_t from, int64_t to) : log_(log), next_offset_(from), to_(to) {}

  // The next batch into `*batch` (valid until the next call) and `*header`; false at the end.
  Result<bool> next(ByteView* batch, BatchHeader* header);

 private:
  PartitionLog& log_;
  int64_t next_offset_;
  int64_t to_;
  Bytes chunk_;
  size_t position_ = 0;
};

// Puts every key of `batch`'s records with offsets in [from, to) into `map`. Returns false when the map filled up
// (the keys before the refused one are in). `scratch` holds a decompressed section between calls.
Result<bool> map_batch_keys(ByteView batch, const BatchHeader& header, int64_t from, int64_t to, KeyOffsetMap& map,
                            Bytes& scratch);

// The retention rules of one pass (cleaner.h).
struct CleanRules {
  const KeyOffsetMap* map = nullptr;
  int64_t cleaned_end = 0;
  int64_t now_ms = 0;
  int64_t horizon_ms = 0;  // what a newly retained tombstone's batch gets
  // Planted bugs (core/base/mutations.h).
  bool drop_latest = false;            // compaction-drops-latest
  bool ignore_delete_horizon = false;  // tombstone-before-horizon
  // A replicated log (its raft entries are its batches, each covering the offsets after the previous one): a rebuilt
  // batch keeps its base and last offsets (as Kafka's v2 cleaner does), and a batch whose every record goes leaves
  // an empty batch over the same offsets, so that the cleaned log has no gap between batches.
  bool keep_batch_ranges = false;
};

struct FilterTally {
  bool changed = false;  // some batch was dropped or rebuilt
  int64_t removed = 0;   // records
  int64_t rebuilt = 0;   // batches
};

// A record a partly surviving batch keeps, as the rebuilt batch needs it.
struct SurvivingRecord {
  int8_t attributes;
  int64_t offset;     // absolute
  int64_t timestamp;  // absolute
  ByteView fields;    // RecordView::fields: key, value and headers as encoded
};

// Filters batches through the rules, keeping its buffers from one batch to the next.
class BatchFilter {
 public:
  explicit BatchFilter(const CleanRules& rules) : rules_(rules) {}

  // Appends to `*out` what the rules keep of `batch`: its own bytes when every record stays (and no delete horizon
  // is to be set), nothing when none does (an empty batch over its offsets with keep_batch_ranges), otherwise a
  // rebuilt batch holding the survivors with their offsets, timestamps, attributes, keys, values and headers, and the
  // batch's codec, producer fields and leader epoch; as build_batch would make it from the decoded survivors (over
  // the original batch's offsets with keep_batch_ranges).
  Status filter(ByteView batch, const BatchHeader& header, Bytes* out, FilterTally* tally);

 private:
  Status rebuild(const BatchHeader& header, bool stamp, Bytes* out);
  // compaction-drops-latest: whether a record of a mapped key survives.
  static bool planted_keep(ByteView key, int64_t offset, int64_t latest);

  CleanRules rules_;
  Bytes decompressed_;
  Bytes section_;
  std::vector<SurvivingRecord> kept_;
};

}  // namespace sluice::storage
