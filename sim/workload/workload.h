// Workloads: the simulated users of a run, FoundationDB-style small classes. Each runs on its own client node (the
// injector strikes brokers, never clients), talks to the brokers through core/client over the simulated network,
// and records every operation in the run's History. After the fault phase heals, each must show it converged
// (writes accepted again, readers caught up, groups stable) within the scenario's liveness bound.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/client/client.h"
#include "core/env/env.h"
#include "sim/history/history.h"

namespace sluice::sim {

struct ProducerSpec {
  std::string topic;
  int16_t acks = -1;
  bool idempotent = false;
  bool keyed = true;
  int key_space = 50;           // keys "k0" .. "k<key_space-1>"
  double tombstone_ratio = 0;   // share of keyed records written as tombstones
  storage::Compression compression = storage::Compression::kNone;
  double rate = 50;             // batches per simulated second
  int batch_records = 1;        // records per batch (one produce request each)
  int value_bytes = 64;
  int max_in_flight = 5;
  int max_outstanding = 50;     // sends not yet settled before the producer waits
  Duration delivery_timeout = std::chrono::seconds(20);
  int32_t via_node = -1;  // `via = "n2"`: every produce goes to that broker, which forwards it to the leader
};

struct ConsumerSpec {
  std::string topic;
  Duration max_wait = std::chrono::milliseconds(200);
  int32_t max_bytes = 256 * 1024;
};

struct GroupSpec {
  std::string group;
  std::vector<std::string> topics;
  int members = 2;
  Duration commit_interval = std::chrono::seconds(1);
  Duration session_timeout = std::chrono::seconds(10);
  Duration heartbeat_interval = std::chrono::seconds(1);
  Duration rebalance_timeout = std::chrono::seconds(10);
};

struct TableSpec {
  std::string topic;
  Duration cold_start_every = std::chrono::seconds(10);  // a new reader from the earliest offset this often
};

struct AdminAction {
  Duration at{};
  OpKind kind = OpKind::kAlterConfig;  // kAlterConfig, kDeleteRecords, kCreateTopic, kDeleteTopic
  std::string topic;
  int32_t partition = 0;                      // delete-records
  double fraction = 0.5;                      // delete-records: cut this share of [log start, high watermark)
  int32_t partitions = 1;                     // create-topic
  std::map<std::string, std::string> config;  // alter-config (empty value: delete the override), create-topic
};

struct WorkloadSpec {
  enum class Kind : uint8_t { kProducer, kConsumer, kGroup, kTable, kAdmin };
  Kind kind = Kind::kProducer;
  std::string name;  // unique in the run: the history's process prefix
  ProducerSpec producer;
  ConsumerSpec consumer;
  GroupSpec group;
  TableSpec table;
  std::vector<AdminAction> actions;
};
std::string_view workload_kind_name(WorkloadSpec::Kind kind);

// What a workload is told about the run.
struct WorkloadContext {
  History& history;
  client::ClientConfig client;                     // bootstrap addresses and timeouts
  std::map<std::string, int32_t> partition_counts;  // by topic, from the scenario
  bool stopping = false;                           // set by the runner: finish and return
  std::optional<Instant> healed_at;                // set when the liveness phase begins
};

class Workload {
 public:
  virtual ~Workload() = default;
  const std::string& name() const { return name_; }
  // Runs on the workload's client node until ctx.stopping (checked between operations); returns after it flushed.
  virtual void run(Env env) = 0;
  // Liveness: true once the workload has shown the progress its kind promises since ctx.healed_at.
  virtual bool converged() const = 0;
  // What it is waiting for, for a "no convergence" report.
  virtual std::string progress() const = 0;

 protected:
  Workload(std::string name, WorkloadContext& ctx) : name_(std::move(name)), ctx_(ctx) {}
  bool after_heal(Instant t) const { return ctx_.healed_at.has_value() && t >= *ctx_.healed_at; }

  std::string name_;
  WorkloadContext& ctx_;
};

std::unique_ptr<Workload> make_workload(const WorkloadSpec& spec, WorkloadContext& ctx);

// The unique value a workload writes: "<process>#<n>|" then filler drawn from `random` up to `bytes`.
Bytes make_value(const std::string& process, uint64_t n, int bytes, Random& random);

}  // namespace sluice::sim
