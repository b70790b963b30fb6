// SimDisk through SimFileSystem without power losses: POSIX semantics, space accounting and injected errors.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "sim/world/sim_disk.h"
#include "sim/world/sim_file_system.h"
#include "tests/core/env/file_contract.h"
#include "tests/sim/world/sim_disk_test_util.h"

namespace sluice {
namespace {

using namespace sim_disk_test;

std::vector<std::string> names(FileSystem& fs, std::string_view dir) {
  Result<std::vector<DirEntry>> entries = fs.list(dir);
  EXPECT_TRUE(entries.ok()) << entries.status().to_string();
  std::vector<std::string> out;
  if (!entries.ok()) return out;
  for (const DirEntry& entry : *entries) out.push_back(entry.name + (entry.is_directory ? "/" : ""));
  return out;
}

class SimDiskFs : public ::testing::Test {
 protected:
  void TearDown() override { EXPECT_TRUE(disk_.consistent()) << disk_.describe(); }

  SimDisk disk_{Random(42)};
  SimFileSystem fs_{disk_};
};

TEST_F(SimDiskFs, OpenModes) {
  EXPECT_EQ(fs_.open("f", OpenMode::kRead).status().code(), Code::kNotFound);
  EXPECT_EQ(fs_.open("f", OpenMode::kReadWrite).status().code(), Code::kNotFound);
  write_file(fs_, "f", "hello", /*sync=*/false);
  EXPECT_EQ(fs_.open("f", OpenMode::kCreateNew).status().code(), Code::kAlreadyExists);
  EXPECT_EQ(read_file(fs_, "f"), "hello");
  { must_open(fs_, "f", OpenMode::kCreate); }
  EXPECT_EQ(read_file(fs_, "f"), "hello");
  { must_open(fs_, "f", OpenMode::kCreateTruncate); }
  EXPECT_EQ(read_file(fs_, "f"), "");
  std::unique_ptr<File> reader = must_open(fs_, "f", OpenMode::kRead);
  EXPECT_EQ(reader->append(as_bytes("x")).code(), Code::kInvalidArgument);
  EXPECT_EQ(reader->truncate(0).code(), Code::kInvalidArgument);
  EXPECT_TRUE(reader->sync().ok());
  EXPECT_EQ(fs_.open("missing/f", OpenMode::kCreate).status().code(), Code::kNotFound);
  ASSERT_TRUE(fs_.create_dirs("dir").ok());
  EXPECT_EQ(fs_.open("dir", OpenMode::kRead).status().code(), Code::kInvalidArgument);
  EXPECT_EQ(fs_.open("", OpenMode::kCreate).status().code(), Code::kInvalidArgument);
}

TEST_F(SimDiskFs, ReadWritePwriteTruncateAndHoles) {
  std::unique_ptr<File> file = must_open(fs_, "f", OpenMode::kCreate);
  ASSERT_TRUE(file->append(as_bytes("abc")).ok());
  ASSERT_TRUE(file->pwrite(1, as_bytes("XY")).ok());
  ASSERT_TRUE(file->append(as_bytes("d")).ok());
  EXPECT_EQ(read_handle(*file), "aXYd");
  ASSERT_TRUE(file->pwrite(10, as_bytes("z")).ok());  // past the end: a hole of zeros
  EXPECT_EQ(read_handle(*file), std::string("aXYd") + std::string(6, '\0') + "z");
  uint8_t buffer[8];
  EXPECT_EQ(*file->pread(9, buffer), 2u);
  EXPECT_EQ(*file->pread(11, buffer), 0u);
  EXPECT_EQ(*file->pread(100, buffer), 0u);
  ASSERT_TRUE(file->truncate(2).ok());
  EXPECT_EQ(read_handle(*file), "aX");
  ASSERT_TRUE(file->truncate(4).ok());
  EXPECT_EQ(read_handle(*file), std::string("aX") + std::string(2, '\0'));
  ASSERT_TRUE(file->append(ByteView()).ok());
  EXPECT_EQ(*file->size(), 4u);
  EXPECT_EQ(disk_.stats().bytes_written, 7u);
}

// pread_append: the bytes read land after what the buffer held, with a read's counts and damage rules.
TEST_F(SimDiskFs, PreadAppendAddsTheBytesReadAfterTheBuffersOwn) {
  std::unique_ptr<File> file = must_open(fs_, "f", OpenMode::kCreate);
  ASSERT_TRUE(file->append(as_bytes("abcdef")).ok());
  Bytes out = testing::expect_pread_append_adds_after_the_buffers_own(*file);
  EXPECT_EQ(disk_.stats().reads, 4u);
  EXPECT_EQ(disk_.stats().bytes_read, 5u);
  disk_.flip_in_next_read("f", 1, 0x20);
  Bytes flipped;
  EXPECT_EQ(*file->pread_append(0, 6, flipped), 6u);
  EXPECT_EQ(as_chars(flipped), "aBcdef");
  EXPECT_EQ(disk_.stats().corrupted_reads, 1u);
  ASSERT_TRUE(file->close().ok());
  EXPECT_EQ(file->pread_append(0, 1, out).status().code(), Code::kClosed);
  EXPECT_EQ(as_chars(out), "xycdeef");
}

TEST_F(SimDiskFs, ClosedHandleFailsWithClosed) {
  std::unique_ptr<File> file = must_open(fs_, "f", OpenMode::kCreate);
  ASSERT_TRUE(file->close().ok());
  uint8_t buffer[1];
  EXPECT_EQ(file->pread(0, buffer).status().code(), Code::kClosed);
  EXPECT_EQ(file->append(as_bytes("x")).code(), Code::kClosed);
  EXPECT_EQ(file->sync().code(), Code::kClosed);
  EXPECT_EQ(file->close().code(), Code::kClosed);
}

TEST_F(SimDiskFs, RemovedFileStaysUsableThroughOpenHandlesAndFreesSpaceOnClose) {
  write_file(fs_, "f", std::string(100, 'a'), /*sync=*/false);
  std::unique_ptr<File> file = must_open(fs_, "f", OpenMode::kReadWrite);
  ASSERT_TRUE(fs_.remove("f").ok());
  EXPECT_FALSE(file_exists(fs_, "f"));
  EXPECT_TRUE(names(fs_, ".").empty());
  EXPECT_EQ(fs_.remove("f").code(), Code::kNotFound);
  ASSERT_TRUE(file->append(as_bytes("b")).ok());
  EXPECT_EQ(read_handle(*file), std::string(100, 'a') + "b");
  EXPECT_EQ(disk_.used_bytes(), 101u);          // still charged: a handle holds it
  write_file(fs_, "f", "new", /*sync=*/false);  // a new file under the old name is another inode
  EXPECT_EQ(read_handle(*file), std::string(100, 'a') + "b");
  ASSERT_TRUE(file->close().ok());
  EXPECT_EQ(disk_.used_bytes(), 3u);
  EXPECT_EQ(read_file(fs_, "f"), "new");
}

TEST_F(SimDiskFs, ListExistsCreateDirsRemoveDir) {
  ASSERT_TRUE(fs_.create_dirs("a/b/c").ok());
  ASSERT_TRUE(fs_.create_dirs("./a/b").ok());  // already there: fine
  write_file(fs_, "/a/z", "", /*sync=*/false);
  write_file(fs_, "a/m", "", /*sync=*/false);
  EXPECT_EQ(names(fs_, "a"), (std::vector<std::string>{"b/", "m", "z"}));
  EXPECT_EQ(names(fs_, "./a/"), names(fs_, "a"));
  EXPECT_EQ(names(fs_, "."), (std::vector<std::string>{"a/"}));
  EXPECT_EQ(names(fs_, ""), names(fs_, "/"));
  EXPECT_TRUE(file_exists(fs_, "a/b/c"));
  EXPECT_TRUE(file_exists(fs_, "a/m"));
  EXPECT_TRUE(file_exists(fs_, "."));
  EXPECT_FALSE(file_exists(fs_, "a/m/x"));
  EXPECT_FALSE(file_exists(fs_, "nope"));
  EXPECT_EQ(fs_.exists("a/../a").status().code(), Code::kInvalidArgument);
  EXPECT_EQ(fs_.list("nope").status().code(), Code::kNotFound);
  EXPECT_EQ(fs_.list("a/m").status().code(), Code::kNotFound);
  EXPECT_EQ(fs_.create_dirs("a/m/x").code(), Code::kAlreadyExists);
  EXPECT_EQ(fs_.remove_dir("a/b").code(), Code::kInvalidArgument);  // not empty
  EXPECT_EQ(fs_.remove_dir("a/m").code(), Code::kInvalidArgument);  // a file
  EXPECT_EQ(fs_.remove_dir("a/q").code(), Code::kNotFound);
  EXPECT_EQ(fs_.remove_dir(".").code(), Code::kInvalidArgument);
  EXPECT_EQ(fs_.remove("a/b").code(), Code::kInvalidArgument);  // a directory
  ASSERT_TRUE(fs_.remove_dir("a/b/c").ok());
  ASSERT_TRUE(fs_.remove_dir("a/b").ok());
  EXPECT_FALSE(file_exists(fs_, "a/b"));
  EXPECT_EQ(names(fs_, "a"), (std::vector<std::string>{"m", "z"}));
  EXPECT_EQ(fs_.sync_dir("a/b").code(), Code::kNotFound);
}

TEST_F(SimDiskFs, RenameRules) {
  ASSERT_TRUE(fs_.create_dirs("a/b").ok());
  ASSERT_TRUE(fs_.create_dirs("e").ok());
  write_file(fs_, "a/b/f", "F", /*sync=*/false);
  write_file(fs_, "g", "G", /*sync=*/false);
  EXPECT_TRUE(fs_.rename("g", "g").ok());
  EXPECT_EQ(fs_.rename("missing", "x").code(), Code::kNotFound);
  EXPECT_EQ(fs_.rename("g", "missing/x").code(), Code::kNotFound);
  EXPECT_EQ(fs_.rename("a", "a/b/inside").code(), Code::kInvalidArgument);
  EXPECT_EQ(fs_.rename("g", "e").code(), Code::kInvalidArgument);  // a file cannot replace a directory
  EXPECT_EQ(fs_.rename("e", "g").code(), Code::kInvalidArgument);
  EXPECT_EQ(fs_.rename("e", "a").code(), Code::kInvalidArgument);  // a is not empty
  ASSERT_TRUE(fs_.rename("a", "e").ok());                          // an empty directory may be replaced
  EXPECT_EQ(read_file(fs_, "e/b/f"), "F");
  EXPECT_FALSE(file_exists(fs_, "a"));
  ASSERT_TRUE(fs_.rename("e/b/f", "g").ok());  // replaces g
  EXPECT_EQ(read_file(fs_, "g"), "F");
  EXPECT_EQ(disk_.used_bytes(), 1u);
  ASSERT_TRUE(fs_.rename("e/b", "b2").ok());
  EXPECT_EQ(names(fs_, "."), (std::vector<std::string>{"b2/", "e/", "g"}));
}

TEST_F(SimDiskFs, NoSpaceIsReportedAndNothingIsHalfWritten) {
  disk_.set_capacity_bytes(1000);
  EXPECT_EQ(*fs_.total_bytes("."), 1000u);
  std::unique_ptr<File> file = must_open(fs_, "f", OpenMode::kCreate);
  ASSERT_TRUE(file->append(as_bytes(std::string(600, 'a'))).ok());
  EXPECT_EQ(*fs_.free_bytes("."), 400u);
  const Status full = file->append(as_bytes(std::string(600, 'b')));
  EXPECT_EQ(full.code(), Code::kNoSpace);
  EXPECT_EQ(*file->size(), 600u);
  EXPECT_EQ(read_handle(*file), std::string(600, 'a'));
  EXPECT_EQ(file->pwrite(500, as_bytes(std::string(600, 'c'))).code(), Code::kNoSpace);
  EXPECT_EQ(file->truncate(1200).code(), Code::kNoSpace);
  EXPECT_EQ(read_handle(*file), std::string(600, 'a'));
  ASSERT_TRUE(file->pwrite(0, as_bytes(std::string(600, 'd'))).ok());  // overwriting needs no space
  ASSERT_TRUE(file->append(as_bytes(std::string(400, 'e'))).ok());     // exactly full
  EXPECT_EQ(*fs_.free_bytes("."), 0u);
  EXPECT_EQ(file->append(as_bytes("x")).code(), Code::kNoSpace);
  EXPECT_EQ(disk_.stats().no_space_errors, 4u);
  ASSERT_TRUE(file->truncate(100).ok());
  EXPECT_EQ(*fs_.free_bytes("."), 900u);
  ASSERT_TRUE(file->close().ok());
  ASSERT_TRUE(fs_.remove("f").ok());
  EXPECT_EQ(*fs_.free_bytes("."), 1000u);
}

TEST_F(SimDiskFs, FailNextInjectsIoErrorsByKindAndPrefix) {
  ASSERT_TRUE(fs_.create_dirs("d").ok());
  std::unique_ptr<File> f = must_open(fs_, "d/f", OpenMode::kCreate);
  std::unique_ptr<File> g = must_open(fs_, "./d/g", OpenMode::kCreate);
  disk_.fail_next(DiskOp::kWrite, 2, "/d/f");
  EXPECT_EQ(f->append(as_bytes("1")).code(), Code::kIoError);
  EXPECT_TRUE(g->append(as_bytes("1")).ok());  // another path
  EXPECT_EQ(f->truncate(5).code(), Code::kIoError);
  EXPECT_TRUE(f->append(as_bytes("2")).ok());
  EXPECT_EQ(read_handle(*f), "2");  // failed writes wrote nothing
  disk_.fail_next(DiskOp::kRead, 1);
  uint8_t buffer[1];
  EXPECT_EQ(g->pread(0, buffer).status().code(), Code::kIoError);
  EXPECT_TRUE(g->pread(0, buffer).ok());
  disk_.fail_next(DiskOp::kMetadata, 1, "d/");
  EXPECT_EQ(fs_.open("d/h", OpenMode::kCreate).status().code(), Code::kIoError);
  EXPECT_FALSE(file_exists(fs_, "d/h"));
  disk_.fail_next(DiskOp::kSync, 1, "d");
  EXPECT_EQ(fs_.sync_dir("d").code(), Code::kIoError);
  EXPECT_TRUE(fs_.sync_dir("d").ok());
  EXPECT_EQ(disk_.stats().injected_errors, 5u);
  disk_.fail_next(DiskOp::kWrite, 3);
  disk_.clear_faults();
  EXPECT_TRUE(f->append(as_bytes("3")).ok());
}

TEST_F(SimDiskFs, ErrorProbabilityIsDeterministic) {
  const auto run = [] {
    SimDisk disk(Random(9));
    SimFileSystem fs(disk);
    disk.set_error_probability(DiskOp::kWrite, 0.3);
    std::unique_ptr<File> file = must_open(fs, "f", OpenMode::kCreate);
    std::string outcomes;
    for (int i = 0; i < 200; ++i) outcomes += file->append(as_bytes("x")).ok() ? '.' : 'E';
    return outcomes;
  };
  const std::string first = run();
  EXPECT_EQ(first, run());
  EXPECT_NE(first.find('E'), std::string::npos);
  EXPECT_NE(first.find('.'), std::string::npos);
}

TEST_F(SimDiskFs, StatsAndDescribe) {
  ASSERT_TRUE(fs_.create_dirs("d").ok());
  write_file(fs_, "d/f", "hello", /*sync=*/true);
  ASSERT_TRUE(fs_.sync_dir("d").ok());
  std::unique_ptr<File> file = must_open(fs_, "d/f", OpenMode::kReadWrite);
  ASSERT_TRUE(file->append(as_bytes("!")).ok());
  EXPECT_EQ(disk_.stats().bytes_written, 6u);
  EXPECT_EQ(disk_.stats().syncs, 1u);
  EXPECT_EQ(disk_.stats().dir_syncs, 1u);
  const std::string text = disk_.describe();
  EXPECT_NE(text.find("d/f  size=6 durable=5 unsynced_ops=1"), std::string::npos) << text;
  EXPECT_NE(text.find("unsynced_entry_ops=1"), std::string::npos) << text;  // mkdir d, not yet synced in "."
  const uint64_t before_root_sync = disk_.trace_state_hash();
  ASSERT_TRUE(fs_.sync_dir(".").ok());
  EXPECT_NE(disk_.trace_state_hash(), before_root_sync);  // d and its file are now reachable on the platters
  const uint64_t hash = disk_.trace_state_hash();
  ASSERT_TRUE(file->append(as_bytes("?")).ok());
  EXPECT_EQ(disk_.trace_state_hash(), hash);  // only durable state counts
  ASSERT_TRUE(file->sync().ok());
  EXPECT_NE(disk_.trace_state_hash(), hash);
}

}  // namespace
}  // namespace sluice
