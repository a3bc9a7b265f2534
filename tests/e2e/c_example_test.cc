// The real c_example binary (examples/c, compiled as C11), run with
// SPANPROF=1: its C API spans, arguments, heartbeats, thread name and key
// fields (backend, dtype, device) reach the trace and the summary; disabled it
// writes nothing; a bad environment is its exit code 2 with the variable named.
#include <filesystem>
#include <string>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::ReadText;
using spanprof::testing::RunProcess;
using spanprof::testing::TempDir;

constexpr char kBinary[] = SPANPROF_TEST_BIN_DIR "/c_example";

TEST(CExampleTest, RecordsNestedSpansWithArgumentsAndHeartbeats) {
  TempDir dir;
  const auto result = RunProcess(
      {kBinary}, {{"SPANPROF", "1"},
                  {"SPANPROF_OUT", dir.File("out/trace.json")},
                  {"SPANPROF_SUMMARY_OUT", dir.File("out/summary.json")},
                  {"SPANPROF_QUIET", "1"}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_NE(result.out.find("checksum"), std::string::npos);

  const absl::StatusOr<Capture> trace =
      analysis::ReadTrace(dir.File("out/trace.json"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  const Capture& c = *trace;
  ASSERT_EQ(c.spans.size(), 1u + 8u * 3u);
  auto name = [&](const Span& s) { return c.sites[s.site].name; };
  int records = 0;
  int children = 0;
  for (const Span& s : c.spans) {
    EXPECT_EQ(s.flags, 0u) << name(s);
    EXPECT_EQ(c.threads[s.thread].name, "main");
    if (name(s) == "record.process") {
      ++records;
      EXPECT_EQ(s.depth, 1u);
      EXPECT_EQ(c.sites[s.site].module, "c_example");
      ASSERT_EQ(s.arg_count, 1u);
      EXPECT_EQ(c.args[s.first_arg].key, "bytes");
      EXPECT_GE(c.args[s.first_arg].int_value, 4096);
      EXPECT_GT(s.heartbeats, 0u);
    } else if (name(s) == "record.parse") {
      ++children;
      EXPECT_EQ(s.depth, 2u);
      EXPECT_EQ(c.sites[s.site],
                (Site{.name = "record.parse", .phase = "parse"}));
      // A string argument from C (spanprof_arg_str).
      ASSERT_EQ(s.arg_count, 1u);
      const SpanArg& format = c.args[s.first_arg];
      EXPECT_EQ(format.key, "format");
      EXPECT_TRUE(format.is_string);
      EXPECT_TRUE(format.text == "csv" || format.text == "json" ||
                  format.text == "tsv" || format.text == "xml")
          << format.text;
    } else if (name(s) == "record.checksum") {
      ++children;
      EXPECT_EQ(s.depth, 2u);
      // Set from C with spanprof_site_get_tagged.
      EXPECT_EQ(c.sites[s.site], (Site{.name = "record.checksum",
                                       .phase = "checksum",
                                       .activity = "hash",
                                       .backend = "scalar",
                                       .dtype = "u8",
                                       .device = "cpu0"}));
    } else {
      EXPECT_EQ(name(s), "c_example.run");
      EXPECT_EQ(s.depth, 0u);
    }
  }
  EXPECT_EQ(records, 8);
  EXPECT_EQ(children, 16);

  const absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(dir.File("out/summary.json"));
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->complete);
  EXPECT_EQ(summary->event_count, 25u);
  const analysis::RowKey checksum_key{.name = "record.checksum",
                                      .phase = "checksum",
                                      .activity = "hash",
                                      .backend = "scalar",
                                      .dtype = "u8",
                                      .device = "cpu0"};
  bool found_checksum = false;
  for (const analysis::Row& row : summary->rows) {
    if (row.key.name != "record.checksum") continue;
    found_checksum = true;
    EXPECT_EQ(row.key, checksum_key);
    EXPECT_EQ(row.calls, 8u);
  }
  EXPECT_TRUE(found_checksum);
  // The written files themselves: the X events' args and the row's key.
  EXPECT_NE(ReadText(dir.File("out/trace.json"))
                .find("\"backend\":\"scalar\",\"dtype\":\"u8\","
                      "\"device\":\"cpu0\""),
            std::string::npos);
  const std::string summary_text = ReadText(dir.File("out/summary.json"));
  for (const char* field : {"\"backend\": \"scalar\"", "\"dtype\": \"u8\"",
                            "\"device\": \"cpu0\""}) {
    EXPECT_NE(summary_text.find(field), std::string::npos) << field;
  }
}

TEST(CExampleTest, DisabledWritesNothing) {
  TempDir dir;
  const auto result = RunProcess(
      {kBinary}, {{"SPANPROF", "\x01unset"},
                  {"SPANPROF_OUT", dir.File("out/trace.json")},
                  {"SPANPROF_SUMMARY_OUT", dir.File("out/summary.json")}});
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_FALSE(std::filesystem::exists(dir.File("out")));
}

TEST(CExampleTest, BadEnvironmentExitsWithTwoNamingTheVariable) {
  const auto result = RunProcess({kBinary}, {{"SPANPROF", "maybe"}});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_NE(result.err.find("SPANPROF='maybe'"), std::string::npos)
      << result.err;
}

}  // namespace
}  // namespace spanprof
