// The single table of served APIs: key → handler. ApiVersions advertises exactly these keys (with the ranges of
// protocol/api_table.h), so an API is advertised only once it has a handler.
#pragma once

#include <span>

#include "core/kafka/handler.h"
#include "core/protocol/api_table.h"

namespace sluice::kafka {

struct HandlerEntry {
  protocol::ApiKey key;
  Handler handler;
};

std::span<const HandlerEntry> handler_table();
// nullptr for an API without a handler.
const HandlerEntry* find_handler(int16_t key);

}  // namespace sluice::kafka
