#include "sim/scenario/simulation.h"

#include <fmt/format.h>

#include <chrono>

#include "core/kafka/broker.h"
#include "core/kafka/broker_config.h"
#include "core/protocol/error_codes.h"
#include "sim/faults/injector.h"
#include "sim/scenario/final_read.h"
#include "sim/scenario/run_world.h"
#include "sim/scenario/setup.h"
#include "sim/world/sim_clock.h"
#include "sim/world/sim_disk.h"

namespace sluice::sim {
namespace {

// Firings of BUGGIFY's client.answer-too-late in this process (each site is also a probe of that name).
uint64_t injected_timeouts() {
  uint64_t hits = 0;
  for (const ProbeSite& site : probe_sites()) {
    if (std::string_view(site.name) == "buggify.client.answer-too-late") hits += site.hits;
  }
  return hits;
}

using namespace std::chrono_literals;

constexpr Duration kSetupLimit = 60s;
constexpr Duration kStopLimit = 60s;
constexpr Duration kSettleBeforeFinalRead = 2s;

}  // namespace

Simulation::Simulation(const Scenario& scenario, const RunOptions& options)
    : scenario_(expand(scenario, options.seed)),
      options_(options),
      wall_start_(wall_clock_seconds()),
      injected_timeouts_before_(injected_timeouts()) {
  result_.scenario = scenario_.name;
  result_.seed = options_.seed;
  result_.replay = replay_command(scenario_, options_.seed, options_.mutations);
  result_.expanded = to_toml(scenario_, true);
}

Simulation::~Simulation() {
  // The world's fibers go first: they reference the workloads, the context and the history.
  world_.reset();
  if (hooked_) set_assert_failure_hook(std::move(previous_hook_));
}

Status Simulation::setup() {
  SLUICE_ASSERT_MSG(world_ == nullptr, "setup runs once");
  if (scenario_.raft) {
    const std::string why = "a [raft] scenario runs whole (sluice sim, run_scenario), not step by step";
    result_.report.fail("setup", why);
    return Status(Code::kInvalidArgument, why);
  }
  Result<kafka::BrokerConfig> config = broker_config(scenario_, options_.mutations);
  if (!config.ok()) {
    result_.report.fail("setup", config.status().message());
    return config.status();
  }
  Result<std::map<std::string, TopicFacts>> facts = topic_facts(scenario_, *config);
  if (!facts.ok()) {
    result_.report.fail("setup", facts.status().message());
    return facts.status();
  }
  facts_ = std::move(*facts);
  retention_check_interval_ms_ = config->storage.log_retention_check_interval_ms;
  broker::NodeOptions node;
  node.data_dir = "data";
  node.broker = *config;
  world_ = std::make_unique<RunWorld>(options_.seed, options_.log_level, history_, node, scenario_.brokers,
                                      scenario_.buggify);
  SimWorld& sim = world_->world();
  previous_hook_ = set_assert_failure_hook(simulation_failure_hook(sim, result_.replay));
  hooked_ = true;
  if (options_.record_events) {
    sim.set_event_observer([this](Instant at, uint64_t sequence, NodeId node_id, EventKind kind, uint64_t hash) {
      result_.events_trace.push_back(
          TracedEvent{at.time_since_epoch().count(), sequence, node_id, static_cast<uint8_t>(kind), hash});
    });
  }
  injector_ = std::make_unique<Injector>(*world_, history_);
  if (!sim.run_until([&] { return world_->all_serving() || world_->boot_failed(); }, sim.now() + kSetupLimit) ||
      !world_->all_serving()) {
    result_.report.fail("setup", "the broker did not start (see the boot-failed events)");
    return Status(Code::kIoError, "the broker did not start");
  }
  if (!create_topics(*world_, scenario_, history_, kSetupLimit)) {
    result_.report.fail("setup", "the scenario's topics could not be created within " + format_duration(kSetupLimit));
    return Status(Code::kTimedOut, "the topics could not be created");
  }
  next_sample_ = sim.now() + options_.sample_every;
  return Status::ok_status();
}

void Simulation::start_workloads() {
  SLUICE_ASSERT(world_ != nullptr && ctx_ == nullptr);
  ctx_ = std::make_unique<WorkloadContext>(WorkloadContext{history_, client_config(*world_), {}, false, std::nullopt});
  for (const TopicSpec& t : scenario_.topics) ctx_->partition_counts[t.name] = t.partitions;
  for (const WorkloadSpec& spec : scenario_.workloads) {
    workloads_.push_back(make_workload(spec, *ctx_));
    Workload* w = workloads_.back().get();
    ++running_;
    world_->add_client(spec.name).boot([this, w](Env env) {
      w->run(env);
      --running_;
    });
  }
}

void Simulation::schedule_drawn() { injector_->schedule(scenario_.schedule, world_->world().now()); }

Status Simulation::inject(const Fault& fault) {
  if (world_ == nullptr) return invalid_argument("inject: the simulation is not set up, or has finished");
  if (world_->broker_node(fault.node) == nullptr) {
    return invalid_argument(fmt::format("inject: '{}' is not a broker node of this simulation", fault.node));
  }
  if (fault.kind == FaultKind::kDropAcks0Forwards && (scenario_.brokers < 2 || scenario_.raft)) {
    return invalid_argument("inject: drop-acks0-forwards needs a cluster of brokers (brokers > 1)");
  }
  injector_->schedule({fault}, world_->world().now());
  return Status::ok_status();
}

void Simulation::run_for(Duration d) { advance(nullptr, running_world().now() + d); }

bool Simulation::run_until(const std::function<bool()>& done, Duration limit) {
  return advance(done, running_world().now() + limit);
}

SimWorld& Simulation::running_world() const {
  SLUICE_ASSERT_MSG(world_ != nullptr, "the world runs between setup() and finish()");
  return world_->world();
}

bool Simulation::advance(const std::function<bool()>& done, Instant deadline) {
  SimWorld& sim = running_world();
  const auto never = [] { return false; };
  for (;;) {
    const bool sampling = options_.sample_every > Duration(0);
    const Instant stop = sampling ? std::min(deadline, next_sample_) : deadline;
    if (sim.run_until(done ? done : never, stop)) return true;
    if (sampling && sim.now() >= next_sample_) {
      sample();
      next_sample_ += options_.sample_every;
    }
    if (sim.now() >= deadline) return done ? done() : true;
  }
}

void Simulation::heal() {
  injector_->heal_all();
  result_.faults_applied = injector_->faults_applied();
  result_.faults_skipped = injector_->faults_skipped();
  if (ctx_) ctx_->healed_at = world_->world().now();
}

bool Simulation::converge() {
  if (scenario_.expect.damage_refused) return true;  // the operator must repair first: reads cannot converge
  const auto all_converged = [&] {
    for (const auto& w : workloads_) {
      if (!w->converged()) return false;
    }
    return world_->all_serving();
  };
  if (run_until(all_converged, scenario_.liveness)) return true;
  std::string waiting;
  for (const auto& w : workloads_) {
    if (!w->converged()) waiting += fmt::format("; {}: {}", w->name(), w->progress());
  }
  if (!world_->all_serving()) waiting += "; a broker is not serving";
  result_.report.fail("liveness", fmt::format("no convergence within {} after the heal{}",
                                              format_duration(scenario_.liveness), waiting));
  return false;
}

void Simulation::stop_workloads() {
  if (!ctx_) return;
  ctx_->stopping = true;
  if (!run_until([&] { return running_ == 0; }, kStopLimit)) {
    result_.report.fail("liveness", "the workloads did not stop within " + format_duration(kStopLimit));
  }
}

void Simulation::final_read() {
  // The last sends settle first: an acks=0 produce written just before the stop is still on the wire, and on a
  // cluster the followers still fetch the last acks=1 and acks=0 records the leader took.
  run_for(kSettleBeforeFinalRead);
  if (world_->all_serving() && !scenario_.expect.damage_refused) {
    sim::final_read(*world_, scenario_, client_config(*world_), history_, result_.report);
  }
}

RunResult Simulation::finish() {
  if (world_ != nullptr) {
    expectations();
    SimWorld& sim = world_->world();
    result_.simulated_seconds = to_seconds(sim.now().time_since_epoch());
    result_.events = sim.events_run();
    result_.fiber_steps = sim.fiber_steps();
    result_.trace_hash = trace_hash();
    sim.set_event_observer(nullptr);
    if (injected_timeouts() > injected_timeouts_before_) {
      // A request BUGGIFY answered too late failed as under a fault (a broker's forward of an acks=0 produce among
      // them: nothing retries that): the run is not one without faults, where nothing sent may be lost. Recorded
      // after the last operation, so no earlier one counts as following a fault.
      history_.world({WorldEvent::Kind::kFault, sim.now(), "", "BUGGIFY client.answer-too-late timed requests out", 0});
    }
    // The world goes before the checkers run: nothing below reads it (the calls that did answer from what is kept
    // here), and with its tens of MB freed first the checks ran ~20 % faster (bench/README.md, sixth round).
    finished_ = Finished{sim.now(), world_->all_serving(), result_.trace_hash};
    world_.reset();
    CheckContext ctx{history_, facts_, retention_check_interval_ms_, SimClock::kWallEpochMs, scenario_.brokers};
    const double checks_start = wall_clock_seconds();
    CheckReport checked = run_checkers(ctx, scenario_.checks);
    result_.check_seconds = wall_clock_seconds() - checks_start;
    for (Violation& v : checked.violations) result_.report.violations.push_back(std::move(v));
    for (const auto& [figure, n] : checked.figures) result_.report.figures[figure] += n;
  }
  result_.operations = history_.ops().size();
  if (options_.keep_history) result_.history_jsonl = history_.to_json_lines();
  result_.wall_seconds = wall_clock_seconds() - wall_start_;
  return std::move(result_);
}

double Simulation::now_seconds() const {
  if (finished_) return to_seconds(finished_->now.time_since_epoch());
  return world_ == nullptr ? 0 : to_seconds(world_->world().now().time_since_epoch());
}

uint64_t Simulation::trace_hash() const {
  if (finished_) return finished_->trace_hash;
  if (world_ == nullptr) return 0;
  uint64_t disks = 0;
  for (SimNode* node : world_->broker_nodes()) disks = mix64(disks ^ node->disk().trace_state_hash());
  return mix64(world_->world().trace_hash() ^ mix64(history_.digest()) ^ disks);
}

bool Simulation::serving() const {
  if (finished_) return finished_->serving;
  return world_ != nullptr && world_->all_serving();
}

// Reads only the logs' in-memory state: sampling happens outside any fiber and changes nothing.
void Simulation::sample() {
  const double at = now_seconds();
  for (size_t i = 0; i < world_->broker_nodes().size(); ++i) {
    kafka::Broker* broker = world_->broker(i);
    if (broker == nullptr) continue;
    storage::LogManager& logs = broker->logs();
    for (const storage::TopicPartition& tp : logs.partitions()) {
      storage::PartitionLog* log = logs.find(tp);
      if (log == nullptr) continue;
      PartitionSample s{at, world_->broker_nodes()[i]->name(), tp.topic, tp.partition, log->log_start_offset(),
                        log->log_end_offset(), log->high_watermark(), 0, 0, 0};
      const int64_t checkpoint = logs.cleaner_checkpoint(tp);
      uint64_t dirty = 0;
      uint64_t closed = 0;
      const std::vector<storage::SegmentInfo> segments = log->segments();
      for (size_t k = 0; k < segments.size(); ++k) {
        s.size_bytes += segments[k].size_bytes;
        if (k + 1 == segments.size()) break;  // the active segment is never cleaned
        closed += segments[k].size_bytes;
        if (segments[k].next_offset > checkpoint) dirty += segments[k].size_bytes;
      }
      s.segments = segments.size();
      s.dirty_ratio = closed == 0 ? 0 : static_cast<double>(dirty) / static_cast<double>(closed);
      samples_.push_back(std::move(s));
    }
  }
}

// Boots that failed, and partitions that did not load at a boot (the broker then serves the others): during the
// fault phase a boot may fail for a reason the faults explain (a full or failing disk), counted, as long as the node
// boots once healed; a refusal to load data, or any failure after the heal, is a violation unless the scenario
// damaged a segment on purpose. Damage must be refused: by a boot naming the repair
// or by reads answered KAFKA_STORAGE_ERROR; a client that received bytes failing their CRC got damage.
void Simulation::expectations() {
  std::optional<Instant> healed;
  bool refused = false;
  for (const WorldEvent& e : history_.events()) {
    if (e.kind == WorldEvent::Kind::kHealed) healed = e.at;
    // A partition that did not load at a boot is judged as a refused boot: the broker serves the others.
    if (e.kind != WorldEvent::Kind::kBootFailed && e.kind != WorldEvent::Kind::kPartitionOffline) continue;
    const bool load_refused = e.text.find("repair") != std::string::npos;
    refused = refused || load_refused;
    if (scenario_.expect.damage_refused && load_refused) continue;
    const bool partition = e.kind == WorldEvent::Kind::kPartitionOffline;
    if (!healed && !load_refused) {
      result_.report.count(partition ? "partitions offline at a boot during the fault phase"
                                     : "boots failed during the fault phase");
      continue;
    }
    const double at = to_seconds(e.at.time_since_epoch());
    const std::string what = partition ? fmt::format("{}: a partition did not load at {:.3f}s", e.node, at)
                                       : fmt::format("{} failed to boot at {:.3f}s", e.node, at);
    result_.report.fail("boot", what + ": " + e.text);
    break;
  }
  for (const Operation& op : history_.ops()) {
    if (op.kind != OpKind::kFetch && op.kind != OpKind::kFinalRead) continue;
    if (op.error_code == wire_code(ErrorCode::kKafkaStorageError)) {
      refused = true;
      result_.report.count("reads refused with KAFKA_STORAGE_ERROR");
    }
    if (op.error().find("fails its CRC") != std::string::npos) {
      result_.report.fail("damage", "the broker served bytes that fail their CRC: " + describe(op));
      break;
    }
  }
  if (scenario_.expect.damage_refused && !refused) {
    result_.report.fail("damage", "the scenario damaged a closed segment, but no boot or read refused it");
  }
}

}  // namespace sluice::sim
