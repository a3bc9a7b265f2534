// Cross-thread parents (CurrentContext, ContextScope, Bind), thread exit
// before collection, stragglers after stop, exceptions on workers and
// timestamps under concurrency. Runs under TSan in CI (label concurrency).
#include <atomic>
#include <future>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/spanprof.h"
#include "tests/runtime/capture_checks.h"
#include "tests/testing/lookup.h"

namespace spanprof {
namespace {

using testing::ById;
using testing::DroppedByName;
using testing::ExpectValidCapture;
using testing::FindSpan;
using testing::NameOf;
using testing::RetainedByName;

std::vector<const Span*> FindAll(const Capture& c, const std::string& name) {
  std::vector<const Span*> found;
  for (const Span& s : c.spans) {
    if (NameOf(c, s) == name) found.push_back(&s);
  }
  return found;
}

TEST(ThreadsTest, ContextScopeMakesACrossThreadChild) {
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("dispatch");
    const Context ctx = CurrentContext();
    EXPECT_TRUE(ctx.valid());
    std::thread worker([ctx] {
      ContextScope scope(ctx);
      SPANPROF_SCOPE("work");
      { SPANPROF_SCOPE("work.inner"); }
    });
    worker.join();
  }
  const Capture c = StopRecording();
  ExpectValidCapture(c);
  ASSERT_EQ(c.spans.size(), 3u);
  EXPECT_EQ(c.threads.size(), 2u);
  const Span* dispatch = FindSpan(c, "dispatch");
  const Span* work = FindSpan(c, "work");
  const Span* inner = FindSpan(c, "work.inner");
  ASSERT_TRUE(dispatch && work && inner);
  EXPECT_EQ(work->parent_id, dispatch->id);
  EXPECT_NE(work->thread, dispatch->thread);
  EXPECT_EQ(work->depth, 1u);
  EXPECT_EQ(work->flags, 0u);
  EXPECT_EQ(inner->parent_id, work->id);
  EXPECT_EQ(inner->depth, 2u);
}

// Ring mode, a worker that runs its whole life under one ContextScope and
// writes far more side records (arguments) than the side buffer holds (two
// per span of the cap): the push of the scope is overwritten long before its
// pop. The newest spans must still be kept, with their arguments (before the
// collector restored ended scopes, the orphaned pop made it discard every
// span of the worker).
TEST(ThreadsTest, RingModeKeepsAWorkersNewestSpansUnderAnOverwrittenScope) {
  constexpr uint64_t kCap = 100;
  constexpr int kTasks = 5000;
  ASSERT_TRUE(
      StartRecording({.max_events = kCap, .overflow = OverflowPolicy::kRing})
          .ok());
  {
    SPANPROF_SCOPE("dispatch");
    const Context ctx = CurrentContext();
    std::thread worker([ctx] {
      ContextScope scope(ctx);
      for (int i = 0; i < kTasks; ++i) {
        SPANPROF_SCOPE("task");
        SPANPROF_ARG("i", i);
      }
    });
    worker.join();
  }
  const Capture c = StopRecording();
  ExpectValidCapture(c);
  ASSERT_EQ(c.spans.size(), kCap);
  EXPECT_EQ(c.dropped_events, kTasks + 1 - kCap);
  int64_t expected = kTasks - static_cast<int64_t>(kCap);
  for (const Span& s : c.spans) {
    ASSERT_EQ(NameOf(c, s), "task");
    ASSERT_EQ(s.arg_count, 1u);
    EXPECT_EQ(c.args[s.first_arg].int_value, expected);
    ++expected;
    // Their parent, "dispatch", is the oldest span: trimmed, so they are
    // roots that say so.
    EXPECT_EQ(s.parent_id, 0u);
    EXPECT_EQ(s.flags, kSpanRerooted);
  }
}

TEST(ThreadsTest, BindWithStdAsyncLinksTheWorkerToTheCaller) {
  ASSERT_TRUE(StartRecording({}).ok());
  int result = 0;
  {
    SPANPROF_SCOPE("worker.complete");
    auto task = Bind([](int x) {
      SPANPROF_SCOPE("worker.compute");
      return x * 2;
    });
    std::future<int> f = std::async(std::launch::async, task, 21);
    result = f.get();
  }
  const Capture c = StopRecording();
  EXPECT_EQ(result, 42);
  ExpectValidCapture(c);
  const Span* complete = FindSpan(c, "worker.complete");
  const Span* compute = FindSpan(c, "worker.compute");
  ASSERT_TRUE(complete && compute);
  EXPECT_EQ(compute->parent_id, complete->id);
  EXPECT_NE(compute->thread, complete->thread);
  // The waiting span covers the completion of the work it waited for.
  EXPECT_LE(complete->start_ns, compute->start_ns);
  EXPECT_GE(complete->end_ns, compute->end_ns);
}

TEST(ThreadsTest, TheContextIsTheInnermostSpanOpenWhenItWasTaken) {
  ASSERT_TRUE(StartRecording({}).ok());
  Context outer_ctx;
  Context inner_ctx;
  Context after_inner_ctx;
  {
    SPANPROF_SCOPE("outer");
    outer_ctx = CurrentContext();
    {
      SPANPROF_SCOPE("inner");
      inner_ctx = CurrentContext();
    }
    after_inner_ctx = CurrentContext();
    std::thread worker([&] {
      {
        ContextScope scope(outer_ctx);
        SPANPROF_SCOPE("child.of.outer");
      }
      {
        ContextScope scope(inner_ctx);
        SPANPROF_SCOPE("child.of.inner");  // inner has ended: still linked
      }
      {
        ContextScope scope(after_inner_ctx);
        SPANPROF_SCOPE("child.of.outer.again");
      }
    });
    worker.join();
  }
  const Capture c = StopRecording();
  ExpectValidCapture(c);
  const Span* outer = FindSpan(c, "outer");
  const Span* inner = FindSpan(c, "inner");
  ASSERT_TRUE(outer && inner);
  EXPECT_EQ(FindSpan(c, "child.of.outer")->parent_id, outer->id);
  EXPECT_EQ(FindSpan(c, "child.of.inner")->parent_id, inner->id);
  EXPECT_EQ(FindSpan(c, "child.of.outer.again")->parent_id, outer->id);
}

TEST(ThreadsTest, ASameThreadParentWinsOverTheContext) {
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("dispatch");
    const Context ctx = CurrentContext();
    std::thread worker([ctx] {
      SPANPROF_SCOPE("worker.loop");
      ContextScope scope(ctx);
      SPANPROF_SCOPE("task");  // nested in worker.loop: same-thread parent
    });
    worker.join();
  }
  const Capture c = StopRecording();
  ExpectValidCapture(c);
  EXPECT_EQ(FindSpan(c, "task")->parent_id, FindSpan(c, "worker.loop")->id);
  EXPECT_EQ(FindSpan(c, "worker.loop")->parent_id, 0u);
}

