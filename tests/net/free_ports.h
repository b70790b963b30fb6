// free_ports: loopback ports for tests that run several real nodes in one process.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "core/env/env.h"
#include "core/env/network.h"

namespace sluice::net_test {

// Loopback ports that were free a moment ago (the kernel picks them).
inline std::vector<uint16_t> free_ports(Env& env, size_t count) {
  std::vector<std::unique_ptr<Listener>> held;
  std::vector<uint16_t> ports;
  for (size_t i = 0; i < count; ++i) {
    auto listener = env.net.listen(Address{"127.0.0.1", 0});
    EXPECT_TRUE(listener.ok());
    if (!listener.ok()) return ports;
    ports.push_back((*listener)->address().port);
    held.push_back(std::move(*listener));
  }
  for (auto& l : held) l->close();
  return ports;
}

}  // namespace sluice::net_test
