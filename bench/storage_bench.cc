// Storage benchmark on the real Env (issue 3): append and read throughput of a PartitionLog, the broker's check of
// a produced batch, one cleaner pass and recovery after an unclean stop, printed as ratios to anchors measured in
// the same run on the same disk (page-cache write bandwidth, one fdatasync, durable write, memcpy, CRC32C,
// sequential read). Never asserted anywhere; run it by hand:
//   build/release/storage_bench [--only persisted|cleaner|validation] [scratch-dir]
#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "core/base/crc32c.h"
#include "core/storage/cleaner.h"
#include "core/storage/partition_log.h"
#include "core/storage/record_batch.h"
#include "net/real_env.h"

namespace {

using namespace sluice;
using namespace sluice::storage;
using Clock = std::chrono::steady_clock;

constexpr int kRecordsPerBatch = 16;  // with ~1 KiB records: the ~16 KiB batches of a busy producer
constexpr double kMB = 1e6;

double seconds_since(Clock::time_point start) { return std::chrono::duration<double>(Clock::now() - start).count(); }

double cpu_seconds() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return static_cast<double>(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec) +
         static_cast<double>(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec) / 1e6;
}

// Wall and CPU seconds of one measured step.
struct Cost {
  double wall = 0;
  double cpu = 0;
};

template <typename Step>
Cost measure(Step step) {
  const double cpu_start = cpu_seconds();
  const auto start = Clock::now();
  step();
  return Cost{seconds_since(start), cpu_seconds() - cpu_start};
}

double mbps(uint64_t bytes, double seconds) { return static_cast<double>(bytes) / kMB / seconds; }

// Figures every later result is divided by, all measured earlier in the same run.
struct Anchors {
  double page_cache_mbps = 0;   // sequential 1 MiB writes into the page cache
  double fsync_rate = 0;        // 4 KiB append + fdatasync per second, one writer
  double durable_mbps = 0;      // sequential 1 MiB appends, each followed by fdatasync
  double memcpy_mbps = 0;
  double read_mbps = 0;         // sequential PartitionLog read from the page cache
  double first_touch_mbps = 0;  // fresh anonymous memory written once (page faults)
};

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
  const double result = mbps(total, seconds_since(start));
  (void)file->close();
  (void)env.fs.remove(dir + "/anchor.dat");
  return result;
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

// Appends copies of `batch` until `total` bytes are written; never past segment.bytes when total stays below it.
uint64_t fill(PartitionLog& log, const Bytes& batch, uint64_t total) {
  uint64_t written = 0;
  while (written + batch.size() <= total) {
    (void)log.append(batch).value();
    written += batch.size();
  }
  return written;
}

// Sequential read of the whole log, 1 MiB at a time; returns the bytes read.
uint64_t read_all(PartitionLog& log) {
  uint64_t read_bytes = 0;
  for (int64_t offset = log.log_start_offset(); offset < log.log_end_offset();) {
    ReadResult r = log.read(offset, 1 << 20, INT64_MAX).value();
    if (r.records.empty()) break;
    read_bytes += r.records.size();
    size_t consumed = 0;
    auto spans = split_batches(r.records, &consumed).value();
    offset = spans.back().header.last_offset() + 1;
  }
  return read_bytes;
}

// Fills in the sequential-read anchor that the cleaner and recovery figures are divided by.
void bench_replicated(Env& env, const std::string& dir, Anchors& anchors) {
  auto log = PartitionLog::open(env, dir + "/replicated-0", LogSettings{}).value();
  const Bytes batch = make_batch(kRecordsPerBatch, 1024 - 20);  // 16 records of ~1 KiB: a ~16 KiB batch
  uint64_t written = 0;
  const Cost cost = measure([&] { written = fill(*log, batch, uint64_t{512} << 20); });
  const double append_mbps = mbps(written, cost.wall);
  std::printf("replicated append, 1 KiB records in 16 KiB batches: %.0f MB/s = %.2f x page-cache write (%.0f MB/s); "
              "%.2f CPU-s per GB\n", append_mbps, append_mbps / anchors.page_cache_mbps, anchors.page_cache_mbps,
              cost.cpu / (static_cast<double>(written) / 1e9));
  uint64_t read_bytes = 0;
  const Cost read = measure([&] { read_bytes = read_all(*log); });
  anchors.read_mbps = mbps(read_bytes, read.wall);
  std::printf("sequential read: %.0f MB/s\n", anchors.read_mbps);
  (void)log->close();
  std::filesystem::remove_all(dir + "/replicated-0");
}

