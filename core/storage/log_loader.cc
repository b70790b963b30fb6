#include "core/storage/log_loader.h"

#include <limits>
#include <set>
#include <vector>

#include "core/base/assert.h"
#include "core/storage/agreeing_reads.h"
#include "core/protocol/error_codes.h"

namespace sluice::storage {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

Status remove_if_exists(FileSystem& fs, const std::string& path) {
  Status removed = fs.remove(path);
  if (removed.code() == Code::kNotFound) return Status();
  return removed;
}

Status refuse(const Segment& segment, const SegmentScan& scan, const std::string& dir) {
  const std::string message = segment.log_path() + ": invalid batch at byte " + std::to_string(scan.valid_bytes) +
                              " (offset " + std::to_string(scan.next_offset) + "): " + scan.problem +
                              ". The segment is closed, so this is damage, not a torn tail; the partition is not "
                              "loaded. Run `sluice log repair " +
                              dir + "` to truncate at offset " + std::to_string(scan.next_offset) +
                              " and delete later segments.";
  return Status(Code::kCorruption, message, static_cast<int16_t>(ErrorCode::kKafkaStorageError));
}

// The directory's files, sorted out by kind.
struct Listing {
  std::set<int64_t> logs;  // bases with a .log
  std::set<std::string> names;
};

class Loader {
 public:
  Loader(Env env, std::string dir, SegmentConfig config) : env_(env), dir_(std::move(dir)), config_(config) {}

  Result<LoadedLog> load();
  Result<std::string> repair();

 private:
  std::string path(std::string_view name) const { return join_path(dir_, name); }
  Status ensure_dir();
  Result<Listing> list();
  Result<std::optional<int64_t>> consume_clean_marker(const Listing& listing);
  Status clean_temp_files(Listing& listing);
  Result<bool> finish_swap(int64_t base, Listing& listing);
  Result<SegmentScan> settled_scan(Segment& segment);
  Result<std::shared_ptr<Segment>> load_segment(int64_t base, bool trusted, int64_t torn_from, const Listing& listing,
                                                bool* cut);
  Status remove_later_segments(const Listing& listing, int64_t base);
  Status load_segments(const Listing& listing, bool clean, int64_t recovery_point, bool state_found);
  Status check_order();
  Status apply_log_start(int64_t state_log_start);
  Status remove_segment_files(int64_t base);
  int64_t log_end() const { return loaded_.segments.empty() ? 0 : loaded_.segments.rbegin()->second->next_offset(); }

  Env env_;
  std::string dir_;
  SegmentConfig config_;
  LoadedLog loaded_;
  std::set<int64_t> recovered_;
};

Status Loader::ensure_dir() {
  SLUICE_ASSIGN_OR_RETURN(bool exists, env_.fs.exists(dir_));
  if (exists) return Status();
  SLUICE_TRY(env_.fs.create_dirs(dir_));
  return env_.fs.sync_dir(parent_dir(dir_));
}

Result<Listing> Loader::list() {
  SLUICE_ASSIGN_OR_RETURN(std::vector<DirEntry> entries, env_.fs.list(dir_));
  Listing listing;
  for (const DirEntry& entry : entries) {
    if (entry.is_directory) continue;
    listing.names.insert(entry.name);
    std::optional<SegmentFileName> parsed = parse_segment_file_name(entry.name);
    if (parsed.has_value() && parsed->suffix == kLogSuffix) listing.logs.insert(parsed->base_offset);
  }
  return listing;
}

Result<std::optional<int64_t>> Loader::consume_clean_marker(const Listing& listing) {
  if (listing.names.count(std::string(kCleanShutdownFileName)) == 0) return std::optional<int64_t>();
  const std::string marker = path(kCleanShutdownFileName);
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, env_.fs.open(marker, OpenMode::kRead));
  SLUICE_ASSIGN_OR_RETURN(Bytes bytes, read_whole_file(*file));
  SLUICE_TRY(file->close());
  // Gone (durably) before anything is trusted: a crash from here on is an unclean stop.
  SLUICE_TRY(env_.fs.remove(marker));
  SLUICE_TRY(env_.fs.sync_dir(dir_));
  Result<int64_t> end = decode_clean_shutdown(bytes);
  if (!end.ok()) {
    env_.log.warn("{}: ignoring a damaged clean-shutdown marker: {}", dir_, end.status().message());
    return std::optional<int64_t>();
  }
  return std::optional<int64_t>(*end);
}

