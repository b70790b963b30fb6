// PosixFileSystem against a real directory under /tmp: bytes reach the disk and come back through a fresh
// file system, metadata calls behave, and errno maps to the documented codes.
#include "net/posix_file_system.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <linux/fiemap.h>
#include <linux/fs.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "net/real_env.h"
#include "tests/core/env/file_contract.h"
#include "tests/net/temp_dir.h"

namespace sluice {
namespace {

using net_test::TempDir;

std::string read_all(File& file) {
  std::string out(64 * 1024, '\0');
  Result<size_t> n = file.pread(0, MutableByteView(reinterpret_cast<uint8_t*>(out.data()), out.size()));
  EXPECT_TRUE(n.ok()) << n.status().to_string();
  out.resize(n.ok() ? *n : 0);
  return out;
}

std::string read_with_std(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

TEST(PosixFileSystemTest, WrittenSyncedBytesComeBackThroughAFreshFileSystem) {
  TempDir dir;
  const std::string path = dir / "segment.log";
  {
    RealEnv real("fs1", LogLevel::kOff);
    ASSERT_EQ(real.run([&](Env& env) {
      Result<std::unique_ptr<File>> file = env.fs.open(path, OpenMode::kCreateNew);
      ASSERT_TRUE(file.ok()) << file.status().to_string();
      ASSERT_TRUE((*file)->append(as_bytes("hello ")).ok());
      ASSERT_TRUE((*file)->append(as_bytes("world")).ok());
      ASSERT_TRUE((*file)->pwrite(0, as_bytes("H")).ok());
      ASSERT_TRUE((*file)->sync().ok());
      EXPECT_EQ(*(*file)->size(), 11u);
      ASSERT_TRUE((*file)->close().ok());
      ASSERT_TRUE(env.fs.sync_dir(dir.path()).ok());
    }), 0);
    EXPECT_GE(real.loop().stats().blocking_completed, 3u);  // open, fdatasync, fsync of the directory
  }
  RealEnv fresh("fs2", LogLevel::kOff);
  ASSERT_EQ(fresh.run([&](Env& env) {
    Result<std::unique_ptr<File>> file = env.fs.open(path, OpenMode::kRead);
    ASSERT_TRUE(file.ok()) << file.status().to_string();
    EXPECT_EQ(read_all(**file), "Hello world");
  }), 0);
  EXPECT_EQ(read_with_std(path), "Hello world");
}

TEST(PosixFileSystemTest, PreadStopsAtEndOfFile) {
  TempDir dir;
  RealEnv real("fs", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    auto file = std::move(env.fs.open(dir / "f", OpenMode::kCreate)).value();
    ASSERT_TRUE(file->pwrite(0, as_bytes("abcdef")).ok());
    uint8_t buffer[4] = {};
    EXPECT_EQ(*file->pread(4, buffer), 2u);
    EXPECT_EQ(buffer[0], 'e');
    EXPECT_EQ(*file->pread(6, buffer), 0u);
    EXPECT_EQ(*file->pread(100, buffer), 0u);
    // pwrite past the end extends the file with a hole.
    ASSERT_TRUE(file->pwrite(10, as_bytes("z")).ok());
    EXPECT_EQ(*file->size(), 11u);
  }), 0);
}

// pread_append (File's default: a pread into the grown buffer, cut to what was read).
TEST(PosixFileSystemTest, PreadAppendAddsTheBytesReadAfterTheBuffersOwn) {
  TempDir dir;
  RealEnv real("fs", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    auto file = std::move(env.fs.open(dir / "f", OpenMode::kCreate)).value();
    ASSERT_TRUE(file->pwrite(0, as_bytes("abcdef")).ok());
    Bytes out = testing::expect_pread_append_adds_after_the_buffers_own(*file);
    ASSERT_TRUE(file->close().ok());
    EXPECT_EQ(file->pread_append(0, 1, out).status().code(), Code::kClosed);
    EXPECT_EQ(as_chars(out), "xycdeef");  // unchanged on failure
  }), 0);
}

