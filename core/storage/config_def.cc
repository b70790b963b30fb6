#include "core/storage/config_def.h"

#include <charconv>
#include <cmath>
#include <optional>

#include "core/base/assert.h"
#include "core/protocol/error_codes.h"

namespace sluice::storage {
namespace {

// Java's String.trim: every character at or below the space goes, control characters included.
std::string_view trim(std::string_view s) {
  while (!s.empty() && static_cast<unsigned char>(s.front()) <= ' ') s.remove_prefix(1);
  while (!s.empty() && static_cast<unsigned char>(s.back()) <= ' ') s.remove_suffix(1);
  return s;
}

// Java's Long.parseLong accepts an optional '+' or '-' and decimal digits, nothing else.
std::optional<int64_t> parse_int64(std::string_view s) {
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return std::nullopt;  // "+-1"
  }
  if (s.empty() || s.front() == '+') return std::nullopt;
  int64_t value = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (error != std::errc() || end != s.data() + s.size()) return std::nullopt;
  return value;
}

// Java's Double.parseDouble also takes "NaN" and "Infinity"; neither is a meaningful ratio or factor, so Sluice
// refuses them as unparsable (Kafka would accept NaN for min.cleanable.dirty.ratio, since every comparison fails).
std::optional<double> parse_double(std::string_view s) {
  if (!s.empty() && s.front() == '+') {
    s.remove_prefix(1);
    if (!s.empty() && s.front() == '-') return std::nullopt;
  }
  if (s.empty() || s.front() == '+') return std::nullopt;
  double value = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value, std::chars_format::general);
  if (error != std::errc() || end != s.data() + s.size() || !std::isfinite(value)) return std::nullopt;
  return value;
}

bool is_allowed(const ConfigRule& rule, std::string_view s) {
  for (std::string_view a : rule.allowed) {
    if (a == s) return true;
  }
  return false;
}

std::string one_of(const ConfigRule& rule) {
  std::string out = "String must be one of: ";
  for (size_t i = 0; i < rule.allowed.size(); ++i) {
    if (i > 0) out += ", ";
    out += rule.allowed[i];
  }
  return out;
}

// The bound as Kafka prints it: integral bounds without a fraction ("Value must be no more than 1").
std::string format_bound(double bound) {
  if (bound == std::floor(bound) && std::fabs(bound) < 1e15) return std::to_string(static_cast<int64_t>(bound));
  return format_double(bound);
}

Status not_a_number(std::string_view name, std::string_view raw, const ConfigRule& rule) {
  return invalid_config(
      name, raw,
      "Not a number of type " + std::string(config_type_name(rule.type)) + ", valid values: " + valid_values(rule));
}

Result<ConfigValue> parse_integer(std::string_view name, std::string_view raw, std::string_view s,
                                  const ConfigRule& rule) {
  std::optional<int64_t> parsed = parse_int64(s);
  const bool int32 = rule.type == ConfigType::kInt;
  if (!parsed ||
      (int32 && (*parsed < std::numeric_limits<int32_t>::min() || *parsed > std::numeric_limits<int32_t>::max()))) {
    return not_a_number(name, raw, rule);
  }
  if (*parsed < rule.min) return invalid_config(name, s, "Value must be at least " + std::to_string(rule.min));
  if (*parsed > rule.max) return invalid_config(name, s, "Value must be no more than " + std::to_string(rule.max));
  ConfigValue value;
  value.integer = *parsed;
  return value;
}

Result<ConfigValue> parse_real(std::string_view name, std::string_view raw, std::string_view s,
                               const ConfigRule& rule) {
  std::optional<double> parsed = parse_double(s);
  if (!parsed) return not_a_number(name, raw, rule);
  if (*parsed < rule.min_real || (rule.min_real_exclusive && *parsed == rule.min_real)) {
    const char* what = rule.min_real_exclusive ? "Value must be greater than " : "Value must be at least ";
    return invalid_config(name, s, what + format_bound(rule.min_real));
  }
  if (*parsed > rule.max_real) {
    return invalid_config(name, s, "Value must be no more than " + format_bound(rule.max_real));
  }
  ConfigValue value;
  value.real = *parsed;
  return value;
}

Result<ConfigValue> parse_list(std::string_view name, std::string_view s, const ConfigRule& rule) {
  ConfigValue value;
  value.items = split_config_list(s);
  for (const std::string& item : value.items) {
    if (!is_allowed(rule, item)) return invalid_config(name, item.empty() ? "\"\"" : item, one_of(rule));
  }
  return value;
}

}  // namespace