// Anchor: durable sequential write, 1 MiB appends with an fdatasync after each: the ceiling of a persisted log
// whose group commit has ~1 MiB to write per sync.
double durable_write_mbps(Env& env, const std::string& dir, uint64_t total) {
  auto file = env.fs.open(dir + "/durable.dat", OpenMode::kCreateTruncate).value();
  const Bytes chunk(1 << 20, 3);
  const auto start = Clock::now();
  for (uint64_t done = 0; done < total; done += chunk.size()) {
    (void)file->append(chunk);
    (void)file->sync();
  }
  const double result = mbps(total, seconds_since(start));
  (void)file->close();
  (void)env.fs.remove(dir + "/durable.dat");
  return result;
}

double load_average() {
  double load[1] = {0};
  return getloadavg(load, 1) == 1 ? load[0] : -1;
}

// Sets a batch's base and max timestamps to `ms` and its CRC to match, as a producer stamps each batch with its
// clock: the time index then grows as it does in service (a fixed timestamp would never dirty it).
void restamp(Bytes& batch, int64_t ms) {
  for (const size_t at : {size_t{27}, size_t{35}}) {
    for (int i = 0; i < 8; ++i) batch[at + i] = static_cast<uint8_t>(static_cast<uint64_t>(ms) >> (56 - 8 * i));
  }
  const uint32_t crc = compute_batch_crc(batch);
  for (int i = 0; i < 4; ++i) batch[17 + i] = static_cast<uint8_t>(crc >> (24 - 8 * i));
}

// One persisted row: `writers` fibers appending `batch` (whole batches of 1 KiB records, restamped with the wall
// clock every millisecond) for 2 s.
struct PersistedRow {
  double appends_per_s = 0;
  double mbps = 0;
  double rounds_per_s = 0;
  double cpu_per_gb = 0;
};

PersistedRow persisted_row(Env& env, const std::string& dir, int writers, const Bytes& batch) {
  LogSettings settings;
  settings.persisted = true;
  const std::string log_dir = dir + "/persisted-" + std::to_string(writers);
  auto log = PartitionLog::open(env, log_dir, settings).value();
  const auto deadline = Clock::now() + std::chrono::seconds(2);
  uint64_t appends = 0;
  const Cost cost = measure([&] {
    std::vector<FiberRef> fibers;
    for (int w = 0; w < writers; ++w) {
      fibers.push_back(env.scheduler.spawn("writer", [&] {
        Bytes own = batch;
        int64_t stamped = -1;
        while (Clock::now() < deadline) {
          const int64_t now_ms = to_unix_ms(env.clock.wall_now());
          if (now_ms != stamped) restamp(own, stamped = now_ms);
          if (log->append(own).ok()) ++appends;
        }
      }));
    }
    for (const FiberRef& f : fibers) env.scheduler.join(f);
  });
  const double bytes = static_cast<double>(appends) * static_cast<double>(batch.size());
  PersistedRow row{static_cast<double>(appends) / cost.wall, bytes / kMB / cost.wall,
                   static_cast<double>(log->stats().sync_rounds) / cost.wall, cost.cpu / (bytes / 1e9)};
  (void)log->close();
  std::filesystem::remove_all(log_dir);
  return row;
}

// persisted with 1, 8 and 64 writers, each with one append in flight; batches of `records` 1 KiB records.
void bench_persisted(Env& env, const std::string& dir, int records, const Anchors& anchors) {
  const Bytes batch = make_batch(records, 1024 - 20);
  std::printf("persisted, 1 KiB records in %d-record batches (%zu bytes), one append in flight per writer:\n",
              records, batch.size());
  double single = 0;
  for (const int writers : {1, 8, 64}) {
    const double load_before = load_average();
    const PersistedRow row = persisted_row(env, dir, writers, batch);
    if (writers == 1) single = row.appends_per_s;
    std::printf("  %2d writers: %7.0f appends/s = %5.1f x one writer, %6.0f sync rounds/s, %7.0f bytes per round, "
                "%6.1f MB/s = %.3f x durable write (%.0f MB/s); %.2f CPU-s per GB; load %.1f -> %.1f\n",
                writers, row.appends_per_s, row.appends_per_s / single, row.rounds_per_s,
                row.rounds_per_s > 0 ? row.mbps * kMB / row.rounds_per_s : 0.0, row.mbps,
                row.mbps / anchors.durable_mbps, anchors.durable_mbps, row.cpu_per_gb, load_before, load_average());
  }
}

double copy_bandwidth() {
  std::vector<uint8_t> a(256 << 20, 1), b(256 << 20);
  const auto start = Clock::now();
  for (int i = 0; i < 4; ++i) std::memcpy(b.data(), a.data(), a.size());
  return mbps(4 * a.size(), seconds_since(start));
}

