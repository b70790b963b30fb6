// Kafka-style properties files: separators, comments, blanks, trimming, continuation, escapes, and the errors that
// name their line.
#include "core/kafka/properties.h"

#include <gtest/gtest.h>

namespace sluice::kafka {
namespace {

using Settings = std::map<std::string, std::string>;

Settings parse_ok(std::string_view text) {
  Result<Settings> parsed = parse_properties(text);
  EXPECT_TRUE(parsed.ok()) << parsed.status().to_string();
  return parsed.ok() ? *parsed : Settings{};
}

std::string parse_error(std::string_view text) {
  Result<Settings> parsed = parse_properties(text);
  EXPECT_FALSE(parsed.ok()) << "parsed: " << text;
  EXPECT_EQ(parsed.status().code(), Code::kInvalidArgument);
  return parsed.status().message();
}

TEST(Properties, SeparatorsCommentsBlanksAndTrimming) {
  const Settings settings = parse_ok(
      "# a comment\n"
      "! another comment\n"
      "\n"
      "   \t\n"
      "num.partitions=3\n"
      "  log.dirs: /var/lib/sluice  \n"
      "log.retention.hours = 48\t\n"
      "cluster.id:=odd\n"  // the first separator wins: the value is "=odd"
      "empty.value=\n"
      "url=PLAINTEXT://host:9092\n"
      "   # indented comment\n");
  EXPECT_EQ(settings, (Settings{{"num.partitions", "3"},
                                {"log.dirs", "/var/lib/sluice"},
                                {"log.retention.hours", "48"},
                                {"cluster.id", "=odd"},
                                {"empty.value", ""},
                                {"url", "PLAINTEXT://host:9092"}}));
}

TEST(Properties, WindowsLineEndingsAndNoFinalNewline) {
  EXPECT_EQ(parse_ok("a=1\r\nb=2\r\n"), (Settings{{"a", "1"}, {"b", "2"}}));
  EXPECT_EQ(parse_ok("a=1"), (Settings{{"a", "1"}}));
  EXPECT_EQ(parse_ok(""), Settings{});
}

TEST(Properties, BackslashContinuationJoinsLinesWithoutTheirIndent) {
  const Settings settings = parse_ok(
      "listeners=PLAINTEXT://a:1,\\\n"
      "          PLAINTEXT://b:2\n"
      "path=c:\\\\\n"  // an even number of backslashes: no continuation, one literal backslash
      "next=\\\n"
      "  # not a comment: a continuation\n"
      "last=x\\");  // a continuation at the end of the text keeps what it has
  EXPECT_EQ(settings, (Settings{{"listeners", "PLAINTEXT://a:1,PLAINTEXT://b:2"},
                                {"path", "c:\\"},
                                {"next", "# not a comment: a continuation"},
                                {"last", "x"}}));
}

TEST(Properties, CommentLinesDoNotContinue) { EXPECT_EQ(parse_ok("# comment \\\na=1\n"), (Settings{{"a", "1"}})); }

TEST(Properties, Escapes) {
  const Settings settings = parse_ok(
      "key\\:with\\=separators=v\n"
      "tab=a\\tb\n"
      "unicode=\\u00e9\\u20ac\n"
      "other=\\q\n");
  EXPECT_EQ(
      settings,
      (Settings{{"key:with=separators", "v"}, {"tab", "a\tb"}, {"unicode", "\xc3\xa9\xe2\x82\xac"}, {"other", "q"}}));
}

TEST(Properties, ErrorsNameTheLine) {
  EXPECT_EQ(parse_error("a=1\nnum.partitions 3\n"), "line 2: expected key=value or key: value, got 'num.partitions 3'");
  EXPECT_EQ(parse_error("\n\n=3\n"), "line 3: empty key");
  EXPECT_EQ(parse_error("num partitions=3"), "line 1: blanks inside the key 'num partitions'");
  EXPECT_EQ(parse_error("a=1\n# x\na: 2\n"), "line 3: a is already set on line 1");
  EXPECT_EQ(parse_error("a=\\u12\n"), "line 1: malformed \\uxxxx escape");
  // A continued line is numbered by its first line.
  EXPECT_EQ(parse_error("a=1\nb\\\nc\n"), "line 2: expected key=value or key: value, got 'bc'");
}

TEST(Properties, SetFlag) {
  Result<std::pair<std::string, std::string>> a = parse_setting(" num.partitions = 3 ");
  ASSERT_TRUE(a.ok());
  EXPECT_EQ(a->first, "num.partitions");
  EXPECT_EQ(a->second, "3");
  Result<std::pair<std::string, std::string>> b = parse_setting("listeners=PLAINTEXT://h:1=x");
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->second, "PLAINTEXT://h:1=x");  // split at the first '='
  Result<std::pair<std::string, std::string>> empty = parse_setting("cluster.id=");
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->second, "");
  EXPECT_EQ(parse_setting("num.partitions").status().message(), "expected key=value, got 'num.partitions'");
  EXPECT_EQ(parse_setting(" =3").status().message(), "empty key in ' =3'");
}

}  // namespace
}  // namespace sluice::kafka
