// OffsetFetch (key 9), v0-9; v6+ flexible. Schema: apache/kafka 3.9 OffsetFetchRequest.json /
// OffsetFetchResponse.json. v0-7 ask for one group (null Topics from v2: every partition it has committed); v8
// (KIP-709) batches groups, each with its own topics and error code; v9 adds each group's member id and epoch, which
// only KIP-848 groups check. Offset -1 means nothing committed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "core/protocol/api_table.h"
#include "core/protocol/message.h"
#include "core/protocol/serde.h"

namespace sluice::protocol {

struct OffsetFetchRequest {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetFetch;
  static constexpr MessageVersions kVersions{0, 9};

  struct Topic {
    std::string name;
    std::vector<int32_t> partition_indexes;

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("partition_indexes", partition_indexes);
    }
  };

  struct Group {
    std::string group_id;
    std::optional<std::string> member_id;      // v9+, nullable
    int32_t member_epoch = -1;                 // v9+
    std::optional<std::vector<Topic>> topics;  // nullable: every committed partition

    template <class Io>
    void serde(Io& io) {
      io.field("group_id", group_id);
      io.field("member_id", member_id, {.since = 9, .nullable_from = 9});
      io.field("member_epoch", member_epoch, {.since = 9});
      io.field("topics", topics, {.nullable_from = 8});
    }
  };

  std::string group_id;                                             // v0-7
  std::optional<std::vector<Topic>> topics = std::vector<Topic>{};  // v0-7, nullable v2-7
  std::vector<Group> groups;                                        // v8+
  bool require_stable = false;                                      // v7+

  template <class Io>
  void serde(Io& io) {
    io.field("group_id", group_id, {.until = 7});
    io.field("topics", topics, {.until = 7, .nullable_from = 2});
    io.field("groups", groups, {.since = 8});
    io.field("require_stable", require_stable, {.since = 7});
  }
};

struct OffsetFetchResponse {
  static constexpr ApiKey kApiKey = ApiKey::kOffsetFetch;
  static constexpr MessageVersions kVersions{0, 9};

  struct Partition {
    int32_t partition_index = 0;
    int64_t committed_offset = -1;
    int32_t committed_leader_epoch = -1;   // v5+ (always in Groups)
    std::optional<std::string> metadata;  // nullable
    int16_t error_code = 0;

    template <class Io>
    void serde(Io& io) {
      io.field("partition_index", partition_index);
      io.field("committed_offset", committed_offset);
      io.field("committed_leader_epoch", committed_leader_epoch, {.since = 5});
      io.field("metadata", metadata, {.nullable_from = 0});
      io.field("error_code", error_code);
    }
  };

  struct Topic {
    std::string name;
    std::vector<Partition> partitions;

    template <class Io>
    void serde(Io& io) {
      io.field("name", name);
      io.field("partitions", partitions);
    }
  };

  struct Group {
    std::string group_id;
    std::vector<Topic> topics;
    int16_t error_code = 0;

    template <class Io>
    void serde(Io& io) {
      io.field("group_id", group_id);
      io.field("topics", topics);
      io.field("error_code", error_code);
    }
  };

  int32_t throttle_time_ms = 0;  // v3+
  std::vector<Topic> topics;     // v0-7
  int16_t error_code = 0;        // v2-7
  std::vector<Group> groups;     // v8+

  template <class Io>
  void serde(Io& io) {
    io.field("throttle_time_ms", throttle_time_ms, {.since = 3});
    io.field("topics", topics, {.until = 7});
    io.field("error_code", error_code, {.since = 2, .until = 7});
    io.field("groups", groups, {.since = 8});
  }
};

}  // namespace sluice::protocol