// A .log.swap is complete once it has its name (the cleaner syncs it as .cleaned first): it replaces every
// segment whose base lies in its range. One that does not verify is undone (removed).
Result<bool> Loader::finish_swap(int64_t base, Listing& listing) {
  const std::string log_swap = segment_file_name(base, std::string(kLogSuffix) + std::string(kSwapSuffix));
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<File> file, env_.fs.open(path(log_swap), OpenMode::kRead));
  SLUICE_ASSIGN_OR_RETURN(SegmentScan scan, scan_log_file(*file, path(log_swap), base,
                                                          [](const BatchHeader&, uint64_t) { return Status(); }));
  SLUICE_TRY(file->close());
  for (std::string_view suffix : {kIndexSuffix, kTimeIndexSuffix}) {
    SLUICE_TRY(
        remove_if_exists(env_.fs, path(segment_file_name(base, std::string(suffix) + std::string(kSwapSuffix)))));
  }
  if (!scan.clean()) {
    SLUICE_PROBE("log_loader.swap_undone");
    env_.log.warn("{}: undoing an invalid swap: {}", dir_, scan.problem);
    SLUICE_TRY(env_.fs.remove(path(log_swap)));
    return false;
  }
  SLUICE_PROBE("log_loader.swap_completed");
  for (auto it = listing.logs.lower_bound(base); it != listing.logs.end() && *it < scan.next_offset;) {
    SLUICE_TRY(remove_segment_files(*it));
    it = listing.logs.erase(it);
  }
  // Its indexes are rebuilt from the .log: they are missing now.
  SLUICE_TRY(env_.fs.rename(path(log_swap), path(segment_file_name(base, kLogSuffix))));
  listing.logs.insert(base);
  return true;
}

Status Loader::remove_segment_files(int64_t base) {
  for (std::string_view suffix : {kLogSuffix, kIndexSuffix, kTimeIndexSuffix}) {
    SLUICE_TRY(remove_if_exists(env_.fs, path(segment_file_name(base, suffix))));
  }
  return Status();
}

Status Loader::clean_temp_files(Listing& listing) {
  bool changed = false;
  for (const std::string& name : listing.names) {
    std::optional<SegmentFileName> parsed = parse_segment_file_name(name);
    const bool log_swap = parsed.has_value() && parsed->suffix == std::string(kLogSuffix) + std::string(kSwapSuffix);
    // Index swaps go with their .log.swap (finish_swap); an orphan one is removed like any temporary file.
    const bool temp = ends_with(name, kCleanedSuffix) || ends_with(name, kDeletedSuffix) ||
                      (ends_with(name, kSwapSuffix) && !log_swap);
    if (name == kStateTempFileName || name == kLeaderEpochTempFileName || (parsed.has_value() && temp)) {
      SLUICE_PROBE("log_loader.temp_file_removed");
      SLUICE_TRY(remove_if_exists(env_.fs, path(name)));
      ++loaded_.stats.temp_files_removed;
      changed = true;
    } else if (log_swap) {
      SLUICE_ASSIGN_OR_RETURN(bool completed, finish_swap(parsed->base_offset, listing));
      static_cast<void>(completed);
      ++loaded_.stats.temp_files_removed;
      changed = true;
    }
  }
  // Index files whose .log is gone (a deletion that was cut short).
  for (const std::string& name : listing.names) {
    std::optional<SegmentFileName> parsed = parse_segment_file_name(name);
    if (!parsed.has_value() || listing.logs.count(parsed->base_offset) > 0) continue;
    if (parsed->suffix == kIndexSuffix || parsed->suffix == kTimeIndexSuffix) {
      SLUICE_TRY(remove_if_exists(env_.fs, path(name)));
      changed = true;
    }
  }
  if (changed) SLUICE_TRY(env_.fs.sync_dir(dir_));
  return Status();
}

// A scan that finds damage is repeated before it is believed: a device or its path can hand back one bad copy of
// good bytes, and cutting or refusing on it would lose acknowledged records. A bad copy can only end the valid prefix
// early (it fails a CRC; it cannot make a batch valid), so the longest prefix seen is the best guess: it is believed
// once a second scan finds it again, and a clean scan at once. kIoError when eight scans do not settle.
Result<SegmentScan> Loader::settled_scan(Segment& segment) {
  constexpr int kScans = 8;
  SLUICE_ASSIGN_OR_RETURN(SegmentScan longest, segment.recover());
  for (int scan = 2; scan <= kScans && !longest.clean(); ++scan) {
    SLUICE_PROBE("log_loader.damaged_scan_read_again");
    SLUICE_ASSIGN_OR_RETURN(SegmentScan next, segment.recover());  // the segment now ends where `next` says
    if (next.clean() || next.valid_bytes == longest.valid_bytes) return next;
    if (next.valid_bytes > longest.valid_bytes) longest = std::move(next);
  }
  if (longest.clean()) return longest;
  return Status(Code::kIoError, segment.log_path() + ": " + std::to_string(kScans) +
                                    " scans did not settle where its damage starts",
                wire_code(ErrorCode::kKafkaStorageError));
}

