// The reader's row step: each row field goes to its own member with its
// exact type, and a row's key has the key fields of the document's version.
#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "tests/analysis/captures.h"
#include "tests/testing/summary_versions.h"
#include "tests/testing/test_support.h"
#include "tests/testing/text.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::ReplaceFirst;
using ::spanprof::testing::RichCapture;
using ::spanprof::testing::SummaryAsVersion;
using ::spanprof::testing::SummaryParseError;
using ::testing::HasSubstr;

std::string ParseError(const std::string& json) {
  return SummaryParseError(json, "rows.json");
}

// Allocations, counters, exceptions, failed hooks and keys with every tag:
// most row fields differ between rows and from each other.
TEST(SummaryRowReaderTest, EachFieldIsReadIntoItsOwnMember) {
  for (const bool keys : {false, true}) {
    const Summary summary = Summarize(RichCapture(
        {.alloc = true, .counters = true, .strings = true, .keys = keys}));
    absl::StatusOr<Summary> read =
        ParseSummary(SummaryToJson(summary), "rows.json");
    ASSERT_TRUE(read.ok()) << read.status();
    ASSERT_EQ(read->rows.size(), summary.rows.size());
    for (size_t i = 0; i < summary.rows.size(); ++i) {
      EXPECT_EQ(read->rows[i], summary.rows[i]) << summary.rows[i].label;
    }
  }
}

TEST(SummaryRowReaderTest, EachFieldHasItsType) {
  const std::string json = SummaryToJson(Summarize(RichCapture()));
  const Summary clean = Summarize(RichCapture());
  const auto field = [&](std::string_view name, const std::string& value) {
    return "\"" + std::string(name) + "\": " + value;
  };
  const struct {
    std::string from;
    std::string to;
    std::string error;
  } cases[] = {
      {field("share_permille", std::to_string(clean.rows[0].share_permille)),
       field("share_permille", "1001"), "$.rows[0].share_permille: "},
      {field("calls", std::to_string(clean.rows[0].calls)),
       field("calls", "-1"), "$.rows[0].calls: "},
      {field("heavy_tail", "false"), field("heavy_tail", "0"),
       "$.rows[0].heavy_tail: expected true or false"},
      {field("alloc_count", "null"), field("alloc_count", "\"7\""),
       "$.rows[0].alloc_count: expected integer or null"},
      {"\"label\": \"", "\"label\": 1, \"x\": \"",
       "$.rows[0].label: expected string"},
  };
  for (const auto& c : cases) {
    const std::string bad = ReplaceFirst(json, c.from, c.to);
    ASSERT_NE(bad, json) << "test bug: no " << c.from;
    EXPECT_THAT(ParseError(bad), HasSubstr(c.error)) << c.to;
  }
  EXPECT_THAT(ParseError(ReplaceFirst(json, "\"rows\": [", "\"rows\": [1, ")),
              HasSubstr("rows.json: $.rows[0]: expected object"));
}

// Backend, dtype and device came in version 4, where they may be missing
// (read as ""); before, they are unknown.
TEST(SummaryRowReaderTest, TheKeysFieldsAreTheVersions) {
  const std::string keyed =
      SummaryToJson(Summarize(RichCapture({.keys = true})));
  for (const int64_t v : {4, 5}) {
    absl::StatusOr<Summary> read =
        ParseSummary(SummaryAsVersion(keyed, v), "rows.json");
    ASSERT_TRUE(read.ok()) << read.status();
    bool tagged = false;
    for (const Row& row : read->rows)
      tagged = tagged || !row.key.backend.empty();
    EXPECT_TRUE(tagged) << "version " << v;
  }
  std::string at;
  const std::string v3 = SummaryAsVersion(keyed, 3, {.keep = "dtype"}, &at);
  EXPECT_THAT(at, ::testing::StartsWith("$.rows["));
  EXPECT_THAT(ParseError(v3), HasSubstr(at + ": unknown field \"dtype\""));
}

}  // namespace
}  // namespace spanprof::analysis
