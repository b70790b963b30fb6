// An Env for the fuzz targets and their seed program: an in-memory FileSystem (no real file is ever touched), a
// clock that stands still, a network that refuses, a logger that is off. Outside any fiber: what the on-disk
// loaders do (open, read, write, rename, sync) completes at once in memory, so they run as plain calls.
//
// The file system refuses to let a file grow past kMaxFileBytes (kNoSpace), so that an input naming a huge
// offset or size is a refusal here and not an allocation the fuzzer would report as the loader's.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/env/buggify.h"
#include "core/env/env.h"

namespace sluice::fuzz {

inline constexpr uint64_t kMaxFileBytes = uint64_t{16} << 20;

class MemFileSystem final : public FileSystem {
 public:
  using Contents = std::shared_ptr<Bytes>;

  MemFileSystem() { dirs_.insert("."); }

  // Test setup: a file with these bytes (its directories created).
  void put(const std::string& path, ByteView bytes) {
    static_cast<void>(create_dirs(parent_dir(path)));
    files_[path] = std::make_shared<Bytes>(bytes.begin(), bytes.end());
  }
  const std::map<std::string, Contents>& files() const { return files_; }

  Result<std::unique_ptr<File>> open(std::string_view path, OpenMode mode) override {
    const std::string key(path);
    auto it = files_.find(key);
    if (it == files_.end()) {
      if (mode == OpenMode::kRead || mode == OpenMode::kReadWrite) return not_found(key);
      if (dirs_.count(parent_dir(key)) == 0) return not_found(parent_dir(key));
      if (dirs_.count(key) > 0) return invalid_argument(key + " is a directory");
      it = files_.emplace(key, std::make_shared<Bytes>()).first;
    } else if (mode == OpenMode::kCreateNew) {
      return already_exists(key);
    } else if (mode == OpenMode::kCreateTruncate) {
      it->second->clear();
    }
    return std::unique_ptr<File>(new MemFile(it->second, mode == OpenMode::kRead));
  }
  Status remove(std::string_view path) override {
    return files_.erase(std::string(path)) > 0 ? Status() : not_found(std::string(path));
  }
  Status rename(std::string_view from, std::string_view to) override {
    auto it = files_.find(std::string(from));
    if (it == files_.end()) return not_found(std::string(from));
    if (dirs_.count(parent_dir(to)) == 0) return not_found(parent_dir(to));
    Contents contents = it->second;
    files_.erase(it);
    files_[std::string(to)] = std::move(contents);
    return Status();
  }
  Result<std::vector<DirEntry>> list(std::string_view dir) override {
    const std::string key(dir);
    if (dirs_.count(key) == 0) return not_found(key);
    std::vector<DirEntry> out;
    for (const auto& [path, contents] : files_) {
      if (parent_dir(path) == key) out.push_back({file_name_of(path), false});
    }
    for (const std::string& sub : dirs_) {
      if (sub != key && parent_dir(sub) == key) out.push_back({file_name_of(sub), true});
    }
    std::sort(out.begin(), out.end(), [](const DirEntry& a, const DirEntry& b) { return a.name < b.name; });
    return out;
  }
  Status create_dirs(std::string_view dir) override {
    for (std::string level(dir); dirs_.count(level) == 0; level = parent_dir(level)) dirs_.insert(level);
    return Status();
  }
  Status remove_dir(std::string_view dir) override {
    Result<std::vector<DirEntry>> entries = list(dir);
    if (!entries.ok()) return entries.status();
    if (!entries->empty()) return invalid_argument(std::string(dir) + " is not empty");
    dirs_.erase(std::string(dir));
    return Status();
  }
  Result<bool> exists(std::string_view path) override {
    return files_.count(std::string(path)) > 0 || dirs_.count(std::string(path)) > 0;
  }
  Status sync_dir(std::string_view dir) override {
    return dirs_.count(std::string(dir)) > 0 ? Status() : not_found(std::string(dir));
  }
  Result<uint64_t> free_bytes(std::string_view) override { return uint64_t{1} << 40; }
  Result<uint64_t> total_bytes(std::string_view) override { return uint64_t{1} << 41; }

 private:
  class MemFile final : public File {
   public:
    MemFile(Contents contents, bool read_only) : contents_(std::move(contents)), read_only_(read_only) {}
    Result<size_t> pread(uint64_t offset, MutableByteView out) override {
      if (closed_) return closed("pread");
      const Bytes& bytes = *contents_;
      if (offset >= bytes.size()) return size_t{0};
      const size_t n = std::min<uint64_t>(out.size(), bytes.size() - offset);
      std::memcpy(out.data(), bytes.data() + offset, n);
      return n;
    }
    Status append(ByteView data) override { return pwrite(contents_->size(), data); }
    Status pwrite(uint64_t offset, ByteView data) override {
      if (Status s = writable(); !s.ok()) return s;
      if (offset > kMaxFileBytes || data.size() > kMaxFileBytes - offset) return no_space("file over the limit");
      Bytes& bytes = *contents_;
      if (bytes.size() < offset + data.size()) bytes.resize(offset + data.size());
      if (!data.empty()) std::memcpy(bytes.data() + offset, data.data(), data.size());
      return Status();
    }
    Result<uint64_t> size() override {
      if (closed_) return closed("size");
      return uint64_t{contents_->size()};
    }
    Status truncate(uint64_t size) override {
      if (Status s = writable(); !s.ok()) return s;
      if (size > kMaxFileBytes) return no_space("file over the limit");
      contents_->resize(size);
      return Status();
    }
    Status sync() override { return closed_ ? closed("sync") : Status(); }
    Status close() override {
      closed_ = true;
      return Status();
    }

   private:
    Status writable() const {
      if (closed_) return closed("write");
      if (read_only_) return invalid_argument("write to a file opened read-only");
      return Status();
    }
    Contents contents_;
    bool read_only_;
    bool closed_ = false;
  };

  std::map<std::string, Contents> files_;
  std::set<std::string> dirs_;
};

class StillClock final : public Clock {
 public:
  Instant now() const override { return Instant(std::chrono::seconds(1000)); }
  WallTime wall_now() const override { return WallTime(std::chrono::milliseconds(1'700'000'000'000)); }
  TimerId add_timer(Instant, std::function<void()>) override { return ++next_timer_; }
  bool cancel_timer(TimerId) override { return true; }

 private:
  TimerId next_timer_ = 0;
};

class NoNetwork final : public Network {
 public:
  Result<std::unique_ptr<Listener>> listen(const Address&) override { return connection_refused("no network"); }
  Result<std::unique_ptr<Stream>> connect(const Address&) override { return connection_refused("no network"); }
};

// The world of one fuzz input: fresh per input, so nothing carries over from one to the next. Its log is off
// unless SLUICE_FUZZ_LOG is set (replaying a reproducer: `SLUICE_FUZZ_LOG=1 build/fuzz/loader_fuzzer crash-...`).
class FuzzWorld {
 public:
  FuzzWorld()
      : random_(1),
        scheduler_(clock_, nullptr),
        log_("fuzz", std::getenv("SLUICE_FUZZ_LOG") != nullptr ? LogLevel::kDebug : LogLevel::kOff) {}
  Env env() { return Env{clock_, fs_, net_, random_, scheduler_, log_, buggify_}; }
  MemFileSystem& fs() { return fs_; }

 private:
  StillClock clock_;
  MemFileSystem fs_;
  NoNetwork net_;
  Random random_;
  Scheduler scheduler_;
  Logger log_;
  Buggify buggify_;  // never enabled: the fuzzers feed their own inputs
};

}  // namespace sluice::fuzz
