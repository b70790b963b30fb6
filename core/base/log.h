// Logger: a thin wrapper over spdlog. Only log.cc includes spdlog, so the heavy header stays in one translation
// unit. There is no global logger: every component gets one through its Env. In simulation the prefix callback
// stamps each line with virtual time and the node id.
#pragma once

#include <fmt/core.h>

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

namespace sluice {

enum class LogLevel { kTrace, kDebug, kInfo, kWarn, kError, kOff };

std::optional<LogLevel> parse_log_level(std::string_view text);  // "trace" ... "off"
std::string_view log_level_name(LogLevel level);

class Logger {
 public:
  using Prefix = std::function<std::string()>;
  using Capture = std::function<void(LogLevel, std::string_view line)>;

  // `name` names the node or process ("n1", "serve"). When `prefix` is set it is called for every line and its
  // result replaces the wall-clock timestamp (the simulator passes virtual time and node id).
  Logger(std::string name, LogLevel level, Prefix prefix = {});
  ~Logger();
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;

  bool enabled(LogLevel level) const { return level >= level_ && level_ != LogLevel::kOff; }
  LogLevel level() const { return level_; }
  void set_level(LogLevel level);
  const std::string& name() const { return name_; }

  // Tests capture lines instead of printing them. The capture sees every enabled line.
  void set_capture(Capture capture) { capture_ = std::move(capture); }

  void write(LogLevel level, std::string_view message);

  template <typename... Args>
  void trace(fmt::format_string<Args...> f, Args&&... args) {
    log(LogLevel::kTrace, f, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void debug(fmt::format_string<Args...> f, Args&&... args) {
    log(LogLevel::kDebug, f, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void info(fmt::format_string<Args...> f, Args&&... args) {
    log(LogLevel::kInfo, f, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void warn(fmt::format_string<Args...> f, Args&&... args) {
    log(LogLevel::kWarn, f, std::forward<Args>(args)...);
  }
  template <typename... Args>
  void error(fmt::format_string<Args...> f, Args&&... args) {
    log(LogLevel::kError, f, std::forward<Args>(args)...);
  }

 private:
  template <typename... Args>
  void log(LogLevel level, fmt::format_string<Args...> f, Args&&... args) {
    if (enabled(level)) write(level, fmt::format(f, std::forward<Args>(args)...));
  }

  struct Impl;
  std::string name_;
  LogLevel level_;
  Prefix prefix_;
  Capture capture_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace sluice