TEST(ThreadsTest, ScopesNestAndRestore) {
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("a");
    const Context a = CurrentContext();
    Context b;
    std::thread tb([&] {
      SPANPROF_SCOPE("b");
      b = CurrentContext();
    });
    tb.join();
    std::thread worker([&] {
      ContextScope sa(a);
      { SPANPROF_SCOPE("under.a.1"); }
      {
        ContextScope sb(b);
        SPANPROF_SCOPE("under.b");
      }
      { SPANPROF_SCOPE("under.a.2"); }
    });
    worker.join();
    std::thread plain([] { SPANPROF_SCOPE("no.context"); });
    plain.join();
  }
  const Capture c = StopRecording();
  ExpectValidCapture(c);
  EXPECT_EQ(FindSpan(c, "under.a.1")->parent_id, FindSpan(c, "a")->id);
  EXPECT_EQ(FindSpan(c, "under.b")->parent_id, FindSpan(c, "b")->id);
  EXPECT_EQ(FindSpan(c, "under.a.2")->parent_id, FindSpan(c, "a")->id);
  EXPECT_EQ(FindSpan(c, "no.context")->parent_id, 0u);
}

TEST(ThreadsTest, HandOffChainsFollowTheContextAcrossThreads) {
  // A hands work to B; B, before opening any span of its own, hands part of
  // it on to C: C's span is a child of A's span.
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("origin");
    auto stage_b = Bind([] {
      auto stage_c = Bind([] { SPANPROF_SCOPE("stage.c"); });
      std::thread c(stage_c);
      c.join();
      SPANPROF_SCOPE("stage.b");
      auto stage_d = Bind([] { SPANPROF_SCOPE("stage.d"); });
      std::thread d(stage_d);
      d.join();
    });
    std::thread b(stage_b);
    b.join();
  }
  const Capture c = StopRecording();
  ExpectValidCapture(c);
  const Span* origin = FindSpan(c, "origin");
  const Span* b = FindSpan(c, "stage.b");
  ASSERT_TRUE(origin && b && FindSpan(c, "stage.c") && FindSpan(c, "stage.d"));
  EXPECT_EQ(b->parent_id, origin->id);
  EXPECT_EQ(FindSpan(c, "stage.c")->parent_id, origin->id);
  EXPECT_EQ(FindSpan(c, "stage.d")->parent_id, b->id);
  EXPECT_EQ(FindSpan(c, "stage.d")->depth, 2u);
}

