// A JSON object written field by field, for the history's JSON lines and the run reports. Output only: nothing in
// the simulator reads JSON back.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace sluice::sim {

// `text` as a JSON string literal, quotes included (control characters and non-ASCII bytes escaped as \u00XX).
std::string json_string(std::string_view text);

class JsonObject {
 public:
  void add(std::string_view key, std::string_view value);
  void add(std::string_view key, const char* value) { add(key, std::string_view(value)); }
  void add(std::string_view key, const std::string& value) { add(key, std::string_view(value)); }
  void add(std::string_view key, int64_t value);
  void add(std::string_view key, double value);
  // `json` is already JSON (an object, an array, true, null).
  void add_raw(std::string_view key, std::string_view json);
  std::string str() const { return "{" + body_ + "}"; }

 private:
  void key(std::string_view name);
  std::string body_;
};

}  // namespace sluice::sim
