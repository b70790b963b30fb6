// Env: everything the core may use of the world, handed to each component at construction. There is no global
// Env, so simulated nodes cannot share state by accident. The real world builds one from net/ (RealEnv), the
// simulator one per node from sim/ (SimNode).
#pragma once

#include "core/base/log.h"
#include "core/env/clock.h"
#include "core/env/file_system.h"
#include "core/env/network.h"
#include "core/env/random.h"
#include "core/env/scheduler.h"

namespace sluice {

class Buggify;  // core/env/buggify.h: include it where a site is

struct Env {
  Clock& clock;
  FileSystem& fs;
  Network& net;
  Random& random;
  Scheduler& scheduler;
  Logger& log;
  // Fault points that fire only in simulation runs that enable them (core/env/buggify.h); off in the real world.
  Buggify& buggify;
};

}  // namespace sluice
