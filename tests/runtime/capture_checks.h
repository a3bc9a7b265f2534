// Invariants every capture must satisfy, whatever the program did: shared by
// the runtime's thread, stress and lifecycle tests.
#ifndef SPANPROF_TESTS_RUNTIME_CAPTURE_CHECKS_H_
#define SPANPROF_TESTS_RUNTIME_CAPTURE_CHECKS_H_

#include <sys/resource.h>

#include <cstdint>
#include <map>
#include <string>
#include <unordered_map>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/capture.h"

namespace spanprof::testing {

inline const std::string& NameOf(const Capture& c, const Span& s) {
  return c.sites[s.site].name;
}

inline std::map<std::string, uint64_t> RetainedByName(const Capture& c) {
  std::map<std::string, uint64_t> counts;
  for (const Span& s : c.spans) ++counts[NameOf(c, s)];
  return counts;
}

inline std::map<std::string, uint64_t> DroppedByName(const Capture& c) {
  std::map<std::string, uint64_t> drops;
  for (const SiteDrops& d : c.dropped_by_site) {
    drops[c.sites[d.site].name] += d.count;
  }
  return drops;
}

inline std::unordered_map<uint64_t, const Span*> ById(const Capture& c) {
  std::unordered_map<uint64_t, const Span*> by_id;
  for (const Span& s : c.spans) by_id[s.id] = &s;
  return by_id;
}

// Structural validity: unique ids, parents present, depth = parent depth + 1,
// same-thread children inside their parents, per-thread timestamps that never
// go backwards in begin order, drop totals that add up, and an analysis that
// finds no validation issue.
inline void ExpectValidCapture(const Capture& c) {
  const auto by_id = ById(c);
  ASSERT_EQ(by_id.size(), c.spans.size()) << "duplicate span ids";
  std::vector<int64_t> last_start(c.threads.size(), INT64_MIN);
  std::vector<uint64_t> last_id(c.threads.size(), 0);
  int reported = 0;
  for (const Span& s : c.spans) {
    if (reported > 10) break;
    ASSERT_GT(s.id, 0u);
    ASSERT_LT(s.thread, c.threads.size());
    ASSERT_LT(s.site, c.sites.size());
    EXPECT_LE(s.start_ns, s.end_ns) << "span " << s.id;
    EXPECT_GE(s.start_ns, 0);
    EXPECT_LE(s.end_ns, c.window_ns) << "span " << s.id;
    // Ids follow begin order within a thread; begins never go backwards.
    EXPECT_GT(s.id, last_id[s.thread]);
    if (s.start_ns < last_start[s.thread]) {
      ADD_FAILURE() << "span " << s.id << " on thread " << s.thread
                    << " starts at " << s.start_ns
                    << " before the previous begin " << last_start[s.thread];
      ++reported;
    }
    last_id[s.thread] = s.id;
    last_start[s.thread] = s.start_ns;
    if (s.parent_id == 0) {
      EXPECT_EQ(s.depth, 0u) << "span " << s.id;
      continue;
    }
    auto it = by_id.find(s.parent_id);
    if (it == by_id.end()) {
      ADD_FAILURE() << "span " << s.id << " has a missing parent "
                    << s.parent_id;
      ++reported;
      continue;
    }
    const Span& p = *it->second;
    EXPECT_EQ(s.depth, p.depth + 1) << "span " << s.id;
    EXPECT_EQ(s.flags & kSpanRerooted, 0u) << "span " << s.id;
    if (p.thread == s.thread) {
      EXPECT_LT(p.id, s.id);
      EXPECT_GE(s.start_ns, p.start_ns) << "span " << s.id;
      EXPECT_LE(s.end_ns, p.end_ns) << "span " << s.id;
    }
  }
  uint64_t dropped = 0;
  for (const SiteDrops& d : c.dropped_by_site) {
    ASSERT_LT(d.site, c.sites.size());
    EXPECT_GT(d.count, 0u);
    dropped += d.count;
  }
  EXPECT_EQ(dropped, c.dropped_events);
  if (c.overflow_policy == "drop" || c.overflow_policy == "ring") {
    EXPECT_LE(c.spans.size(), c.event_limit);
  }
  const analysis::Summary summary = analysis::Summarize(c);
  for (size_t i = 0; i < summary.validation_issues.size() && i < 10; ++i) {
    ADD_FAILURE() << "validation issue: span "
                  << summary.validation_issues[i].span << ": "
                  << summary.validation_issues[i].message;
  }
  uint64_t unfinished = 0;
  for (const Span& s : c.spans) {
    if ((s.flags & kSpanUnfinished) != 0) ++unfinished;
  }
  EXPECT_EQ(summary.complete,
            c.dropped_events == 0 && unfinished == 0 && c.finished_normally);
}

// Sanitizers add shadow memory per thread and per byte: memory figures are
// reported but not checked under them.
#ifdef SPANPROF_TEST_SANITIZED
inline constexpr bool kSanitized = true;
#else
inline constexpr bool kSanitized = false;
#endif

// The process's peak resident set so far, in KiB.
inline int64_t PeakRssKib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace spanprof::testing

#endif  // SPANPROF_TESTS_RUNTIME_CAPTURE_CHECKS_H_
