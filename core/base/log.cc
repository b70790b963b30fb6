#include "core/base/log.h"

#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "core/base/assert.h"

namespace sluice {
namespace {

spdlog::level::level_enum to_spdlog(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return spdlog::level::trace;
    case LogLevel::kDebug: return spdlog::level::debug;
    case LogLevel::kInfo: return spdlog::level::info;
    case LogLevel::kWarn: return spdlog::level::warn;
    case LogLevel::kError: return spdlog::level::err;
    case LogLevel::kOff: return spdlog::level::off;
  }
  SLUICE_UNREACHABLE();
}

// One stderr sink shared by every Logger; spdlog's _mt sink serialises the file-worker threads' lines too.
std::shared_ptr<spdlog::sinks::sink> shared_stderr_sink() {
  static std::shared_ptr<spdlog::sinks::sink> sink = std::make_shared<spdlog::sinks::stderr_color_sink_mt>();
  return sink;
}

}  // namespace

struct Logger::Impl {
  spdlog::logger logger;
};

std::optional<LogLevel> parse_log_level(std::string_view text) {
  if (text == "trace") return LogLevel::kTrace;
  if (text == "debug") return LogLevel::kDebug;
  if (text == "info") return LogLevel::kInfo;
  if (text == "warn" || text == "warning") return LogLevel::kWarn;
  if (text == "error") return LogLevel::kError;
  if (text == "off") return LogLevel::kOff;
  return std::nullopt;
}

std::string_view log_level_name(LogLevel level) {
  switch (level) {
    case LogLevel::kTrace: return "trace";
    case LogLevel::kDebug: return "debug";
    case LogLevel::kInfo: return "info";
    case LogLevel::kWarn: return "warn";
    case LogLevel::kError: return "error";
    case LogLevel::kOff: return "off";
  }
  SLUICE_UNREACHABLE();
}

Logger::Logger(std::string name, LogLevel level, Prefix prefix)
    : name_(std::move(name)),
      level_(level),
      prefix_(std::move(prefix)),
      impl_(std::make_unique<Impl>(Impl{spdlog::logger(name_, shared_stderr_sink())})) {
  // With a prefix (simulation) the wall clock means nothing: the prefix carries virtual time and node.
  impl_->logger.set_pattern(prefix_ ? "%^%L%$ %v" : "%Y-%m-%d %H:%M:%S.%e %^%L%$ [%n] %v");
  impl_->logger.set_level(to_spdlog(level_));
}

Logger::~Logger() = default;

void Logger::set_level(LogLevel level) {
  level_ = level;
  impl_->logger.set_level(to_spdlog(level));
}

void Logger::write(LogLevel level, std::string_view message) {
  if (!enabled(level)) return;
  std::string line = prefix_ ? prefix_() + " " + std::string(message) : std::string(message);
  if (capture_) {
    capture_(level, line);
    return;
  }
  impl_->logger.log(to_spdlog(level), "{}", line);
}

}  // namespace sluice
