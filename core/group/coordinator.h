// GroupCoordinator: Kafka's classic consumer-group coordinator (3.9's GroupCoordinator / GroupMetadataManager
// semantics, kafka-protocol.md §5) for a single node that leads every partition of `__consumer_offsets`.
//
// State machine per group: Empty -> PreparingRebalance -> CompletingRebalance -> Stable (and Dead when deleted or
// expired). JoinGroup and SyncGroup park their fiber until the rebalance step completes; one timer fiber runs the
// deadlines (session expiry, the rebalance timeout, the initial rebalance delay, pending members and pending
// syncs), so a group never sticks in PreparingRebalance when a member vanishes.
//
// Persistence: offsets and group metadata are records of the compacted `__consumer_offsets` (records.h), in the
// partition of the group id's Java hash. A commit is answered after its append; when a committed topic's
// consumer.offset.durability is `persisted`, after the partition is synced too. start() replays the topic (group
// APIs answer COORDINATOR_LOAD_IN_PROGRESS until done); a fiber expires offsets of empty groups after
// offsets.retention.ms with tombstones, which the log cleaner then removes.
//
// Cluster mode (set_replicated): `__consumer_offsets` is a replicated topic, and this node coordinates the groups of
// the offsets partitions it leads (Kafka's onElection / onResignation): a fiber follows the partitions' leadership;
// on becoming leader it waits until its log is committed up to where it stood (the new leader's first entry
// committed), replays it below the high watermark (the partition's groups answer COORDINATOR_LOAD_IN_PROGRESS
// meanwhile), and on losing leadership unloads the partition's groups (parked requests answer NOT_COORDINATOR).
// Writes go through the leader's partition and are answered once a quorum holds them (acks=all).
//
// Fibers: every call from fibers of the node that built it (shutdown() from anywhere). stop() answers every parked
// request and ends the timer, loader and expiry fibers; call it before the log manager closes.
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/result.h"
#include "core/env/env.h"
#include "core/env/sync.h"
#include "core/group/group.h"
#include "core/group/records.h"
#include "core/group/types.h"
#include "core/storage/log_manager.h"

namespace sluice::group {

// What the coordinator needs of the broker's topic table.
class TopicCatalog {
 public:
  struct Facts {
    int32_t partitions = 0;
    bool persisted_offsets = false;  // consumer.offset.durability=persisted
  };
  virtual ~TopicCatalog() = default;
  virtual std::optional<Facts> find(const std::string& topic) const = 0;
  // Creates a topic (the offsets topic) with `config`; kTopicAlreadyExists when present.
  // `overrides` are topic config keys over the broker's defaults.
  virtual Status create(const std::string& topic, int32_t partitions,
                        const std::map<std::string, std::string>& overrides) = 0;
};

// Cluster mode: the replicated partitions of __consumer_offsets, as the broker's partition layer has them.
class OffsetsPartitions {
 public:
  virtual ~OffsetsPartitions() = default;
  // The partition's leader epoch when this node leads it; nullopt otherwise (or when it is not hosted here).
  virtual std::optional<int32_t> leader_epoch(int32_t partition) const = 0;
  // Appends `batch` to the partition as its leader in `epoch` and returns once a quorum committed it (acks=all),
  // or an error: NOT_LEADER_OR_FOLLOWER when this node does not lead it in `epoch` (or leadership moved before the
  // entry committed: its fate is then unknown), REQUEST_TIMED_OUT, UNKNOWN_TOPIC_OR_PARTITION.
  virtual Result<storage::AppendResult> append(int32_t partition, int32_t epoch, ByteView batch) = 0;
};

// Kafka's partitioning: Utils.abs(groupId.hashCode) % partitions, with Java's String.hashCode over UTF-16.
int32_t java_string_hash(std::string_view utf8);
int32_t partition_for_group(std::string_view group_id, int32_t partitions);

class GroupCoordinator {
 public:
  GroupCoordinator(Env env, storage::LogManager& logs, TopicCatalog& topics, CoordinatorConfig config);
  ~GroupCoordinator();
  GroupCoordinator(const GroupCoordinator&) = delete;
  GroupCoordinator& operator=(const GroupCoordinator&) = delete;