// A gathered append lands at the end in order, empty parts included, past IOV_MAX parts too (several pwritev).
TEST(PosixFileSystemTest, GatheredWriteWritesThePartsBackToBackAtItsOffset) {
  TempDir dir;
  RealEnv real("fs", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    auto file = std::move(env.fs.open(dir / "g", OpenMode::kCreate)).value();
    ASSERT_TRUE(file->append(as_bytes("head:")).ok());
    std::vector<std::string> texts;
    for (int i = 0; i < 2500; ++i) texts.push_back(i % 7 == 0 ? "" : std::to_string(i) + ",");
    std::vector<ByteView> parts;
    std::string expected = "head:";
    for (const std::string& text : texts) {
      parts.push_back(ByteView(reinterpret_cast<const uint8_t*>(text.data()), text.size()));
      expected += text;
    }
    ASSERT_TRUE(file->pwrite_gathered(5, parts).ok());
    ASSERT_TRUE(file->append(as_bytes("|")).ok());
    EXPECT_EQ(read_all(*file), expected + "|");
    ASSERT_TRUE(file->pwrite_gathered(0, std::vector<ByteView>{as_bytes("HE"), as_bytes(""), as_bytes("AD")}).ok());
    EXPECT_EQ(read_all(*file), "HEAD:" + expected.substr(5) + "|");
  }), 0);
}

// preallocate extends with zeros and never shrinks; writes below the preallocated end leave the size alone.
TEST(PosixFileSystemTest, PreallocateExtendsWithZerosAndNeverShrinks) {
  TempDir dir;
  RealEnv real("fs", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    auto file = std::move(env.fs.open(dir / "p", OpenMode::kCreate)).value();
    ASSERT_TRUE(file->append(as_bytes("abc")).ok());
    ASSERT_TRUE(file->preallocate(8192).ok());
    EXPECT_EQ(file->size().value(), 8192u);
    ASSERT_TRUE(file->preallocate(100).ok());
    EXPECT_EQ(file->size().value(), 8192u);
    ASSERT_TRUE(file->pwrite(3, as_bytes("def")).ok());
    EXPECT_EQ(file->size().value(), 8192u);
    ASSERT_TRUE(file->sync().ok());
    const std::string all = read_all(*file);
    EXPECT_EQ(all.substr(0, 6), "abcdef");
    EXPECT_EQ(all.find_first_not_of('\0', 6), std::string::npos);
    ASSERT_TRUE(file->truncate(6).ok());
    EXPECT_EQ(read_all(*file), "abcdef");
  }), 0);
}

namespace {

// Whether any extent of the file at `path` is unwritten (fallocated, not yet written); nullopt when the file
// system cannot tell (no FIEMAP, as on tmpfs).
std::optional<bool> has_unwritten_extents(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return std::nullopt;
  constexpr size_t kExtents = 64;
  std::vector<uint8_t> buffer(sizeof(fiemap) + kExtents * sizeof(fiemap_extent));
  auto* map = reinterpret_cast<fiemap*>(buffer.data());
  map->fm_length = FIEMAP_MAX_OFFSET;
  map->fm_flags = FIEMAP_FLAG_SYNC;
  map->fm_extent_count = kExtents;
  const int rc = ::ioctl(fd, FS_IOC_FIEMAP, map);
  ::close(fd);
  if (rc != 0 || map->fm_mapped_extents == 0) return std::nullopt;
  for (uint32_t i = 0; i < map->fm_mapped_extents; ++i) {
    if ((map->fm_extents[i].fe_flags & FIEMAP_EXTENT_UNWRITTEN) != 0) return true;
  }
  return false;
}

}  // namespace