// Anchor: fresh anonymous memory written once. 64 MiB is above glibc's largest mmap threshold, so every page
// faults, as in any pass that reads hundreds of MB into new buffers (the cleaner does); on a KVM guest a fault can
// cost tens of microseconds.
double first_touch_bandwidth() {
  const size_t bytes = size_t{64} << 20;
  const auto start = Clock::now();
  std::vector<uint8_t> fresh(bytes, 1);
  return mbps(fresh.size(), seconds_since(start));
}

// --- Produce validation: what the broker checks in each produced batch before it appends it. ---
// librdkafka fills ~1 MB batches at saturation (its batch.size), so that is the batch measured: CRC32C over all of
// it plus a look at every record (kafka-protocol.md §3). Printed in CPU-s per GB, against one CRC32C pass and one
// memcpy of the same batch; the broker's whole budget at 1 KiB is ~0.7 CPU-s per GB (twice the mock's).
void bench_validation(const Anchors& anchors) {
  std::printf("produce validation (validate_produce_batch, ~1 MB batches as librdkafka sends at saturation):\n");
  for (const size_t record_bytes : {size_t{100}, size_t{1024}}) {
    const int records = static_cast<int>(1000000 / (record_bytes + 10));
    const Bytes batch = make_batch(records, record_bytes - 20);
    const ValidationRules rules;
    const int rounds = 2000;
    volatile uint32_t crc = 0;  // kept, so the loop is not optimised away
    const Cost crc_cost = measure([&] {
      for (int i = 0; i < rounds; ++i) crc = crc32c_extend(crc, batch);
    });
    const Cost cost = measure([&] {
      for (int i = 0; i < rounds; ++i) SLUICE_ASSERT(validate_produce_batch(batch, rules).ok());
    });
    const double gb = static_cast<double>(batch.size()) * rounds / 1e9;
    const double copy_s_per_gb = 1e9 / kMB / anchors.memcpy_mbps;
    std::printf("  %4zu B records, %5d a batch: %.3f CPU-s per GB = %.1f x one CRC32C pass (%.3f), %.1f x memcpy "
                "(%.3f); %.1f ns per record\n", record_bytes, records, cost.cpu / gb, cost.cpu / crc_cost.cpu,
                crc_cost.cpu / gb, cost.cpu / gb / copy_s_per_gb, copy_s_per_gb,
                cost.cpu * 1e9 / (static_cast<double>(records) * rounds));
  }
}

// --- The cleaner: one forced pass over a log in which half the bytes are superseded. ---

constexpr int kCleanerKeys = 256 * 1024;  // each written twice: ~540 MB of log
constexpr int64_t kCleanerSegmentBytes = int64_t{128} << 20;

// Keys written twice each, in a seeded shuffle: half the bytes are superseded and the stale records are spread over
// every segment, so a pass drops whole batches near the start and rebuilds partly superseded ones elsewhere (a
// key-ordered log would only drop or keep whole batches, the cheap case). 1 KiB values, 16 records a batch.
std::vector<Bytes> keyed_batches(int keys, int64_t timestamp) {
  std::vector<int> order;
  for (int round = 0; round < 2; ++round) {
    for (int k = 0; k < keys; ++k) order.push_back(k);
  }
  std::mt19937_64 random(3);
  std::shuffle(order.begin(), order.end(), random);
  std::vector<Bytes> batches;
  std::vector<Record> records;
  for (size_t i = 0; i < order.size(); ++i) {
    char key[16];
    const int length = std::snprintf(key, sizeof key, "key-%08d", order[i]);
    Record r;
    r.offset = static_cast<int64_t>(records.size());
    r.timestamp = timestamp;
    r.key = Bytes(key, key + length);
    r.value = Bytes(1024, static_cast<uint8_t>('a' + i % 26));
    records.push_back(std::move(r));
    if (records.size() == kRecordsPerBatch) {
      batches.push_back(build_batch(records).value());
      records.clear();
    }
  }
  return batches;
}

// The cleaner never touches the active segment, so only closed segments count as the log it scans.
uint64_t closed_bytes(const PartitionLog& log) {
  const std::vector<SegmentInfo> segments = log.segments();
  uint64_t bytes = 0;
  for (size_t i = 0; i + 1 < segments.size(); ++i) bytes += segments[i].size_bytes;
  return bytes;
}

struct CleanTotals {
  int passes = 0;
  double first_dirty_ratio = 0;  // Kafka's (dirty / cleanable bytes) when the first pass started
  bool partial = false;          // some pass stopped at a full key map
  int64_t records_removed = 0;
  size_t segments_replaced = 0;
  Cost cost;
};

