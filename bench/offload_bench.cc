// Slow work off the event loop (issue 20 item 7): one broker (broker::Node on RealEnv, its own thread) and, while a
// steady client produces small records at a fixed rate and records each one's latency, a heavy client (its own
// thread) (a) produces one big zstd batch and (b) fetches ~1 GiB written earlier, first with the page cache dropped
// for those segments (posix_fadvise DONTNEED after fdatasync; mincore says how much stayed resident), then again
// hot. Each mode runs on a fresh broker: `inline` uninstalls the loop's offloader (Scheduler::set_offloader(nullptr):
// the checks and reads run on the loop thread, as before the change), `offload` keeps it. Printed: the steady
// client's p50/p99/max latency per phase, the ratio to its own baseline phase, and offload / inline.
//
// The steady client is open loop: a send is timed from when it was due, not from when the last one came back, so
// a stalled broker shows in every send that fell due during the stall (no coordinated omission).
//
// Never asserted anywhere; run it by hand:
//   build/release/offload_bench [--gib N] [--modes inline,offload] [scratch-dir]
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <future>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/broker/node.h"
#include "core/client/client.h"
#include "core/protocol/messages/produce.h"
#include "core/storage/record_batch.h"
#include "net/real_env.h"

namespace {

using namespace sluice;
using namespace std::chrono_literals;
using SteadyClock = std::chrono::steady_clock;

constexpr size_t kSteadyRecordBytes = 100;
constexpr auto kSteadyPeriod = 2ms;                 // 500 sends per second
constexpr size_t kBigRecordBytes = 1024;
constexpr size_t kBigBatchBytes = size_t{60} << 20;  // decompressed: under kMaxDecompressedBytes (64 MiB)
constexpr size_t kColdRecordBytes = 64 * 1024;
constexpr int kColdRecordsPerBatch = 16;          // 1 MiB batches
constexpr int32_t kFetchMaxBytes = 1 << 20;          // Kafka consumers' max.partition.fetch.bytes

enum Phase : int { kSetup, kBaseline, kBigProduce, kColdFetch, kHotFetch, kQuiet, kPhases };
const char* const kPhaseNames[kPhases] = {"setup", "baseline", "zstd produce", "cold fetch", "hot fetch", "quiet"};

double seconds_since(SteadyClock::time_point start) {
  return std::chrono::duration<double>(SteadyClock::now() - start).count();
}

// xorshift: cheap bytes that do not compress (the cold log) or, drawn from a small alphabet, compress ~3x (the
// zstd batch).
struct Noise {
  uint64_t state = 0x9e3779b97f4a7c15ULL;
  uint64_t next() {
    state ^= state << 13;
    state ^= state >> 7;
    state ^= state << 17;
    return state;
  }
  Bytes random(size_t n) {
    Bytes out(n);
    for (size_t i = 0; i < n; i += 8) {
      const uint64_t v = next();
      std::memcpy(out.data() + i, &v, std::min<size_t>(8, n - i));
    }
    return out;
  }
  Bytes text(size_t n) {
    static constexpr char kAlphabet[] = "etaoinshrdlu ,.";
    Bytes out(n);
    for (size_t i = 0; i < n; ++i) out[i] = static_cast<uint8_t>(kAlphabet[next() % (sizeof(kAlphabet) - 1)]);
    return out;
  }
};

struct Latencies {
  std::mutex mutex;
  std::vector<double> ms[kPhases];
};

struct PhaseFigures {
  size_t samples = 0;
  double p50 = 0;
  double p99 = 0;
  double max = 0;
  double loop_held_ms = 0;  // the broker loop's longest fiber step in the phase (EventLoop::take_longest_step)
  double loop_cpu_ms = 0;   // the most CPU time one fiber step took in the phase (take_longest_step_cpu)
};

PhaseFigures figures(std::vector<double> samples) {
  PhaseFigures out;
  out.samples = samples.size();
  if (samples.empty()) return out;
  std::sort(samples.begin(), samples.end());
  auto at = [&](double q) { return samples[std::min(samples.size() - 1, static_cast<size_t>(q * samples.size()))]; };
  out.p50 = at(0.50);
  out.p99 = at(0.99);
  out.max = samples.back();
  return out;
}

struct ModeResult {
  std::string mode;
  PhaseFigures phases[kPhases];
  double big_produce_s = 0;
  size_t big_wire_bytes = 0;
  int16_t big_error = -1;
  double cold_fetch_s = 0;
  double hot_fetch_s = 0;
  uint64_t fetched_bytes = 0;
  double resident_after_drop = -1;  // fraction of the cold log's pages in the page cache after the drop
  uint64_t loop_blocking_started = 0;
};

// Fraction of `path`'s pages in the page cache (mincore of a read-only mapping).
std::pair<uint64_t, uint64_t> resident_pages(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {0, 0};
  struct stat st {};
  ::fstat(fd, &st);
  const size_t size = static_cast<size_t>(st.st_size);
  std::pair<uint64_t, uint64_t> out{0, 0};
  if (size > 0) {
    void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
    if (map != MAP_FAILED) {
      const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
      std::vector<unsigned char> in_core((size + page - 1) / page);
      if (::mincore(map, size, in_core.data()) == 0) {
        for (unsigned char c : in_core) out.first += c & 1;
        out.second = in_core.size();
      }
      ::munmap(map, size);
    }
  }
  ::close(fd);
  return out;
}

// Writes back and drops the page cache of every file of the partition's directory; the fraction left resident.
double drop_page_cache(const std::filesystem::path& dir) {
  uint64_t resident = 0;
  uint64_t pages = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (!entry.is_regular_file()) continue;
    const int fd = ::open(entry.path().c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    ::fdatasync(fd);  // only clean pages can be dropped
    ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    ::close(fd);
    const auto [in, total] = resident_pages(entry.path());
    resident += in;
    pages += total;
  }
  return pages == 0 ? -1 : static_cast<double>(resident) / static_cast<double>(pages);
}

client::ClientConfig client_config(uint16_t port, const std::string& id) {
  client::ClientConfig config;
  config.bootstrap = {Address{"127.0.0.1", port}};
  config.client_id = id;
  config.request_timeout = 120s;
  return config;
}

// Fetches [0, end) of the partition; the bytes of record values fetched.
uint64_t fetch_all(client::Client& client, const client::TopicPartitionId& tp, int64_t end) {
  client::FetchOptions options;
  options.max_bytes = kFetchMaxBytes;
  options.max_wait = 100ms;
  uint64_t bytes = 0;
  int64_t offset = 0;
  while (offset < end) {
    Result<client::FetchResult> fetched = client.fetch(tp, offset, options);
    if (!fetched.ok() || fetched->records.empty()) {
      std::fprintf(stderr, "fetch at %lld: %s\n", static_cast<long long>(offset),
                   fetched.ok() ? "empty" : fetched.status().to_string().c_str());
      break;
    }
    for (const client::FetchedRecord& r : fetched->records) bytes += r.value ? r.value->size() : 0;
    offset = fetched->records.back().offset + 1;
  }
  return bytes;
}

ModeResult run_mode(const std::string& mode, const std::filesystem::path& scratch, uint64_t cold_bytes) {
  ModeResult result;
  result.mode = mode;
  const std::filesystem::path data_dir = scratch / mode;
  std::filesystem::remove_all(data_dir);
  std::filesystem::create_directories(data_dir);

  std::promise<uint16_t> port_promise;
  std::shared_future<uint16_t> port_future = port_promise.get_future().share();
  std::atomic<int> phase{kSetup};
  std::atomic<bool> steady_may_start{false};
  std::atomic<bool> heavy_done{false};
  std::atomic<bool> steady_done{false};
  Latencies latencies;
  double loop_held_ms[kPhases] = {};  // written by the broker thread, read after it is joined
  double loop_cpu_ms[kPhases] = {};

  std::thread broker_thread([&] {
    RealEnv real("bench-broker", LogLevel::kWarn);
    if (mode == "inline") real.loop().scheduler().set_offloader(nullptr);
    real.loop().measure_step_cpu(true);
    broker::NodeOptions options;
    options.listen = {"127.0.0.1", 0};
    options.data_dir = data_dir.string();
    options.broker.socket_request_max_bytes = size_t{256} << 20;
    broker::Node node(real.env(), options);
    real.run([&](Env& env) {
      FiberRef serving = env.scheduler.spawn("broker", [&] {
        const Status run = node.run([&](kafka::Broker&, const Address& bound) { port_promise.set_value(bound.port); });
        if (!run.ok()) std::fprintf(stderr, "broker: %s\n", run.to_string().c_str());
      });
      // On the loop thread: the longest step of each 20 ms span, charged to the phases it began and ended in (a
      // long step delays this fiber too: the heavy client may have moved on by the time it wakes).
      while (!(heavy_done && steady_done)) {
        const int began_in = phase.load();
        env.scheduler.sleep_for(20ms);
        const double held = std::chrono::duration<double, std::milli>(real.loop().take_longest_step()).count();
        const double cpu = std::chrono::duration<double, std::milli>(real.loop().take_longest_step_cpu()).count();
        for (const int p : {began_in, phase.load()}) {
          loop_held_ms[p] = std::max(loop_held_ms[p], held);
          loop_cpu_ms[p] = std::max(loop_cpu_ms[p], cpu);
        }
      }
      node.stop();
      env.scheduler.join(serving);
    });
    result.loop_blocking_started = real.loop().stats().blocking_started;
  });
  const uint16_t port = port_future.get();

  std::thread steady_thread([&] {
    RealEnv real("bench-steady", LogLevel::kWarn);
    real.run([&](Env& env) {
      while (!steady_may_start) env.scheduler.sleep_for(10ms);
      client::Client client(env, client_config(port, "steady"));
      client::ProducerConfig producer_config;
      producer_config.acks = 1;
      client::Producer producer(client, producer_config);
      Noise noise;
      auto due = SteadyClock::now();
      while (!heavy_done) {
        const int due_phase = phase.load();
        client::ProducerRecord record;
        record.value = noise.random(kSteadyRecordBytes);
        std::vector<client::ProducerRecord> records;
        records.push_back(std::move(record));
        producer.send({"steady", 0}, std::move(records), [&latencies, due, due_phase](const client::ProduceResult&) {
          const double ms = std::chrono::duration<double, std::milli>(SteadyClock::now() - due).count();
          std::lock_guard<std::mutex> lock(latencies.mutex);
          latencies.ms[due_phase].push_back(ms);
        });
        due += kSteadyPeriod;
        const auto now = SteadyClock::now();
        if (due > now) env.scheduler.sleep_for(std::chrono::duration_cast<Duration>(due - now));
      }
      producer.flush();
    });
    steady_done = true;
  });

  std::thread heavy_thread([&] {
    RealEnv real("bench-heavy", LogLevel::kWarn);
    real.run([&](Env& env) {
      client::Client client(env, client_config(port, "heavy"));
      auto check = [](const Status& status, const char* what) {
        if (!status.ok()) std::fprintf(stderr, "%s: %s\n", what, status.to_string().c_str());
      };
      check(client.create_topic({"steady", 1, 1, {}}), "create steady");
      check(client.create_topic({"big", 1, 1, {{"max.message.bytes", std::to_string(size_t{200} << 20)}}}),
            "create big");
      // 1 MiB batches are a little over the default max.message.bytes (1 MiB + 12 B).
      check(client.create_topic({"cold", 1, 1, {{"max.message.bytes", std::to_string(2 << 20)}}}), "create cold");

      // The cold log: written first, uncompressible, 1 MiB batches.
      Noise noise;
      {
        client::ProducerConfig producer_config;
        producer_config.acks = 1;
        client::Producer producer(client, producer_config);
        const uint64_t batches = cold_bytes / (kColdRecordBytes * kColdRecordsPerBatch);
        for (uint64_t b = 0; b < batches; ++b) {
          std::vector<client::ProducerRecord> records(kColdRecordsPerBatch);
          for (client::ProducerRecord& r : records) r.value = noise.random(kColdRecordBytes);
          producer.send({"cold", 0}, std::move(records), [](const client::ProduceResult&) {});
          while (producer.in_flight() > 8) env.scheduler.sleep_for(1ms);
        }
        producer.flush();
      }
      const int64_t cold_end = static_cast<int64_t>(cold_bytes / kColdRecordBytes);

      // The big batch, built and compressed before its phase so the phase times the broker only.
      std::vector<storage::Record> records(kBigBatchBytes / kBigRecordBytes);
      const int64_t now_ms = to_unix_ms(env.clock.wall_now());
      for (size_t i = 0; i < records.size(); ++i) {
        records[i].offset = static_cast<int64_t>(i);
        records[i].timestamp = now_ms;
        records[i].value = noise.text(kBigRecordBytes);
      }
      storage::BatchOptions batch_options;
      batch_options.compression = storage::Compression::kZstd;
      Result<Bytes> big = storage::build_batch(records, batch_options);
      records.clear();
      if (!big.ok()) std::fprintf(stderr, "build_batch: %s\n", big.status().to_string().c_str());
      result.big_wire_bytes = big.ok() ? big->size() : 0;

      steady_may_start = true;
      env.scheduler.sleep_for(1s);  // the steady client connects and warms up (phase setup)
      phase = kBaseline;
      env.scheduler.sleep_for(3s);

      phase = kBigProduce;
      protocol::ProduceRequest request;
      request.acks = 1;
      request.timeout_ms = 120000;
      request.topic_data.push_back({"big", {{0, protocol::Records::view(*big)}}});
      auto start = SteadyClock::now();
      Result<protocol::ProduceResponse> answer = client.call<protocol::ProduceResponse>(-1, request);
      result.big_produce_s = seconds_since(start);
      if (answer.ok() && !answer->responses.empty() && !answer->responses[0].partition_responses.empty()) {
        result.big_error = answer->responses[0].partition_responses[0].error_code;
      } else if (!answer.ok()) {
        std::fprintf(stderr, "big produce: %s\n", answer.status().to_string().c_str());
      }
      phase = kQuiet;
      env.scheduler.sleep_for(1s);

      result.resident_after_drop = drop_page_cache(data_dir / "cold-0");
      phase = kColdFetch;
      start = SteadyClock::now();
      result.fetched_bytes = fetch_all(client, {"cold", 0}, cold_end);
      result.cold_fetch_s = seconds_since(start);
      phase = kQuiet;
      env.scheduler.sleep_for(500ms);

      phase = kHotFetch;
      start = SteadyClock::now();
      fetch_all(client, {"cold", 0}, cold_end);
      result.hot_fetch_s = seconds_since(start);
      phase = kQuiet;
      env.scheduler.sleep_for(500ms);
    });
    heavy_done = true;
  });

  heavy_thread.join();
  steady_thread.join();
  broker_thread.join();
  std::filesystem::remove_all(data_dir);
  for (int p = 0; p < kPhases; ++p) {
    result.phases[p] = figures(latencies.ms[p]);
    result.phases[p].loop_held_ms = loop_held_ms[p];
    result.phases[p].loop_cpu_ms = loop_cpu_ms[p];
  }
  return result;
}

void print_mode(const ModeResult& r) {
  std::printf("\n== %s (loop's offloaded calls: %llu)\n", r.mode.c_str(),
              static_cast<unsigned long long>(r.loop_blocking_started));
  std::printf("  zstd produce: %.1f MiB on the wire, %.0f MiB of records, answered in %.2f s, error %d\n",
              static_cast<double>(r.big_wire_bytes) / (1 << 20), static_cast<double>(kBigBatchBytes) / (1 << 20),
              r.big_produce_s, r.big_error);
  std::printf("  cold fetch: %.0f MiB in %.2f s (%.0f MiB/s), %.1f %% of the log resident after the drop\n",
              static_cast<double>(r.fetched_bytes) / (1 << 20), r.cold_fetch_s,
              static_cast<double>(r.fetched_bytes) / (1 << 20) / r.cold_fetch_s, 100 * r.resident_after_drop);
  std::printf("  hot fetch:  %.2f s (%.0f MiB/s)\n", r.hot_fetch_s,
              static_cast<double>(r.fetched_bytes) / (1 << 20) / r.hot_fetch_s);
  const PhaseFigures& base = r.phases[kBaseline];
  std::printf("  steady produce latency (ms)  samples      p50      p99      max   p99/base  max/base  "
              "loop held  on CPU\n");
  for (int p : {kBaseline, kBigProduce, kColdFetch, kHotFetch}) {
    const PhaseFigures& f = r.phases[p];
    std::printf("  %-28s %7zu %8.2f %8.2f %8.1f %9.1f %9.1f %10.2f %7.2f\n", kPhaseNames[p], f.samples, f.p50, f.p99,
                f.max, base.p99 > 0 ? f.p99 / base.p99 : 0, base.p99 > 0 ? f.max / base.p99 : 0, f.loop_held_ms,
                f.loop_cpu_ms);
  }
  std::printf("  (loop held: the broker loop's longest single fiber step in the phase, ms of wall time: what another\n"
              "   connection waited at most for the loop; on CPU: the most CPU one step used, the rest of a hold is\n"
              "   the loop thread waiting for one of this guest's cores)\n");
}

}  // namespace

