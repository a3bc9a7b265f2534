// The reader's first step: `schema` and `schema_version` are read before any
// other field, so what the document is (a trace, a future version, not a
// summary) is what the error says, whatever else is wrong with it.
#include <cstdint>
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

std::string Json() { return SummaryToJson(Summarize(RichCapture())); }

// The `schema_version` member as the writer writes it, with `version`.
std::string VersionField(int64_t version) {
  return "\"schema_version\": " + std::to_string(version);
}

std::string ParseError(const std::string& json) {
  return SummaryParseError(json, "s.json");
}

// A field no version has, placed before `schema`.
std::string WithUnknownFieldFirst(const std::string& json) {
  const std::string out = ReplaceFirst(json, "{", "{\"gpu_ns\": 1, ");
  EXPECT_NE(out, json);
  return out;
}

TEST(SummarySchemaReaderTest, AFutureVersionIsNamedBeforeUnknownFields) {
  const int64_t next = kSummarySchemaVersion + 1;
  const std::string future = ReplaceFirst(
      Json(), VersionField(kSummarySchemaVersion), VersionField(next));
  ASSERT_NE(future, Json());
  EXPECT_THAT(
      ParseError(WithUnknownFieldFirst(future)),
      HasSubstr("s.json: $.schema_version: unsupported "
                "schema_version " +
                std::to_string(next) + " (this reader reads versions 1 to " +
                std::to_string(kSummarySchemaVersion) + ")"));
  EXPECT_THAT(ParseError(WithUnknownFieldFirst(Json())),
              HasSubstr("s.json: $: unknown field \"gpu_ns\""));
}

TEST(SummarySchemaReaderTest, AnotherSchemaIsNamedBeforeUnknownFields) {
  const std::string trace_schema =
      ReplaceFirst(Json(), "\"spanprof.summary\"", "\"spanprof.trace\"");
  EXPECT_THAT(ParseError(WithUnknownFieldFirst(trace_schema)),
              HasSubstr("$.schema: expected \"spanprof.summary\", got "
                        "\"spanprof.trace\""));
  EXPECT_THAT(ParseError(R"({"metadata": {}, "traceEvents": []})"),
              HasSubstr("s.json: $: this is a trace, not a spanprof summary"));
  EXPECT_THAT(ParseError(R"({"rows": []})"),
              HasSubstr("$: missing field \"schema\" (not a spanprof "
                        "summary)"));
}

TEST(SummarySchemaReaderTest, TheVersionIsAnIntegerFromOneOn) {
  for (const std::string_view version : {"0", "-1", "\"5\"", "5.0", "null"}) {
    const std::string json =
        ReplaceFirst(Json(), VersionField(kSummarySchemaVersion),
                     "\"schema_version\": " + std::string(version));
    EXPECT_THAT(ParseError(json), HasSubstr("s.json: $.schema_version: "))
        << version;
  }
}

// The version a document says picks the fields it is read with: an old
// version's document reads, and says which it was.
TEST(SummarySchemaReaderTest, TheDocumentsVersionPicksItsFields) {
  for (int64_t v = 1; v <= kSummarySchemaVersion; ++v) {
    absl::StatusOr<Summary> read =
        ParseSummary(SummaryAsVersion(Json(), v), "s.json");
    ASSERT_TRUE(read.ok()) << read.status();
    EXPECT_EQ(read->schema_version, v);
  }
  // Without a version, the document is read as the current one: an older
  // one then lacks fields.
  EXPECT_THAT(ParseError(SummaryAsVersion(Json(), kSummarySchemaVersion,
                                          {.drop = "schema_version"})),
              HasSubstr("s.json: $: missing field \"schema_version\""));
  EXPECT_THAT(
      ParseError(SummaryAsVersion(Json(), 3, {.drop = "schema_version"})),
      HasSubstr("missing field"));
}

}  // namespace
}  // namespace spanprof::analysis