// Forced passes until the checkpoint reaches the active segment: one when the map holds every key of the dirty
// section, several (partial passes) when the budget is small.
CleanTotals clean_fully(Env& env, PartitionLog& log, uint64_t map_budget) {
  CleanerOptions options;
  options.map_memory_bytes = map_budget;
  const int64_t end = log.segments().back().base_offset;
  int64_t checkpoint = 0;
  CleanTotals totals;
  totals.cost = measure([&] {
    while (checkpoint < end) {
      const CleanResult r = clean_once(log, checkpoint, options, to_unix_ms(env.clock.wall_now()), true).value();
      if (!r.cleaned) break;
      if (totals.passes++ == 0) totals.first_dirty_ratio = r.dirty_ratio;
      totals.partial = totals.partial || r.map_full;
      totals.records_removed += r.records_removed;
      totals.segments_replaced += r.segments_replaced;
    }
  });
  return totals;
}

// One log built from `batches`, cleaned with `map_budget`, printed as one line.
void bench_cleaner_case(Env& env, const std::string& dir, const std::vector<Bytes>& batches, uint64_t map_budget,
                        const Anchors& anchors) {
  LogSettings settings;
  settings.segment_bytes = kCleanerSegmentBytes;
  const std::string log_dir = dir + "/compacted";
  auto log = PartitionLog::open(env, log_dir, settings).value();
  for (const Bytes& batch : batches) (void)log->append(batch).value();
  (void)log->roll();  // the active segment is never cleaned
  const uint64_t before = closed_bytes(*log);
  const double records = static_cast<double>(log->log_end_offset());
  const CleanTotals t = clean_fully(env, *log, map_budget);
  const double rate = mbps(before, t.cost.wall);
  std::printf("  %3.0f MB log, map budget %3llu MiB: %d pass(es)%s, dirty ratio %.2f, %.2f s: %.0f MB/s of log, "
              "%.0f k records/s = %.3f x sequential read, %.4f x memcpy, %.2f x first touch; %.2f CPU-s (%.1f per "
              "GB); -> %.0f MB, %lld records removed, %zu segments replaced\n", static_cast<double>(before) / kMB,
              static_cast<unsigned long long>(map_budget >> 20), t.passes, t.partial ? " (partial)" : "",
              t.first_dirty_ratio, t.cost.wall, rate, records / t.cost.wall / 1e3,
              anchors.read_mbps > 0 ? rate / anchors.read_mbps : 0.0,
              rate / anchors.memcpy_mbps, rate / anchors.first_touch_mbps, t.cost.cpu,
              t.cost.cpu / (static_cast<double>(before) / 1e9), static_cast<double>(closed_bytes(*log)) / kMB,
              static_cast<long long>(t.records_removed), t.segments_replaced);
  (void)log->close();
  std::filesystem::remove_all(log_dir);
}

// The headline pass over ~540 MB with a map that holds every key, then the same small log (~135 MB) with a map
// that holds every key and with one that holds ~60 % of them (partial passes), so the two compare directly and
// stay cheap: each partial pass reads the rest of the dirty section and rewrites the log from its start.
void bench_cleaner(Env& env, const std::string& dir, const Anchors& anchors) {
  std::printf("cleaner: each key written twice in a shuffled order (50 %% of the bytes superseded), 1 KiB values in "
              "16 KiB batches, %lld MiB segments, all closed; forced passes from checkpoint 0:\n",
              static_cast<long long>(kCleanerSegmentBytes >> 20));
  // Timestamps a minute old: past min.compaction.lag.ms (0) whatever the machine's clock says.
  const int64_t timestamp = to_unix_ms(env.clock.wall_now()) - 60000;
  bench_cleaner_case(env, dir, keyed_batches(kCleanerKeys, timestamp), uint64_t{128} << 20, anchors);
  const std::vector<Bytes> small = keyed_batches(kCleanerKeys / 4, timestamp);
  for (const uint64_t budget : {uint64_t{128} << 20, uint64_t{1} << 20}) {
    bench_cleaner_case(env, dir, small, budget, anchors);
  }
}

// --- Recovery after an unclean stop. ---

constexpr uint64_t kRecoveryBytes = 1000000000;  // below the default segment.bytes (1 GiB): one segment

// Writes every file of `dir` back to the disk, so that the timed open's own sync finds nothing to write back and
// the figure is the scan. The data stays in the page cache: a cold figure is not measured, because this guest's
// disk sits on a host cache whose speed for evicted pages varied 10x within minutes (270 MB/s to 3 GB/s).
void write_back(const std::string& dir) {
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const int fd = ::open(entry.path().c_str(), O_RDONLY);
    if (fd < 0) continue;
    (void)::fdatasync(fd);
    ::close(fd);
  }
}

