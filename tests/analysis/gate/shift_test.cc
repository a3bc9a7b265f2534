// The gate's statistics: the exact null distribution of U against Mann and
// Whitney's table, the Hodges–Lehmann shift and its interval on known
// samples, and what 2 runs a side cannot decide.
#include "analysis/src/gate/shift.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <optional>
#include <random>
#include <vector>

namespace spanprof::analysis::gate {
namespace {

TEST(ShiftTest, ExactDistributionOfUMatchesTheCounts) {
  // m = n = 2: the 6 arrangements give U = 0, 1, 2, 2, 3, 4.
  EXPECT_DOUBLE_EQ(ExactUCdf(2, 2, 0), 1.0 / 6);
  EXPECT_DOUBLE_EQ(ExactUCdf(2, 2, 2), 4.0 / 6);
  EXPECT_DOUBLE_EQ(ExactUCdf(2, 2, 4), 1.0);
  // m = n = 5: 252 arrangements; U <= 2 in 4 of them, U <= 3 in 7 (the
  // critical value of the two-sided 5% test is 2).
  EXPECT_NEAR(ExactUCdf(5, 5, 2), 4.0 / 252, 1e-12);
  EXPECT_NEAR(ExactUCdf(5, 5, 3), 7.0 / 252, 1e-12);
  // Unequal sizes: m = 3, n = 4 has 35 arrangements, U <= 1 in 2.
  EXPECT_NEAR(ExactUCdf(3, 4, 1), 2.0 / 35, 1e-12);
  EXPECT_NEAR(ExactUCdf(4, 3, 1), 2.0 / 35, 1e-12);
}

TEST(ShiftTest, UCountsPairsWhereTheCandidateIsLarger) {
  const std::vector<double> base = {1, 2, 3};
  const std::vector<double> cand = {2, 4};
  // 4 beats 3 values, 2 beats 1 and ties 1.
  EXPECT_DOUBLE_EQ(MannWhitneyU(base, cand), 4.5);
}

TEST(ShiftTest, ASeparatedShiftIsEstimatedWithAnIntervalAroundIt) {
  const std::vector<double> base = {100, 102, 101, 99, 103};
  const std::vector<double> cand = {110, 112, 111, 109, 113};
  const Shift shift = EstimateShift(base, cand, 0.95);
  EXPECT_DOUBLE_EQ(shift.estimate, 10);
  ASSERT_TRUE(shift.ci_low.has_value());
  ASSERT_TRUE(shift.ci_high.has_value());
  // k = 3 of the 25 sorted differences (6..14): [D_3, D_23] = [7, 13].
  EXPECT_DOUBLE_EQ(*shift.ci_low, 7);
  EXPECT_DOUBLE_EQ(*shift.ci_high, 13);
  EXPECT_TRUE(shift.exact);
  // Complete separation: p = 2 / 252.
  EXPECT_NEAR(shift.p_value, 2.0 / 252, 1e-12);
}

TEST(ShiftTest, TwoRunsASideCannotReachTheConfidence) {
  const Shift shift = EstimateShift(std::vector<double>{100, 101},
                                    std::vector<double>{150, 151}, 0.95);
  EXPECT_DOUBLE_EQ(shift.estimate, 50);
  EXPECT_FALSE(shift.ci_low.has_value());
  EXPECT_FALSE(shift.ci_high.has_value());
  EXPECT_NEAR(shift.p_value, 2.0 / 6, 1e-12);
}

TEST(ShiftTest, IdenticalSamplesShiftByNothing) {
  const std::vector<double> same = {5, 6, 7, 8, 9, 10};
  const Shift shift = EstimateShift(same, same, 0.95);
  EXPECT_DOUBLE_EQ(shift.estimate, 0);
  ASSERT_TRUE(shift.ci_low.has_value());
  EXPECT_LE(*shift.ci_low, 0);
  EXPECT_GE(*shift.ci_high, 0);
  EXPECT_GT(shift.p_value, 0.9);
}

TEST(ShiftTest, LargeSamplesUseTheNormalApproximation) {
  std::mt19937_64 engine(3);
  std::normal_distribution<double> noise(0, 1);
  std::vector<double> base;
  std::vector<double> cand;
  for (int i = 0; i < 60; ++i) {
    base.push_back(100 + noise(engine));
    cand.push_back(101 + noise(engine));
  }
  const Shift shift = EstimateShift(base, cand, 0.95);
  EXPECT_FALSE(shift.exact);
  ASSERT_TRUE(shift.ci_low.has_value());
  EXPECT_LT(*shift.ci_low, 1.0);
  EXPECT_GT(*shift.ci_high, 1.0);
  EXPECT_GT(*shift.ci_low, 0.3);
  EXPECT_LT(shift.p_value, 0.001);
}

TEST(ShiftTest, TheIntervalCoversTheTrueShiftAtItsConfidence) {
  // 400 A/B draws of 10 runs a side with a true shift of 3: the 95%
  // interval holds 3 in at least 93% of them (the exact interval is
  // conservative: its coverage is at least the confidence).
  std::mt19937_64 engine(11);
  std::lognormal_distribution<double> noise(0, 0.05);
  int covered = 0;
  for (int trial = 0; trial < 400; ++trial) {
    std::vector<double> base;
    std::vector<double> cand;
    for (int i = 0; i < 10; ++i) {
      base.push_back(100 * noise(engine));
      cand.push_back(103 + 100 * (noise(engine) - 1));
    }
    const Shift shift = EstimateShift(base, cand, 0.95);
    if (shift.ci_low && shift.ci_high && *shift.ci_low <= 3 &&
        *shift.ci_high >= 3) {
      ++covered;
    }
  }
  EXPECT_GE(covered, 372);
}

TEST(WelchTest, StudentTMatchesTheTables) {
  // Two-sided 95% critical values: 12.706 (1 df), 2.776 (4 df), 2.228
  // (10 df); 1.96 in the normal limit.
  EXPECT_NEAR(StudentTCdf(12.706, 1), 0.975, 1e-4);
  EXPECT_NEAR(StudentTCdf(2.776, 4), 0.975, 1e-4);
  EXPECT_NEAR(StudentTCdf(2.228, 10), 0.975, 1e-4);
  EXPECT_NEAR(StudentTCdf(1.96, 1e6), 0.975, 1e-4);
  EXPECT_NEAR(StudentTCdf(-2.776, 4), 0.025, 1e-4);
  EXPECT_DOUBLE_EQ(StudentTCdf(0, 3.5), 0.5);
}

TEST(WelchTest, ALargeRatioIsDecidedFromThreeValuesASide) {
  const std::vector<double> base = {38000, 39000, 37500};
  const std::vector<double> cand = {1000, 1020, 990};
  const std::optional<Shift> shift = EstimateLogShift(base, cand, 0.95);
  ASSERT_TRUE(shift.has_value());
  ASSERT_TRUE(shift->ci_low.has_value());
  ASSERT_TRUE(shift->ci_high.has_value());
  // The ratio of geometric means is about 1/38: the shift is the baseline
  // median times (ratio - 1), inside its interval, all of it far below 0.
  EXPECT_NEAR(shift->estimate, 38000 * (1003.3 / 38163.0 - 1), 50);
  EXPECT_LE(*shift->ci_low, shift->estimate);
  EXPECT_GE(*shift->ci_high, shift->estimate);
  EXPECT_LT(*shift->ci_high, -30000);
  EXPECT_LT(shift->p_value, 0.001);
  // The rank test cannot reach 95% with 3 and 3 values at all.
  EXPECT_FALSE(EstimateShift(base, cand, 0.95).ci_low.has_value());
}

TEST(WelchTest, NoiseGivesAnIntervalAroundNoChange) {
  const std::vector<double> base = {1000, 1100, 950};
  const std::vector<double> cand = {1050, 980, 1080};
  const std::optional<Shift> shift = EstimateLogShift(base, cand, 0.95);
  ASSERT_TRUE(shift.has_value());
  EXPECT_LT(*shift->ci_low, 0);
  EXPECT_GT(*shift->ci_high, 0);
  EXPECT_GT(shift->p_value, 0.5);
}

TEST(WelchTest, RefusesWhatLogarithmsCannotCompare) {
  EXPECT_FALSE(EstimateLogShift(std::vector<double>{0, 1, 2},
                                std::vector<double>{3, 4, 5}, 0.95)
                   .has_value());
  EXPECT_FALSE(EstimateLogShift(std::vector<double>{1},
                                std::vector<double>{3, 4, 5}, 0.95)
                   .has_value());
  EXPECT_FALSE(EstimateLogShift(std::vector<double>{2, 2},
                                std::vector<double>{3, 3}, 0.95)
                   .has_value());
}

}  // namespace
}  // namespace spanprof::analysis::gate
