// The one decimal integer parser (spanprof/internal/parse_int.h), whose
// rules the JSON readers, the environment and the CLI flags build on: digits
// only, '-' only for the signed form, no '+', no spaces, leading zeros left
// to the caller, and overflow told apart from junk.
#include "spanprof/internal/parse_int.h"

#include <cstdint>
#include <string_view>
#include <system_error>

#include "gtest/gtest.h"

namespace spanprof::internal {
namespace {

TEST(ParseIntTest, Uint64ReadsDigitsOnly) {
  uint64_t value = 7;
  EXPECT_EQ(ParseUint64("0", &value), std::errc());
  EXPECT_EQ(value, 0u);
  EXPECT_EQ(ParseUint64("007", &value), std::errc());
  EXPECT_EQ(value, 7u);
  EXPECT_EQ(ParseUint64("18446744073709551615", &value), std::errc());
  EXPECT_EQ(value, UINT64_MAX);
  value = 3;
  for (std::string_view bad : {"", "-1", "+1", " 1", "1 ", "1x", "0x10", "-"}) {
    EXPECT_EQ(ParseUint64(bad, &value), std::errc::invalid_argument) << bad;
  }
  EXPECT_EQ(ParseUint64("18446744073709551616", &value),
            std::errc::result_out_of_range);
  // Junk after too many digits is junk first.
  EXPECT_EQ(ParseUint64("18446744073709551616x", &value),
            std::errc::invalid_argument);
  EXPECT_EQ(value, 3u);  // untouched on failure
}

TEST(ParseIntTest, Int64ReadsASignedRange) {
  int64_t value = 0;
  EXPECT_EQ(ParseInt64("-9223372036854775808", &value), std::errc());
  EXPECT_EQ(value, INT64_MIN);
  EXPECT_EQ(ParseInt64("9223372036854775807", &value), std::errc());
  EXPECT_EQ(value, INT64_MAX);
  EXPECT_EQ(ParseInt64("-0", &value), std::errc());
  EXPECT_EQ(value, 0);
  EXPECT_EQ(ParseInt64("9223372036854775808", &value),
            std::errc::result_out_of_range);
  EXPECT_EQ(ParseInt64("-9223372036854775809", &value),
            std::errc::result_out_of_range);
  for (std::string_view bad : {"", "-", "+1", "--1", "1.0", "1e3", " 1"}) {
    EXPECT_EQ(ParseInt64(bad, &value), std::errc::invalid_argument) << bad;
  }
}

TEST(ParseIntTest, ParseDigitsStopsAtTheFirstNonDigit) {
  constexpr std::string_view kText = "123,\"next\"";
  uint64_t value = 0;
  const auto [ptr, ec] =
      ParseDigits(kText.data(), kText.data() + kText.size(), &value);
  EXPECT_EQ(ec, std::errc());
  EXPECT_EQ(value, 123u);
  EXPECT_EQ(ptr, kText.data() + 3);
}

TEST(ParseIntTest, LeadingZeros) {
  EXPECT_TRUE(HasLeadingZero("01"));
  EXPECT_TRUE(HasLeadingZero("-00"));
  EXPECT_FALSE(HasLeadingZero("0"));
  EXPECT_FALSE(HasLeadingZero("-0"));
  EXPECT_FALSE(HasLeadingZero("10"));
  EXPECT_FALSE(HasLeadingZero("0."));
  EXPECT_FALSE(HasLeadingZero(""));
}

}  // namespace
}  // namespace spanprof::internal
