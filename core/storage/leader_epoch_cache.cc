#include "core/storage/leader_epoch_cache.h"

#include <algorithm>
#include <charconv>

#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/storage/log_format.h"

namespace sluice::storage {

bool valid_epoch_entries(const std::vector<EpochEntry>& entries) {
  for (size_t i = 0; i < entries.size(); ++i) {
    if (entries[i].epoch < 0 || entries[i].start_offset < 0) return false;
    if (i > 0 && (entries[i].epoch <= entries[i - 1].epoch || entries[i].start_offset <= entries[i - 1].start_offset)) {
      return false;
    }
  }
  return true;
}

LeaderEpochCache::LeaderEpochCache(std::vector<EpochEntry> entries) : entries_(std::move(entries)) {
  SLUICE_ASSERT(valid_epoch_entries(entries_));
}

bool LeaderEpochCache::assign(int32_t epoch, int64_t start_offset) {
  SLUICE_ASSERT(epoch >= 0);
  SLUICE_ASSERT(start_offset >= 0);
  if (!entries_.empty() && entries_.back().epoch == epoch && entries_.back().start_offset <= start_offset) return false;
  while (!entries_.empty() && (entries_.back().epoch >= epoch || entries_.back().start_offset >= start_offset)) {
    entries_.pop_back();
  }
  entries_.push_back(EpochEntry{epoch, start_offset});
  SLUICE_VERIFY(valid_epoch_entries(entries_));
  return true;
}

bool LeaderEpochCache::truncate_from_end(int64_t end_offset) {
  if (end_offset < 0) return false;
  const size_t before = entries_.size();
  while (!entries_.empty() && entries_.back().start_offset >= end_offset) entries_.pop_back();
  return entries_.size() != before;
}

bool LeaderEpochCache::truncate_from_start(int64_t start_offset) {
  if (start_offset < 0) return false;
  // The entries starting at or below the new start: all but the last go, and the last starts there now.
  auto covering = std::upper_bound(entries_.begin(), entries_.end(), start_offset,
                                   [](int64_t offset, const EpochEntry& e) { return offset < e.start_offset; });
  if (covering == entries_.begin()) return false;
  --covering;
  const bool changed = covering != entries_.begin() || covering->start_offset != start_offset;
  covering->start_offset = start_offset;
  entries_.erase(entries_.begin(), covering);
  SLUICE_ASSERT(entries_.front().start_offset == start_offset);
  SLUICE_VERIFY(valid_epoch_entries(entries_));
  return changed;
}

std::optional<int32_t> LeaderEpochCache::latest_epoch() const {
  if (entries_.empty()) return std::nullopt;
  return entries_.back().epoch;
}

std::optional<int32_t> LeaderEpochCache::epoch_for_offset(int64_t offset) const {
  auto after = std::upper_bound(entries_.begin(), entries_.end(), offset,
                                [](int64_t o, const EpochEntry& e) { return o < e.start_offset; });
  if (after == entries_.begin()) return std::nullopt;
  return std::prev(after)->epoch;
}

std::optional<EpochEntry> LeaderEpochCache::first_entry_after(int32_t epoch) const {
  auto higher = std::upper_bound(entries_.begin(), entries_.end(), epoch,
                                 [](int32_t e, const EpochEntry& entry) { return e < entry.epoch; });
  if (higher == entries_.end()) return std::nullopt;
  return *higher;
}

EpochEndOffset LeaderEpochCache::end_offset_for(int32_t requested, int64_t log_end_offset) const {
  if (requested == kUndefinedEpoch) return EpochEndOffset{};
  if (latest_epoch() == requested) return EpochEndOffset{requested, log_end_offset};
  auto higher = std::upper_bound(entries_.begin(), entries_.end(), requested,
                                 [](int32_t e, const EpochEntry& entry) { return e < entry.epoch; });
  if (higher == entries_.end()) return EpochEndOffset{};  // newer than every known epoch, or nothing is known
  if (higher == entries_.begin()) return EpochEndOffset{requested, higher->start_offset};  // older than any known
  return EpochEndOffset{std::prev(higher)->epoch, higher->start_offset};
}

// ---- leader-epoch-checkpoint ----

namespace {

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

template <typename T>
bool parse_number(std::string_view text, T& out) {
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), out);
  return !text.empty() && ec == std::errc() && end == text.data() + text.size();
}

Status bad_checkpoint(size_t line, std::string_view why) {
  return corruption(fmt::format("{} line {}: {}", kLeaderEpochFileName, line + 1, why));
}

}  // namespace

std::string encode_leader_epoch_checkpoint(const std::vector<EpochEntry>& entries) {
  SLUICE_ASSERT(valid_epoch_entries(entries));
  std::string text = fmt::format("{}\n{}\n", kLeaderEpochFileVersion, entries.size());
  for (const EpochEntry& e : entries) text += fmt::format("{} {}\n", e.epoch, e.start_offset);
  return text;
}

Result<std::vector<EpochEntry>> decode_leader_epoch_checkpoint(std::string_view text) {
  const std::vector<std::string_view> lines = split_lines(text);
  int version = -1;
  if (lines.empty() || !parse_number(lines[0], version) || version != kLeaderEpochFileVersion) {
    return bad_checkpoint(0, "expected version 0");
  }
  size_t count = 0;
  if (lines.size() < 2 || !parse_number(lines[1], count)) return bad_checkpoint(1, "expected the entry count");
  // Exactly `count` entry lines (a torn or appended-to file is not taken for a shorter one).
  if (lines.size() != count + 2) {
    return bad_checkpoint(1, fmt::format("{} entries announced, {} lines follow", count, lines.size() - 2));
  }
  std::vector<EpochEntry> entries;
  entries.reserve(count);
  for (size_t i = 2; i < lines.size(); ++i) {
    const std::string_view line = lines[i];
    const size_t space = line.find(' ');
    EpochEntry entry;
    if (space == std::string_view::npos || !parse_number(line.substr(0, space), entry.epoch) ||
        !parse_number(line.substr(space + 1), entry.start_offset)) {
      return bad_checkpoint(i, "expected \"epoch start_offset\"");
    }
    entries.push_back(entry);
  }
  if (!valid_epoch_entries(entries)) return bad_checkpoint(2, "entries are not strictly increasing and >= 0");
  return entries;
}

Status write_leader_epoch_checkpoint(FileSystem& fs, const std::string& dir, const std::vector<EpochEntry>& entries) {
  return replace_file_durably(fs, join_path(dir, kLeaderEpochFileName), join_path(dir, kLeaderEpochTempFileName),
                              as_bytes(encode_leader_epoch_checkpoint(entries)));
}

Result<std::optional<std::vector<EpochEntry>>> read_leader_epoch_checkpoint(FileSystem& fs, const std::string& dir) {
  Result<std::unique_ptr<File>> file = fs.open(join_path(dir, kLeaderEpochFileName), OpenMode::kRead);
  if (!file.ok() && file.status().code() == Code::kNotFound) return std::optional<std::vector<EpochEntry>>();
  SLUICE_TRY(file.status());
  SLUICE_ASSIGN_OR_RETURN(Bytes bytes, read_whole_file(**file));
  SLUICE_TRY((*file)->close());
  SLUICE_ASSIGN_OR_RETURN(std::vector<EpochEntry> entries, decode_leader_epoch_checkpoint(as_chars(bytes)));
  return std::optional<std::vector<EpochEntry>>(std::move(entries));
}

}  // namespace sluice::storage
