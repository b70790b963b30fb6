#include "sim/scenario/toml_reader.h"

#include <fmt/format.h>

#include "sim/faults/fault.h"

namespace sluice::sim {

std::optional<std::string> scalar_text(const toml::node& node) {
  if (const auto* s = node.as_string()) return s->get();
  if (const auto* i = node.as_integer()) return std::to_string(i->get());
  if (const auto* b = node.as_boolean()) return b->get() ? "true" : "false";
  if (const auto* f = node.as_floating_point()) return fmt::format("{}", f->get());
  return std::nullopt;
}

const toml::node* TomlReader::get(std::string_view key) {
  asked_.insert(std::string(key));
  return table_.get(key);
}

Status TomlReader::wrong_type(std::string_view key, std::string_view expected) const {
  return invalid_argument(fmt::format("{}: '{}' must be {}", where_, key, expected));
}

Result<std::string> TomlReader::string(std::string_view key, std::optional<std::string> fallback) {
  const toml::node* node = get(key);
  if (node == nullptr) {
    if (fallback) return *fallback;
    return invalid_argument(fmt::format("{}: '{}' is required", where_, key));
  }
  if (const auto* s = node->as_string()) return s->get();
  return wrong_type(key, "a string");
}

Result<int64_t> TomlReader::integer(std::string_view key, std::optional<int64_t> fallback) {
  const toml::node* node = get(key);
  if (node == nullptr) {
    if (fallback) return *fallback;
    return invalid_argument(fmt::format("{}: '{}' is required", where_, key));
  }
  if (const auto* i = node->as_integer()) return i->get();
  return wrong_type(key, "an integer");
}

Result<double> TomlReader::number(std::string_view key, std::optional<double> fallback) {
  const toml::node* node = get(key);
  if (node == nullptr) {
    if (fallback) return *fallback;
    return invalid_argument(fmt::format("{}: '{}' is required", where_, key));
  }
  if (const auto* f = node->as_floating_point()) return f->get();
  if (const auto* i = node->as_integer()) return static_cast<double>(i->get());
  return wrong_type(key, "a number");
}

Result<bool> TomlReader::boolean(std::string_view key, std::optional<bool> fallback) {
  const toml::node* node = get(key);
  if (node == nullptr) {
    if (fallback) return *fallback;
    return invalid_argument(fmt::format("{}: '{}' is required", where_, key));
  }
  if (const auto* b = node->as_boolean()) return b->get();
  return wrong_type(key, "true or false");
}

Result<Duration> TomlReader::duration(std::string_view key, std::optional<Duration> fallback) {
  const toml::node* node = get(key);
  if (node == nullptr) {
    if (fallback) return *fallback;
    return invalid_argument(fmt::format("{}: '{}' is required", where_, key));
  }
  if (const auto* s = node->as_string()) {
    Result<Duration> d = parse_duration(s->get());
    if (!d.ok()) return invalid_argument(fmt::format("{}: '{}': {}", where_, key, d.status().message()));
    return d;
  }
  if (const auto* i = node->as_integer()) return Duration(std::chrono::seconds(i->get()));
  if (const auto* f = node->as_floating_point()) {
    return std::chrono::duration_cast<Duration>(std::chrono::duration<double>(f->get()));
  }
  return wrong_type(key, "a duration such as \"1.5s\" or \"250ms\"");
}

Result<std::map<std::string, std::string>> TomlReader::string_map(std::string_view key) {
  std::map<std::string, std::string> out;
  const toml::node* node = get(key);
  if (node == nullptr) return out;
  const toml::table* t = node->as_table();
  if (t == nullptr) return wrong_type(key, "a table of settings");
  for (const auto& [name, value] : *t) {
    std::optional<std::string> text = scalar_text(value);
    if (!text) return invalid_argument(fmt::format("{}: {}.{} must be a string, number or boolean", where_, key,
                                                   name.str()));
    out[std::string(name.str())] = *text;
  }
  return out;
}

Result<std::vector<std::string>> TomlReader::strings(std::string_view key) {
  std::vector<std::string> out;
  const toml::node* node = get(key);
  if (node == nullptr) return out;
  const toml::array* array = node->as_array();
  if (array == nullptr) return wrong_type(key, "an array of strings");
  for (const toml::node& item : *array) {
    const auto* s = item.as_string();
    if (s == nullptr) return wrong_type(key, "an array of strings");
    out.push_back(s->get());
  }
  return out;
}

Result<std::vector<const toml::table*>> TomlReader::tables(std::string_view key) {
  std::vector<const toml::table*> out;
  const toml::node* node = get(key);
  if (node == nullptr) return out;
  const toml::array* array = node->as_array();
  if (array == nullptr) return wrong_type(key, "an array of tables");
  for (const toml::node& item : *array) {
    const toml::table* t = item.as_table();
    if (t == nullptr) return wrong_type(key, "an array of tables");
    out.push_back(t);
  }
  return out;
}

const toml::table* TomlReader::table(std::string_view key) {
  const toml::node* node = get(key);
  return node == nullptr ? nullptr : node->as_table();
}

Status TomlReader::finish() const {
  for (const auto& [key, value] : table_) {
    if (asked_.count(key.str()) != 0) continue;
    std::string known;
    for (const std::string& k : asked_) known += (known.empty() ? "" : ", ") + k;
    return invalid_argument(fmt::format("{}: unknown field '{}' (known: {})", where_, key.str(), known));
  }
  return Status::ok_status();
}

}  // namespace sluice::sim
