// ProduceForwarder: cluster mode's follower forwarding (issue 22 step 4). A Produce that reaches a node that is not
// the leader of some of its partitions has those partitions sent on, as one Produce per leader node, to the
// leader's registered Kafka endpoint (image().broker(id)); the leader's per-partition answers become this node's
// (handlers/produce.cc merges them). One core/client connection per leader node, opened on first use and again
// after it breaks; requests to one leader pipeline on it.
//
// Loop guard: the forwarder's client id is "sluice-forward/<node id>" (kForwardedClientIdPrefix). A node that
// receives a Produce with such a client id never forwards it again: where it does not lead, it answers
// NOT_LEADER_OR_FOLLOWER, and the forwarding node passes that on. So a request crosses at most one hop, even when
// leadership moves while it is in flight.
//
// Fibers: forward() from the handlers' fibers (it parks until the answer, bounded by its deadline); close() from
// any fiber, after which forward() fails at once.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>

#include "core/base/result.h"
#include "core/client/connection.h"
#include "core/env/env.h"
#include "core/env/network.h"
#include "core/protocol/header.h"
#include "core/protocol/messages/produce.h"

namespace sluice::kafka {

inline constexpr std::string_view kForwardedClientIdPrefix = "sluice-forward/";

// The request came from another node's forwarder: never forward it again.
bool is_forwarded(const protocol::RequestHeader& header);

class ProduceForwarder {
 public:
  ProduceForwarder(Env env, int32_t node_id);
  ~ProduceForwarder();
  ProduceForwarder(const ProduceForwarder&) = delete;
  ProduceForwarder& operator=(const ProduceForwarder&) = delete;

  // Sends `request` to node `leader` at `address`, and parks until `deadline` at the latest. acks != 0: the
  // leader's answer. acks=0: an empty response once the request is written (the leader sends no answer).
  // Errors: Code::kConnectionRefused when nothing was written (client::not_sent: the leader has not seen it),
  // kTimedOut / kConnectionReset / kClosed / kCorruption when the request may have reached the leader.
  Result<protocol::ProduceResponse> forward(int32_t leader, const Address& address,
                                            const protocol::ProduceRequest& request, Instant deadline);
  // Closes every connection (their reader fibers end); later forwards fail. Idempotent.
  void close();

  uint64_t forwarded() const { return forwarded_; }  // requests written to a leader

  // An injected fault, never set in the real world: the simulator's `drop-acks0-forwards` (sim/faults/fault.h).
  // While set, an acks=0 produce this node should forward is dropped instead, as KubeMQ's broker does, so that a
  // scenario can measure what that behaviour costs (the mutation follower-drops-acks0 plants it as a bug instead).
  void set_drop_acks0(bool drop) { drop_acks0_ = drop; }
  bool drops_acks0() const { return drop_acks0_; }

 private:
  Result<std::shared_ptr<client::detail::Connection>> connection(int32_t leader, const Address& address,
                                                                 Duration timeout);

  Env env_;
  std::string client_id_;
  std::map<int32_t, std::shared_ptr<client::detail::Connection>> connections_;  // by leader node id
  bool closed_ = false;
  bool drop_acks0_ = false;
  uint64_t forwarded_ = 0;
};

}  // namespace sluice::kafka