// preallocate writes its zeros (several pwrite calls for this size, the last one partial), so that a later
// write below the preallocated end converts no unwritten extent and its fdatasync journals nothing.
TEST(PosixFileSystemTest, PreallocateWritesTheZerosSoNoExtentIsLeftUnwritten) {
  TempDir dir;
  RealEnv real("fs", LogLevel::kOff);
  constexpr uint64_t kSize = 3 * 1024 * 1024 + 123;
  ASSERT_EQ(real.run([&](Env& env) {
    auto file = std::move(env.fs.open(dir / "z", OpenMode::kCreate)).value();
    ASSERT_TRUE(file->append(as_bytes("head")).ok());
    ASSERT_TRUE(file->preallocate(kSize).ok());
    EXPECT_EQ(file->size().value(), kSize);
    ASSERT_TRUE(file->sync().ok());
  }), 0);
  const std::string all = read_with_std(dir / "z");
  ASSERT_EQ(all.size(), kSize);
  EXPECT_EQ(all.substr(0, 4), "head");
  EXPECT_EQ(all.find_first_not_of('\0', 4), std::string::npos);
  struct stat st {};
  ASSERT_EQ(::stat((dir / "z").c_str(), &st), 0);
  EXPECT_GE(static_cast<uint64_t>(st.st_blocks) * 512, kSize) << "the zeros are written, not a sparse extension";
  const std::optional<bool> unwritten = has_unwritten_extents(dir / "z");
  if (!unwritten.has_value()) GTEST_SKIP() << "this file system does not report extents (FIEMAP)";
  EXPECT_FALSE(*unwritten) << "preallocate left fallocated (unwritten) extents";
}

TEST(PosixFileSystemTest, RenameRemoveListExistsTruncate) {
  TempDir dir;
  RealEnv real("fs", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    ASSERT_TRUE(env.fs.create_dirs(dir / "d/e/f").ok());
    ASSERT_TRUE(env.fs.create_dirs(dir / "d/e/f").ok());  // existing: ok
    for (const char* name : {"b", "a", "c"}) {
      auto file = std::move(env.fs.open(dir / name, OpenMode::kCreateTruncate)).value();
      ASSERT_TRUE(file->append(as_bytes(name)).ok());
    }
    Result<std::vector<DirEntry>> listed = env.fs.list(dir.path());
    ASSERT_TRUE(listed.ok()) << listed.status().to_string();
    ASSERT_EQ(listed->size(), 4u);
    const std::vector<std::string> names{(*listed)[0].name, (*listed)[1].name, (*listed)[2].name,
                                         (*listed)[3].name};
    EXPECT_EQ(names, (std::vector<std::string>{"a", "b", "c", "d"}));
    EXPECT_FALSE((*listed)[0].is_directory);
    EXPECT_TRUE((*listed)[3].is_directory);

    // rename replaces an existing target atomically.
    ASSERT_TRUE(env.fs.rename(dir / "a", dir / "b").ok());
    EXPECT_FALSE(*env.fs.exists(dir / "a"));
    auto b = std::move(env.fs.open(dir / "b", OpenMode::kReadWrite)).value();
    EXPECT_EQ(read_all(*b), "a");
    ASSERT_TRUE(b->append(as_bytes("123456")).ok());
    ASSERT_TRUE(b->truncate(3).ok());
    EXPECT_EQ(*b->size(), 3u);
    EXPECT_EQ(read_all(*b), "a12");

    ASSERT_TRUE(env.fs.remove(dir / "c").ok());
    EXPECT_FALSE(*env.fs.exists(dir / "c"));
    EXPECT_TRUE(*env.fs.exists(dir / "d/e"));
    ASSERT_TRUE(env.fs.remove_dir(dir / "d/e/f").ok());
    EXPECT_FALSE(*env.fs.exists(dir / "d/e/f"));
    EXPECT_EQ(env.fs.list(dir / "d/e")->size(), 0u);
    ASSERT_TRUE(env.fs.sync_dir(dir.path()).ok());
  }), 0);
}