// `torn_from`: damage at or above this offset is a torn tail, cut (*cut = true); below it, damage refuses the load.
Result<std::shared_ptr<Segment>> Loader::load_segment(int64_t base, bool trusted, int64_t torn_from,
                                                      const Listing& listing, bool* cut) {
  SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Segment> segment, Segment::open(env_, dir_, base, config_));
  const bool indexes_present = listing.names.count(segment_file_name(base, kIndexSuffix)) > 0 &&
                               listing.names.count(segment_file_name(base, kTimeIndexSuffix)) > 0;
  if (trusted) {
    Status loaded = indexes_present ? segment->load_trusted() : not_found("index missing");
    if (loaded.ok()) return std::shared_ptr<Segment>(std::move(segment));
    SLUICE_PROBE("log_loader.index_rebuilt");
    env_.log.info("{}: rebuilding the indexes of {}: {}", dir_, segment->log_path(), loaded.message());
    ++loaded_.stats.indexes_rebuilt;
  }
  SLUICE_ASSIGN_OR_RETURN(SegmentScan scan, settled_scan(*segment));
  ++loaded_.stats.segments_recovered;
  recovered_.insert(base);
  if (!scan.clean()) {
    if (scan.next_offset < torn_from) {
      SLUICE_PROBE("log_loader.interior_damage_refused");
      return refuse(*segment, scan, dir_);
    }
    const bool last = base == *listing.logs.rbegin();
    const uint64_t tail = scan.file_bytes - scan.valid_bytes;
    if (!last) {
      // A rolled segment whose background sync the stop beat: what follows it was never durable either, and it
      // must go first, so that a crash during this cut cannot leave the cut segment followed by a gap.
      SLUICE_PROBE("log_loader.rolled_segment_torn_tail_truncated");
      env_.log.warn("{}: truncating a torn tail of {} bytes of the rolled segment {}, deleting the later segments: {}",
                    dir_, tail, segment->log_path(), scan.problem);
      SLUICE_TRY(remove_later_segments(listing, base));
      loaded_.stats.torn_bytes_truncated += tail;
    } else if (scan.zero_tail) {  // the active segment's preallocated end: nothing was lost there
      SLUICE_PROBE("log_loader.preallocated_tail_cut");
      env_.log.info("{}: cutting {} preallocated bytes after the last batch of {}", dir_, tail, segment->log_path());
      loaded_.stats.preallocated_bytes_cut += tail;
    } else {
      SLUICE_PROBE("log_loader.torn_tail_truncated");
      env_.log.warn("{}: truncating a torn tail of {} bytes: {}", dir_, tail, scan.problem);
      loaded_.stats.torn_bytes_truncated += tail;
    }
    SLUICE_TRY(segment->truncate_file_to_valid());
    *cut = true;
  }
  return std::shared_ptr<Segment>(std::move(segment));
}

Status Loader::remove_later_segments(const Listing& listing, int64_t base) {
  for (auto it = listing.logs.upper_bound(base); it != listing.logs.end(); ++it) {
    SLUICE_TRY(remove_segment_files(*it));
    ++loaded_.stats.segments_deleted_after_torn_tail;
  }
  return env_.fs.sync_dir(dir_);
}