TEST(ThreadsTest, AContextHandedBackToItsOwnThreadAfterItsSpanLinksNothing) {
  // A thread cannot be its own cross-thread parent: a span opened under a
  // context from its own thread whose span has ended is a root (linking it
  // would make a same-thread child outside its parent).
  ASSERT_TRUE(StartRecording({}).ok());
  Context ctx;
  {
    SPANPROF_SCOPE("early");
    ctx = CurrentContext();
  }
  {
    ContextScope scope(ctx);
    SPANPROF_SCOPE("later");
  }
  const Capture c = StopRecording();
  ExpectValidCapture(c);
  EXPECT_EQ(FindSpan(c, "later")->parent_id, 0u);
  EXPECT_EQ(FindSpan(c, "later")->flags, 0u);
}

TEST(ThreadsTest, AWorkerMayOutliveItsParentSpan) {
  ASSERT_TRUE(StartRecording({}).ok());
  std::atomic<bool> parent_done{false};
  std::thread worker;
  {
    SPANPROF_SCOPE("short.parent");
    worker = std::thread(Bind([&] {
      while (!parent_done.load()) std::this_thread::yield();
      SPANPROF_SCOPE("long.child");
    }));
  }
  parent_done.store(true);
  worker.join();
  const Capture c = StopRecording();
  ExpectValidCapture(c);
  const Span* parent = FindSpan(c, "short.parent");
  const Span* child = FindSpan(c, "long.child");
  ASSERT_TRUE(parent && child);
  EXPECT_EQ(child->parent_id, parent->id);
  EXPECT_GE(child->start_ns, parent->end_ns);
}

TEST(ThreadsTest, ContextsFromAnotherSessionAreIgnored) {
  ASSERT_TRUE(StartRecording({}).ok());
  Context old;
  {
    SPANPROF_SCOPE("old");
    old = CurrentContext();
  }
  StopRecording();
  ASSERT_TRUE(StartRecording({}).ok());
  std::thread worker([old] {
    ContextScope scope(old);
    SPANPROF_SCOPE("new");
  });
  worker.join();
  const Capture c = StopRecording();
  ExpectValidCapture(c);
  ASSERT_EQ(c.spans.size(), 1u);
  EXPECT_EQ(c.spans[0].parent_id, 0u);
}

TEST(ThreadsTest, NoContextOutsideASessionOrASpan) {
  EXPECT_FALSE(CurrentContext().valid());
  ASSERT_TRUE(StartRecording({}).ok());
  Context none;
  std::thread t([&] { none = CurrentContext(); });
  t.join();
  EXPECT_FALSE(none.valid());
  {
    ContextScope ignored(none);  // an invalid context is ignored
    SPANPROF_SCOPE("root");
  }
  const Capture c = StopRecording();
  ExpectValidCapture(c);
  ASSERT_EQ(c.spans.size(), 1u);
  EXPECT_EQ(c.spans[0].parent_id, 0u);
}

