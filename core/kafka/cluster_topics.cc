#include "core/kafka/cluster_topics.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "core/base/assert.h"
#include "core/cluster/raft_groups.h"
#include "core/env/file_system.h"
#include "core/protocol/error_codes.h"

namespace sluice::kafka {
namespace {

using namespace std::chrono_literals;
using cluster::metadata::PartitionImage;
using cluster::metadata::TopicImage;

constexpr const char* kMetadataDir = "__cluster_metadata";
// After a pass that failed somewhere (a disk error creating a partition, say), the next one comes this soon even
// if the image does not move.
constexpr Duration kRetryPass = 1s;
// The leader reporter looks at every partition this often besides when a role changes.
constexpr Duration kReportInterval = 1s;
// How long a new partition's first leader keeps trying to hand it to its preferred replica (which may join late).
constexpr Duration kFreshWindow = 30s;
constexpr Duration kReportDeadline = 5s;

bool has_replica(const std::vector<int32_t>& replicas, int32_t node) {
  return std::find(replicas.begin(), replicas.end(), node) != replicas.end();
}

cluster::ClusterNodeOptions node_options(const BrokerConfig& config, const std::string& data_dir) {
  SLUICE_ASSERT(config.cluster_mode());
  SLUICE_ASSERT(config.node_id >= 1);
  cluster::ClusterNodeOptions options;
  options.node_id = static_cast<raft::NodeId>(config.node_id);
  for (const auto& [id, address] : config.controller_quorum_voters) {
    SLUICE_ASSERT(id >= 1);
    options.voters.emplace(static_cast<raft::NodeId>(id), address);
  }
  options.raft_address = config.controller_quorum_voters.at(config.node_id);
  options.metadata_dir = join_path(data_dir, kMetadataDir);
  options.host = config.advertised_host;
  options.port = config.advertised_port;
  options.host_options.tick = config.raft_tick;
  options.host_options.raft.mutations = config.mutations;  // the raft ones plant bugs in every group
  return options;
}

}  // namespace

ClusterTopics::ClusterTopics(Env env, const BrokerConfig& config, const std::string& data_dir,
                             cluster::PartitionManager& partitions, TopicTable& topics)
    : env_(env),
      config_(config),
      data_dir_(data_dir),
      partitions_(partitions),
      topics_(topics),
      node_(std::make_unique<cluster::ClusterNode>(env, node_options(config, data_dir))),
      forwarder_(env, config.node_id),
      reconciled_(env.scheduler) {
  SLUICE_ASSERT(config_.cluster_mode());
  SLUICE_ASSERT(config_.storage.replicated_logs);
}

ClusterTopics::~ClusterTopics() {
  stop();
  if (env_.scheduler.in_fiber()) {
    // A node kill unwinds the fibers first (they are newer than the broker's main fiber); FiberKilled must not
    // leave a destructor.
    try {
      if (reconciler_ && !reconciler_.done()) env_.scheduler.join(reconciler_);
      if (reporter_ && !reporter_.done()) env_.scheduler.join(reporter_);
    } catch (const FiberKilled&) {
      SLUICE_ASSERT(!reconciler_ || reconciler_.done());
    }
  }
  partitions_.set_on_group_stopped({});
  node_.reset();  // joins the host's driver, which calls into the partitions' hooks
}

Status ClusterTopics::start() {
  SLUICE_ASSERT_MSG(!started_, "cluster mode starts once");
  started_ = true;
  const Address& raft = config_.controller_quorum_voters.at(config_.node_id);
  SLUICE_TRY(refuse_single_node_topics());
  if (Status started = node_->start(); !started.ok()) {
    return Status(started.code(),
                  fmt::format("node {} (raft {}): {}", config_.node_id, raft.to_string(), started.message()));
  }
  env_.log.info("cluster mode: node {} of {} voters, raft on {}, metadata in {}", config_.node_id,
                config_.controller_quorum_voters.size(), raft.to_string(), join_path(data_dir_, kMetadataDir));
  // A replica's raft group stopped: the reconciler looks at once (one stopped for space starts again).
  partitions_.set_on_group_stopped([this] {
    if (node_ != nullptr) node_->poke();
  });
  reconciler_ = env_.scheduler.spawn("cluster-reconcile", [this] { reconcile_loop(); });
  reporter_ = env_.scheduler.spawn("cluster-leaders", [this] { report_loop(); });
  return Status();
}

// A data directory a single node wrote holds topics the cluster metadata has never heard of, and the reconciler
// removes partitions the metadata does not name: starting it in cluster mode would delete them. Refused instead.
Status ClusterTopics::refuse_single_node_topics() {
  const std::string metadata_dir = join_path(data_dir_, kMetadataDir);
  SLUICE_ASSIGN_OR_RETURN(const bool has_metadata, env_.fs.exists(metadata_dir));
  if (has_metadata) return Status();
  std::set<std::string> topics;
  for (const storage::TopicPartition& tp : partitions_.partitions()) {
    if (!is_local_topic(tp.topic)) topics.insert(tp.topic);
  }
  for (const storage::TopicPartition& tp : partitions_.offline_partitions()) {
    if (!is_local_topic(tp.topic)) topics.insert(tp.topic);
  }
  if (topics.empty()) return Status();
  std::string names;
  for (const std::string& topic : topics) names += (names.empty() ? "" : ", ") + topic;
  return Status(Code::kInvalidArgument,
                fmt::format("data directory {} holds topics of a single-node broker ({}) and no cluster metadata "
                            "({}): cluster mode would delete them. Start it without node.id and "
                            "controller.quorum.voters, or give the cluster node an empty data directory",
                            data_dir_, names, metadata_dir));
}

void ClusterTopics::stop() {
  if (stopping_) return;
  stopping_ = true;
  if (node_ != nullptr) node_->stop();
  forwarder_.close();
  partitions_.leadership_changed().set();
  reconciled_.notify_all();
}

void ClusterTopics::shutdown() {
  SLUICE_ASSERT(env_.scheduler.in_fiber());
  stop();
  if (reconciler_) env_.scheduler.join(reconciler_);
  if (reporter_) env_.scheduler.join(reporter_);
  node_.reset();
}

Result<std::vector<Status>> ClusterTopics::propose(const cluster::metadata::Batch& batch, Instant deadline) {
  if (node_ == nullptr) {
    return Status(Code::kClosed, "the node is stopping", wire_code(ErrorCode::kRequestTimedOut));
  }
  return node_->propose(batch, deadline);
}

bool ClusterTopics::wait_reconciled(Instant deadline) {
  if (node_ == nullptr) return false;
  const uint64_t target = node_->version();
  while (reconciled_version_ < target && !stopping_) {
    if (!reconciled_.wait_until(deadline)) break;
  }
  return reconciled_version_ >= target;
}

Result<std::pair<int64_t, int64_t>> ClusterTopics::allocate_producer_ids(Instant deadline) {
  for (;;) {
    SLUICE_ASSIGN_OR_RETURN(cluster::metadata::AllocateProducerIds block,
                            cluster::metadata::allocate_producer_ids(image(), config_.node_id));
    SLUICE_ASSERT(block.node_id == config_.node_id);
    SLUICE_ASSERT(block.count >= 1);
    SLUICE_ASSIGN_OR_RETURN(std::vector<Status> outcomes, propose(cluster::metadata::Batch{{block}}, deadline));
    SLUICE_ASSERT(outcomes.size() == 1);
    if (outcomes.front().ok()) return std::make_pair(block.first_producer_id, block.first_producer_id + block.count);
    // Another node took that block first: ask again from the newer image.
    if (outcomes.front().code() != Code::kAlreadyExists) return outcomes.front();
    if (env_.clock.now() >= deadline) {
      return Status(Code::kTimedOut, "no producer-id block could be allocated in time",
                    wire_code(ErrorCode::kRequestTimedOut));
    }
  }
}

// ---- the reconciler ----

bool ClusterTopics::is_local_topic(const std::string& name) const {
  return config_.storage.local_topics.contains(name);
}

void ClusterTopics::reconcile_loop() {
  bool ok = true;
  while (!stopping_) {
    const uint64_t seen = node_->version();
    restart_metadata_group_stopped_for_space();
    // Nothing moves before this node's registration is applied: only then does the image hold everything
    // committed before this start (the metadata log replays from index 1).
    if (node_->registered()) {
      ok = reconcile();
      ++stats_.passes;
      SLUICE_ASSERT(seen >= reconciled_version_);
      reconciled_version_ = seen;
      reconciled_.notify_all();
    }
    if (stopping_) break;
    // A replica offline for lack of space loads again at a retention check; a pass then puts it in its group.
    const bool again = !ok || awaiting_space();
    node_->wait_for_change(seen, env_.clock.now() + (again ? kRetryPass : Duration(std::chrono::hours(1))));
  }
}

bool ClusterTopics::awaiting_space() const {
  if (node_->metadata_stopped_for_space() || !partitions_.stopped_for_space().empty()) return true;
  for (const storage::TopicPartition& tp : partitions_.offline_partitions()) {
    const storage::LogManager::OfflinePartition* offline = partitions_.offline(tp);
    if (offline != nullptr && offline->reason.code() == Code::kNoSpace) return true;
  }
  return false;
}

bool ClusterTopics::reconcile() {
  bool ok = remove_strays();
  restart_groups_stopped_for_space();
  // A copy: the image moves while partitions are made (each suspends on the disk).
  const std::map<std::string, TopicImage, std::less<>> topics = image().topics();
  for (const auto& [name, topic] : topics) {
    if (stopping_) return ok;
    SLUICE_ASSERT(name == topic.name);
    if (is_local_topic(name)) {
      env_.log.warn("the cluster metadata names topic {}, which this node keeps local: ignored", name);
      continue;
    }
    ok = follow_topic(topic) && ok;
  }
  return ok;
}

// Whether a group stopped for space may start again now, noting it: at once, then at most once a retry pass while the
// disk stays full and stops it again.
bool ClusterTopics::restart_due(std::optional<Instant>& last_restart) const {
  const Instant now = env_.clock.now();
  if (last_restart.has_value() && now - *last_restart < kRetryPass) return false;
  last_restart = now;
  return true;
}

// A raft group stopped because the disk refused space starts again on its log, which that refusal left as it was
// (core/raft/README.md, Fail-stop). Other storage errors keep a group stopped until the node restarts.
void ClusterTopics::restart_groups_stopped_for_space() {
  for (const storage::TopicPartition& tp : partitions_.stopped_for_space()) {
    if (stopping_) return;
    if (!restart_due(restarted_at_[tp])) continue;
    env_.log.info("{}: its raft group stopped for lack of space; starting it again", tp.to_string());
    if (Status s = partitions_.restart_group(tp).status(); !s.ok()) {
      env_.log.warn("{}: its raft group did not start again: {}", tp.to_string(), s.to_string());
    }
  }
}

// The metadata group likewise, before the pass that waits for this node's registration.
void ClusterTopics::restart_metadata_group_stopped_for_space() {
  if (stopping_ || !node_->metadata_stopped_for_space() || !restart_due(metadata_restarted_at_)) return;
  env_.log.info("the cluster metadata's raft group stopped for lack of space; starting it again");
  if (Status s = node_->restart_metadata_group(); !s.ok()) {
    env_.log.warn("the cluster metadata's raft group did not start again: {}", s.to_string());
  }
}

// Topics and partitions the image no longer holds here: deleted topics (or an older topic of a name made again),
// partitions of a node that is not among their replicas.
bool ClusterTopics::remove_strays() {
  bool ok = true;
  for (const TopicInfo* info : topics_.all()) {
    if (is_local_topic(info->name)) continue;
    const TopicImage* topic = image().topic(info->name);
    if (topic == nullptr || topic->id != info->id) {
      env_.log.info("topic {} (id {}) left the cluster metadata", info->name, info->id.to_string());
      const std::string name = info->name;
      topics_.forget(info->name);  // invalidates `info`; all() returned a copy of the pointers
      if (topic_removed_) topic_removed_(name);
    }
  }
  for (const storage::TopicPartition& tp : partitions_.partitions()) {
    if (stopping_) return ok;
    if (is_local_topic(tp.topic)) continue;
    const std::shared_ptr<cluster::Partition> partition = partitions_.find(tp);
    if (partition == nullptr) continue;  // removed while an earlier removal suspended
    if (const char* why = stray_reason(tp, partition->topic_id())) ok = remove_partition(tp, why).ok() && ok;
  }
  // Those whose log did not load here too: their directories go with their topic.
  for (const storage::TopicPartition& tp : partitions_.offline_partitions()) {
    if (stopping_) return ok;
    if (is_local_topic(tp.topic)) continue;
    const storage::LogManager::OfflinePartition* offline = partitions_.offline(tp);
    if (offline == nullptr) continue;  // removed while an earlier removal suspended
    if (const char* why = stray_reason(tp, offline->topic_id)) ok = remove_partition(tp, why).ok() && ok;
  }
  return ok;
}

// Why the image no longer places this node's partition of topic `topic_id` here; null when it does.
const char* ClusterTopics::stray_reason(const storage::TopicPartition& tp, const std::string& topic_id) const {
  const TopicImage* topic = image().topic(tp.topic);
  if (topic == nullptr) return "its topic is not in the cluster metadata";
  if (topic->id.to_string() != topic_id) return "it belongs to an older topic of that name";
  if (tp.partition >= topic->partition_count()) return "its topic has fewer partitions";
  if (!has_replica(topic->partitions[static_cast<size_t>(tp.partition)].replicas, config_.node_id)) {
    return "this node is not one of its replicas";
  }
  return nullptr;
}

Status ClusterTopics::remove_partition(const storage::TopicPartition& tp, const char* why) {
  env_.log.info("removing partition {}: {}", tp.to_string(), why);
  Status removed = partitions_.remove(tp);
  if (!removed.ok() && removed.code() != Code::kNotFound) {
    env_.log.error("removing partition {}: {}", tp.to_string(), removed.to_string());
    return removed;
  }
  ++stats_.partitions_removed;
  return Status();
}

bool ClusterTopics::follow_topic(const TopicImage& topic) {
  SLUICE_ASSERT(topic.partition_count() >= 1);
  Result<storage::TopicConfig> parsed =
      storage::TopicConfig::from_overrides(topic.configs, config_.storage.topic_defaults);
  if (!parsed.ok()) {
    // The proposer checked them against its own defaults; this node's defaults refuse them.
    env_.log.error("topic {}: its configs do not apply on this node ({}); using the broker defaults", topic.name,
                   parsed.status().to_string());
  }
  const storage::TopicConfig config = parsed.ok() ? *parsed : config_.storage.topic_defaults;
  bool ok = true;
  const auto still_there = [&] {
    const TopicImage* live = image().topic(topic.name);
    return live != nullptr && live->id == topic.id;
  };
  for (int32_t p = 0; p < topic.partition_count(); ++p) {
    // The copy this pass follows may be older than the image: a topic deleted meanwhile is left to the next pass.
    if (stopping_ || !still_there()) return ok;
    const PartitionImage& placement = topic.partitions[static_cast<size_t>(p)];
    if (!has_replica(placement.replicas, config_.node_id)) continue;
    if (Status hosted = host_partition(topic, p, config); !hosted.ok()) {
      env_.log.error("partition {}-{}: {}", topic.name, p, hosted.to_string());
      ok = false;
    }
  }
  // Only once its partitions here exist: a request that finds the topic finds them.
  if (!still_there()) return ok;
  topics_.adopt(TopicInfo{topic.name, topic.id, topic.partition_count(), config});
  return ok;
}

Status ClusterTopics::host_partition(const TopicImage& topic, int32_t partition, const storage::TopicConfig& config) {
  const storage::TopicPartition tp{topic.name, partition};
  const std::string id = topic.id.to_string();
  if (const storage::LogManager::OfflinePartition* offline = partitions_.offline(tp)) {
    // Its log did not load here: the replica stays out of its raft group until a restart, or until space returns
    // (requests for it are answered KAFKA_STORAGE_ERROR). One of an older topic of that name goes.
    if (offline->topic_id == id) return Status();
    SLUICE_TRY(remove_partition(tp, "it belongs to an older topic of that name"));
  }
  std::shared_ptr<cluster::Partition> local = partitions_.find(tp);
  if (local != nullptr && local->topic_id() != id) {
    // The name was deleted and made again since remove_strays looked (it suspends).
    SLUICE_TRY(remove_partition(tp, "it belongs to an older topic of that name"));
    local = nullptr;
  }
  if (local == nullptr) {
    SLUICE_ASSIGN_OR_RETURN(local, partitions_.create(tp, config, id));
    ++stats_.partitions_made;
  } else if (!(local->config() == config) || local->config().overrides() != config.overrides()) {
    SLUICE_TRY(partitions_.alter_config(tp, config));
  }
  if (local->replicated()) return Status();
  const std::vector<int32_t>& replicas = topic.partitions[static_cast<size_t>(partition)].replicas;
  const raft::GroupId group = cluster::partition_group_id(topic.id, partition);
  SLUICE_ASSERT(group != cluster::kMetadataGroup);
  // Two partitions sharing a group id (about 2^-64 per pair) would corrupt both: refuse loudly instead.
  SLUICE_ASSERT_MSG(node_->host().raft(group) == nullptr, "two partitions hash to one raft group id");
  SLUICE_TRY(partitions_.replicate(tp, node_->host(), group, replicas).status());
  env_.log.info("partition {} joined its raft group (replicas {})", tp.to_string(), fmt::join(replicas, ","));
  // A new partition starts led by its preferred replica, as Kafka's controller elects it: the placement spreads
  // those over the nodes, where a plain election would hand most leaderships to the node that created its
  // partitions first (the metadata leader) until the imbalance check, minutes later. The preferred replica
  // campaigns at once; when that finds the other replicas not yet in the group, the timeouts elect another, which
  // hands the partition over (report_loop).
  const raft::Raft* raft = node_->host().raft(group);
  if (raft != nullptr && raft->term() == 0) {
    fresh_partitions_[tp] = env_.clock.now();
    if (!replicas.empty() && replicas.front() == config_.node_id) node_->host().campaign(group);
  }
  return Status();
}

// ---- the leader reporter ----

void ClusterTopics::report_loop() {
  Event& changed = partitions_.leadership_changed();
  next_balance_ = env_.clock.now() + config_.leader_imbalance_check_interval;
  while (!stopping_) {
    changed.reset();
    if (node_->registered()) report_leaders();
    if (!fresh_partitions_.empty() && !stopping_) hand_back_leaderships(true);
    if (config_.auto_leader_rebalance_enable && env_.clock.now() >= next_balance_ && node_->registered() &&
        !stopping_) {
      next_balance_ = env_.clock.now() + config_.leader_imbalance_check_interval;
      hand_back_leaderships(false);
    }
    if (stopping_) break;
    changed.wait_until(env_.clock.now() + kReportInterval);
  }
}

void ClusterTopics::for_each_led_partition(const LedPartitionVisitor& visit) {
  for (const storage::TopicPartition& tp : partitions_.partitions()) {
    const std::shared_ptr<cluster::Partition> partition = partitions_.find(tp);
    if (partition == nullptr || !partition->replicated() || !partition->is_leader()) continue;
    const TopicImage* topic = image().topic(tp.topic);
    if (topic == nullptr || topic->id.to_string() != partition->topic_id()) continue;
    if (tp.partition >= topic->partition_count()) continue;
    visit(tp, *partition, *topic);
  }
}

void ClusterTopics::report_leaders() {
  cluster::metadata::Batch batch;
  for_each_led_partition(
      [&](const storage::TopicPartition& tp, cluster::Partition& partition, const TopicImage& topic) {
        const PartitionImage& recorded = topic.partitions[static_cast<size_t>(tp.partition)];
        const int32_t epoch = partition.leader_epoch();
        SLUICE_ASSERT(epoch >= 0);
        if (recorded.leader_epoch > epoch) return;  // this node's view is behind: a newer leader reported
        if (recorded.leader_epoch == epoch && recorded.leader == config_.node_id) return;
        batch.records.emplace_back(cluster::metadata::RecordLeader{cluster::metadata::TopicRef{topic.name, topic.id},
                                                                   tp.partition, config_.node_id, epoch});
      });
  if (batch.records.empty()) return;
  Result<std::vector<Status>> outcomes = propose(batch, env_.clock.now() + kReportDeadline);
  if (!outcomes.ok()) {
    env_.log.debug("leader report not applied yet: {}", outcomes.status().to_string());
    return;
  }
  for (const Status& outcome : *outcomes) {
    if (outcome.ok()) ++stats_.leaders_reported;
  }
}

void ClusterTopics::hand_back_leaderships(bool fresh_only) {
  const Instant now = env_.clock.now();
  std::erase_if(fresh_partitions_, [&](const auto& fresh) { return now - fresh.second > kFreshWindow; });
  for_each_led_partition([&](const storage::TopicPartition& tp, cluster::Partition& partition,
                             const TopicImage& topic) {
    auto fresh = fresh_partitions_.find(tp);
    if (fresh_only && fresh == fresh_partitions_.end()) return;
    const int32_t preferred = topic.partitions[static_cast<size_t>(tp.partition)].preferred_leader();
    if (preferred == config_.node_id) {
      if (fresh != fresh_partitions_.end()) fresh_partitions_.erase(fresh);
      return;
    }
    const std::vector<int32_t> in_sync = partition.in_sync_replicas();
    SLUICE_ASSERT(std::find(in_sync.begin(), in_sync.end(), config_.node_id) != in_sync.end());  // the leader is
    if (std::find(in_sync.begin(), in_sync.end(), preferred) == in_sync.end()) return;
    const raft::GroupId group = cluster::partition_group_id(topic.id, tp.partition);
    SLUICE_ASSERT(node_->host().raft(group) != nullptr);
    env_.log.info("partition {}: handing the leadership back to its preferred replica {}", tp.to_string(), preferred);
    node_->host().transfer_leadership(group, static_cast<raft::NodeId>(preferred));
    if (fresh != fresh_partitions_.end()) {
      fresh_partitions_.erase(fresh);
      ++stats_.new_partitions_handed_over;
    } else {
      ++stats_.leadership_handed_back;
    }
  });
}

}  // namespace sluice::kafka
