#include "sim/history/json.h"

#include <fmt/format.h>

namespace sluice::sim {

std::string json_string(std::string_view text) {
  std::string out = "\"";
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (byte < 0x20 || byte >= 0x7f) {
      out += fmt::format("\\u{:04x}", byte);
    } else {
      out += c;
    }
  }
  return out + "\"";
}

void JsonObject::key(std::string_view name) {
  if (!body_.empty()) body_ += ",";
  body_ += json_string(name) + ":";
}

void JsonObject::add(std::string_view name, std::string_view value) {
  key(name);
  body_ += json_string(value);
}

void JsonObject::add(std::string_view name, int64_t value) {
  key(name);
  body_ += std::to_string(value);
}

void JsonObject::add(std::string_view name, double value) {
  key(name);
  body_ += fmt::format("{:.6f}", value);
}

void JsonObject::add_raw(std::string_view name, std::string_view json) {
  key(name);
  body_ += json;
}

}  // namespace sluice::sim
