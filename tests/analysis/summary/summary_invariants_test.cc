// The reader's last step on its own: the cross-field rules, checked on a
// `Summary` value, with errors that name the input and the field at fault.
#include "analysis/src/summary/summary_invariants.h"

#include <cstddef>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "tests/analysis/captures.h"

namespace spanprof::analysis {
namespace {

using internal::CheckSummaryInvariants;
using ::spanprof::testing::RichCapture;
using ::testing::HasSubstr;
using ::testing::StartsWith;

Summary Clean() { return Summarize(RichCapture({.counters = true})); }

std::string Error(const Summary& summary) {
  const absl::Status status = CheckSummaryInvariants("x.json", summary);
  if (status.ok()) return "ok";
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  return std::string(status.message());
}

template <typename Mutate>
std::string ErrorAfter(Mutate&& mutate) {
  Summary summary = Clean();
  std::forward<Mutate>(mutate)(summary);
  return Error(summary);
}

TEST(SummaryInvariantsTest, WhatSummarizeComputesHolds) {
  EXPECT_EQ(Error(Clean()), "ok");
  EXPECT_EQ(
      Error(Summarize(RichCapture(
          {.drops = true, .unfinished = true, .broken = true, .keys = true}))),
      "ok");
}

TEST(SummaryInvariantsTest, TotalsAreTheRowsSums) {
  EXPECT_THAT(ErrorAfter([](Summary& s) { s.event_count += 1; }),
              StartsWith("x.json: $.event_count: "));
  EXPECT_THAT(ErrorAfter([](Summary& s) { s.recorded_heartbeats += 1; }),
              StartsWith("x.json: $.recorded_heartbeats: "));
  EXPECT_THAT(
      ErrorAfter([](Summary& s) { s.open_at_exit_events = s.event_count + 1; }),
      StartsWith("x.json: $.open_at_exit_events: "));
}

TEST(SummaryInvariantsTest, EachRowIsConsistent) {
  EXPECT_THAT(ErrorAfter([](Summary& s) { s.rows[0].mean_ns += 1; }),
              StartsWith("x.json: $.rows[0]: mean_ns"));
  EXPECT_THAT(ErrorAfter([](Summary& s) { s.rows[1].label = "other"; }),
              StartsWith("x.json: $.rows[1]: label \"other\""));
  size_t counted = 0;
  while (counted < Clean().rows.size() &&
         Clean().rows[counted].counters.empty()) {
    ++counted;
  }
  ASSERT_LT(counted, Clean().rows.size()) << "no row with counters";
  EXPECT_THAT(ErrorAfter([&](Summary& s) {
                RowCounter& counter = s.rows[counted].counters[0];
                counter.self = counter.total + 1;
              }),
              HasSubstr("$.rows[" + std::to_string(counted) + "]: counter "));
}

TEST(SummaryInvariantsTest, RowsAreUniqueAndSorted) {
  EXPECT_THAT(ErrorAfter([](Summary& s) { std::swap(s.rows[0], s.rows[1]); }),
              HasSubstr("$.rows[1]: rows are not sorted by self_ns"));
  EXPECT_THAT(ErrorAfter([](Summary& s) { s.rows.push_back(s.rows.back()); }),
              HasSubstr("duplicate key"));
}

TEST(SummaryInvariantsTest, CaptureWideFlagsAgree) {
  EXPECT_THAT(ErrorAfter([](Summary& s) {
                s.complete = true;
                s.dropped_args = 1;
              }),
              StartsWith("x.json: $.complete: true, but the capture has"));
  EXPECT_THAT(ErrorAfter([](Summary& s) { s.clock = "unknown"; }),
              StartsWith("x.json: $.clock: \"unknown\" with source"));
}

}  // namespace
}  // namespace spanprof::analysis
