// BuggifyNetwork: a Network that hands out streams whose reads and writes BUGGIFY may cut, as TCP may: a read_some
// that returns a short prefix of what it could (site "stream.short-read"), a write that reaches the peer in two
// pieces with a pause between, as a real write_all blocked on a full socket buffer does ("stream.split-write").
// Both stay within the Stream contract (network.h), so every reader's loop and every writer's framing is exercised.
// The simulator puts it in a node's Env when BUGGIFY is on; the real world never does.
#pragma once

#include <memory>

#include "core/env/buggify.h"
#include "core/env/network.h"
#include "core/env/scheduler.h"

namespace sluice {

class BuggifyNetwork final : public Network {
 public:
  // All three outlive this network and the streams it hands out.
  BuggifyNetwork(Network& inner, Buggify& buggify, Scheduler& scheduler)
      : inner_(inner), buggify_(buggify), scheduler_(scheduler) {}

  Result<std::unique_ptr<Listener>> listen(const Address& address) override;
  Result<std::unique_ptr<Stream>> connect(const Address& address) override;

  // `stream` wrapped so that BUGGIFY may cut its reads and writes.
  static std::unique_ptr<Stream> wrap(std::unique_ptr<Stream> stream, Buggify& buggify, Scheduler& scheduler);

 private:
  Network& inner_;
  Buggify& buggify_;
  Scheduler& scheduler_;
};

}  // namespace sluice
