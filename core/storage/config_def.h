// Typed parsing and validation of Kafka-style configuration values (Kafka's ConfigDef, our own code). Topic configs
// (topic_config.h) and broker storage knobs (broker_storage_config.h) describe their keys with a ConfigRule and parse
// every string through parse_config_value, so both give the same INVALID_CONFIG messages Kafka users know:
//   "Invalid value -2 for configuration retention.ms: Value must be at least -1".
//
// Parsing follows Kafka 3.9: the value is trimmed first; booleans are true/false in any case; numbers are decimal
// with an optional sign; strings and list items are compared case-sensitively; a list splits on commas with any
// spaces around them, and an empty (or all-blank) value is the empty list.
#pragma once

#include <cstdint>
#include <limits>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "core/base/result.h"
#include "core/base/status.h"

namespace sluice::storage {

// Numbered as DescribeConfigs' config_type (KIP-569), so the protocol layer can send them as they are.
enum class ConfigType : int8_t { kBoolean = 1, kString = 2, kInt = 3, kLong = 5, kDouble = 6, kList = 7 };

// "LONG", "LIST": the names Kafka's messages use ("Not a number of type LONG").
std::string_view config_type_name(ConfigType type);

// What a key accepts. Numbers must lie in [min, max] (kInt additionally in int32); strings and every list item must
// be one of `allowed` (or pass `accepts`).
struct ConfigRule {
  ConfigType type = ConfigType::kLong;
  int64_t min = std::numeric_limits<int64_t>::min();
  int64_t max = std::numeric_limits<int64_t>::max();
  double min_real = -std::numeric_limits<double>::infinity();
  double max_real = std::numeric_limits<double>::infinity();
  // A value equal to min_real is refused too (Kafka has no such bound; Sluice uses it for a load factor).
  bool min_real_exclusive = false;
  std::span<const std::string_view> allowed = {};
  // kString only: when set, decides instead of an exact match on `allowed` (which then only describes the values).
  bool (*accepts)(std::string_view value) = nullptr;
};

// A parsed, validated value; only the member for the rule's type is meaningful.
struct ConfigValue {
  bool boolean = false;
  int64_t integer = 0;  // kInt and kLong
  double real = 0;
  std::string text;                // kString
  std::vector<std::string> items;  // kList, in the order given, duplicates kept
};

// Parses `raw` for the key `name` (used only in messages). Errors carry INVALID_CONFIG (40).
Result<ConfigValue> parse_config_value(std::string_view name, std::string_view raw, const ConfigRule& rule);

// The accepted values in Kafka's notation: "[-1,...]", "[0,...,1]", "[CreateTime, LogAppendTime]", "true or false".
std::string valid_values(const ConfigRule& rule);

// "Invalid value <value> for configuration <name>: <why>", as an INVALID_CONFIG Status.
Status invalid_config(std::string_view name, std::string_view value, std::string_view why);

// A double as Java prints simple ones, so describe output matches Kafka's: 0.5 → "0.5", 1 → "1.0".
std::string format_double(double value);

// A list value's items: the value is trimmed and split on commas with any blanks around them, as Kafka's "\s*,\s*":
// "a , b" → {a, b}; "a,,b" keeps the empty item (which no allowed set accepts); "" and "  " → {}.
std::vector<std::string> split_config_list(std::string_view value);

// Items joined by "," (the form lists are described and persisted in).
std::string join_list(std::span<const std::string> items);

}  // namespace sluice::storage
