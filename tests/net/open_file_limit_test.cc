// `sluice serve` over a data directory of 20,000 segments in 2,000 partitions, started with a soft open-file limit of
// 1024 and a hard one of 8192: serve raises the soft limit, the active segments hold 6,000 descriptors and the closed
// ones share a bounded cache, so every partition loads, takes a produce and serves a fetch of all its segments, and
// the broker restarts cleanly. With every file open the directory would need 60,000. The limits only ever go down
// in a process, so the broker runs in a child of the test.
#include "net/open_file_limit.h"

#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "core/client/client.h"
#include "core/storage/log_format.h"
#include "core/storage/log_manager.h"
#include "net/real_env.h"
#include "net/serve.h"

namespace sluice {
namespace {

using namespace std::chrono_literals;
using namespace sluice::client;

constexpr int kPartitions = 2000;
constexpr int kSegmentsEach = 10;
constexpr rlim_t kSoftLimit = 1024;
constexpr rlim_t kHardLimit = 8192;
const std::string kTopic = "many";

// VmRSS from /proc/self/status, in KiB (0 when unknown).
long resident_kib() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "VmRSS:") {
      long kib = 0;
      status >> kib;
      return kib;
    }
  }
  return 0;
}

size_t open_descriptors() {
  size_t count = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++count;
  return count;
}

// Each partition made by the log manager, then its segments written with the storage API, one batch each, and a
// clean-shutdown marker that names their end: no fsync anywhere, so this takes seconds.
std::string write_data_dir(Env& env, const std::string& data_dir) {
  auto manager = storage::LogManager::open(env, data_dir, storage::BrokerStorageConfig{});
  if (!manager.ok()) return manager.status().to_string();
  auto config =
      storage::TopicConfig::from_overrides({{"segment.bytes", "120"}, {"retention.ms", "-1"}}, storage::TopicConfig());
  if (!config.ok()) return config.status().to_string();
  if (Status made = (*manager)->create_partitions(kTopic, 0, kPartitions, *config, "id").status(); !made.ok()) {
    return made.to_string();
  }
  if (Status closed = (*manager)->close(); !closed.ok()) return closed.to_string();
  for (int p = 0; p < kPartitions; ++p) {
    const std::string dir = data_dir + "/" + storage::TopicPartition{kTopic, p}.dir_name();
    for (int64_t base = 0; base < kSegmentsEach; ++base) {
      storage::Record record;
      record.offset = base;
      record.timestamp = 1000 + base;
      record.value = to_bytes("w" + std::to_string(base));
      Result<Bytes> batch = storage::build_batch({record});
      if (!batch.ok()) return batch.status().to_string();
      size_t consumed = 0;
      Result<std::vector<storage::BatchSpan>> spans = storage::split_batches(*batch, &consumed);
      if (!spans.ok()) return spans.status().to_string();
      auto segment = storage::Segment::create(env, dir, base, storage::SegmentConfig{});
      if (!segment.ok()) return segment.status().to_string();
      const ByteView parts[] = {ByteView(*batch)};
      Status written = (*segment)->append(parts, *spans);
      if (written.ok()) written = (*segment)->seal();
      if (written.ok()) written = (*segment)->close();
      if (!written.ok()) return written.to_string();
    }
    auto marker = env.fs.open(join_path(dir, storage::kCleanShutdownFileName), OpenMode::kCreateTruncate);
    if (!marker.ok()) return marker.status().to_string();
    if (Status written = (*marker)->append(storage::encode_clean_shutdown(kSegmentsEach)); !written.ok()) {
      return written.to_string();
    }
    if (Status closed = (*marker)->close(); !closed.ok()) return closed.to_string();
  }
  return "";
}

