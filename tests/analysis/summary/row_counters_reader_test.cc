// The reader's step for a row's `counters`: names non-empty and in strictly
// increasing order, each counter exactly `total` and `self`, non-negative.
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "tests/analysis/captures.h"
#include "tests/testing/summary_versions.h"

namespace spanprof::analysis {
namespace {

using ::spanprof::testing::RichCapture;
using ::testing::HasSubstr;

// The summary with one row's counters replaced by `counters` (JSON text).
std::string WithCounters(std::string_view counters) {
  std::string json = SummaryToJson(Summarize(RichCapture()));
  const std::string empty = "\"counters\": {}";
  const size_t at = json.find(empty);
  EXPECT_NE(at, std::string::npos) << "test bug: no empty counters";
  if (at == std::string::npos) return json;
  return json.replace(at, empty.size(),
                      "\"counters\": " + std::string(counters));
}

std::string ParseError(std::string_view counters) {
  return spanprof::testing::SummaryParseError(WithCounters(counters), "c.json");
}

TEST(RowCountersReaderTest, ReadsNamesAndValuesInOrder) {
  absl::StatusOr<Summary> read = ParseSummary(
      WithCounters(
          R"({"allocs": {"total": 9, "self": 4}, "bytes": {"self": 1, "total": 2}})"),
      "c.json");
  ASSERT_TRUE(read.ok()) << read.status();
  const Row& row = read->rows[0];
  ASSERT_EQ(row.counters.size(), 2u);
  EXPECT_EQ(row.counters[0].name, "allocs");
  EXPECT_EQ(row.counters[0].total, 9);
  EXPECT_EQ(row.counters[0].self, 4);
  EXPECT_EQ(row.counters[1].name, "bytes");
  EXPECT_EQ(row.counters[1].total, 2);
  EXPECT_EQ(row.counters[1].self, 1);
}

TEST(RowCountersReaderTest, RefusesWhatIsNotTheShape) {
  EXPECT_THAT(
      ParseError(
          R"({"b": {"total": 1, "self": 0}, "a": {"total": 1, "self": 0}})"),
      HasSubstr("c.json: $.rows[0].counters.a: counters are not "
                "sorted by name"));
  EXPECT_THAT(
      ParseError(
          R"({"a": {"total": 1, "self": 0}, "a": {"total": 1, "self": 0}})"),
      HasSubstr("$.rows[0].counters.a: duplicate counter"));
  EXPECT_THAT(ParseError(R"({"": {"total": 1, "self": 0}})"),
              HasSubstr("$.rows[0].counters: a counter name is empty"));
  EXPECT_THAT(ParseError(R"({"a": {"total": 1, "self": 0, "max": 1}})"),
              HasSubstr("$.rows[0].counters.a: unknown field \"max\""));
  EXPECT_THAT(ParseError(R"({"a": {"total": 1}})"),
              HasSubstr("$.rows[0].counters.a: missing field \"self\""));
  EXPECT_THAT(ParseError(R"({"a": {"total": -1, "self": 0}})"),
              HasSubstr("$.rows[0].counters.a.total: "));
  EXPECT_THAT(ParseError(R"([])"),
              HasSubstr("$.rows[0].counters: expected object"));
}

}  // namespace
}  // namespace spanprof::analysis