TEST(PosixFileSystemTest, ErrorsMapToCodes) {
  TempDir dir;
  RealEnv real("fs", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    Result<std::unique_ptr<File>> missing = env.fs.open(dir / "missing", OpenMode::kRead);
    ASSERT_FALSE(missing.ok());
    EXPECT_EQ(missing.status().code(), Code::kNotFound);
    EXPECT_NE(missing.status().message().find(dir / "missing"), std::string::npos)
        << missing.status().message();
    EXPECT_EQ(env.fs.open(dir / "missing", OpenMode::kReadWrite).status().code(), Code::kNotFound);

    ASSERT_TRUE(env.fs.open(dir / "x", OpenMode::kCreateNew).ok());
    EXPECT_EQ(env.fs.open(dir / "x", OpenMode::kCreateNew).status().code(), Code::kAlreadyExists);
    EXPECT_TRUE(env.fs.open(dir / "x", OpenMode::kCreate).ok());

    EXPECT_EQ(env.fs.remove(dir / "missing").code(), Code::kNotFound);
    EXPECT_EQ(env.fs.rename(dir / "missing", dir / "y").code(), Code::kNotFound);
    EXPECT_EQ(env.fs.list(dir / "missing").status().code(), Code::kNotFound);
    EXPECT_EQ(env.fs.remove_dir(dir / "missing").code(), Code::kNotFound);
    EXPECT_EQ(env.fs.sync_dir(dir / "missing").code(), Code::kNotFound);
    EXPECT_EQ(env.fs.free_bytes(dir / "missing").status().code(), Code::kNotFound);
    // A directory over an existing file, and a non-empty directory removal, are plain I/O errors.
    EXPECT_FALSE(env.fs.create_dirs(dir / "x").ok());
    ASSERT_TRUE(env.fs.create_dirs(dir / "full/inner").ok());
    EXPECT_EQ(env.fs.remove_dir(dir / "full").code(), Code::kIoError);
  }), 0);
}

TEST(PosixFileSystemTest, ClosedFileFailsWithClosed) {
  TempDir dir;
  RealEnv real("fs", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    auto file = std::move(env.fs.open(dir / "f", OpenMode::kCreate)).value();
    ASSERT_TRUE(file->close().ok());
    ASSERT_TRUE(file->close().ok());  // idempotent
    uint8_t buffer[1];
    EXPECT_EQ(file->pread(0, buffer).status().code(), Code::kClosed);
    EXPECT_EQ(file->append(as_bytes("x")).code(), Code::kClosed);
    EXPECT_EQ(file->pwrite(0, as_bytes("x")).code(), Code::kClosed);
    EXPECT_EQ(file->size().status().code(), Code::kClosed);
    EXPECT_EQ(file->truncate(0).code(), Code::kClosed);
    EXPECT_EQ(file->sync().code(), Code::kClosed);
  }), 0);
}

TEST(PosixFileSystemTest, SpaceFiguresAreSane) {
  TempDir dir;
  RealEnv real("fs", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    Result<uint64_t> free = env.fs.free_bytes(dir.path());
    Result<uint64_t> total = env.fs.total_bytes(dir.path());
    ASSERT_TRUE(free.ok());
    ASSERT_TRUE(total.ok());
    EXPECT_GT(*total, 0u);
    EXPECT_LE(*free, *total);
    Result<DiskSpace> both = env.fs.space(dir.path());  // one statvfs for the disk-pressure check
    ASSERT_TRUE(both.ok());
    EXPECT_EQ(both->total_bytes, *total);
    EXPECT_LE(both->free_bytes, both->total_bytes);
    EXPECT_EQ(env.fs.space(dir / "missing").status().code(), Code::kNotFound);
  }), 0);
}

TEST(PosixFileSystemTest, SetupCodeOutsideTheLoopRunsInline) {
  TempDir dir;
  RealEnv real("fs", LogLevel::kOff);
  Env& env = real.env();
  ASSERT_TRUE(env.fs.create_dirs(dir / "data").ok());
  auto file = std::move(env.fs.open(dir / "data/f", OpenMode::kCreateNew)).value();
  ASSERT_TRUE(file->append(as_bytes("setup")).ok());
  ASSERT_TRUE(file->sync().ok());
  EXPECT_EQ(read_all(*file), "setup");
  EXPECT_EQ(real.loop().stats().blocking_started, 0u);
  EXPECT_GE(real.loop().stats().blocking_inline, 3u);
}

