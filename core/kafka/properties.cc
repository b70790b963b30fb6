#include "core/kafka/properties.h"

#include <fmt/format.h>

#include <optional>
#include <vector>

namespace sluice::kafka {
namespace {

constexpr std::string_view kBlanks = " \t\f";

std::string_view trim(std::string_view s) {
  const size_t begin = s.find_first_not_of(kBlanks);
  if (begin == std::string_view::npos) return {};
  return s.substr(begin, s.find_last_not_of(kBlanks) - begin + 1);
}

std::string_view trim_front(std::string_view s) {
  const size_t begin = s.find_first_not_of(kBlanks);
  return begin == std::string_view::npos ? std::string_view() : s.substr(begin);
}

// A line joined from its continuations, numbered by its first physical line.
struct LogicalLine {
  size_t number = 0;
  std::string text;
};

size_t trailing_backslashes(std::string_view s) {
  size_t n = 0;
  while (n < s.size() && s[s.size() - 1 - n] == '\\') ++n;
  return n;
}

std::vector<LogicalLine> logical_lines(std::string_view text) {
  std::vector<LogicalLine> lines;
  std::optional<LogicalLine> open;  // set while continuation lines are being joined
  size_t number = 0;
  size_t pos = 0;
  while (pos <= text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    ++number;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    line = trim_front(line);
    // Comments and blank lines end nothing and continue nothing, unless they are a continuation themselves.
    if (!open && (line.empty() || line.front() == '#' || line.front() == '!')) continue;
    if (!open) open = LogicalLine{number, ""};
    const bool continues = trailing_backslashes(line) % 2 == 1;
    if (continues) line.remove_suffix(1);
    open->text += line;
    if (!continues) {
      lines.push_back(std::move(*open));
      open.reset();
    }
  }
  if (open) lines.push_back(std::move(*open));  // a continuation at the end of the file: Java keeps it too
  return lines;
}

void append_utf8(std::string& out, uint32_t code_point) {
  if (code_point < 0x80) {
    out += static_cast<char>(code_point);
  } else if (code_point < 0x800) {
    out += static_cast<char>(0xc0 | (code_point >> 6));
    out += static_cast<char>(0x80 | (code_point & 0x3f));
  } else {
    out += static_cast<char>(0xe0 | (code_point >> 12));
    out += static_cast<char>(0x80 | ((code_point >> 6) & 0x3f));
    out += static_cast<char>(0x80 | (code_point & 0x3f));
  }
}

std::optional<uint32_t> parse_hex4(std::string_view s) {
  if (s.size() < 4) return std::nullopt;
  uint32_t value = 0;
  for (char c : s.substr(0, 4)) {
    int digit = -1;
    if (c >= '0' && c <= '9') digit = c - '0';
    if (c >= 'a' && c <= 'f') digit = c - 'a' + 10;
    if (c >= 'A' && c <= 'F') digit = c - 'A' + 10;
    if (digit < 0) return std::nullopt;
    value = value * 16 + static_cast<uint32_t>(digit);
  }
  return value;
}

Result<std::string> unescape(std::string_view s, size_t line) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 == s.size()) {
      out += s[i];
      continue;
    }
    const char c = s[++i];
    switch (c) {
      case 't':
        out += '\t';
        break;
      case 'n':
        out += '\n';
        break;
      case 'r':
        out += '\r';
        break;
      case 'f':
        out += '\f';
        break;
      case 'u': {
        std::optional<uint32_t> code_point = parse_hex4(s.substr(i + 1));
        if (!code_point) return invalid_argument(fmt::format("line {}: malformed \\uxxxx escape", line));
        append_utf8(out, *code_point);
        i += 4;
        break;
      }
      default:
        out += c;  // \\, \=, \:, \# and any other: the character itself
    }
  }
  return out;
}

// The first '=' or ':' that no backslash escapes.
size_t find_separator(std::string_view s) {
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\') {
      ++i;
    } else if (s[i] == '=' || s[i] == ':') {
      return i;
    }
  }
  return std::string_view::npos;
}

}  // namespace

Result<std::map<std::string, std::string>> parse_properties(std::string_view text) {
  std::map<std::string, std::string> settings;
  std::map<std::string, size_t> defined_on;
  for (const LogicalLine& line : logical_lines(text)) {
    const std::string_view body = line.text;
    const size_t separator = find_separator(body);
    if (separator == std::string_view::npos) {
      return invalid_argument(
          fmt::format("line {}: expected key=value or key: value, got '{}'", line.number, trim(body)));
    }
    SLUICE_ASSIGN_OR_RETURN(std::string key, unescape(trim(body.substr(0, separator)), line.number));
    SLUICE_ASSIGN_OR_RETURN(std::string value, unescape(trim(body.substr(separator + 1)), line.number));
    if (key.empty()) return invalid_argument(fmt::format("line {}: empty key", line.number));
    if (key.find_first_of(" \t\f\r\n") != std::string::npos) {
      return invalid_argument(fmt::format("line {}: blanks inside the key '{}'", line.number, key));
    }
    if (auto [it, inserted] = defined_on.emplace(key, line.number); !inserted) {
      return invalid_argument(fmt::format("line {}: {} is already set on line {}", line.number, key, it->second));
    }
    settings.emplace(std::move(key), std::move(value));
  }
  return settings;
}

Result<std::pair<std::string, std::string>> parse_setting(std::string_view text) {
  const size_t equals = text.find('=');
  if (equals == std::string_view::npos) {
    return invalid_argument(fmt::format("expected key=value, got '{}'", text));
  }
  const std::string_view key = trim(text.substr(0, equals));
  if (key.empty()) return invalid_argument(fmt::format("empty key in '{}'", text));
  return std::pair<std::string, std::string>(std::string(key), std::string(trim(text.substr(equals + 1))));
}

}  // namespace sluice::kafka
