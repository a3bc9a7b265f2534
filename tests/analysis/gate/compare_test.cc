// The regression gate: the classification laws, property-tested over random
// summaries and values, key matching, policy, incomplete inputs, output.
#include "spanprof/analysis/compare.h"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/numeric/int128.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "tests/testing/captures.h"

namespace spanprof::analysis {
namespace {

using ::testing::HasSubstr;

// A value drawn to hit the interesting places: 0, small, around typical
// tolerances, and near the top of int64.
int64_t DrawValue(std::mt19937_64& rng) {
  switch (std::uniform_int_distribution<int>(0, 5)(rng)) {
    case 0:
      return 0;
    case 1:
      return std::uniform_int_distribution<int64_t>(0, 20)(rng);
    case 2:
      return std::uniform_int_distribution<int64_t>(0, 2'000'000)(rng);
    case 3:
      return std::uniform_int_distribution<int64_t>(0, INT64_MAX)(rng);
    case 4:
      return INT64_MAX - std::uniform_int_distribution<int64_t>(0, 1000)(rng);
    default:
      return std::uniform_int_distribution<int64_t>(0, int64_t{1} << 40)(rng);
  }
}

int64_t DrawTolerance(std::mt19937_64& rng) {
  switch (std::uniform_int_distribution<int>(0, 4)(rng)) {
    case 0:
      return 0;
    case 1:
      return std::uniform_int_distribution<int64_t>(0, 10'000)(rng);
    case 2:
      return std::uniform_int_distribution<int64_t>(0, 1'000'000)(rng);
    case 3:
      return INT64_MAX;
    default:
      return std::uniform_int_distribution<int64_t>(0, INT64_MAX)(rng);
  }
}

// The rule written out a second way, dividing instead of multiplying:
// with bps·base = 10000·q + r (0 <= r < 10000), Δ·10000 > bps·base holds
// exactly when Δ > q.
bool BeyondBoth(absl::int128 increase, int64_t base, int64_t abs, int64_t bps) {
  if (increase <= abs) return false;
  return increase > absl::int128(bps) * base / 10000;
}

TEST(CompareClassifyTest, LawsHoldForRandomValues) {
  std::mt19937_64 rng(0x5eed);
  int regressions = 0;
  int improvements = 0;
  for (int i = 0; i < 200'000; ++i) {
    const int64_t base = DrawValue(rng);
    const int64_t cand = i % 4 == 0 ? base : DrawValue(rng);
    const int64_t abs = DrawTolerance(rng);
    const int64_t bps = DrawTolerance(rng);
    const RowStatus status = Classify(base, cand, abs, bps);
    const absl::int128 delta = absl::int128(cand) - base;
    // A regression implies cand > base and Δ beyond both tolerances.
    if (status == RowStatus::kRegressed) {
      ++regressions;
      ASSERT_GT(cand, base);
      ASSERT_GT(delta, abs);
      ASSERT_GT(delta * 10000, absl::int128(bps) * base);
    }
    // cand <= base never regresses.
    if (cand <= base) ASSERT_NE(status, RowStatus::kRegressed);
    // Improvement iff the mirror condition.
    const bool mirror =
        -delta > abs && -delta * 10000 > absl::int128(bps) * base;
    ASSERT_EQ(status == RowStatus::kImproved, mirror)
        << base << " " << cand << " " << abs << " " << bps;
    if (mirror) ++improvements;
    // Regression iff the condition, checked by division.
    ASSERT_EQ(status == RowStatus::kRegressed,
              BeyondBoth(delta, base, abs, bps))
        << base << " " << cand << " " << abs << " " << bps;
    // Only the three verdicts come out.
    ASSERT_TRUE(status == RowStatus::kRegressed ||
                status == RowStatus::kImproved || status == RowStatus::kWithin);
    // Looser tolerances never create a regression.
    const int64_t looser_abs = abs + (INT64_MAX - abs) / 2;
    if (Classify(base, cand, looser_abs, bps) == RowStatus::kRegressed ||
        Classify(base, cand, abs, bps + (INT64_MAX - bps) / 3) ==
            RowStatus::kRegressed) {
      ASSERT_EQ(status, RowStatus::kRegressed);
    }
  }
  // The draw must exercise both outcomes, or the laws were vacuous.
  EXPECT_GT(regressions, 10'000);
  EXPECT_GT(improvements, 10'000);
}

TEST(CompareClassifyTest, BothTolerancesMustBeExceeded) {
  // base 4 ms, abs 0.5 ms, 10%: the relative bound (0.4 ms) is the smaller.
  EXPECT_EQ(Classify(4'000'000, 4'500'000, 500'000, 1000), RowStatus::kWithin);
  EXPECT_EQ(Classify(4'000'000, 4'500'001, 500'000, 1000),
            RowStatus::kRegressed);
  // base 10 ms: now the relative bound (1 ms) is the larger.
  EXPECT_EQ(Classify(10'000'000, 11'000'000, 500'000, 1000),
            RowStatus::kWithin);
  EXPECT_EQ(Classify(10'000'000, 11'000'001, 500'000, 1000),
            RowStatus::kRegressed);
  EXPECT_EQ(Classify(10'000'000, 8'999'999, 500'000, 1000),
            RowStatus::kImproved);
  EXPECT_EQ(Classify(10'000'000, 9'000'000, 500'000, 1000), RowStatus::kWithin);
  // Zero tolerances: any change counts.
  EXPECT_EQ(Classify(5, 6, 0, 0), RowStatus::kRegressed);
  EXPECT_EQ(Classify(5, 5, 0, 0), RowStatus::kWithin);
  EXPECT_EQ(Classify(5, 4, 0, 0), RowStatus::kImproved);
}

TEST(CompareClassifyTest, ZeroBaselineRegressesOnAnythingBeyondAbsolute) {
  std::mt19937_64 rng(3);
  for (int i = 0; i < 10'000; ++i) {
    const int64_t cand = DrawValue(rng);
    const int64_t abs = DrawTolerance(rng);
    const int64_t bps = DrawTolerance(rng);
    EXPECT_EQ(Classify(0, cand, abs, bps) == RowStatus::kRegressed, cand > abs);
    EXPECT_NE(Classify(0, cand, abs, bps), RowStatus::kImproved);
  }
  EXPECT_EQ(ChangeBps(0, 5), std::nullopt);
}

TEST(CompareClassifyTest, ExtremesDoNotOverflow) {
  EXPECT_EQ(Classify(0, INT64_MAX, 0, INT64_MAX), RowStatus::kRegressed);
  EXPECT_EQ(Classify(INT64_MAX, 0, 0, 0), RowStatus::kImproved);
  EXPECT_EQ(Classify(INT64_MAX, INT64_MAX, 0, 0), RowStatus::kWithin);
  EXPECT_EQ(Classify(1, INT64_MAX, INT64_MAX - 2, 0), RowStatus::kRegressed);
  EXPECT_EQ(Classify(1, INT64_MAX, INT64_MAX - 1, 0), RowStatus::kWithin);
  EXPECT_EQ(ChangeBps(1, INT64_MAX), INT64_MAX);  // saturated
  EXPECT_EQ(ChangeBps(INT64_MAX, 0), -10000);
}

TEST(CompareClassifyTest, ChangeBpsTruncatesTowardZero) {
  EXPECT_EQ(ChangeBps(3, 4), 3333);
  EXPECT_EQ(ChangeBps(3, 2), -3333);
  EXPECT_EQ(ChangeBps(4'000'000, 10'000'000), 15000);
  EXPECT_EQ(ChangeBps(7, 7), 0);
}

TEST(CompareMetricTest, NamesRoundTrip) {
  std::set<std::string> names;
  for (CompareMetric metric : AllCompareMetrics()) {
    const std::string name(CompareMetricName(metric));
    absl::StatusOr<CompareMetric> back = ParseCompareMetric(name);
    ASSERT_TRUE(back.ok()) << name;
    EXPECT_EQ(*back, metric);
    names.insert(name);
  }
  EXPECT_EQ(names, (std::set<std::string>{
                       "total_ns", "self_ns", "mean_ns", "median_ns", "p95_ns",
                       "p99_ns", "max_ns", "total_heartbeats",
                       "self_heartbeats", "alloc_count", "alloc_bytes"}));
  for (const char* bad : {"", "p95", "P95_NS", "p95_ns ", "calls"}) {
    absl::StatusOr<CompareMetric> parsed = ParseCompareMetric(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_THAT(std::string(parsed.status().message()),
                HasSubstr("one of: total_ns self_ns"));
  }
}

TEST(CompareMetricTest, EachMetricReadsItsOwnField) {
  Row row;
  row.total_ns = 1;
  row.self_ns = 2;
  row.mean_ns = 3;
  row.median_ns = 4;
  row.p95_ns = 5;
  row.p99_ns = 6;
  row.max_ns = 7;
  row.total_heartbeats = 8;
  row.self_heartbeats = 9;
  row.alloc_count = 10;
  row.alloc_bytes = 11;
  int64_t expected = 1;
  for (CompareMetric metric : AllCompareMetrics()) {
    EXPECT_EQ(MetricValue(row, metric), expected++)
        << CompareMetricName(metric);
  }
  row.alloc_count.reset();
  EXPECT_EQ(MetricValue(row, CompareMetric::kAllocCount), std::nullopt);
}

// A summary made of the given rows (only what Compare reads).
Summary WithRows(std::vector<Row> rows) {
  Summary summary;
  summary.rows = std::move(rows);
  return summary;
}

Row MakeRow(std::string name, std::string phase, int64_t p95,
            uint64_t calls = 1) {
  Row row;
  row.key = RowKey{.name = std::move(name), .phase = std::move(phase)};
  row.label = RowLabel(row.key);
  row.calls = calls;
  row.p95_ns = p95;
  return row;
}

TEST(CompareTest, MatchesOnTheFullKey) {
  // Same name, different phase: two keys, one new and one missing.
  const Summary base = WithRows({MakeRow("step", "forward", 100)});
  const Summary cand = WithRows({MakeRow("step", "backward", 100)});
  absl::StatusOr<Comparison> c = Compare(base, cand, {});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->rows.size(), 2u);
  EXPECT_EQ(c->counts.new_keys, 1u);
  EXPECT_EQ(c->counts.missing, 1u);
  EXPECT_EQ(c->counts.within, 0u);
  // Nothing in common: no evidence, so no pass (compare_evidence_test.cc).
  EXPECT_FALSE(c->passed);
  EXPECT_EQ(c->no_evidence, "the two sides have no row in common");
  for (const ComparisonRow& row : c->rows) {
    if (row.key.phase == "backward") {
      EXPECT_EQ(row.status, RowStatus::kNew);
      EXPECT_EQ(row.base, std::nullopt);
      EXPECT_EQ(row.candidate, 100);
      EXPECT_EQ(row.delta, std::nullopt);
    } else {
      EXPECT_EQ(row.status, RowStatus::kMissing);
      EXPECT_EQ(row.base, 100);
      EXPECT_EQ(row.candidate, std::nullopt);
    }
  }
  // Every other tag is part of the key too.
  for (size_t tag = 0; tag < kTagFields.size(); ++tag) {
    Row a = MakeRow("step", "", 100);
    Row b = a;
    b.key.*kRowKeyTags[tag] = "x";
    c = Compare(WithRows({a}), WithRows({b}), {});
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->counts.new_keys, 1u) << kTagFields[tag].name;
    EXPECT_EQ(c->counts.missing, 1u) << kTagFields[tag].name;
  }
}

TEST(CompareTest, RowsDifferingOnlyInDtypeAreDifferentKeys) {
  Row f16 = MakeRow("matmul", "train", 100);
  f16.key.backend = "cuda";
  f16.key.device = "gpu0";
  Row f32 = f16;
  f32.key.dtype = "f32";
  f16.key.dtype = "f16";
  f16.label = RowLabel(f16.key);
  f32.label = RowLabel(f32.key);
  Row f16_slower = f16;
  f16_slower.p95_ns = 1'000'000;
  // f16 against itself, slower: a regression; f32 only in the candidate.
  absl::StatusOr<Comparison> c =
      Compare(WithRows({f16}), WithRows({f16_slower, f32}), {});
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_EQ(c->rows.size(), 2u);
  EXPECT_EQ(c->counts.regressed, 1u);
  EXPECT_EQ(c->counts.new_keys, 1u);
  EXPECT_EQ(c->counts.missing, 0u);
  for (const ComparisonRow& row : c->rows) {
    if (row.key.dtype == "f16") {
      EXPECT_EQ(row.status, RowStatus::kRegressed);
    } else {
      EXPECT_EQ(row.key.dtype, "f32");
      EXPECT_EQ(row.status, RowStatus::kNew);
    }
  }
}

TEST(CompareTest, NewAndMissingFailOnlyWhenAsked) {
  const Summary base = WithRows({MakeRow("a", "", 10), MakeRow("gone", "", 5)});
  const Summary cand =
      WithRows({MakeRow("a", "", 10), MakeRow("fresh", "", 5)});
  for (int mask = 0; mask < 4; ++mask) {
    ComparePolicy policy;
    policy.fail_on_new = (mask & 1) != 0;
    policy.fail_on_missing = (mask & 2) != 0;
    absl::StatusOr<Comparison> c = Compare(base, cand, policy);
    ASSERT_TRUE(c.ok());
    EXPECT_EQ(c->passed, mask == 0) << mask;
  }
}

TEST(CompareTest, AllocationMetricsNotMeasuredOnEitherSide) {
  Row measured = MakeRow("a", "", 10);
  measured.alloc_count = 5;
  measured.alloc_bytes = 50;
  const Row unmeasured = MakeRow("a", "", 10);
  ComparePolicy policy;
  policy.metric = CompareMetric::kAllocBytes;
  for (const auto& [b, c] :
       {std::pair{measured, unmeasured}, std::pair{unmeasured, measured},
        std::pair{unmeasured, unmeasured}}) {
    absl::StatusOr<Comparison> result =
        Compare(WithRows({b}), WithRows({c}), policy);
    ASSERT_TRUE(result.ok());
    ASSERT_EQ(result->rows.size(), 1u);
    EXPECT_EQ(result->rows[0].status, RowStatus::kNotMeasured);
    EXPECT_EQ(result->counts.not_measured, 1u);
    EXPECT_TRUE(result->passed);
  }
  Row more = measured;
  more.alloc_bytes = 51;
  absl::StatusOr<Comparison> result =
      Compare(WithRows({measured}), WithRows({more}), policy);
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(result->rows[0].status, RowStatus::kRegressed);
}

// Random summaries: rows over a small key space so that base and candidate
// share some keys and not others.
Summary RandomSummary(std::mt19937_64& rng) {
  const char* names[] = {"a", "b", "c"};
  const char* phases[] = {"", "x"};
  std::vector<Row> rows;
  for (const char* name : names) {
    for (const char* phase : phases) {
      if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) continue;
      Row row = MakeRow(name, phase, DrawValue(rng),
                        std::uniform_int_distribution<uint64_t>(1, 9)(rng));
      row.total_ns = DrawValue(rng);
      row.self_heartbeats = static_cast<uint64_t>(DrawValue(rng));
      rows.push_back(row);
    }
  }
  return WithRows(rows);
}

TEST(CompareTest, LawsHoldOverRandomSummaries) {
  std::mt19937_64 rng(99);
  for (int i = 0; i < 2'000; ++i) {
    const Summary base = RandomSummary(rng);
    const Summary cand = RandomSummary(rng);
    ComparePolicy policy;
    const std::vector<CompareMetric>& metrics = AllCompareMetrics();
    policy.metric = metrics[std::uniform_int_distribution<size_t>(0, 8)(rng)];
    policy.absolute_tolerance_ns = DrawTolerance(rng);
    policy.relative_tolerance_bps = DrawTolerance(rng);
    policy.fail_on_new = (i & 1) != 0;
    policy.fail_on_missing = (i & 2) != 0;
    // The evidence rules have their own tests (compare_evidence_test.cc).
    policy.allow_missing = true;
    absl::StatusOr<Comparison> c = Compare(base, cand, policy, "b", "c");
    ASSERT_TRUE(c.ok()) << c.status();

    std::map<RowKey, const Row*> base_rows;
    std::map<RowKey, const Row*> cand_rows;
    for (const Row& row : base.rows) base_rows[row.key] = &row;
    for (const Row& row : cand.rows) cand_rows[row.key] = &row;
    std::set<RowKey> all;
    for (const auto& [key, row] : base_rows) all.insert(key);
    for (const auto& [key, row] : cand_rows) all.insert(key);
    ASSERT_EQ(c->rows.size(), all.size());

    ComparisonCounts counts;
    for (const ComparisonRow& row : c->rows) {
      const bool in_base = base_rows.count(row.key) != 0;
      const bool in_cand = cand_rows.count(row.key) != 0;
      switch (row.status) {
        case RowStatus::kNew:
          ++counts.new_keys;
          ASSERT_TRUE(in_cand && !in_base);
          break;
        case RowStatus::kMissing:
          ++counts.missing;
          ASSERT_TRUE(in_base && !in_cand);
          break;
        default: {
          ASSERT_TRUE(in_base && in_cand);
          const int64_t b = *MetricValue(*base_rows[row.key], policy.metric);
          const int64_t v = *MetricValue(*cand_rows[row.key], policy.metric);
          ASSERT_EQ(row.base, b);
          ASSERT_EQ(row.candidate, v);
          ASSERT_EQ(row.delta, v - b);
          ASSERT_EQ(row.status, Classify(b, v, policy.absolute_tolerance_ns,
                                         policy.relative_tolerance_bps));
          ASSERT_EQ(row.base_calls, base_rows[row.key]->calls);
          ASSERT_EQ(row.candidate_calls, cand_rows[row.key]->calls);
          if (row.status == RowStatus::kRegressed) {
            ++counts.regressed;
            ASSERT_GT(v, b);
          } else if (row.status == RowStatus::kImproved) {
            ++counts.improved;
            ASSERT_LT(v, b);
          } else {
            ++counts.within;
          }
        }
      }
    }
    ASSERT_EQ(c->counts, counts);
    ASSERT_EQ(c->passed, counts.regressed == 0 &&
                             !(policy.fail_on_new && counts.new_keys > 0) &&
                             !(policy.fail_on_missing && counts.missing > 0));
    // Worst first: every regression precedes every other row, by Δ.
    bool seen_other = false;
    int64_t last_delta = INT64_MAX;
    for (const ComparisonRow& row : c->rows) {
      if (row.status == RowStatus::kRegressed) {
        ASSERT_FALSE(seen_other);
        ASSERT_LE(*row.delta, last_delta);
        last_delta = *row.delta;
      } else {
        seen_other = true;
      }
    }
    // Comparing a summary with itself never fails.
    absl::StatusOr<Comparison> self = Compare(base, base, policy);
    ASSERT_TRUE(self.ok());
    EXPECT_TRUE(self->passed);
    EXPECT_EQ(self->counts.within, base.rows.size());
  }
}

TEST(CompareTest, RefusesIncompleteSummariesUnlessAllowed) {
  const Summary clean = Summarize(testing::RichCapture());
  const Summary drops = Summarize(testing::RichCapture({.drops = true}));
  const Summary unfinished =
      Summarize(testing::RichCapture({.unfinished = true}));
  const Summary broken = Summarize(testing::RichCapture({.broken = true}));
  Summary exited = clean;
  exited.complete = false;
  const std::pair<const Summary*, std::string> cases[] = {
      {&drops, "3 dropped events"},
      {&unfinished, "1 unfinished events"},
      {&broken, "validation issues"},
      {&exited, "did not end normally"},
  };
  for (const auto& [summary, why] : cases) {
    absl::StatusOr<Comparison> c =
        Compare(clean, *summary, {}, "base.json", "cand.json");
    ASSERT_FALSE(c.ok()) << why;
    EXPECT_THAT(std::string(c.status().message()), HasSubstr("cand.json"));
    EXPECT_THAT(std::string(c.status().message()), HasSubstr(why));
    EXPECT_THAT(std::string(c.status().message()),
                HasSubstr("--allow-incomplete"));
    c = Compare(*summary, clean, {}, "base.json", "cand.json");
    ASSERT_FALSE(c.ok());
    EXPECT_THAT(std::string(c.status().message()), HasSubstr("base.json"));
    c = Compare(*summary, clean, {.allow_incomplete = true});
    EXPECT_TRUE(c.ok()) << c.status();
  }
}

TEST(CompareTest, RefusesNegativeTolerances) {
  EXPECT_FALSE(Compare({}, {}, {.absolute_tolerance_ns = -1}).ok());
  EXPECT_FALSE(Compare({}, {}, {.relative_tolerance_bps = -1}).ok());
}

TEST(CompareTest, FindsTheSlowerPhaseInRealSummaries) {
  // The regression example's shape: one phase goes from 4 ms to 10 ms.
  const Summary base =
      Summarize(testing::RichCapture({.scale = 1000, .forward_ns = 4'000}));
  const Summary cand =
      Summarize(testing::RichCapture({.scale = 1000, .forward_ns = 10'000}));
  ASSERT_TRUE(base.complete);
  ASSERT_TRUE(cand.complete);
  const ComparePolicy policy{.metric = CompareMetric::kP95Ns,
                             .absolute_tolerance_ns = 500'000,
                             .relative_tolerance_bps = 1000};
  absl::StatusOr<Comparison> c = Compare(base, cand, policy, "b", "c");
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_FALSE(c->passed);
  // The phase and the root that contains it; equal Δ, so by key.
  ASSERT_EQ(c->counts.regressed, 2u);
  EXPECT_EQ(c->counts.within, 2u);
  EXPECT_EQ(c->rows[0].key.name, "app.run");
  EXPECT_EQ(c->rows[0].delta, 6'000'000);
  const ComparisonRow& forward = c->rows[1];
  EXPECT_EQ(forward.key.name, "model.forward");
  EXPECT_EQ(forward.status, RowStatus::kRegressed);
  EXPECT_EQ(forward.base, 4'000'000);
  EXPECT_EQ(forward.candidate, 10'000'000);
  EXPECT_EQ(forward.delta, 6'000'000);
  EXPECT_EQ(forward.change_bps, 15000);

  const std::string table = FormatComparison(*c);
  EXPECT_THAT(table,
              HasSubstr("model.forward [phase=forward, module=encoder]"));
  EXPECT_THAT(table, HasSubstr("regressed"));
  EXPECT_THAT(table, HasSubstr("+150.00%"));
  EXPECT_THAT(table, HasSubstr("FAIL (2 regressed)"));

  absl::StatusOr<Comparison> same = Compare(base, base, policy, "b", "b");
  ASSERT_TRUE(same.ok());
  EXPECT_TRUE(same->passed);
  EXPECT_THAT(FormatComparison(*same), HasSubstr("PASS: 0 regressed"));
}

TEST(CompareTest, JsonCarriesPolicyRowsAndVerdict) {
  const Summary base =
      WithRows({MakeRow("a\"b", "", 10), MakeRow("gone", "", 5)});
  const Summary cand = WithRows({MakeRow("a\"b", "", 20)});
  absl::StatusOr<Comparison> c =
      Compare(base, cand, {.fail_on_missing = true}, "b.json", "c.json");
  ASSERT_TRUE(c.ok());
  const std::string json = ComparisonToJson(*c);
  EXPECT_THAT(json, HasSubstr("\"schema\": \"spanprof.comparison\""));
  EXPECT_THAT(json, HasSubstr("\"schema_version\": 1"));
  EXPECT_THAT(json, HasSubstr("\"metric\": \"p95_ns\""));
  EXPECT_THAT(json, HasSubstr("\"fail_on_missing\": true"));
  EXPECT_THAT(json, HasSubstr("\"label\":\"a\\\"b\""));
  EXPECT_THAT(json, HasSubstr("\"status\":\"missing\",\"base\":5,"
                              "\"candidate\":null,\"delta\":null"));
  EXPECT_THAT(json, HasSubstr("\"passed\": false"));
}

// A complete summary with one row per (name, counter total) pair; a total of
// -1 leaves the row without the counter.
Summary CountedSummary(
    const std::vector<std::pair<std::string, int64_t>>& rows) {
  Summary summary;
  for (const auto& [name, total] : rows) {
    Row& row = summary.rows.emplace_back();
    row.key.name = name;
    row.label = name;
    row.calls = 1;
    if (total >= 0) row.counters.push_back(RowCounter{"bytes", total, total});
    row.counters.push_back(RowCounter{"other", 5, 5});
  }
  return summary;
}

TEST(CompareCounterTest, ParsesCounterColonName) {
  ComparePolicy policy;
  ASSERT_TRUE(ParseMetric("counter:bytes.copied", policy).ok());
  EXPECT_EQ(policy.metric, CompareMetric::kCounter);
  EXPECT_EQ(policy.counter, "bytes.copied");
  EXPECT_EQ(MetricLabel(policy), "counter:bytes.copied");
  ASSERT_TRUE(ParseMetric("self_ns", policy).ok());
  EXPECT_EQ(policy.metric, CompareMetric::kSelfNs);
  EXPECT_EQ(policy.counter, "");
  EXPECT_EQ(MetricLabel(policy), "self_ns");
  const absl::Status empty = ParseMetric("counter:", policy);
  EXPECT_EQ(empty.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(empty.message()), HasSubstr("counter:NAME"));
  const absl::Status bogus = ParseMetric("bytes", policy);
  EXPECT_THAT(std::string(bogus.message()),
              HasSubstr("unknown metric \"bytes\""));
  EXPECT_THAT(std::string(bogus.message()), HasSubstr("or counter:NAME"));
}

TEST(CompareCounterTest, ComparesRowTotalsAndAMissingCounterIsZero) {
  const Summary base =
      CountedSummary({{"parse", 1000}, {"read", -1}, {"same", 7}});
  const Summary cand =
      CountedSummary({{"parse", 1500}, {"read", 40}, {"same", 7}});
  ComparePolicy policy;
  ASSERT_TRUE(ParseMetric("counter:bytes", policy).ok());
  policy.absolute_tolerance_ns = 30;
  absl::StatusOr<Comparison> comparison = Compare(base, cand, policy);
  ASSERT_TRUE(comparison.ok()) << comparison.status();
  EXPECT_FALSE(comparison->passed);
  EXPECT_EQ(comparison->counts.regressed, 2u);
  EXPECT_EQ(comparison->counts.within, 1u);
  const ComparisonRow& worst = comparison->rows[0];
  EXPECT_EQ(worst.key.name, "parse");
  EXPECT_EQ(worst.base, 1000);
  EXPECT_EQ(worst.candidate, 1500);
  EXPECT_EQ(comparison->rows[1].key.name, "read");
  EXPECT_EQ(comparison->rows[1].base, 0);
  EXPECT_EQ(comparison->rows[1].candidate, 40);
  // Counts are not durations: no "ns" anywhere in the table's values.
  const std::string table = FormatComparison(*comparison);
  EXPECT_THAT(table, HasSubstr("metric counter:bytes; regression when the "
                               "increase exceeds 30 AND"));
  EXPECT_THAT(table, HasSubstr("+500"));
  EXPECT_THAT(table, ::testing::Not(HasSubstr(" ns")));
  EXPECT_THAT(ComparisonToJson(*comparison),
              HasSubstr("\"metric\": \"counter:bytes\""));
  // Within a tolerance that covers both, it passes.
  policy.absolute_tolerance_ns = 500;
  EXPECT_TRUE(Compare(base, cand, policy)->passed);
}

TEST(CompareCounterTest, ACounterNeitherSummaryHasIsAnError) {
  const Summary base = CountedSummary({{"parse", 1000}});
  ComparePolicy policy;
  ASSERT_TRUE(ParseMetric("counter:byte", policy).ok());
  const absl::StatusOr<Comparison> comparison = Compare(base, base, policy);
  ASSERT_FALSE(comparison.ok());
  EXPECT_EQ(comparison.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(comparison.status().message(),
            "--metric counter:byte: no row of either summary has the counter "
            "\"byte\" (their counters: bytes, other)");
  // Known on one side only is enough.
  ASSERT_TRUE(ParseMetric("counter:bytes", policy).ok());
  EXPECT_TRUE(Compare(CountedSummary({{"parse", -1}}), base, policy).ok());
  EXPECT_THAT(
      std::string(Compare(Summary(), Summary(), policy).status().message()),
      HasSubstr("(they have no counters)"));
}

TEST(CompareCounterTest, DroppedArgsMakeASummaryIncomplete) {
  Summary base = CountedSummary({{"parse", 1000}});
  base.dropped_args = 3;
  ComparePolicy policy;
  const absl::StatusOr<Comparison> refused =
      Compare(base, CountedSummary({{"parse", 1000}}), policy, "base.json");
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(std::string(refused.status().message()),
              HasSubstr("base.json: incomplete capture (3 dropped args or "
                        "counts)"));
  policy.allow_incomplete = true;
  EXPECT_TRUE(Compare(base, base, policy).ok());
}

}  // namespace
}  // namespace spanprof::analysis
