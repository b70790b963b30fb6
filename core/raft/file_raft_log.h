// FileRaftLog: a RaftLog in one file per group, on the Env's FileSystem. Memory holds only each entry's first index,
// count, file offset, length and term; payloads are read back with pread. The format, the recovery rule and the
// failure policy are in core/raft/README.md ("Durable log and hard state").
//
// File (little endian): a header [u32 magic "srlg"][u32 format version = 2], then records
// [u32 crc32c of the rest][u32 payload length][u64 term][u32 count][payload]. The first record covers indexes
// [1, 1 + count), each next one starts where the previous ends; the log always starts at index 1 (RaftLog has no
// snapshot or start index). Format 1 (no header, no count) is refused, not converted: nothing was deployed with it.
//
// Fail-stop (fsyncgate): the first disk error (a write, truncate, sync or read failing, or a record that no longer
// reads back as written) poisons the log. From then on nothing more is written to the file, sync() returns that
// error, durable_index() never rises again, and read() returns no entries (Raft then sends nothing). last_index()
// and term_at() keep answering from memory, so the state machine's own invariants hold until the driver, which must
// check status() after every Ready, stops the group and reopens the log (recovery reads what really is on disk).
//
// Single-threaded: one fiber owns it.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "core/base/result.h"
#include "core/base/status.h"
#include "core/env/file_system.h"
#include "core/raft/raft_log.h"
#include "core/raft/types.h"

namespace sluice::raft {

inline constexpr size_t kRaftLogFileHeaderBytes = 8;                  // magic, format version
inline constexpr uint32_t kRaftLogMagic = 0x676c7273;                 // "srlg" as stored (little endian)
inline constexpr uint32_t kRaftLogFormatVersion = 2;                  // 1 had no file header and no count
inline constexpr size_t kRaftRecordHeaderBytes = 20;                  // crc, length, term, count
inline constexpr uint32_t kRaftPayloadBytesMax = uint32_t{64} << 20;  // a longer length field is damage

// What open() found: the recovered entries and how much of a damaged tail it cut.
struct FileRaftLogRecovery {
  Index entries = 0;       // records recovered
  Index last_index = 0;    // the last index they cover
  uint64_t bytes_kept = 0;  // the file header included
  uint64_t bytes_cut = 0;  // from the first incomplete or bad record to the end of the file
};

class FileRaftLog final : public RaftLog {
 public:
  // Opens or creates the log at `path` (its directory must exist), syncs the directory entry, writes the file header
  // into a new (or torn-at-creation) file, scans the records, cuts the file at the first incomplete or bad one and
  // syncs it: every recovered entry is then durable. A file with another magic or format version is refused
  // (kCorruption, kNotSupported), never cut.
  static Result<std::unique_ptr<FileRaftLog>> open(FileSystem& fs, const std::string& path);

  Index last_index() const override;
  Term term_at(Index index) const override;
  Index entry_start(Index index) const override;
  Index durable_index() const override { return durable_index_; }
  void append(Index at, std::span<const Entry> entries) override;
  // Cuts the file and syncs the cut at once (see the README: a truncation must be durable before new records
  // overwrite it). The durable index drops to from - 1 at most.
  void truncate_suffix(Index from) override;
  // No entries when the read fails (the log is then poisoned).
  std::vector<Entry> read(Index from, size_t max_count, uint64_t max_bytes) const override;

  // The same read, with its error. REQUIRES as read().
  Result<std::vector<Entry>> read_checked(Index from, size_t max_count, uint64_t max_bytes) const;
  // Makes every entry durable (fdatasync), then durable_index() == last_index(). Fails for good once poisoned.
  Status sync();
  // Ok, or the error that poisoned the log.
  const Status& status() const { return failure_; }
  bool failed() const { return !failure_.ok(); }
  // Poisoned by an append the disk refused for space. An append writes only past the file's end, so the records
  // before it are as they were and anything it left is a torn tail that opening the file again cuts: the group
  // may start again on a reopened log (its syncs never failed, so what it read durable is durable).
  bool stopped_for_space() const { return failed() && append_refused_for_space_; }
  const FileRaftLogRecovery& recovery() const { return recovery_; }
  // The file's size as this log has written it (the end of the last record written).
  uint64_t end_offset() const { return end_offset_; }

 private:
  static constexpr uint64_t kUnwritten = UINT64_MAX;  // an entry appended after the log failed: never on disk

  struct Record {
    Index first = 0;      // the first index it covers
    uint32_t count = 0;   // the indexes it covers, >= 1
    uint32_t length = 0;  // payload bytes
    uint64_t offset = 0;  // kUnwritten when not on disk
    Term term = 0;
    Index last() const { return first + count - 1; }
  };

  FileRaftLog(std::unique_ptr<File> file, std::string path) : file_(std::move(file)), path_(std::move(path)) {}
  Status recover();
  // Checks the file header of a file of `size` bytes, or writes it when the file is new (or its creation was torn).
  Status open_header(uint64_t size);
  // Reads the record at `offset` of a file of `size` bytes; an error when it is incomplete or bad there.
  Result<Record> scan_record(uint64_t offset, uint64_t size, Term previous_term, Index first);
  // The position in records_ of the record covering `index`. REQUIRES 1 <= index <= last_index().
  size_t position_of(Index index) const;
  Status write_records(std::span<const Entry> entries);
  void fail(Status error) const;
  void check_invariants() const;

  std::unique_ptr<File> file_;
  std::string path_;
  std::vector<Record> records_;  // in index order, gap-free from index 1
  uint64_t end_offset_ = 0;      // where the next record goes
  Index durable_index_ = 0;
  FileRaftLogRecovery recovery_;
  mutable Status failure_;  // read() is const but may poison the log
  bool append_refused_for_space_ = false;  // the error above is an append's kNoSpace
};

// Encodes one record (the format above) at the end of `out`.
void encode_raft_record(const Entry& entry, Bytes& out);

}  // namespace sluice::raft
