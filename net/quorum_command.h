// `sluice metadata-quorum --bootstrap-server HOST:PORT describe --status | --replication`: the cluster metadata
// quorum as kafka-metadata-quorum.sh shows it, asked over the Kafka protocol (DescribeQuorum) on the real Env.
#pragma once

#include <string>

namespace sluice {

struct QuorumCommandOptions {
  std::string bootstrap_server;  // HOST:PORT of any node
  bool status = false;
  bool replication = false;
  bool human_readable = false;  // --replication's timestamps as "N ms ago"
};

int run_metadata_quorum_describe(const QuorumCommandOptions& options);

}  // namespace sluice