struct Reopen {
  Cost cost;
  LoadStats stats;
};

// Times PartitionLog::open, then closes the log (which leaves the clean-shutdown marker for the next open).
Reopen timed_open(Env& env, const std::string& dir) {
  std::unique_ptr<PartitionLog> log;
  Reopen reopen;
  reopen.cost = measure([&] { log = PartitionLog::open(env, dir, LogSettings{}).value(); });
  reopen.stats = log->load_stats();
  (void)log->close();
  return reopen;
}

// A replicated log (no flush.messages, no flush.ms) written and never flushed or closed: partition.state still
// says recovery point 0, so the whole segment is scanned (CRC of every batch, indexes rebuilt) at the next open.
void bench_recovery(Env& env, const std::string& dir, const Anchors& anchors) {
  const std::string log_dir = dir + "/recovery-0";
  uint64_t written = 0;
  {
    auto log = PartitionLog::open(env, log_dir, LogSettings{}).value();
    written = fill(*log, make_batch(kRecordsPerBatch, 1024 - 20), kRecoveryBytes);
  }  // dropped without close(): no clean-shutdown marker
  std::printf("recovery: %.2f GB in one segment (1 KiB records, 16 KiB batches), no clean-shutdown marker, recovery "
              "point 0:\n", static_cast<double>(written) / 1e9);
  write_back(log_dir);
  const Reopen unclean = timed_open(env, log_dir);
  const double rate = mbps(written, unclean.cost.wall);
  std::printf("  unclean reopen: %.3f s = %.3f s per GB scanned, %.0f MB/s = %.2f x sequential read; %.2f CPU-s; %zu "
              "segment(s) scanned%s\n", unclean.cost.wall, unclean.cost.wall / (static_cast<double>(written) / 1e9),
              rate, rate / anchors.read_mbps, unclean.cost.cpu, unclean.stats.segments_recovered,
              unclean.stats.clean_shutdown ? " (UNEXPECTED: a clean-shutdown marker was found)" : "");
  const Reopen clean = timed_open(env, log_dir);
  std::printf("  clean reopen (marker present): %.1f ms, %.3f CPU-s; %zu segment(s) scanned\n", clean.cost.wall * 1e3,
              clean.cost.cpu, clean.stats.segments_recovered);
  std::filesystem::remove_all(log_dir);
}

}  // namespace

int main(int argc, char** argv) {
  // storage_bench [--only persisted] [scratch-dir]: --only persisted runs the anchors and the persisted rows alone.
  // --only cleaner: the anchors and the cleaner rows (no sequential-read anchor: its ratio prints as 0).
  // --only validation: the anchors and the produce-validation rows.
  std::string only;
  std::string dir = "/tmp/sluice-storage-bench";
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--only" && i + 1 < argc) {
      only = argv[++i];
    } else {
      dir = arg;
    }
  }
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  RealEnv real("bench", LogLevel::kWarn);
  real.run([&](Env& env) {
    Anchors anchors;
    anchors.page_cache_mbps = page_cache_write_mbps(env, dir, uint64_t{512} << 20);
    anchors.fsync_rate = fsync_appends_per_second(env, dir, 2000);
    anchors.memcpy_mbps = copy_bandwidth();
    anchors.first_touch_mbps = first_touch_bandwidth();
    std::printf("anchors: page-cache write %.0f MB/s, 4 KiB append+fdatasync %.0f /s, memcpy %.0f MB/s, first touch "
                "of fresh memory %.0f MB/s\n", anchors.page_cache_mbps, anchors.fsync_rate, anchors.memcpy_mbps,
                anchors.first_touch_mbps);
    if (only.empty() || only == "validation") bench_validation(anchors);
    if (only == "validation") return;
    if (only.empty()) bench_replicated(env, dir, anchors);
    if (only != "cleaner") {
      anchors.durable_mbps = durable_write_mbps(env, dir, uint64_t{256} << 20);
      std::printf("anchor: durable write (1 MiB appends, fdatasync after each) %.0f MB/s; load %.1f\n",
                  anchors.durable_mbps, load_average());
      for (const int records : {1, kRecordsPerBatch}) bench_persisted(env, dir, records, anchors);
    }
    if (only == "cleaner") bench_cleaner(env, dir, anchors);
    if (only.empty()) {
      bench_cleaner(env, dir, anchors);
      bench_recovery(env, dir, anchors);
    }
  });
  std::filesystem::remove_all(dir);
  return 0;
}