// Unclean: trust what lies below the segment holding the recovery point, scan from it on. The last segment may
// end torn anywhere; an earlier one only above a recovery point that partition.state gives (a `replicated` roll
// syncs it in the background), and then the segments after it go.
Status Loader::load_segments(const Listing& listing, bool clean, int64_t recovery_point, bool state_found) {
  loaded_.segments.clear();
  recovered_.clear();
  int64_t scan_from = listing.logs.empty() ? 0 : *listing.logs.begin();
  for (int64_t base : listing.logs) {
    if (base <= recovery_point) scan_from = base;
  }
  constexpr int64_t kAnywhere = std::numeric_limits<int64_t>::min();
  constexpr int64_t kNowhere = std::numeric_limits<int64_t>::max();
  for (auto it = listing.logs.begin(); it != listing.logs.end(); ++it) {
    const int64_t base = *it;
    const auto next = std::next(it);
    const bool last = next == listing.logs.end();
    const bool trusted = clean || base < scan_from;
    // Group commit relies on this: it acknowledges without syncing the active segment's indexes.
    SLUICE_ASSERT(clean || !last || !trusted);
    // A closed segment may have lost its end only when the recorded recovery point lies below its successor's
    // base: otherwise it was synced whole.
    const bool maybe_unsynced = !last && !clean && state_found && *next > recovery_point;
    SLUICE_ASSERT(!maybe_unsynced || !trusted);
    const int64_t torn_from = last ? kAnywhere : maybe_unsynced ? recovery_point : kNowhere;
    bool cut = false;
    SLUICE_ASSIGN_OR_RETURN(std::shared_ptr<Segment> segment, load_segment(base, trusted, torn_from, listing, &cut));
    const int64_t end = segment->next_offset();
    // Descriptors stay bounded while thousands of segments load; the log reopens its active one.
    if (!last && !cut) segment->release_files();
    loaded_.segments.emplace(base, std::move(segment));
    if (cut) break;  // the later segments are gone
    // Whole batches lost at the end, none torn: the next segment's base shows it. (The cleaner leaves such a gap
    // legitimately, but always below the recorded recovery point: its swap records one past it first.)
    if (maybe_unsynced && end >= recovery_point && end < *next) {
      SLUICE_PROBE("log_loader.rolled_segment_lost_tail");
      env_.log.warn("{}: the rolled segment at {} ends at offset {}, short of the next one's base {}: deleting the "
                    "later segments",
                    dir_, base, end, *next);
      SLUICE_TRY(remove_later_segments(listing, base));
      break;
    }
  }
  loaded_.stats.segments_loaded = loaded_.segments.size();
  return check_order();
}

Status Loader::check_order() {
  const Segment* previous = nullptr;
  for (const auto& [base, segment] : loaded_.segments) {
    SLUICE_ASSERT(segment->base_offset() == base);
    if (previous != nullptr && previous->next_offset() > base) {
      const std::string message = previous->log_path() + " ends at offset " + std::to_string(previous->next_offset()) +
                                  ", past the base of the next segment " + std::to_string(base) +
                                  "; the partition is not loaded. Run `sluice log repair " + dir_ + "`.";
      return Status(Code::kCorruption, message, static_cast<int16_t>(ErrorCode::kKafkaStorageError));
    }
    previous = segment.get();
  }
  return Status();
}

Status Loader::apply_log_start(int64_t state_log_start) {
  int64_t log_start = state_log_start;
  if (!loaded_.segments.empty()) log_start = std::max(log_start, loaded_.segments.begin()->first);
  if (!loaded_.segments.empty() && log_end() < log_start) {
    SLUICE_PROBE("log_loader.log_end_below_log_start");
    for (auto& [base, segment] : loaded_.segments) SLUICE_TRY(remove_segment_files(base));
    loaded_.segments.clear();
  }
  // Segments deleted before the stop whose removal did not reach the disk. An empty one at the log start goes
  // too (it ends where it starts): the log then starts at the next one's base, as the next load, which never sees
  // the removed segment, will say.
  while (loaded_.segments.size() > 1 && loaded_.segments.begin()->second->next_offset() <= log_start) {
    SLUICE_TRY(remove_segment_files(loaded_.segments.begin()->first));
    loaded_.segments.erase(loaded_.segments.begin());
    log_start = std::max(log_start, loaded_.segments.begin()->first);
  }
  loaded_.log_start_offset = log_start;
  return Status();
}

Result<LoadedLog> Loader::load() {
  SLUICE_TRY(ensure_dir());
  SLUICE_ASSIGN_OR_RETURN(Listing listing, list());
  // Before the marker goes: a refusal changes nothing.
  SLUICE_ASSIGN_OR_RETURN(std::optional<PartitionState> state, read_partition_state(env_.fs, dir_));
  SLUICE_ASSIGN_OR_RETURN(std::optional<int64_t> clean_end, consume_clean_marker(listing));
  SLUICE_TRY(clean_temp_files(listing));
  SLUICE_ASSIGN_OR_RETURN(listing, list());
  const int64_t recovery_point = state.has_value() ? state->recovery_point : 0;
  loaded_.stats.clean_shutdown = clean_end.has_value();
  Status loaded = load_segments(listing, clean_end.has_value(), recovery_point, state.has_value());
  if (loaded.ok() && clean_end.has_value() && *clean_end != log_end()) {
    SLUICE_PROBE("log_loader.clean_marker_disagrees");
    env_.log.warn("{}: clean-shutdown marker says log end {}, files say {}: recovering", dir_, *clean_end, log_end());
    loaded_.stats = LoadStats{};
    loaded = load_segments(listing, false, recovery_point, state.has_value());
  }
  SLUICE_TRY(loaded);
  SLUICE_TRY(apply_log_start(state.has_value() ? state->log_start_offset : 0));
  // What the scan accepted may not all be durable yet: sync it, then all of it is below the recovery point.
  for (int64_t base : recovered_) {
    auto it = loaded_.segments.find(base);
    if (it != loaded_.segments.end()) SLUICE_TRY(it->second->flush());
  }
  loaded_.recovery_point = log_end();
  SLUICE_ASSERT(loaded_.segments.empty() || loaded_.log_start_offset <= log_end());
  return std::move(loaded_);
}

