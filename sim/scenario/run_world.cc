#include "sim/scenario/run_world.h"

#include <fmt/format.h>

#include "core/base/assert.h"
#include "core/kafka/cluster_topics.h"
#include "sim/scenario/scenario.h"

namespace sluice::sim {
namespace {

// Records the broker's declared effects in the history, stamped with virtual time and the node.
class EffectRecorder final : public storage::EffectSink {
 public:
  EffectRecorder(History& history, SimWorld& world, std::string node)
      : history_(history), world_(world), node_(std::move(node)) {}
  void record(const storage::LogEffect& effect) override { history_.effect({world_.now(), node_, effect}); }

 private:
  History& history_;
  SimWorld& world_;
  std::string node_;
};

}  // namespace

struct RunWorld::Broker {
  SimNode* node = nullptr;
  broker::Node* running = nullptr;  // while its main fiber runs Node::run
  kafka::Broker* broker = nullptr;  // while serving
  bool stopping = false;            // a graceful stop was asked and Node::run has not returned yet
  bool boot_when_down = false;      // asked to come up while still stopping
  bool drop_acks0_forwards = false;  // the injected fault, applied again to each boot's broker
  std::unique_ptr<EffectRecorder> effects;
};

RunWorld::RunWorld(uint64_t seed, LogLevel level, History& history, broker::NodeOptions options, int brokers,
                   bool buggify)
    : history_(history),
      options_(std::move(options)),
      cluster_(seed, level),
      buggify_(buggify),
      buggify_seed_(buggify_run_seed(seed)) {
  SLUICE_ASSERT(brokers >= 1);
  for (int i = 0; i < brokers; ++i) {
    auto b = std::make_unique<Broker>();
    b->node = &cluster_.add_node();
    if (buggify_) b->node->enable_buggify(buggify_seed_);
    b->effects = std::make_unique<EffectRecorder>(history_, cluster_.world(), b->node->name());
    brokers_.push_back(std::move(b));
  }
  for (auto& b : brokers_) bring_up(*b->node);
}

// The cluster's destructor unwinds every fiber (brokers' included) while the broker records still exist.
RunWorld::~RunWorld() {
  for (SimNode* node : broker_nodes()) {
    if (node->up()) node->crash();
  }
}

SimNode* RunWorld::broker_node(const std::string& name) {
  for (auto& b : brokers_) {
    if (b->node->name() == name) return b->node;
  }
  return nullptr;
}

std::vector<SimNode*> RunWorld::broker_nodes() {
  std::vector<SimNode*> nodes;
  for (auto& b : brokers_) nodes.push_back(b->node);
  return nodes;
}

kafka::Broker* RunWorld::broker(size_t index) const { return brokers_.at(index)->broker; }

SimNode& RunWorld::add_client(const std::string& name) {
  SimNode& node = cluster_.add_node(name);
  if (buggify_) node.enable_buggify(buggify_seed_);
  clients_.push_back(&node);
  return node;
}

std::vector<Address> RunWorld::bootstrap() const {
  std::vector<Address> addresses;
  for (const auto& b : brokers_) addresses.push_back(Address{b->node->name(), kBrokerPort});
  return addresses;
}

bool RunWorld::all_serving() const {
  for (const auto& b : brokers_) {
    if (b->broker == nullptr) return false;
  }
  return true;
}

SimNode::Main RunWorld::main_for(Broker& b) {
  return [this, &b](Env env) {
    broker::NodeOptions options = options_;
    options.listen = Address{b.node->name(), kBrokerPort};
    options.effects = b.effects.get();
    if (brokers_.size() > 1) {
      for (size_t i = 0; i < brokers_.size(); ++i) {
        const auto id = static_cast<int32_t>(i + 1);
        options.broker.controller_quorum_voters[id] = Address{brokers_[i]->node->name(), kRaftPort};
        if (brokers_[i].get() == &b) options.broker.node_id = id;
      }
    }
    broker::Node node(env, std::move(options));
    // Forgets the node however the fiber ends: a crash unwinds it from any wait point.
    struct Forget {
      Broker& b;
      ~Forget() {
        b.running = nullptr;
        b.broker = nullptr;
        b.stopping = false;
      }
    } forget{b};
    b.running = &node;
    const Status run = node.run([this, &b](kafka::Broker& serving, const Address&) {
      b.broker = &serving;
      if (serving.cluster() != nullptr) serving.cluster()->forwarder().set_drop_acks0(b.drop_acks0_forwards);
      history_.world({WorldEvent::Kind::kServing, world().now(), b.node->name(), "", 0});
      // A partition that did not load is judged as a refused boot was (Simulation::expectations).
      for (const storage::TopicPartition& tp : serving.partitions().offline_partitions()) {
        const storage::LogManager::OfflinePartition* offline = serving.partitions().offline(tp);
        history_.world({WorldEvent::Kind::kPartitionOffline, world().now(), b.node->name(),
                        offline->reason.message(), 0});
      }
    });
    b.broker = nullptr;
    b.stopping = false;
    if (run.ok()) {
      history_.world({WorldEvent::Kind::kDown, world().now(), b.node->name(), "stopped gracefully", 0});
    } else {
      ++boot_failures_;
      history_.world({WorldEvent::Kind::kBootFailed, world().now(), b.node->name(), run.message(), 0});
    }
    // The node's last fiber ends here; mark it down from outside any fiber, so that it can boot again.
    world().schedule_after(Duration(0), kWorldNode, EventKind::kControl, [this, &b] {
      if (b.node->up()) b.node->crash();
      if (b.boot_when_down) {
        b.boot_when_down = false;
        bring_up(*b.node);
      }
    });
  };
}

void RunWorld::take_down(SimNode& node, bool power_loss) { take_node_down(history_, world().now(), node, power_loss); }

void RunWorld::stop_gracefully(SimNode& node) {
  for (auto& b : brokers_) {
    if (b->node != &node) continue;
    if (b->running != nullptr) {
      b->stopping = true;
      b->running->stop();
    } else if (node.up()) {
      take_down(node, false);
    }
  }
}

void RunWorld::bring_up(SimNode& node) {
  for (auto& b : brokers_) {
    if (b->node != &node) continue;
    if (node.up()) {
      if (b->stopping) b->boot_when_down = true;  // boot once the stop completes
      continue;
    }
    history_.world({WorldEvent::Kind::kBoot, world().now(), node.name(), fmt::format("boot {}", node.boots() + 1), 0});
    node.boot(main_for(*b));
  }
}

bool RunWorld::set_drop_acks0_forwards(SimNode& node, bool drop) {
  if (brokers_.size() < 2) return false;  // a single broker leads every partition: nothing is forwarded
  for (auto& b : brokers_) {
    if (b->node != &node) continue;
    b->drop_acks0_forwards = drop;
    if (b->broker != nullptr && b->broker->cluster() != nullptr) b->broker->cluster()->forwarder().set_drop_acks0(drop);
    return true;
  }
  return false;
}

}  // namespace sluice::sim
