// Kafka-style properties files (server.properties): the subset of java.util.Properties such files use.
//
//   # a comment (so is a line starting with !)
//   num.partitions=3
//   cluster.id: dev
//   log.retention.hours = 48
//   log.dirs=/var/lib/\        <- a line ending in an odd number of backslashes continues on the next line,
//            sluice               <- whose leading blanks are dropped: log.dirs=/var/lib/sluice
//
// A line is `key=value` or `key: value` (the first unescaped '=' or ':' separates); keys and values are trimmed;
// blank lines and comment lines are skipped. Escapes as Java reads them: \t \n \r \f \uXXXX, and a backslash before
// any other character keeps that character (`\:` in a key, `\\` for a backslash). Stricter than Java on purpose:
// a line without a separator, an empty key, a key with blanks inside and a key given twice are errors naming the
// line, since each is far more likely a typo than an intent.
#pragma once

#include <map>
#include <string>
#include <string_view>
#include <utility>

#include "core/base/result.h"

namespace sluice::kafka {

// Errors are kInvalidArgument: "line 4: expected key=value or key: value, got 'num.partitions 3'".
Result<std::map<std::string, std::string>> parse_properties(std::string_view text);

// One `key=value` (a --set flag): split at the first '=', both sides trimmed, the key non-empty.
Result<std::pair<std::string, std::string>> parse_setting(std::string_view text);

}  // namespace sluice::kafka