  // Spawns the loader (replays __consumer_offsets when it exists), the timer fiber and the expiry fiber.
  void start();
  // Answers every parked JoinGroup/SyncGroup with NOT_COORDINATOR and tells the fibers to end; later calls answer
  // COORDINATOR_NOT_AVAILABLE. Never blocks: callable outside fibers (a signal callback).
  void shutdown();
  // shutdown(), then waits for the coordinator's fibers and background writes. From a fiber.
  void stop();
  bool loading() const { return loading_; }
  // Cluster mode: `offsets` outlives the coordinator. Call before start().
  void set_replicated(OffsetsPartitions* offsets) { replicated_ = offsets; }
  // Parks until the loader finished (tests). Cluster mode: returns at once.
  void wait_loaded();
  // Creates __consumer_offsets when it does not exist yet (FindCoordinator in cluster mode; the first write).
  Status ensure_offsets_topic();
  // This node coordinates the group now (cluster mode: it leads the group's offsets partition and has loaded it).
  bool coordinates(const std::string& group_id) const;

  JoinResult join(const JoinRequest& request);
  SyncResult sync(const SyncRequest& request);
  ErrorCode heartbeat(const HeartbeatRequest& request);
  LeaveResult leave(const std::string& group_id, const std::vector<LeavingMember>& members);

  // One error per offset, in order. Unknown topics or partitions get UNKNOWN_TOPIC_OR_PARTITION, metadata over
  // offset.metadata.max.bytes OFFSET_METADATA_TOO_LARGE.
  std::vector<ErrorCode> commit(const CommitRequest& request);
  // nullopt partitions: every partition the group has an offset for.
  FetchResult fetch(const std::string& group_id, const std::optional<std::vector<storage::TopicPartition>>& partitions);
  OffsetDeleteResult delete_offsets(const std::string& group_id,
                                    const std::vector<storage::TopicPartition>& partitions);
  std::vector<ErrorCode> delete_groups(const std::vector<std::string>& group_ids);
  // States and types are matched case-insensitively; an empty filter does not filter. Every group is classic.
  ListResult list(const std::vector<std::string>& states, const std::vector<std::string>& types = {});
  GroupDescription describe(const std::string& group_id);

  // Kafka's onPartitionsDeleted: the deleted topic's committed offsets leave every group (tombstones; a group left
  // Empty without offsets goes too), so a topic created again under the name does not resume at them. Returns how
  // many offsets went.
  size_t remove_offsets_of_topic(const std::string& topic);
  // The same on a fiber of its own, awaited by shutdown() like the background group writes (never blocks).
  void remove_offsets_of_topic_in_background(const std::string& topic);

  // One expiry pass at the current wall time (the expiry fiber runs it every check interval). Returns how many
  // offsets expired.
  size_t expire_offsets();

  const CoordinatorConfig& config() const { return config_; }
  int32_t offsets_partitions() const;
  // Introspection for tests.
  const Group* find_group(const std::string& group_id) const;
  size_t group_count() const { return groups_.size(); }

 private:
  using GroupPtr = std::shared_ptr<Group>;

  // Validation shared by every API: INVALID_GROUP_ID, COORDINATOR_NOT_AVAILABLE, COORDINATOR_LOAD_IN_PROGRESS.
  std::optional<ErrorCode> check_status(const std::string& group_id, bool empty_id_allowed) const;
  GroupPtr lookup(const std::string& group_id) const;
  GroupPtr get_or_create(const std::string& group_id);
  void transition(Group& group, GroupState to);

  // Membership (coordinator.cc).
  void join_new_member(const GroupPtr& group, const JoinRequest& request, Parked<JoinResult>& parked);
  void join_known_member(const GroupPtr& group, const JoinRequest& request, Parked<JoinResult>& parked);
  void add_member_and_rebalance(const GroupPtr& group, const JoinRequest& request, const std::string& member_id,
                                Parked<JoinResult>& parked);
  void update_member_and_rebalance(const GroupPtr& group, Member& member, const JoinRequest& request,
                                   Parked<JoinResult>& parked);
  JoinResult current_generation_answer(const Group& group, const std::string& member_id, bool with_members) const;
  void maybe_prepare_rebalance(const GroupPtr& group);
  void prepare_rebalance(const GroupPtr& group);
  void maybe_complete_join(const GroupPtr& group);
  void on_join_deadline(const GroupPtr& group, int32_t remaining_ms);
  // The join completes when the rebalance timeout passes, whoever has rejoined by then.
  void arm_rebalance_deadline(const GroupPtr& group);
  void complete_join(const GroupPtr& group);
  // The leader stays if it rejoined, else a member that did takes over; false when no member rejoined.
  bool elect_joined_leader(Group& group) const;
  void init_next_generation(Group& group);
  void remove_member(const GroupPtr& group, const std::string& member_id);
  void remove_pending_member(const GroupPtr& group, const std::string& member_id);
  void on_session_expired(const GroupPtr& group, const std::string& member_id);
  void on_sync_expired(const GroupPtr& group, int32_t generation);
  void schedule_session(const GroupPtr& group, Member& member, int64_t timeout_ms);
  void cancel_group_timers(Group& group);
  void answer_join(Member& member, JoinResult result);
  void answer_sync(Member& member, SyncResult result);
  void propagate_assignment(Group& group, ErrorCode error);
  void complete_sync(const GroupPtr& group, int32_t generation, std::map<std::string, Bytes> assignment);
  std::optional<ErrorCode> validate_member(const Group& group, const std::string& member_id,
                                           const std::optional<std::string>& instance_id) const;
  void erase_member(Group& group, const std::string& member_id);
  std::optional<ErrorCode> validate_commit(const GroupPtr& group, const CommitRequest& request);

