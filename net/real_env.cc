#include "net/real_env.h"

#include <random>

#include "core/base/assert.h"

namespace sluice {
namespace {

uint64_t os_seed() {
  std::random_device device;
  return (static_cast<uint64_t>(device()) << 32) ^ static_cast<uint64_t>(device());
}

}  // namespace

RealEnv::RealEnv(std::string name, LogLevel level)
    : fs_(loop_),
      net_(loop_),
      random_(os_seed()),
      logger_(std::move(name), level),
      env_{loop_.clock(), fs_, net_, random_, loop_.scheduler(), logger_, buggify_} {}

RealEnv::~RealEnv() { loop_.scheduler().kill_all(); }

int RealEnv::run(std::function<void(Env&)> main_fiber) {
  SLUICE_ASSERT(main_fiber != nullptr);
  SLUICE_ASSERT(!loop_.running());
  FiberRef main = loop_.scheduler().spawn("main", [this, body = std::move(main_fiber)] { body(env_); });
  const bool finished = loop_.run_until([&main] { return main.done(); });
  loop_.scheduler().kill_all();
  SLUICE_ASSERT(loop_.scheduler().live_fibers() == 0);
  return finished ? 0 : 1;
}

}  // namespace sluice