// One produce to every partition, then a fetch of each from offset 0 to its end. "" when all went as expected.
std::string produce_and_fetch_all(Env& env, const Address& address, int boot) {
  ClientConfig config;
  config.bootstrap = {address};
  config.request_timeout = 20s;
  config.allow_auto_create_topics = false;
  Client client(env, config);
  Producer producer(client, ProducerConfig{});
  const int64_t end = kSegmentsEach + boot + 1;
  for (int p = 0; p < kPartitions; ++p) {
    ProducerRecord record;
    record.value = to_bytes("boot" + std::to_string(boot));
    const ProduceResult produced = producer.send_and_wait({kTopic, p}, {record});
    if (produced.outcome != Outcome::kOk || produced.base_offset != end - 1) {
      return "produce to partition " + std::to_string(p) + ": error " + std::to_string(produced.error_code) + " " +
             produced.error + ", base offset " + std::to_string(produced.base_offset);
    }
  }
  for (int p = 0; p < kPartitions; ++p) {
    int64_t offset = 0;
    std::vector<std::string> values;
    while (offset < end) {
      FetchOptions options;
      options.max_wait = 0ms;
      Result<FetchResult> fetched = client.fetch({kTopic, p}, offset, options);
      if (!fetched.ok()) return "fetch " + std::to_string(p) + ": " + fetched.status().to_string();
      if (fetched->error_code != 0 || fetched->next_offset <= offset) {
        return "fetch " + std::to_string(p) + " at " + std::to_string(offset) + ": error " +
               std::to_string(fetched->error_code);
      }
      for (const FetchedRecord& r : fetched->records) values.emplace_back(as_chars(*r.value));
      offset = fetched->next_offset;
    }
    if (values.size() != static_cast<size_t>(end) || values.front() != "w0" ||
        values.back() != "boot" + std::to_string(boot)) {
      return "partition " + std::to_string(p) + " reads " + std::to_string(values.size()) + " records";
    }
  }
  std::fprintf(stderr, "boot %d: %zu descriptors open, %ld KiB resident after serving every partition\n", boot,
               open_descriptors(), resident_kib());
  return "";
}

// The child: its exit code is the test's verdict, its stderr the reason.
int run_child(const std::string& data_dir) {
  rlimit writing{kHardLimit, kHardLimit};
  if (::setrlimit(RLIMIT_NOFILE, &writing) != 0) return 10;
  std::string problem;
  {
    RealEnv writer("writer", LogLevel::kOff);
    writer.run([&](Env& env) { problem = write_data_dir(env, data_dir); });
  }
  if (!problem.empty()) {
    std::fprintf(stderr, "writing the data directory: %s\n", problem.c_str());
    return 11;
  }
  for (int boot = 0; boot < 2; ++boot) {
    rlimit serving{kSoftLimit, kHardLimit};  // what a shell's default gives a process
    if (::setrlimit(RLIMIT_NOFILE, &serving) != 0) return 12;
    ServeOptions options;
    options.listen = "127.0.0.1:0";
    options.data_dir = data_dir;
    options.log_level = LogLevel::kOff;
    const int rc = run_serve(options, [&problem, boot](Env& env, const Address& address) {
      env.scheduler.spawn("client", [&env, address, &problem, boot] {
        problem = produce_and_fetch_all(env, address, boot);
        ::raise(SIGTERM);
        env.scheduler.sleep_for(60s);  // unwound when serve returns
      });
    });
    Result<OpenFileLimit> limit = open_file_limit();
    if (!limit.ok() || limit->soft != kHardLimit) {
      std::fprintf(stderr, "serve did not raise the soft open-file limit to the hard one\n");
      return 13;
    }
    if (rc != 0 || !problem.empty()) {
      std::fprintf(stderr, "boot %d: serve exited %d: %s\n", boot, rc, problem.c_str());
      return 14;
    }
  }
  return 0;
}

// In memory when the machine has a tmpfs: 2,000 partitions' creation syncs tens of thousands of times, which on a
// disk would take minutes and test nothing more.
class ScratchDir {
 public:
  ScratchDir() {
    char in_memory[] = "/dev/shm/sluice-fd-test-XXXXXX";
    char on_disk[] = "/tmp/sluice-fd-test-XXXXXX";
    const char* made = ::mkdtemp(in_memory);
    if (made == nullptr) made = ::mkdtemp(on_disk);
    EXPECT_NE(made, nullptr) << "mkdtemp failed";
    path_ = made != nullptr ? made : "";
  }
  ~ScratchDir() {
    std::error_code ignored;
    if (!path_.empty()) std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

TEST(OpenFileLimitTest, TwentyThousandSegmentsServeAndRestartFromASoftLimitOf1024) {
  ScratchDir dir;
  ASSERT_FALSE(dir.path().empty());
  const std::string data_dir = dir.path() + "/data";
  std::fflush(nullptr);
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) ::_exit(run_child(data_dir));
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died of signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "see the child's stderr above";
}

TEST(OpenFileLimitTest, RaisingTheSoftLimitReachesTheHardOne) {
  Result<OpenFileLimit> raised = raise_open_file_limit();
  ASSERT_TRUE(raised.ok()) << raised.status().to_string();
  EXPECT_TRUE(raised->soft == raised->hard || raised->hard == UINT64_MAX);
}

}  // namespace
}  // namespace sluice
