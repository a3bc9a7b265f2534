// The reader's upgrade step: what a summary of an earlier version lacks is
// derived from what it has, as the current writer would have written it.
#include "analysis/src/summary/summary_upgrade.h"

#include <cstdint>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "tests/analysis/captures.h"

namespace spanprof::analysis {
namespace {

using internal::UpgradeSummary;
using ::spanprof::testing::RichCapture;

Summary Written() { return Summarize(RichCapture({.counters = true})); }

TEST(SummaryUpgradeTest, Version1GetsTheTailRatios) {
  const Summary written = Written();
  Summary read = written;
  for (Row& row : read.rows) row.tail_ratio.reset();
  UpgradeSummary(2, read);
  EXPECT_FALSE(read.rows[0].tail_ratio.has_value()) << "version 2 has them";
  UpgradeSummary(1, read);
  ASSERT_EQ(read.rows.size(), written.rows.size());
  bool some = false;
  for (size_t i = 0; i < read.rows.size(); ++i) {
    EXPECT_EQ(read.rows[i].tail_ratio, written.rows[i].tail_ratio) << i;
    some = some || written.rows[i].tail_ratio.has_value();
  }
  EXPECT_TRUE(some);
}

TEST(SummaryUpgradeTest, Versions1And2GetTheInstrumentationShare) {
  const Summary written = Written();
  Summary read = written;
  for (Row& row : read.rows) row.instrumentation_permille = 0;
  UpgradeSummary(3, read);
  EXPECT_EQ(read.rows[0].instrumentation_permille, 0) << "version 3 has it";
  for (const int64_t version : {1, 2}) {
    Summary old = read;
    UpgradeSummary(version, old);
    bool some = false;
    for (size_t i = 0; i < old.rows.size(); ++i) {
      EXPECT_EQ(old.rows[i].instrumentation_permille,
                written.rows[i].instrumentation_permille)
          << "version " << version << ", row " << i;
      some = some || written.rows[i].instrumentation_permille > 0;
    }
    EXPECT_TRUE(some);
  }
}

TEST(SummaryUpgradeTest, Versions1To3AreOfOneProcess) {
  Summary read = Written();
  read.process_count = 0;
  for (Row& row : read.rows) row.processes = 7;
  Summary v4 = read;
  UpgradeSummary(4, v4);
  EXPECT_EQ(v4, read) << "version 4 has them";
  UpgradeSummary(3, read);
  EXPECT_EQ(read.process_count, 1u);
  for (const Row& row : read.rows) {
    EXPECT_EQ(row.processes, row.threads > 0 ? 1u : 0u) << row.label;
  }
}

TEST(SummaryUpgradeTest, TheCurrentVersionIsLeftAsRead) {
  Summary read = Written();
  read.process_count = 3;
  read.rows[0].tail_ratio.reset();
  read.rows[0].instrumentation_permille = 999;
  const Summary before = read;
  UpgradeSummary(kSummarySchemaVersion, read);
  EXPECT_EQ(read, before);
}

}  // namespace
}  // namespace spanprof::analysis
