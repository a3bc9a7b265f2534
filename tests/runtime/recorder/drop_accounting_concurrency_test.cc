// Drop accounting on the fast path: threads record spans at a few static
// sites (nested, through Run, with arguments) under many caps; for every
// site, retained + dropped == attempted exactly, in both overflow policies.
#include <map>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/spanprof.h"
#include "tests/runtime/capture_checks.h"

namespace spanprof {
namespace {

using testing::ById;
using testing::DroppedByName;
using testing::ExpectValidCapture;
using testing::NameOf;
using testing::RetainedByName;

constexpr int kIterations = 1500;

void Iteration(int i) {
  SPANPROF_SCOPE("acct.outer", {.phase = "p"});
  SPANPROF_ARG("i", i);
  {
    SPANPROF_SCOPE("acct.middle");
    spanprof::Run("acct.run", [] { Heartbeat(1); });
  }
  if (i % 3 == 0) {
    SPANPROF_SCOPE("acct.sometimes");
  }
}

std::string DescribeThread(const Capture& c, uint32_t thread) {
  std::string out;
  for (const Span& s : c.spans) {
    if (s.thread != thread) continue;
    out += std::to_string(s.id) + ":" + NameOf(c, s) + "<" +
           std::to_string(s.parent_id) + " ";
  }
  return out;
}

class DropAccountingTest
    : public ::testing::TestWithParam<std::tuple<OverflowPolicy, int>> {};

TEST_P(DropAccountingTest, RetainedPlusDroppedIsAttemptedPerSite) {
  const auto [policy, threads] = GetParam();
  const uint64_t per_thread_sometimes = (kIterations + 2) / 3;
  const std::map<std::string, uint64_t> attempted = {
      {"acct.outer", static_cast<uint64_t>(threads) * kIterations},
      {"acct.middle", static_cast<uint64_t>(threads) * kIterations},
      {"acct.run", static_cast<uint64_t>(threads) * kIterations},
      {"acct.sometimes", static_cast<uint64_t>(threads) * per_thread_sometimes},
  };
  uint64_t total = 0;
  for (const auto& [name, n] : attempted) total += n;
  for (const uint64_t cap : {1ull, 2ull, 3ull, 64ull, 65ull, 1000ull, 4097ull,
                             10'000ull, 1'000'000ull}) {
    SCOPED_TRACE("cap " + std::to_string(cap));
    ASSERT_TRUE(StartRecording({.max_events = cap, .overflow = policy}).ok());
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([] {
        for (int i = 0; i < kIterations; ++i) Iteration(i);
      });
    }
    for (std::thread& w : workers) w.join();
    const Capture c = StopRecording();
    ExpectValidCapture(c);
    auto kept = RetainedByName(c);
    auto dropped = DroppedByName(c);
    for (const auto& [name, n] : attempted) {
      EXPECT_EQ(kept[name] + dropped[name], n) << name;
    }
    EXPECT_EQ(c.spans.size() + c.dropped_events, total);
    EXPECT_LE(c.spans.size(), cap);
    // The cap is handed out in chunks of credit, and credit one thread holds
    // is not visible to another until it exits: with several threads a few
    // spans can be dropped before the total reaches the cap. With headroom,
    // nothing is.
    if (cap >= 2 * total) EXPECT_EQ(c.dropped_events, 0u);
    if (cap < total) EXPECT_GT(c.dropped_events, 0u);
    // Nesting is intact: a same-thread child is under the right parent, or
    // (ring mode only) a flagged root whose parent was overwritten.
    const auto by_id = ById(c);
    for (const Span& s : c.spans) {
      const std::string& name = NameOf(c, s);
      if (name == "acct.outer") {
        EXPECT_EQ(s.parent_id, 0u);
        // Ring mode discards spans whose arguments were overwritten; drop
        // mode keeps a span whose argument found no room near the cap.
        if (policy == OverflowPolicy::kRing) {
          EXPECT_EQ(s.arg_count, 1u);
        } else {
          EXPECT_LE(s.arg_count, 1u);
        }
        continue;
      }
      if (s.parent_id == 0) {
        EXPECT_EQ(policy, OverflowPolicy::kRing)
            << name << " is a root: span " << s.id << " thread " << s.thread
            << " flags " << s.flags << " start " << s.start_ns << "; "
            << DescribeThread(c, s.thread);
        EXPECT_NE(s.flags & kSpanRerooted, 0u) << name;
        continue;
      }
      const std::string& parent = NameOf(c, *by_id.at(s.parent_id));
      EXPECT_EQ(parent, name == "acct.run" ? "acct.middle" : "acct.outer")
          << name;
    }
  }
}

std::string ParamName(
    const ::testing::TestParamInfo<std::tuple<OverflowPolicy, int>>& info) {
  return std::string(OverflowPolicyName(std::get<0>(info.param))) + "_Threads" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(
    Caps, DropAccountingTest,
    ::testing::Combine(::testing::Values(OverflowPolicy::kDropNewest,
                                         OverflowPolicy::kRing),
                       ::testing::Values(1, 2, 4, 8, 16)),
    ParamName);

}  // namespace
}  // namespace spanprof