std::string_view config_type_name(ConfigType type) {
  switch (type) {
    case ConfigType::kBoolean:
      return "BOOLEAN";
    case ConfigType::kString:
      return "STRING";
    case ConfigType::kInt:
      return "INT";
    case ConfigType::kLong:
      return "LONG";
    case ConfigType::kDouble:
      return "DOUBLE";
    case ConfigType::kList:
      return "LIST";
  }
  SLUICE_UNREACHABLE();
}

Result<ConfigValue> parse_config_value(std::string_view name, std::string_view raw, const ConfigRule& rule) {
  const std::string_view s = trim(raw);
  switch (rule.type) {
    case ConfigType::kBoolean: {
      ConfigValue value;
      if (s.size() == 4 && (s[0] | 0x20) == 't' && (s[1] | 0x20) == 'r' && (s[2] | 0x20) == 'u' &&
          (s[3] | 0x20) == 'e') {
        value.boolean = true;
        return value;
      }
      if (s.size() == 5 && (s[0] | 0x20) == 'f' && (s[1] | 0x20) == 'a' && (s[2] | 0x20) == 'l' &&
          (s[3] | 0x20) == 's' && (s[4] | 0x20) == 'e') {
        return value;
      }
      return invalid_config(name, raw, "Expected value to be either true or false");
    }
    case ConfigType::kInt:
    case ConfigType::kLong:
      return parse_integer(name, raw, s, rule);
    case ConfigType::kDouble:
      return parse_real(name, raw, s, rule);
    case ConfigType::kString: {
      const bool accepted = rule.accepts != nullptr ? rule.accepts(s) : is_allowed(rule, s);
      if (!accepted) return invalid_config(name, s.empty() ? "\"\"" : s, one_of(rule));
      ConfigValue value;
      value.text = std::string(s);
      return value;
    }
    case ConfigType::kList:
      return parse_list(name, s, rule);
  }
  SLUICE_UNREACHABLE();
}

std::string valid_values(const ConfigRule& rule) {
  switch (rule.type) {
    case ConfigType::kBoolean:
      return "true or false";
    case ConfigType::kInt:
    case ConfigType::kLong: {
      const bool has_min = rule.min != std::numeric_limits<int64_t>::min();
      const bool has_max = rule.max != std::numeric_limits<int64_t>::max();
      if (!has_min && !has_max) return "[...]";
      if (!has_max) return "[" + std::to_string(rule.min) + ",...]";
      if (!has_min) return "[...," + std::to_string(rule.max) + "]";
      return "[" + std::to_string(rule.min) + ",...," + std::to_string(rule.max) + "]";
    }
    case ConfigType::kDouble: {
      const std::string open = rule.min_real_exclusive ? "(" : "[";
      return open + format_bound(rule.min_real) + ",...," + format_bound(rule.max_real) + "]";
    }
    case ConfigType::kString:
    case ConfigType::kList: {
      std::string out = "[";
      for (size_t i = 0; i < rule.allowed.size(); ++i) {
        if (i > 0) out += ", ";
        out += rule.allowed[i];
      }
      return out + "]";
    }
  }
  SLUICE_UNREACHABLE();
}

Status invalid_config(std::string_view name, std::string_view value, std::string_view why) {
  std::string message = "Invalid value ";
  message += value;
  message += " for configuration ";
  message += name;
  message += ": ";
  message += why;
  return kafka_error(ErrorCode::kInvalidConfig, std::move(message));
}

std::string format_double(double value) {
  char buffer[64];
  const auto [end, error] = std::to_chars(buffer, buffer + sizeof(buffer), value);
  SLUICE_ASSERT(error == std::errc());
  std::string out(buffer, end);
  if (out.find_first_of(".eEn") == std::string::npos) out += ".0";  // "n": inf and nan stay as they are
  return out;
}

std::vector<std::string> split_config_list(std::string_view value) {
  const std::string_view s = trim(value);
  std::vector<std::string> items;
  if (s.empty()) return items;
  size_t start = 0;
  while (true) {
    const size_t comma = s.find(',', start);
    const std::string_view item = s.substr(start, comma == std::string_view::npos ? s.npos : comma - start);
    items.emplace_back(trim(item));
    if (comma == std::string_view::npos) break;
    start = comma + 1;
  }
  return items;
}

std::string join_list(std::span<const std::string> items) {
  std::string out;
  for (size_t i = 0; i < items.size(); ++i) {
    if (i > 0) out += ',';
    out += items[i];
  }
  return out;
}

}  // namespace sluice::storage