  // Static members and group.max.size (static_membership.cc).
  // group.max.size, as Kafka counts it in each state.
  bool accepts_joining_member(const Group& group, const JoinRequest& request) const;
  void join_static_member(const GroupPtr& group, const JoinRequest& request, const std::string& new_id,
                          Parked<JoinResult>& parked);
  void replace_static_member(const GroupPtr& group, const std::string& old_id, const std::string& new_id,
                             const JoinRequest& request, Parked<JoinResult>& parked);
  // Moves a member to a new id; requests parked under the old id are answered FENCED_INSTANCE_ID.
  Member& rename_member(const GroupPtr& group, const std::string& old_id, const std::string& new_id);

  // Timers (the timer fiber runs due callbacks in order).
  TimerKey add_timer(Duration delay, std::function<void()> callback);
  void cancel_timer(std::optional<TimerKey>& key);
  void timer_loop();

  // Cluster mode (ownership.cc): the offsets partitions this node leads.
  struct Owned {
    int32_t epoch = -1;
    bool loading = true;
    int64_t load_up_to = 0;  // the log end when leadership was noticed: the load waits for the commit to reach it
  };
  int32_t partition_of(const std::string& group_id) const;
  void ownership_loop();
  void follow_leadership();
  void load_owned(int32_t partition, Owned& owned);
  void unload_partition(int32_t partition);
  std::optional<ErrorCode> check_owned(const std::string& group_id) const;

  // Persistence (persistence.cc).
  Result<storage::AppendResult> append(const std::string& group_id, const std::vector<EncodedRecord>& records,
                                       bool sync);
  // With `assignment`, the members' assignments are those (the leader's SyncGroup) instead of the current ones.
  GroupRecord group_record(const Group& group, const std::map<std::string, Bytes>* assignment) const;
  Status store_group(const GroupPtr& group, const std::map<std::string, Bytes>* assignment);  // in its write turn
  void store_group_in_background(const GroupPtr& group);
  // Runs `write` on a fiber of its own, counted in background_writes_ (shutdown waits for them).
  void in_background(std::string name, std::function<void()> write);
  ErrorCode store_offsets(const GroupPtr& group, const std::vector<OffsetToCommit>& offsets, bool sync);
  // Removes the selected offsets (tombstones), and the group itself when it is then Empty without offsets.
  size_t cleanup_group(const GroupPtr& group, const std::vector<storage::TopicPartition>& remove);
  void load_all();
  // One group as the replay found it.
  struct Loaded {
    std::optional<GroupRecord::Value> metadata;
    std::map<storage::TopicPartition, CommittedOffset> offsets;
  };
  Status load_partition(int32_t partition, std::map<std::string, Loaded>& loaded);
  void apply_record(CoordinatorRecord record, std::map<std::string, Loaded>& loaded);
  void apply_loaded(std::map<std::string, Loaded>& loaded);
  void expiry_loop();
  std::vector<storage::TopicPartition> expired_offsets(const Group& group, int64_t now_ms) const;
  int64_t wall_ms() const;

  Env env_;
  storage::LogManager& logs_;
  TopicCatalog& topics_;
  CoordinatorConfig config_;
  std::map<std::string, GroupPtr> groups_;
  bool loading_ = true;
  bool stopping_ = false;
  OffsetsPartitions* replicated_ = nullptr;
  std::map<int32_t, Owned> owned_;
  Event loaded_;
  Mutex topic_creation_;
  uint64_t next_timer_seq_ = 1;
  std::map<TimerKey, std::function<void()>> timers_;
  WaitQueue timers_changed_;
  WaitQueue background_done_;
  size_t background_writes_ = 0;
  Event stop_event_;
  FiberRef loader_fiber_;
  FiberRef timer_fiber_;
  FiberRef expiry_fiber_;
  FiberRef ownership_fiber_;
};

}  // namespace sluice::group