int main(int argc, char** argv) {
  std::filesystem::path scratch = "/tmp/sluice-offload-bench";
  uint64_t cold_bytes = uint64_t{1} << 30;
  std::vector<std::string> modes = {"inline", "offload"};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg == "--gib" && i + 1 < argc) {
      cold_bytes = static_cast<uint64_t>(std::atof(argv[++i]) * static_cast<double>(uint64_t{1} << 30));
    } else if (arg == "--modes" && i + 1 < argc) {
      modes.clear();
      std::string list = argv[++i];
      for (size_t at = 0; at <= list.size();) {
        const size_t comma = std::min(list.find(',', at), list.size());
        modes.push_back(list.substr(at, comma - at));
        at = comma + 1;
      }
    } else {
      scratch = arg;
    }
  }
  std::filesystem::create_directories(scratch);
  std::printf("offload_bench: steady producer %zu B every %lld ms (open loop), zstd batch of %zu MiB of %zu B "
              "records, cold log %.2f GiB, fetches of %d MiB; scratch %s\n",
              kSteadyRecordBytes, static_cast<long long>(kSteadyPeriod.count()), kBigBatchBytes >> 20,
              kBigRecordBytes, static_cast<double>(cold_bytes) / (uint64_t{1} << 30), kFetchMaxBytes >> 20,
              scratch.c_str());
  std::map<std::string, ModeResult> results;
  for (const std::string& mode : modes) {
    results[mode] = run_mode(mode, scratch, cold_bytes);
    print_mode(results[mode]);
  }
  if (results.count("inline") && results.count("offload")) {
    std::printf("\noffload / inline (below 1: the change helps)      p99      max  loop held  on CPU\n");
    for (int p : {kBaseline, kBigProduce, kColdFetch, kHotFetch}) {
      const PhaseFigures& before = results["inline"].phases[p];
      const PhaseFigures& after = results["offload"].phases[p];
      std::printf("  %-44s %8.2f %8.2f %10.2f %7.2f\n", kPhaseNames[p], before.p99 > 0 ? after.p99 / before.p99 : 0,
                  before.max > 0 ? after.max / before.max : 0,
                  before.loop_held_ms > 0 ? after.loop_held_ms / before.loop_held_ms : 0,
                  before.loop_cpu_ms > 0 ? after.loop_cpu_ms / before.loop_cpu_ms : 0);
    }
  }
  return 0;
}
