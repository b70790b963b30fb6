// Typed reads of one TOML table for the scenario loader: each getter names the field in its error, and finish()
// refuses fields nobody asked for (a typo in a scenario file is an error, not a silent default).
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include <toml++/toml.h>

#include "core/base/result.h"
#include "core/env/clock.h"

namespace sluice::sim {

class TomlReader {
 public:
  // `where` names the table in errors: "workloads[2]", "faults.schedule[0]".
  TomlReader(const toml::table& table, std::string where) : table_(table), where_(std::move(where)) {}

  Result<std::string> string(std::string_view key, std::optional<std::string> fallback = std::nullopt);
  Result<int64_t> integer(std::string_view key, std::optional<int64_t> fallback = std::nullopt);
  Result<double> number(std::string_view key, std::optional<double> fallback = std::nullopt);
  Result<bool> boolean(std::string_view key, std::optional<bool> fallback = std::nullopt);
  // "1.5s", "250ms" or a number of seconds.
  Result<Duration> duration(std::string_view key, std::optional<Duration> fallback = std::nullopt);
  // A table of scalars, each as its TOML text ("1000", "compact", "true").
  Result<std::map<std::string, std::string>> string_map(std::string_view key);
  Result<std::vector<std::string>> strings(std::string_view key);
  // The tables of an array of tables (or of inline tables); empty when absent.
  Result<std::vector<const toml::table*>> tables(std::string_view key);
  const toml::table* table(std::string_view key);
  bool has(std::string_view key) const { return table_.contains(key); }

  // Fails naming the first field no getter asked for, with the fields that are known.
  Status finish() const;
  const std::string& where() const { return where_; }

 private:
  const toml::node* get(std::string_view key);
  Status wrong_type(std::string_view key, std::string_view expected) const;

  const toml::table& table_;
  std::string where_;
  std::set<std::string, std::less<>> asked_;
};

// A scalar as the text a properties file would hold: strings as they are, numbers and booleans formatted.
std::optional<std::string> scalar_text(const toml::node& node);

}  // namespace sluice::sim