Result<std::string> Loader::repair() {
  SLUICE_ASSIGN_OR_RETURN(Listing listing, list());
  std::string done;
  // A damaged partition.state goes: the next open takes the log start from the first segment and, without a
  // recovery point, refuses damage in any closed segment (this repair leaves none).
  Result<std::optional<PartitionState>> state = read_partition_state(env_.fs, dir_);
  if (!state.ok() && state.status().code() == Code::kCorruption) {
    SLUICE_TRY(env_.fs.remove(path(kStateFileName)));
    SLUICE_TRY(env_.fs.sync_dir(dir_));
    done = "removed the damaged " + path(kStateFileName);
  }
  const auto also = [&done](const std::string& more) { return done.empty() ? more : done + "; " + more; };
  int64_t previous_end = -1;
  for (auto it = listing.logs.begin(); it != listing.logs.end(); ++it) {
    SLUICE_ASSIGN_OR_RETURN(std::unique_ptr<Segment> segment, Segment::open(env_, dir_, *it, config_));
    SLUICE_ASSIGN_OR_RETURN(SegmentScan scan, segment->recover());
    const bool overlaps = previous_end > *it;
    if (scan.clean() && !overlaps) {
      previous_end = scan.next_offset;
      continue;
    }
    auto later = it;
    if (overlaps) {
      done = also("removed " + segment->log_path() + " and later segments (overlapping offsets)");
    } else {
      SLUICE_TRY(segment->truncate_file_to_valid());
      SLUICE_TRY(segment->flush());
      done = also("truncated " + segment->log_path() + " at byte " + std::to_string(scan.valid_bytes) + " (offset " +
                  std::to_string(scan.next_offset) + ": " + scan.problem + ")");
      ++later;
    }
    SLUICE_TRY(segment->close());
    for (; later != listing.logs.end(); ++later) SLUICE_TRY(remove_segment_files(*later));
    SLUICE_TRY(env_.fs.sync_dir(dir_));
    return done;
  }
  return done;
}

}  // namespace

Result<LoadedLog> LogLoader::load(Env env, const std::string& dir, const SegmentConfig& config) {
  return Loader(env, dir, config).load();
}

Result<std::string> LogLoader::repair(Env env, const std::string& dir, const SegmentConfig& config) {
  return Loader(env, dir, config).repair();
}

Status write_partition_state(FileSystem& fs, const std::string& dir, const PartitionState& state) {
  return replace_file_durably(fs, join_path(dir, kStateFileName), join_path(dir, kStateTempFileName),
                              encode_partition_state(state));
}

Result<std::optional<PartitionState>> read_partition_state(FileSystem& fs, const std::string& dir) {
  Result<std::unique_ptr<File>> file = fs.open(join_path(dir, kStateFileName), OpenMode::kRead);
  if (!file.ok() && file.status().code() == Code::kNotFound) return std::optional<PartitionState>();
  SLUICE_TRY(file.status());
  // A copy that fails its CRC is read again (read_whole_file already wants two reads to agree, but two bad copies
  // of a file this small can: a zeroed sector is the whole file).
  Result<PartitionState> state = read_again_on_damage(
      3,
      [&]() -> Result<PartitionState> {
        SLUICE_ASSIGN_OR_RETURN(Bytes bytes, read_whole_file(**file));
        return decode_partition_state(bytes);
      },
      [](const Status&) {});
  SLUICE_TRY((*file)->close());
  if (!state.ok()) {
    SLUICE_PROBE("log_loader.partition_state_damaged");
    const std::string message =
        join_path(dir, state.status().message()) +  // "<dir>/partition.state: CRC mismatch"
        ". It records the log start offset: loading without it would serve records deleted below it again, so the "
        "partition is not loaded. Run `sluice log repair " +
        dir + "` to remove it (the log start then becomes the first segment's base, and deleted records still in "
              "that segment come back).";
    return Status(Code::kCorruption, message, static_cast<int16_t>(ErrorCode::kKafkaStorageError));
  }
  return std::optional<PartitionState>(*state);
}

}  // namespace sluice::storage
