// ClusterNode: what makes a node a member of the cluster's metadata. It runs the node's raft machinery (the
// RaftTransport, one connection per peer, and the RaftHost that will also drive every partition group of the node),
// keeps the metadata group (group 0) in files under the metadata directory, applies its committed entries to a
// MetadataImage, lets any fiber of the node propose metadata records wherever the leader is, and registers the
// node's Kafka endpoint.
//
// Proposals from any node. Only the metadata group's leader appends; a node that does not lead forwards its
// proposal there (raft's kPropose, etcd's MsgProp) and learns the outcome when its own entry is applied on this
// node, which it recognises by the envelope's id (proposal_envelope.h). When the entry is not applied within
// `retry_interval` it is forwarded again, to whichever node leads by then; the envelope rule applies only its first
// copy, so a proposal applies at most once, and its caller gets the outcome of that one application (say
// TOPIC_ALREADY_EXISTS) or, at its deadline, an unknown fate (REQUEST_TIMED_OUT: it may still apply later).
//
// Registration: once started, a fiber proposes RegisterBroker (this node's endpoint, incarnation = the metadata
// group's hard-state incarnation, raised at every start) until it is applied. registered() tells.
//
// Observers: image() is the applied state; on_applied callbacks hear every applied record with its outcome (on the
// raft driver: they must not block), and version()/wait_for_change let a fiber (the broker's partition reconciler)
// sleep until the image changes.
//
// Fibers: start(), propose() and the waits from fibers of this node; stop() from anywhere of this node. The node
// must outlive the fibers that call it; its destructor stops it and, from a fiber, waits for its own fibers.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/base/result.h"
#include "core/cluster/metadata/image.h"
#include "core/cluster/metadata/records.h"
#include "core/cluster/proposal_envelope.h"
#include "core/cluster/raft_groups.h"
#include "core/env/env.h"
#include "core/env/sync.h"
#include "core/raft/host.h"
#include "core/raft/transport.h"

namespace sluice::raft {
class FileGroupStorage;
}

namespace sluice::cluster {

struct ClusterNodeOptions {
  // This node's id: raft's node id and the Kafka broker id alike, so 1..INT32_MAX (raft's 0 means "none").
  raft::NodeId node_id = raft::kNoNode;
  Address raft_address;                    // where this node's transport listens
  std::map<raft::NodeId, Address> voters;  // every voter of the metadata group and its raft address, this node's too
  std::string metadata_dir;                // e.g. <data_dir>/__cluster_metadata
  // The Kafka endpoint this node registers.
  std::string host;
  int32_t port = 0;
  std::optional<std::string> rack;
  raft::HostOptions host_options;
  raft::TransportOptions transport_options;
  // A proposal not applied within this is forwarded again (to the leader known by then). Shorter than an election,
  // so that a lost forward costs little; a duplicate costs an entry that applies as empty.
  Duration retry_interval = std::chrono::milliseconds(500);
  // Each registration attempt's deadline; the fiber tries again after an unknown fate.
  Duration register_attempt = std::chrono::seconds(10);
};

class ClusterNode {
 public:
  // Called on the raft driver after each applied record, in log order: must not block, wait or call propose.
  using AppliedCallback = std::function<void(const metadata::Record& record, const Status& outcome)>;

  ClusterNode(Env env, ClusterNodeOptions options);
  ~ClusterNode();
  ClusterNode(const ClusterNode&) = delete;
  ClusterNode& operator=(const ClusterNode&) = delete;

  // Opens the metadata group's storage, starts the transport and the host (the host replays the metadata log from
  // index 1 into image()), and spawns the registration fiber. From a fiber, once. Errors: the storage does not open
  // (the message names the directory) or the transport cannot listen.
  Status start();
  // Ends registration, answers waiting proposals with an unknown fate, stops the host and the transport.
  // Idempotent; never blocks (the destructor joins what it started).
  void stop();