TEST(ThreadsTest, ExitedThreadsKeepTheirData) {
  ASSERT_TRUE(StartRecording({}).ok());
  constexpr int kThreads = 8;
  constexpr int kSpans = 300;  // several chunks per thread
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      SetThreadName(("worker-" + std::to_string(t)).c_str());
      for (int i = 0; i < kSpans; ++i) {
        SPANPROF_SCOPE("exited.outer");
        SPANPROF_ARG("i", i);
        SPANPROF_SCOPE("exited.inner");
      }
    });
  }
  for (std::thread& t : threads) t.join();  // every worker is gone
  const Capture c = StopRecording();
  ExpectValidCapture(c);
  EXPECT_EQ(c.threads.size(), static_cast<size_t>(kThreads));
  EXPECT_EQ(RetainedByName(c)["exited.outer"],
            static_cast<uint64_t>(kThreads * kSpans));
  EXPECT_EQ(RetainedByName(c)["exited.inner"],
            static_cast<uint64_t>(kThreads * kSpans));
  for (const ThreadInfo& info : c.threads) {
    EXPECT_EQ(info.name.rfind("worker-", 0), 0u) << info.name;
  }
  for (const Span& s : c.spans) {
    if (NameOf(c, s) == "exited.outer") {
      ASSERT_EQ(s.arg_count, 1u);
      EXPECT_EQ(c.args[s.first_arg].key, "i");
    }
  }
}

TEST(ThreadsTest, LiveAndExitedThreadsAreCollectedTogether) {
  ASSERT_TRUE(StartRecording({}).ok());
  std::atomic<bool> stop{false};
  std::atomic<int> ready{0};
  std::thread live([&] {
    { SPANPROF_SCOPE("live.before"); }
    ready.fetch_add(1);
    while (!stop.load()) std::this_thread::yield();
    { SPANPROF_SCOPE("live.after.stop"); }
  });
  std::thread exited([&] { SPANPROF_SCOPE("exited"); });
  exited.join();
  while (ready.load() == 0) std::this_thread::yield();
  const Capture c = StopRecording();
  stop.store(true);
  live.join();
  ExpectValidCapture(c);
  EXPECT_EQ(RetainedByName(c)["live.before"], 1u);
  EXPECT_EQ(RetainedByName(c)["exited"], 1u);
  EXPECT_EQ(RetainedByName(c).count("live.after.stop"), 0u);
}

TEST(ThreadsTest, ExceptionsOnWorkersAreFlagged) {
  ASSERT_TRUE(StartRecording({}).ok());
  {
    SPANPROF_SCOPE("dispatch");
    auto task = Bind([] {
      SPANPROF_SCOPE("task.outer");
      spanprof::Run("task.middle", [] {
        SPANPROF_SCOPE("task.inner");
        throw std::runtime_error("boom");
      });
    });
    std::future<void> f = std::async(std::launch::async, task);
    EXPECT_THROW(f.get(), std::runtime_error);
    SPANPROF_SCOPE("after");
  }
  const Capture c = StopRecording();
  ExpectValidCapture(c);
  for (const char* name : {"task.outer", "task.middle", "task.inner"}) {
    const Span* s = FindSpan(c, name);
    ASSERT_NE(s, nullptr) << name;
    EXPECT_NE(s->flags & kSpanException, 0u) << name;
  }
  EXPECT_EQ(FindSpan(c, "task.outer")->parent_id, FindSpan(c, "dispatch")->id);
  EXPECT_EQ(FindSpan(c, "dispatch")->flags, 0u);
  EXPECT_EQ(FindSpan(c, "after")->flags, 0u);
}

