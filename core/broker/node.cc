#include "core/broker/node.h"

#include <memory>
#include <utility>
#include <vector>

namespace sluice::broker {
namespace {

// At most this many names of the data directory go into the start-up line.
constexpr size_t kListedEntriesMax = 20;

}  // namespace

bool is_any_address(const std::string& host) { return host == "0.0.0.0" || host == "::"; }

Node::Node(Env env, NodeOptions options) : env_(env), options_(std::move(options)) {}

void Node::log_start_up(const std::vector<DirEntry>& entries) {
  if (!options_.settings.empty()) {
    std::string text;
    for (const auto& [key, value] : options_.settings) text += (text.empty() ? "" : ", ") + key + "=" + value;
    env_.log.info("settings: {}", text);
  }
  if (entries.empty()) {
    env_.log.info("data directory {} is empty", options_.data_dir);
    return;
  }
  std::string names;
  for (size_t i = 0; i < entries.size() && i < kListedEntriesMax; ++i) {
    if (i > 0) names += ", ";
    names += entries[i].name + (entries[i].is_directory ? "/" : "");
  }
  if (entries.size() > kListedEntriesMax) names += ", ...";
  env_.log.info("data directory {} holds {} entries: {}", options_.data_dir, entries.size(), names);
}

Address Node::advertised_address(const Address& bound) {
  if (options_.advertised) return *options_.advertised;
  if (is_any_address(bound.host)) {
    env_.log.warn(
        "listening on every interface ({}): clients will be told to connect to {}, which only works "
        "from this host; pass --advertised HOST:PORT (or advertised.listeners=PLAINTEXT://HOST:PORT) "
        "with an address clients can reach",
        bound.to_string(), bound.to_string());
  }
  return bound;
}

Status Node::run(const OnServing& on_serving) {
  SLUICE_ASSERT(broker_ == nullptr);
  const std::string& dir = options_.data_dir;
  if (Status s = env_.fs.create_dirs(dir); !s.ok()) {
    return Status(s.code(), "cannot create data directory " + dir + ": " + s.to_string());
  }
  Result<std::vector<DirEntry>> entries = env_.fs.list(dir);
  if (!entries.ok()) {
    return Status(entries.status().code(), "cannot read data directory " + dir + ": " + entries.status().to_string());
  }
  log_start_up(*entries);
  Result<std::unique_ptr<Listener>> listener = env_.net.listen(options_.listen);
  if (!listener.ok()) {
    return Status(listener.status().code(),
                  "cannot listen on " + options_.listen.to_string() + ": " + listener.status().to_string());
  }
  const Address bound = (*listener)->address();
  const Address advertised = advertised_address(bound);
  kafka::BrokerConfig config = options_.broker;
  config.advertised_host = advertised.host;
  config.advertised_port = advertised.port;
  Result<std::unique_ptr<kafka::Broker>> broker = kafka::Broker::open(env_, dir, std::move(config), options_.effects);
  if (!broker.ok()) {
    return Status(broker.status().code(), "cannot open the data directory " + dir + ": " + broker.status().to_string());
  }
  if (Status joined = (*broker)->join_cluster(); !joined.ok()) {
    (*listener)->close();
    if (Status closed = (*broker)->close(); !closed.ok()) env_.log.warn("closing the logs: {}", closed.to_string());
    return Status(joined.code(), "cannot join the cluster: " + joined.message());
  }
  env_.log.info("listening on {}, advertised as {}", bound.to_string(), advertised.to_string());
  broker_ = broker->get();
  if (on_serving) on_serving(**broker, bound);
  if (stopping_) (*broker)->stop();  // a stop during start-up
  (*broker)->serve(**listener);
  broker_ = nullptr;
  (*listener)->close();
  if (Status closed = (*broker)->close(); !closed.ok()) {
    return Status(closed.code(), "closing the logs: " + closed.to_string());
  }
  env_.log.info("stopped");
  return Status::ok_status();
}

void Node::stop() {
  stopping_ = true;
  if (broker_ != nullptr) broker_->stop();
}

}  // namespace sluice::broker