  // The node's raft host: the partition layer adds its groups to it (add_group works while it runs).
  raft::RaftHost& host();
  raft::NodeId node_id() const { return options_.node_id; }
  // The metadata group's hard-state incarnation in this process (0 before start).
  uint64_t incarnation() const { return incarnation_; }

  // Proposes `batch` (non-empty) from any node and waits for it to be applied here: each record's outcome, in
  // order (ok, or the refusal its proposer answers with: TOPIC_ALREADY_EXISTS...). When its fate is unknown at
  // `deadline` (or the node stops first): REQUEST_TIMED_OUT, with kTimedOut (kClosed when stopping); it may still
  // apply later, once at most.
  Result<std::vector<Status>> propose(const metadata::Batch& batch, Instant deadline);

  // This process's registration is applied: the image holds this node's endpoint at this incarnation.
  bool registered() const;
  const metadata::MetadataImage& image() const { return image_; }
  // The metadata leader this node knows, or kNoNode.
  raft::NodeId metadata_leader() const;

  void on_applied(AppliedCallback callback);
  // Counts the applied metadata entries (empty and refused ones too): it moves whenever image() may have.
  uint64_t version() const { return version_; }
  // The metadata group stopped because the disk refused space (raft::FileGroupStorage::stopped_for_space).
  bool metadata_stopped_for_space() const;
  // Takes that group out of the host and adds it again on its directory opened again, as a restart of the node
  // would; a disk still full stops it again. From a fiber of the node. REQUIRES: metadata_stopped_for_space().
  Status restart_metadata_group();
  // Waits until version() > seen; false at the deadline, when the node stops, or when poke() is called.
  bool wait_for_change(uint64_t seen, Instant deadline);
  // Ends the waits of wait_for_change early (something besides the image wants a look: a raft group stopped).
  // Never suspends.
  void poke();
  // Waits until the image has applied `index`; false at the deadline or when the node stops.
  bool wait_applied(metadata::Index index, Instant deadline);

  struct Stats {
    uint64_t proposals = 0;       // propose() calls
    uint64_t forwards = 0;        // entries handed to the host (first tries, retries and re-issues)
    uint64_t reissued = 0;        // proposals given a new sequence (a later one of theirs applied first)
    uint64_t copies_refused = 0;  // envelopes the filter refused (copies and stragglers of any node)
  };
  const Stats& stats() const { return stats_; }

 private:
  struct Pending;

  void apply(raft::GroupId group, raft::Index first, const raft::Entry& entry);
  void apply_metadata(metadata::Index index, std::string_view payload);
  // The batch's records applied at `index`, observers told; the outcomes.
  std::vector<Status> apply_batch(metadata::Index index, const metadata::Batch& batch);
  void settle_own(const ProposalId& id, std::vector<Status> outcomes);
  void register_loop();
  void add_metadata_group();  // to the host, on storage_
  metadata::RegisterBroker registration() const;

  Env env_;
  ClusterNodeOptions options_;
  std::unique_ptr<raft::FileGroupStorage> storage_;
  raft::Membership metadata_membership_;
  bool reopen_refused_for_space_ = false;  // restart_metadata_group could not open the directory again: no space
  std::unique_ptr<raft::RaftTransport> transport_;
  std::unique_ptr<raft::RaftHost> host_;  // after the transport: destroyed first (its driver sends through it)
  metadata::MetadataImage image_;
  ProposalFilter filter_;
  uint64_t incarnation_ = 0;
  uint64_t next_sequence_ = 1;
  std::map<uint64_t, std::shared_ptr<Pending>> pending_;  // this process's open proposals, by current sequence
  std::vector<AppliedCallback> observers_;
  uint64_t version_ = 0;
  uint64_t pokes_ = 0;
  WaitQueue changed_;
  FiberRef registrar_;
  size_t in_flight_ = 0;  // propose() calls under way
  WaitQueue quiet_;       // notified when in_flight_ drops to 0
  bool started_ = false;
  bool stopping_ = false;
  Stats stats_;
};

}  // namespace sluice::cluster