// Threads keep recording (nesting, args, contexts) while the session stops
// and after it; a second session starts while they run. Both captures must be
// valid and nothing recorded after a stop may appear in its capture.
TEST(ThreadsTest, StragglersNeverCorruptTheCapture) {
  for (const OverflowPolicy policy :
       {OverflowPolicy::kDropNewest, OverflowPolicy::kRing}) {
    ASSERT_TRUE(StartRecording({.max_events = 5000, .overflow = policy}).ok());
    std::atomic<bool> stop{false};
    std::atomic<int> running{0};
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        running.fetch_add(1);
        uint64_t i = 0;
        while (!stop.load(std::memory_order_relaxed)) {
          SPANPROF_SCOPE("straggler.outer");
          SPANPROF_ARG("i", static_cast<int64_t>(i));
          const Context ctx = CurrentContext();
          {
            ContextScope scope(ctx);
            SPANPROF_SCOPE("straggler.inner");
            Heartbeat(1);
            if ((i + t) % 3 == 0) {
              spanprof::Run("straggler.run",
                            [] { SPANPROF_SCOPE("straggler.leaf"); });
            }
          }
          ++i;
        }
      });
    }
    while (running.load() < 4) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const Capture first = StopRecording();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    ASSERT_TRUE(StartRecording({.max_events = 5000, .overflow = policy}).ok());
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    const Capture second = StopRecording();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    stop.store(true);
    for (std::thread& t : threads) t.join();
    for (const Capture* c : {&first, &second}) {
      ExpectValidCapture(*c);
      EXPECT_GT(c->spans.size(), 0u);
      for (const Span& s : c->spans) {
        const std::string& name = NameOf(*c, s);
        // Spans open at stop are closed there; all others are whole.
        if ((s.flags & kSpanUnfinished) == 0) continue;
        EXPECT_TRUE(name.rfind("straggler.", 0) == 0) << name;
      }
      // At most four outer spans per thread can be open at the stop.
      uint64_t unfinished = 0;
      for (const Span& s : c->spans) {
        if ((s.flags & kSpanUnfinished) != 0) ++unfinished;
      }
      EXPECT_LE(unfinished, 4u * 4u);
    }
  }
}

TEST(ThreadsTest, TimestampsNeverGoBackwardsWithinAThread) {
  ASSERT_TRUE(StartRecording({}).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 2000; ++i) {
        SPANPROF_SCOPE("tick");
        if (i % 100 == 0) std::this_thread::yield();  // migrate cores
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const Capture c = StopRecording();
  ExpectValidCapture(c);  // checks begin order and end >= start per thread
  std::vector<int64_t> last_end(c.threads.size(), 0);
  for (const Span& s : c.spans) {
    EXPECT_GE(s.start_ns, last_end[s.thread]);  // siblings: one after another
    last_end[s.thread] = s.end_ns;
  }
}

TEST(ThreadsTest, DropAccountingIsExactWithManyThreads) {
  ASSERT_TRUE(StartRecording({.max_events = 777}).ok());
  std::vector<std::thread> threads;
  for (int t = 0; t < 6; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 500; ++i) {
        SPANPROF_SCOPE("acct.outer");
        SPANPROF_SCOPE("acct.inner");
      }
    });
  }
  for (std::thread& t : threads) t.join();
  const Capture c = StopRecording();
  ExpectValidCapture(c);
  auto kept = RetainedByName(c);
  auto dropped = DroppedByName(c);
  EXPECT_EQ(kept["acct.outer"] + dropped["acct.outer"], 3000u);
  EXPECT_EQ(kept["acct.inner"] + dropped["acct.inner"], 3000u);
  EXPECT_LE(c.spans.size(), 777u);
  // A child is never kept without its parent.
  const auto by_id = ById(c);
  for (const Span& s : c.spans) {
    if (NameOf(c, s) == "acct.inner") {
      ASSERT_NE(s.parent_id, 0u);
      EXPECT_EQ(NameOf(c, *by_id.at(s.parent_id)), "acct.outer");
    }
  }
}

}  // namespace
}  // namespace spanprof
