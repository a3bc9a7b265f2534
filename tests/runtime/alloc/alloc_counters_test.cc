// A program that links spanprof::alloc: global operator new/delete count
// allocations and bytes per thread, and spans record the deltas. This suite
// is its own executable (tests/CMakeLists.txt links spanprof::alloc into it
// alone), so the other suites check the "not measured" side.
#include <algorithm>
#include <atomic>
#include <memory>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/spanprof.h"
#include "tests/testing/lookup.h"
#include "tests/testing/session_config.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::FindSpan;
using ::spanprof::testing::QuietConfig;

// The allocation deltas of the first span named `name` (zeros when none).
SpanAllocs AllocsNamed(const Capture& c, const std::string& name) {
  const Span* s = FindSpan(c, name);
  if (s == nullptr) return SpanAllocs{};
  return AllocsOf(c, static_cast<size_t>(s - c.spans.data()));
}

// Keeps the optimizer from eliding a new/delete pair.
template <typename T>
T* Keep(T* p) {
  asm volatile("" : : "r"(p) : "memory");
  return p;
}

struct alignas(64) Aligned {
  char bytes[100];
};

TEST(AllocCountersTest, SpansRecordTheirThreadsAllocationDeltas) {
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("three.ints");
    int* a = Keep(new int(1));
    int* b = Keep(new int(2));
    int* c = Keep(new int(3));
    delete a;  // deletes are not subtracted: traffic, not live bytes
    delete b;
    delete c;
  }
  {
    SPANPROF_SCOPE("outer");
    char* block = Keep(new char[100]);
    {
      SPANPROF_SCOPE("inner");
      char* small = Keep(new char[50]);
      delete[] small;
    }
    delete[] block;
  }
  {
    SPANPROF_SCOPE("vector");
    std::vector<int> v;
    v.reserve(1000);
    Keep(v.data());
  }
  {
    SPANPROF_SCOPE("aligned");
    Aligned* p = Keep(new Aligned());
    delete p;
  }
  {
    SPANPROF_SCOPE("aligned.nothrow");
    Aligned* p = Keep(new (std::nothrow) Aligned());
    delete p;
  }
  { SPANPROF_SCOPE("nothing"); }
  const Capture c = StopRecording();
  EXPECT_TRUE(c.alloc_measured);
  auto expect = [&](const char* name, int64_t count, int64_t bytes) {
    ASSERT_NE(FindSpan(c, name), nullptr) << name;
    EXPECT_EQ(AllocsNamed(c, name).count, count) << name;
    EXPECT_EQ(AllocsNamed(c, name).bytes, bytes) << name;
  };
  expect("three.ints", 3, 3 * static_cast<int64_t>(sizeof(int)));
  expect("outer", 2, 150);  // includes its child's allocation
  expect("inner", 1, 50);
  expect("vector", 1, 1000 * static_cast<int64_t>(sizeof(int)));
  expect("aligned", 1, static_cast<int64_t>(sizeof(Aligned)));
  expect("aligned.nothrow", 1, static_cast<int64_t>(sizeof(Aligned)));
  expect("nothing", 0, 0);
}

TEST(AllocCountersTest, TheRecordersOwnAllocationsAreNotCounted) {
  // Interning a run-time site, binding the thread, growing the chunk list and
  // the side buffer all allocate inside the measured spans; none of it is the
  // program's.
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("busy.parent");
    for (int i = 0; i < 20'000; ++i) {
      SPANPROF_SCOPE("many.children");  // several chunk switches
      SPANPROF_ARG("i", i);             // side buffer growth
    }
    spanprof::Run("run.site", [] { Heartbeat(1); });
    std::thread worker(Bind([] { SPANPROF_SCOPE("bound.child"); }));
    worker.join();  // std::thread itself allocates its state: 1 allocation
  }
  const Capture c = StopRecording();
  const Span* parent = FindSpan(c, "busy.parent");
  ASSERT_NE(parent, nullptr);
  ASSERT_EQ(c.span_allocs.size(), c.spans.size());
  // The std::thread state, nothing else.
  EXPECT_LE(AllocsNamed(c, "busy.parent").count, 1);
  ASSERT_NE(FindSpan(c, "run.site"), nullptr);
  ASSERT_NE(FindSpan(c, "bound.child"), nullptr);
  EXPECT_EQ(AllocsNamed(c, "run.site").count, 0);
  EXPECT_EQ(AllocsNamed(c, "bound.child").count, 0);
  for (size_t i = 0; i < c.spans.size(); ++i) {
    if (c.sites[c.spans[i].site].name == "many.children") {
      ASSERT_EQ(c.span_allocs[i].count, 0);
      ASSERT_EQ(c.span_allocs[i].bytes, 0);
    }
  }
}

