// Storage benchmark on the real Env (issue 3): append and read throughput of a PartitionLog, printed as ratios to
// anchors measured in the same run on the same disk (page-cache write bandwidth, one fdatasync, memcpy). Never
// asserted anywhere; run it by hand:  build/release/storage_bench [scratch-dir]
#include <sys/resource.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "core/storage/partition_log.h"
#include "core/storage/record_batch.h"
#include "net/real_env.h"

namespace {

using namespace sluice;
using namespace sluice::storage;
using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

Bytes make_batch(int records, size_t value_bytes) {
  std::vector<Record> batch;
  for (int i = 0; i < records; ++i) {
    Record r;
    r.offset = i;
    r.timestamp = 1767225600000;
    r.value = Bytes(value_bytes, static_cast<uint8_t>('a' + i % 26));
    batch.push_back(std::move(r));
  }
  return build_batch(batch).value();
}

// Anchor: sequential 1 MiB appends into the page cache through the same FileSystem.
double page_cache_write_mbps(Env& env, const std::string& dir, uint64_t total) {
  auto file = env.fs.open(dir + "/anchor.dat", OpenMode::kCreateTruncate).value();
  const Bytes chunk(1 << 20, 7);
  const auto start = Clock::now();
  for (uint64_t done = 0; done < total; done += chunk.size()) (void)file->append(chunk);
  const double mbps = static_cast<double>(total) / 1e6 / seconds_since(start);
  (void)file->close();
  (void)env.fs.remove(dir + "/anchor.dat");
  return mbps;
}

// Anchor: 4 KiB append + fdatasync, one writer.
double fsync_appends_per_second(Env& env, const std::string& dir, int count) {
  auto file = env.fs.open(dir + "/fsync.dat", OpenMode::kCreateTruncate).value();
  const Bytes block(4096, 1);
  const auto start = Clock::now();
  for (int i = 0; i < count; ++i) {
    (void)file->append(block);
    (void)file->sync();
  }
  const double rate = count / seconds_since(start);
  (void)file->close();
  (void)env.fs.remove(dir + "/fsync.dat");
  return rate;
}

void bench_replicated(Env& env, const std::string& dir, double page_cache_mbps) {
  LogSettings settings;
  auto log = PartitionLog::open(env, dir + "/replicated-0", settings).value();
  const Bytes batch = make_batch(16, 1024 - 20);  // 16 records of ~1 KiB: a ~16 KiB batch
  const uint64_t total = uint64_t{512} << 20;
  const double cpu_start = cpu_seconds();
  const auto start = Clock::now();
  uint64_t written = 0;
  while (written < total) {
    (void)log->append(batch).value();
    written += batch.size();
  }
  const double wall = seconds_since(start);
  const double cpu = cpu_seconds() - cpu_start;
  const double mbps = static_cast<double>(written) / 1e6 / wall;
  std::printf("replicated append, 1 KiB records in 16 KiB batches: %.0f MB/s = %.2f x page-cache write (%.0f MB/s); "
              "%.2f CPU-s per GB\n", mbps, mbps / page_cache_mbps, page_cache_mbps,
              cpu / (static_cast<double>(written) / 1e9));
  // Sequential read of everything just written.
  Bytes sink(1 << 20);
  const auto read_start = Clock::now();
  uint64_t read_bytes = 0;
  for (int64_t offset = 0; offset < log->log_end_offset();) {
    ReadResult r = log->read(offset, 1 << 20, INT64_MAX).value();
    if (r.records.empty()) break;
    read_bytes += r.records.size();
    size_t consumed = 0;
    auto spans = split_batches(r.records, &consumed).value();
    offset = spans.back().header.last_offset() + 1;
  }
  const double read_mbps = static_cast<double>(read_bytes) / 1e6 / seconds_since(read_start);
  std::printf("sequential read: %.0f MB/s\n", read_mbps);
  (void)log->close();
}

void bench_persisted(Env& env, const std::string& dir, int writers, double fsync_rate, double* single_rate) {
  LogSettings settings;
  settings.persisted = true;
  auto log = PartitionLog::open(env, dir + "/persisted-" + std::to_string(writers), settings).value();
  const Bytes batch = make_batch(1, 1024 - 20);
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  uint64_t appends = 0;
  std::vector<FiberRef> fibers;
  const auto start = Clock::now();
  for (int w = 0; w < writers; ++w) {
    fibers.push_back(env.scheduler.spawn("writer", [&] {
      while (Clock::now() < deadline) {
        if (log->append(batch).ok()) ++appends;
      }
    }));
  }
  for (const FiberRef& f : fibers) env.scheduler.join(f);
  const double wall = seconds_since(start);
  const double rate = static_cast<double>(appends) / wall;
  const double syncs = static_cast<double>(log->stats().sync_rounds) / wall;
  if (writers == 1) *single_rate = rate;
  std::printf("persisted, %2d writers, 1 KiB records: %8.0f appends/s (%.1f x one writer, %.2f x fdatasync rate), "
              "%6.0f sync rounds/s, %7.0f bytes per round, %.0f MB/s\n", writers, rate, rate / *single_rate,
              rate / fsync_rate, syncs, syncs > 0 ? rate * static_cast<double>(batch.size()) / syncs : 0.0,
              rate * static_cast<double>(batch.size()) / 1e6);
  (void)log->close();
}

void copy_bandwidth() {
  std::vector<uint8_t> a(256 << 20, 1), b(256 << 20);
  const auto start = Clock::now();
  for (int i = 0; i < 4; ++i) std::memcpy(b.data(), a.data(), a.size());
  std::printf("memcpy anchor: %.0f MB/s\n", 4.0 * static_cast<double>(a.size()) / 1e6 / seconds_since(start));
}

}  // namespace

int main(int argc, char** argv) {
  const std::string dir = argc > 1 ? argv[1] : "/tmp/sluice-storage-bench";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  RealEnv real("bench", LogLevel::kWarn);
  real.run([&](Env& env) {
    const double page_cache = page_cache_write_mbps(env, dir, uint64_t{512} << 20);
    const double fsync_rate = fsync_appends_per_second(env, dir, 2000);
    std::printf("anchors: page-cache write %.0f MB/s, 4 KiB append+fdatasync %.0f /s\n", page_cache, fsync_rate);
    copy_bandwidth();
    bench_replicated(env, dir, page_cache);
    double single = 1;
    for (int writers : {1, 8, 64}) bench_persisted(env, dir, writers, fsync_rate, &single);
  });
  std::filesystem::remove_all(dir);
  return 0;
}