// A read of what the page cache holds is copied on the loop thread; a read that would wait on the device (the
// pages dropped: fdatasync, then POSIX_FADV_DONTNEED) goes to a worker, so it stalls only its fiber.
TEST(PosixFileSystemTest, ColdReadsGoToAWorkerAndCachedReadsStayInline) {
  TempDir dir;
  RealEnv real("fs", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    auto file = std::move(env.fs.open(dir / "f", OpenMode::kCreateNew)).value();
    Bytes written(1 << 20);
    for (size_t i = 0; i < written.size(); ++i) written[i] = static_cast<uint8_t>(i * 131 + i / 4096);
    ASSERT_TRUE(file->append(written).ok());
    ASSERT_TRUE(file->sync().ok());  // only clean pages can be dropped
    // A read across the end, of cached pages: what there is, inline.
    const uint64_t before_end = real.loop().stats().blocking_started;
    Bytes tail(8192);
    EXPECT_EQ(*file->pread(written.size() - 100, tail), 100u);
    EXPECT_TRUE(std::equal(tail.begin(), tail.begin() + 100, written.end() - 100));
    EXPECT_EQ(real.loop().stats().blocking_started, before_end);

    const int fd = ::open((dir / "f").c_str(), O_RDONLY | O_CLOEXEC);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED), 0);
    ::close(fd);

    const uint64_t before_cold = real.loop().stats().blocking_started;
    Bytes cold(256 * 1024);
    ASSERT_EQ(*file->pread(4096, cold), cold.size());
    EXPECT_TRUE(std::equal(cold.begin(), cold.end(), written.begin() + 4096));
    EXPECT_EQ(real.loop().stats().blocking_started, before_cold + 1) << "the cold read ran on the loop thread";

    const uint64_t before_hot = real.loop().stats().blocking_started;
    Bytes hot(256 * 1024);
    ASSERT_EQ(*file->pread(4096, hot), hot.size());
    EXPECT_EQ(hot, cold);
    EXPECT_EQ(real.loop().stats().blocking_started, before_hot) << "a cached read went to a worker";
  }), 0);
}

// Copying a big write into fresh page-cache pages holds the loop for tens of milliseconds on a slow guest (a 32 MiB
// produce batch, bench/offload_bench.cc): a write of 1 MiB or more goes to a worker, a smaller one stays inline.
TEST(PosixFileSystemTest, BigWritesGoToAWorkerAndSmallOnesStayInline) {
  TempDir dir;
  RealEnv real("fs", LogLevel::kOff);
  ASSERT_EQ(real.run([&](Env& env) {
    auto file = std::move(env.fs.open(dir / "f", OpenMode::kCreateNew)).value();
    Bytes small(64 * 1024, 3);
    const uint64_t before_small = real.loop().stats().blocking_started;
    ASSERT_TRUE(file->append(small).ok());
    EXPECT_EQ(real.loop().stats().blocking_started, before_small) << "a small write went to a worker";

    Bytes first(768 * 1024);
    Bytes second(512 * 1024);
    for (size_t i = 0; i < first.size(); ++i) first[i] = static_cast<uint8_t>(i * 7 + i / 1000);
    for (size_t i = 0; i < second.size(); ++i) second[i] = static_cast<uint8_t>(i * 13 + 1);
    const ByteView parts[] = {first, second};
    const uint64_t before_big = real.loop().stats().blocking_started;
    ASSERT_TRUE(file->pwrite_gathered(small.size(), parts).ok());
    EXPECT_EQ(real.loop().stats().blocking_started, before_big + 1) << "the 1.25 MiB write ran on the loop thread";

    Bytes back(first.size() + second.size());
    ASSERT_EQ(*file->pread(small.size(), back), back.size());
    EXPECT_TRUE(std::equal(first.begin(), first.end(), back.begin()));
    EXPECT_TRUE(std::equal(second.begin(), second.end(), back.begin() + static_cast<std::ptrdiff_t>(first.size())));
    EXPECT_EQ(*file->size(), small.size() + back.size());
  }), 0);
}

}  // namespace
}  // namespace sluice
