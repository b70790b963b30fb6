#include "core/cluster/cluster_node.h"

#include <algorithm>
#include <limits>

#include "core/base/assert.h"
#include "core/protocol/error_codes.h"
#include "core/raft/file_group_storage.h"

namespace sluice::cluster {
namespace {

Status unknown_fate(Code kind, std::string why) {
  return Status(kind, "metadata proposal: " + why + "; it may still apply", wire_code(ErrorCode::kRequestTimedOut));
}

}  // namespace

// One propose() call. Its id's sequence changes when it is re-issued; the map of open proposals follows it.
struct ClusterNode::Pending {
  explicit Pending(Scheduler& scheduler) : wake(scheduler) {}
  ProposalId id;
  Event wake;  // applied, superseded, or stopping
  std::optional<std::vector<Status>> outcomes;
  // A later proposal of this process applied first: under this id it can never apply (ProposalFilter), so it is
  // safe, and necessary, to propose it again under a new sequence.
  bool superseded = false;
};

ClusterNode::ClusterNode(Env env, ClusterNodeOptions options)
    : env_(env), options_(std::move(options)), changed_(env.scheduler), quiet_(env.scheduler) {
  SLUICE_ASSERT(options_.node_id != raft::kNoNode);
  SLUICE_ASSERT(options_.node_id <= static_cast<raft::NodeId>(std::numeric_limits<int32_t>::max()));
  SLUICE_ASSERT_MSG(options_.voters.contains(options_.node_id), "a cluster node is one of the metadata voters");
  SLUICE_ASSERT(!options_.voters.contains(raft::kNoNode));
  SLUICE_ASSERT(!options_.metadata_dir.empty());
  SLUICE_ASSERT(options_.retry_interval > Duration(0));
  SLUICE_ASSERT(options_.register_attempt > Duration(0));
}

ClusterNode::~ClusterNode() {
  stop();
  if (env_.scheduler.in_fiber()) {
    // A node killed during these waits (a crash in a graceful stop) unwinds our fibers first: they are newer than
    // the fiber that started the node, which is the one (or is newer than the one) destroying it. FiberKilled must
    // not leave a destructor.
    try {
      if (registrar_ && !registrar_.done()) env_.scheduler.join(registrar_);
      while (in_flight_ > 0) quiet_.wait();
    } catch (const FiberKilled&) {
      SLUICE_ASSERT(registrar_.done());
    }
  }
  // The host's destructor joins its driver, which applies into this object and sends through the transport: it
  // goes first, before the image, the observers and the transport.
  host_.reset();
}

Status ClusterNode::start() {
  SLUICE_ASSERT_MSG(!started_, "a cluster node starts once");
  SLUICE_ASSERT_MSG(env_.scheduler.in_fiber(), "start opens files: call it from a fiber");
  started_ = true;
  Result<std::unique_ptr<raft::FileGroupStorage>> opened = raft::FileGroupStorage::open(env_.fs, options_.metadata_dir);
  if (!opened.ok()) {
    return Status(opened.status().code(),
                  "cluster metadata in " + options_.metadata_dir + " did not open: " + opened.status().message());
  }
  storage_ = std::move(*opened);

  std::map<raft::NodeId, Address> peers;
  raft::Membership membership;
  for (const auto& [id, address] : options_.voters) {
    membership.voters.push_back(id);
    if (id != options_.node_id) peers.emplace(id, address);
  }
  SLUICE_ASSERT(membership.valid());
  transport_ = std::make_unique<raft::RaftTransport>(
      env_, options_.node_id, options_.raft_address, peers,
      [this](raft::NodeId from, std::vector<raft::Envelope>& batch) {
        if (host_ != nullptr) host_->receive(from, batch);
      },
      options_.transport_options);
  host_ = std::make_unique<raft::RaftHost>(
      env_, options_.node_id, options_.host_options,
      [this](raft::NodeId to, std::vector<raft::Envelope> batch) { transport_->send(to, std::move(batch)); },
      [this](raft::GroupId group, raft::Index first, const raft::Entry& entry) { apply(group, first, entry); });
  metadata_membership_ = membership;
  add_metadata_group();
  // Raised by the Raft from the stored one, and stored (synced) by the host's first round before any message of the
  // group leaves: no entry can name this incarnation unless it is durable, so a later start never reuses it.
  incarnation_ = host_->raft(kMetadataGroup)->hard_state().incarnation;
  SLUICE_ASSERT(incarnation_ >= 1);
  SLUICE_ASSERT(incarnation_ == storage_->hard_state().incarnation + 1);
  if (Status listening = transport_->start(); !listening.ok()) {
    return Status(listening.code(),
                  "cluster transport on " + options_.raft_address.to_string() + ": " + listening.message());
  }
  host_->start();
  registrar_ = env_.scheduler.spawn("cluster-register", [this] { register_loop(); });
  return Status();
}

void ClusterNode::add_metadata_group() {
  raft::GroupHooks hooks;
  hooks.apply_entries = true;
  hooks.on_stopped = [this](const Status&) { poke(); };  // the reconciler may start it again (restart_metadata_group)
  // The metadata is every node's ground truth: it counts only what a quorum has synced, whatever the host's default.
  host_->add_group(kMetadataGroup, metadata_membership_, *storage_, raft::CommitMode::kPersisted, std::move(hooks));
}

bool ClusterNode::metadata_stopped_for_space() const {
  return storage_ == nullptr ? reopen_refused_for_space_ : storage_->stopped_for_space();
}

Status ClusterNode::restart_metadata_group() {
  SLUICE_ASSERT_MSG(env_.scheduler.in_fiber(), "remove_group waits for the driver: call it from a fiber");
  SLUICE_ASSERT(metadata_stopped_for_space());
  host_->remove_group(kMetadataGroup);  // nothing reads the old storage once this returns (unknown ids: a no-op)
  storage_.reset();
  Result<std::unique_ptr<raft::FileGroupStorage>> opened = raft::FileGroupStorage::open(env_.fs, options_.metadata_dir);
  if (!opened.ok()) {
    // Refused for space again: tried again later. Otherwise the node serves what it has until a restart.
    reopen_refused_for_space_ = opened.status().code() == Code::kNoSpace;
    return Status(opened.status().code(),
                  "cluster metadata in " + options_.metadata_dir + " did not open again: " + opened.status().message());
  }
  storage_ = std::move(*opened);
  SLUICE_PROBE("cluster.metadata_group_restarted_after_no_space");
  // The image keeps what it applied: the host applies the log again from its start, and apply() skips that part.
  // Proposal ids keep this process's incarnation, so the filter still knows this node's copies.
  add_metadata_group();
  return Status();
}

void ClusterNode::stop() {
  if (stopping_) return;
  stopping_ = true;
  for (auto& [sequence, pending] : pending_) pending->wake.set();
  changed_.notify_all();
  if (host_ != nullptr) host_->stop();
  if (transport_ != nullptr) transport_->stop();
}

raft::RaftHost& ClusterNode::host() {
  SLUICE_ASSERT_MSG(host_ != nullptr, "the host exists once start() has run");
  return *host_;
}

raft::NodeId ClusterNode::metadata_leader() const {
  if (host_ == nullptr) return raft::kNoNode;
  const raft::Raft* metadata = host_->raft(kMetadataGroup);
  return metadata == nullptr ? raft::kNoNode : metadata->leader();
}

// ---- proposals ----

Result<std::vector<Status>> ClusterNode::propose(const metadata::Batch& batch, Instant deadline) {
  SLUICE_ASSERT_MSG(env_.scheduler.in_fiber(), "propose waits: call it from a fiber");
  SLUICE_ASSERT(!batch.records.empty());
  if (!started_ || stopping_ || host_ == nullptr) return unknown_fate(Code::kClosed, "the cluster node is not running");
  ++stats_.proposals;
  ++in_flight_;
  struct InFlight {
    ClusterNode& node;
    ~InFlight() {
      if (--node.in_flight_ == 0) node.quiet_.notify_all();
    }
  } in_flight{*this};
  const std::string body = metadata::encode_batch(batch);
  auto pending = std::make_shared<Pending>(env_.scheduler);
  std::string payload;
  // Leaves the map whichever way this call ends (an unwound fiber included): nobody waits for it any more.
  struct Forget {
    ClusterNode& node;
    Pending& pending;
    ~Forget() {
      auto it = node.pending_.find(pending.id.sequence);
      if (it != node.pending_.end() && it->second.get() == &pending) node.pending_.erase(it);
    }
  } forget{*this, *pending};
  for (;;) {
    if (pending->id.sequence == 0 || pending->superseded) {
      if (pending->superseded) {
        SLUICE_PROBE("cluster.proposal_reissued");
        ++stats_.reissued;
        pending_.erase(pending->id.sequence);
      }
      pending->id = ProposalId{options_.node_id, incarnation_, next_sequence_++};
      pending->superseded = false;
      SLUICE_ASSERT(!pending_.contains(pending->id.sequence));
      pending_.emplace(pending->id.sequence, pending);
      payload = encode_envelope(pending->id, body);
    }
    // Nothing wakes this fiber between the reset and the wait but the driver, which runs only once it waits.
    pending->wake.reset();
    ++stats_.forwards;
    host_->forward(kMetadataGroup, payload);
    // Without a known leader the forward was dropped: look again after a tick rather than a whole retry interval.
    const Duration pause = metadata_leader() != raft::kNoNode ? options_.retry_interval : options_.host_options.tick;
    pending->wake.wait_until(std::min(deadline, env_.clock.now() + pause));
    if (pending->outcomes) {
      SLUICE_ASSERT(pending->outcomes->size() == batch.records.size());
      return std::move(*pending->outcomes);
    }
    if (stopping_) return unknown_fate(Code::kClosed, "the cluster node stopped first");
    if (env_.clock.now() >= deadline) return unknown_fate(Code::kTimedOut, "not applied by its deadline");
  }
}

// ---- applying ----

void ClusterNode::apply(raft::GroupId group, raft::Index first, const raft::Entry& entry) {
  // Partition groups keep their data in their own logs and never ask the host to apply (GroupHooks::apply_entries
  // false); a group that does is not this node's to interpret.
  if (group != kMetadataGroup) return;
  SLUICE_ASSERT(entry.count >= 1);
  // A restarted metadata group (restart_metadata_group) applies its log again from the start: committed entries
  // never change, so what the image holds is skipped.
  if (first + entry.count - 1 <= image_.applied_index()) {
    SLUICE_ASSERT(first >= 1);
    return;
  }
  // The image's applied index is the raft group's: the entry's last index (metadata entries cover one index, but a
  // node's forward can name any count, and every node must apply it alike).
  apply_metadata(first + entry.count - 1, entry.payload);
  ++version_;
  changed_.notify_all();
}

void ClusterNode::apply_metadata(metadata::Index index, std::string_view payload) {
  SLUICE_ASSERT(index > image_.applied_index());
  if (!is_envelope(payload)) {
    // A leader's no-op, or a batch someone proposed through the host directly: the image decides.
    Result<metadata::Batch> batch =
        payload.empty() ? Result<metadata::Batch>(metadata::Batch{}) : metadata::decode_batch(payload);
    if (!batch.ok()) {
      (void)image_.apply_entry(index, payload);  // refused whole, alike on every node
    } else {
      apply_batch(index, *batch);
    }
    SLUICE_ASSERT(image_.applied_index() == index);
    return;
  }
  Result<ProposalEnvelope> envelope = decode_envelope(payload);
  if (!envelope.ok()) {
    SLUICE_PROBE("cluster.metadata_envelope_undecodable");
    (void)image_.apply_entry(index, {});
    SLUICE_ASSERT(image_.applied_index() == index);
    return;
  }
  const ProposalId& id = envelope->id;
  if (!filter_.admit(id)) {
    // A copy of a proposal that applied, or a straggler behind a later one of its node: nothing applies.
    SLUICE_PROBE("cluster.metadata_copy_refused");
    ++stats_.copies_refused;
    (void)image_.apply_entry(index, {});
    SLUICE_ASSERT(image_.applied_index() == index);
    return;
  }
  Result<metadata::Batch> batch = metadata::decode_batch(envelope->batch);
  std::vector<Status> outcomes;
  if (!batch.ok()) {
    (void)image_.apply_entry(index, envelope->batch);  // refused whole, alike on every node
    outcomes.push_back(batch.status());
  } else {
    outcomes = apply_batch(index, *batch);
  }
  SLUICE_ASSERT(image_.applied_index() == index);
  if (id.node == options_.node_id && id.incarnation == incarnation_) settle_own(id, std::move(outcomes));
}

std::vector<Status> ClusterNode::apply_batch(metadata::Index index, const metadata::Batch& batch) {
  std::vector<Status> outcomes = image_.apply(index, batch);
  SLUICE_ASSERT(outcomes.size() == batch.records.size());
  for (size_t i = 0; i < outcomes.size(); ++i) {
    for (const AppliedCallback& observer : observers_) observer(batch.records[i], outcomes[i]);
  }
  return outcomes;
}

void ClusterNode::settle_own(const ProposalId& id, std::vector<Status> outcomes) {
  SLUICE_ASSERT(id.node == options_.node_id);
  SLUICE_ASSERT(id.incarnation == incarnation_);
  SLUICE_ASSERT(id.sequence < next_sequence_);  // this process issued it
  for (auto it = pending_.begin(); it != pending_.end() && it->first <= id.sequence; ++it) {
    Pending& pending = *it->second;
    // Settled earlier in this round, its fiber not yet run: its own copies are refused by the filter from now on.
    if (pending.outcomes.has_value()) {
      SLUICE_ASSERT(it->first < id.sequence);
      continue;
    }
    if (it->first == id.sequence) {
      SLUICE_ASSERT(pending.id == id);
      pending.outcomes = std::move(outcomes);
    } else {
      pending.superseded = true;  // below an admitted id of its node: never admitted under its current sequence
    }
    pending.wake.set();
  }
  // The caller erases its entry when it wakes; until then a second copy of `id` is refused by the filter and never
  // gets here.
  SLUICE_ASSERT(filter_.last(options_.node_id) == std::make_pair(incarnation_, id.sequence));
}

// ---- registration and observers ----

metadata::RegisterBroker ClusterNode::registration() const {
  return metadata::RegisterBroker{.node_id = static_cast<int32_t>(options_.node_id),
                                  .host = options_.host,
                                  .port = options_.port,
                                  .rack = options_.rack,
                                  .incarnation = incarnation_};
}

bool ClusterNode::registered() const {
  if (incarnation_ == 0) return false;
  const metadata::BrokerRegistration* broker = image_.broker(static_cast<int32_t>(options_.node_id));
  const metadata::RegisterBroker want = registration();
  return broker != nullptr && broker->incarnation == want.incarnation && broker->host == want.host &&
         broker->port == want.port && broker->rack == want.rack;
}

void ClusterNode::register_loop() {
  while (!stopping_ && !registered()) {
    const Result<std::vector<Status>> outcome =
        propose(metadata::Batch{{registration()}}, env_.clock.now() + options_.register_attempt);
    if (stopping_) return;
    if (!outcome.ok()) {
      env_.log.warn("node {}: broker registration not applied yet ({}); trying again", options_.node_id,
                    outcome.status().message());
      continue;
    }
    SLUICE_ASSERT(outcome->size() == 1);
    if (!outcome->front().ok()) {
      // Refused: an invalid endpoint, or a higher incarnation already registered (this node's hard state went back,
      // say restored from an old copy). Retrying cannot help; the operator must look.
      env_.log.error("node {}: broker registration refused: {}", options_.node_id, outcome->front().message());
      return;
    }
    SLUICE_ASSERT(registered());
    env_.log.info("node {}: registered as broker {}:{} (incarnation {})", options_.node_id, options_.host,
                  options_.port, incarnation_);
  }
}

void ClusterNode::on_applied(AppliedCallback callback) {
  SLUICE_ASSERT(callback != nullptr);
  observers_.push_back(std::move(callback));
}

bool ClusterNode::wait_for_change(uint64_t seen, Instant deadline) {
  const uint64_t pokes = pokes_;
  while (version_ <= seen && pokes_ == pokes && !stopping_) {
    if (!changed_.wait_until(deadline)) break;
  }
  return version_ > seen;
}

void ClusterNode::poke() {
  ++pokes_;
  changed_.notify_all();
}

bool ClusterNode::wait_applied(metadata::Index index, Instant deadline) {
  while (image_.applied_index() < index && !stopping_) {
    if (!changed_.wait_until(deadline)) break;
  }
  return image_.applied_index() >= index;
}

}  // namespace sluice::cluster