TEST(AllocCountersTest, CountersArePerThread) {
  ASSERT_TRUE(StartRecording({}).ok());
  std::atomic<bool> worker_done{false};
  {
    SPANPROF_SCOPE("main.waits");
    std::thread worker([&] {
      SPANPROF_SCOPE("worker.allocates");
      for (int i = 0; i < 5; ++i) delete Keep(new int(i));
      worker_done.store(true);
    });
    while (!worker_done.load()) std::this_thread::yield();
    worker.join();
  }
  const Capture c = StopRecording();
  ASSERT_NE(FindSpan(c, "worker.allocates"), nullptr);
  EXPECT_EQ(AllocsNamed(c, "worker.allocates").count, 5);
  // The waiting span sees only its own thread's allocations (the std::thread
  // state), not the worker's five.
  EXPECT_LE(AllocsNamed(c, "main.waits").count, 1);
}

// Ring mode keeps the newest spans overall: the main thread's older spans
// are trimmed and the worker's compacted down over them. Each retained
// span's allocation deltas must move with it.
TEST(AllocCountersTest, RingModeKeepsEachSpansAllocationsWithIt) {
  ASSERT_TRUE(
      StartRecording({.max_events = 200, .overflow = OverflowPolicy::kRing})
          .ok());
  auto record = [](int64_t from, int64_t to) {
    for (int64_t i = from; i < to; ++i) {
      SPANPROF_SCOPE("ring.alloc");
      SPANPROF_ARG("i", i);
      for (int64_t k = 0; k < i % 7; ++k) delete Keep(new int64_t(k));
    }
  };
  record(0, 150);
  std::thread worker(record, 150, 2150);
  worker.join();
  const Capture c = StopRecording();
  ASSERT_TRUE(c.alloc_measured);
  ASSERT_EQ(c.span_allocs.size(), c.spans.size());
  size_t checked = 0;
  int64_t oldest = INT64_MAX;
  for (size_t s = 0; s < c.spans.size(); ++s) {
    const Span& span = c.spans[s];
    if (c.sites[span.site].name != "ring.alloc" || span.arg_count != 1) {
      continue;
    }
    const int64_t i = c.args[span.first_arg].int_value;
    oldest = std::min(oldest, i);
    ASSERT_EQ(c.span_allocs[s].count, i % 7) << "span with i = " << i;
    ASSERT_EQ(c.span_allocs[s].bytes,
              (i % 7) * static_cast<int64_t>(sizeof(int64_t)))
        << "span with i = " << i;
    ++checked;
  }
  EXPECT_GE(checked, 100u);  // most of the newest 200 kept their argument
  EXPECT_LE(checked, 200u);
  EXPECT_GE(oldest, 150);  // all of them the worker's: main's were trimmed
  EXPECT_GE(c.dropped_events, 1950u);
}

TEST(AllocCountersTest, SummaryRowsReportAllocations) {
  testing::TempDir dir;
  Config config = QuietConfig(dir, "");
  Profile(config, "root", [] {
    for (int i = 0; i < 4; ++i) {
      SPANPROF_SCOPE("allocating.row");
      delete[] Keep(new char[256]);
    }
  });
  const auto summary = analysis::ReadSummary(config.summary_path);
  ASSERT_TRUE(summary.ok()) << summary.status();
  const analysis::Row* row = nullptr;
  for (const analysis::Row& r : summary->rows) {
    if (r.key.name == "allocating.row") row = &r;
  }
  ASSERT_NE(row, nullptr);
  ASSERT_TRUE(row->alloc_count.has_value());
  ASSERT_TRUE(row->alloc_bytes.has_value());
  EXPECT_EQ(*row->alloc_count, 4);
  EXPECT_EQ(*row->alloc_bytes, 4 * 256);
  const auto trace = analysis::ReadTrace(config.trace_path);
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_TRUE(trace->alloc_measured);
}

}  // namespace
}  // namespace spanprof
