// Stress: N threads record random span trees and hand work to each other at
// random points (CurrentContext + ContextScope, or Bind), keeping their own
// ground-truth log of what they did. The collected forest must equal that
// log: names, threads, parents (same-thread and cross-thread), and exact
// drop accounting, for both overflow policies, caps smaller and larger than
// the work, and workers that exit before the collection or outlive it.
//
// Every span has a unique name, so each retained span maps to exactly one
// logged span and each site is attempted exactly once.
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "gtest/gtest.h"
#include "spanprof/spanprof.h"
#include "tests/runtime/capture_checks.h"

namespace spanprof {
namespace {

using testing::ExpectValidCapture;

constexpr int64_t kNone = -1;
constexpr uint32_t kTotalSpans = 4000;

// Unique span names with static storage (sites are identified by address).
const std::vector<std::string>& Names() {
  static const auto* names = [] {
    auto* v = new std::vector<std::string>();
    v->reserve(kTotalSpans);
    for (uint32_t i = 0; i < kTotalSpans; ++i) {
      v->push_back("stress." + std::to_string(i));
    }
    return v;
  }();
  return *names;
}

// The program's own log.
struct LoggedSpan {
  uint32_t thread = 0;
  int64_t same_thread_parent = kNone;  // the enclosing span on this thread
  int64_t scope = kNone;  // the hand-off it ran under, when nothing enclosed
};
struct LoggedHandoff {
  uint32_t thread = 0;    // the handing thread
  int64_t span = kNone;   // innermost span open there when handing off
  int64_t scope = kNone;  // the hand-off that thread itself ran under
};

struct Params {
  uint32_t threads;
  uint64_t cap;
  OverflowPolicy policy;
  bool join_before_stop;
};

class Workload {
 public:
  explicit Workload(const Params& params)
      : params_(params),
        spans_(kTotalSpans),
        handoffs_(kTotalSpans),
        os_tids_(params.threads) {}

  void Run() {
    std::vector<std::thread> threads;
    std::atomic<uint32_t> finished{0};
    std::atomic<bool> release{false};
    for (uint32_t t = 0; t < params_.threads; ++t) {
      threads.emplace_back([this, t, &finished, &release] {
        os_tids_[t] = static_cast<uint64_t>(syscall(SYS_gettid));
        Worker(t);
        finished.fetch_add(1);
        if (!params_.join_before_stop) {
          while (!release.load()) std::this_thread::yield();
        }
      });
    }
    if (params_.join_before_stop) {
      for (std::thread& t : threads) t.join();
      capture_ = StopRecording();
    } else {
      while (finished.load() < params_.threads) std::this_thread::yield();
      capture_ = StopRecording();  // workers are alive, idle
      release.store(true);
      for (std::thread& t : threads) t.join();
    }
    used_spans_ = std::min<uint32_t>(next_span_.load(), kTotalSpans);
    used_handoffs_ = std::min<uint32_t>(next_handoff_.load(), kTotalSpans);
  }

  const Capture& capture() const { return capture_; }
  uint32_t used_spans() const { return used_spans_; }
  const std::vector<LoggedSpan>& spans() const { return spans_; }
  const std::vector<LoggedHandoff>& handoffs() const { return handoffs_; }
  const std::vector<uint64_t>& os_tids() const { return os_tids_; }

 private:
  struct ThreadLog {
    uint32_t thread;
    std::mt19937 rng;
    std::vector<int64_t> open;    // logged spans open on this thread
    std::vector<int64_t> scopes;  // hand-offs this thread runs under
  };

  void Worker(uint32_t t) {
    ThreadLog log{t, std::mt19937(1234 + t), {}, {}};
    while (true) {
      std::function<void()> task;
      {
        std::lock_guard<std::mutex> lock(mu_);
        if (!queue_.empty()) {
          task = std::move(queue_.front());
          queue_.pop_front();
        }
      }
      if (task) {
        tls_log_ = &log;
        task();
        outstanding_.fetch_sub(1);
        continue;
      }
      if (next_span_.load() < kTotalSpans) {
        Span(log, 0);
      } else if (outstanding_.load() == 0) {
        break;
      } else {
        std::this_thread::yield();
      }
    }
  }

  void Span(ThreadLog& log, int depth) {
    const uint32_t id = next_span_.fetch_add(1);
    if (id >= kTotalSpans) return;
    LoggedSpan& logged = spans_[id];
    logged.thread = log.thread;
    if (!log.open.empty()) {
      logged.same_thread_parent = log.open.back();
    } else if (!log.scopes.empty()) {
      logged.scope = log.scopes.back();
    }
    spanprof::Run(Names()[id].c_str(), [&] {
      log.open.push_back(id);
      const int children =
          depth >= 5 ? 0 : static_cast<int>(log.rng() % (depth == 0 ? 4 : 3));
      for (int i = 0; i < children; ++i) {
        if (log.rng() % 4 == 0) {
          Handoff(log);
        } else {
          Span(log, depth + 1);
        }
      }
      Heartbeat(1);
      log.open.pop_back();
    });
  }

  // Hands a task to whichever worker takes it next (maybe this one, later).
  void Handoff(ThreadLog& log) {
    const uint32_t h = next_handoff_.fetch_add(1);
    if (h >= kTotalSpans) return;
    LoggedHandoff& logged = handoffs_[h];
    logged.thread = log.thread;
    logged.span = log.open.empty() ? kNone : log.open.back();
    logged.scope = log.scopes.empty() ? kNone : log.scopes.back();
    auto body = [this, h] { RunTask(*tls_log_, h); };
    std::function<void()> task;
    if (log.rng() % 2 == 0) {
      task = Bind(body);
    } else {
      task = [ctx = CurrentContext(), body] {
        ContextScope scope(ctx);
        body();
      };
    }
    outstanding_.fetch_add(1);
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(std::move(task));
  }

  void RunTask(ThreadLog& log, int64_t h) {
    log.scopes.push_back(h);
    // Sometimes pass part of the work on before opening any span here: the
    // next worker's spans then descend from this task's context.
    if (log.rng() % 5 == 0) Handoff(log);
    const int spans = 1 + static_cast<int>(log.rng() % 2);
    for (int i = 0; i < spans; ++i) Span(log, 1);
    log.scopes.pop_back();
  }

  static thread_local ThreadLog* tls_log_;

  Params params_;
  std::vector<LoggedSpan> spans_;
  std::vector<LoggedHandoff> handoffs_;
  std::vector<uint64_t> os_tids_;
  std::atomic<uint32_t> next_span_{0};
  std::atomic<uint32_t> next_handoff_{0};
  std::atomic<int64_t> outstanding_{0};
  std::mutex mu_;
  std::deque<std::function<void()>> queue_;
  Capture capture_;
  uint32_t used_spans_ = 0;
  uint32_t used_handoffs_ = 0;
};

thread_local Workload::ThreadLog* Workload::tls_log_ = nullptr;

// What the collector must report as a span's parent.
struct Expected {
  int64_t parent = kNone;        // logged span id, or kNone for a root
  bool lost = false;             // the parent was overwritten (ring mode)
  uint32_t thread = UINT32_MAX;  // where the parent ran (also when lost)
  // Ring mode: the chain passed through a thread that had no span open, or
  // through a span that was overwritten. The collector then depends on
  // history the flight recorder may have overwritten (whether a span was open
  // at that point, which scope was active), and may only know that the
  // parent is lost: the span is then a root, flagged or not, but never
  // linked to a wrong parent.
  bool may_be_lost = false;
};

class Oracle {
 public:
  Oracle(const Workload& w, const std::vector<bool>& retained, bool ring)
      : w_(w), retained_(retained), ring_(ring) {}

  Expected For(int64_t id) const {
    const LoggedSpan& s = w_.spans()[static_cast<size_t>(id)];
    Expected e;
    if (s.same_thread_parent != kNone) {
      e.parent = s.same_thread_parent;
      e.lost = !retained_[static_cast<size_t>(e.parent)];
      if (e.lost) e.parent = kNone;
      return e;
    }
    if (s.scope == kNone) return e;
    e = Handoff(s.scope);
    // A thread is never its own cross-thread parent.
    if (e.thread == s.thread) {
      Expected root;
      root.may_be_lost = e.may_be_lost;
      return root;
    }
    return e;
  }

 private:
  // The span a context taken at hand-off `h` resolves to: the innermost
  // retained span open on the handing thread, else that thread's own scope.
  Expected Handoff(int64_t h) const {
    const LoggedHandoff& handoff = w_.handoffs()[static_cast<size_t>(h)];
    int64_t x = handoff.span;
    if (ring_) {
      // Ring mode loses the oldest spans: a lost span's ancestors are older,
      // so they are lost too.
      if (x != kNone) {
        Expected e;
        e.lost = !retained_[static_cast<size_t>(x)];
        e.parent = e.lost ? kNone : x;
        e.thread = handoff.thread;
        e.may_be_lost = e.lost;
        return e;
      }
    } else {
      // Drop mode keeps a context on the innermost retained open span.
      while (x != kNone && !retained_[static_cast<size_t>(x)]) {
        x = w_.spans()[static_cast<size_t>(x)].same_thread_parent;
      }
      if (x != kNone) return Expected{x, false, handoff.thread};
    }
    if (handoff.scope == kNone) return Expected{kNone, false, handoff.thread};
    Expected e = Handoff(handoff.scope);
    e.may_be_lost = e.may_be_lost || ring_;
    return e;
  }

  const Workload& w_;
  const std::vector<bool>& retained_;
  bool ring_;
};

// The hand-off chain of a span, for failure messages.
std::string DescribeChain(const Workload& w, const std::vector<bool>& retained,
                          int64_t id) {
  std::string out;
  int64_t h = w.spans()[static_cast<size_t>(id)].scope;
  while (h != kNone) {
    const LoggedHandoff& handoff = w.handoffs()[static_cast<size_t>(h)];
    out += "[handoff " + std::to_string(h) + " on thread " +
           std::to_string(handoff.thread) + " in span " +
           std::to_string(handoff.span);
    if (handoff.span != kNone) {
      out += retained[static_cast<size_t>(handoff.span)] ? " kept" : " lost";
    }
    out += "] ";
    h = handoff.scope;
  }
  return out;
}

std::string ParamName(const ::testing::TestParamInfo<Params>& info) {
  const Params& p = info.param;
  return std::string(p.policy == OverflowPolicy::kRing ? "Ring" : "Drop") +
         "_Threads" + std::to_string(p.threads) + "_Cap" +
         std::to_string(p.cap) + (p.join_before_stop ? "_Joined" : "_Alive");
}

class StressTest : public ::testing::TestWithParam<Params> {};

TEST_P(StressTest, ForestEqualsTheGroundTruthLog) {
  const Params params = GetParam();
  const bool ring = params.policy == OverflowPolicy::kRing;
  static_cast<void>(Names());
  ASSERT_TRUE(
      StartRecording({.max_events = params.cap, .overflow = params.policy})
          .ok());
  Workload w(params);
  w.Run();
  const Capture& c = w.capture();
  ExpectValidCapture(c);
  const uint32_t n = w.used_spans();
  ASSERT_EQ(n, kTotalSpans);

  // Map retained spans and drops back to logged ids (names are unique).
  std::unordered_map<std::string, int64_t> id_of_name;
  for (uint32_t i = 0; i < n; ++i) id_of_name[Names()[i]] = i;
  std::vector<const Span*> span_of(n, nullptr);
  std::vector<bool> retained(n, false);
  std::vector<uint64_t> attempts(n, 0);
  for (const Span& s : c.spans) {
    auto it = id_of_name.find(c.sites[s.site].name);
    ASSERT_NE(it, id_of_name.end()) << c.sites[s.site].name;
    const auto id = static_cast<size_t>(it->second);
    ASSERT_EQ(span_of[id], nullptr) << "retained twice: " << Names()[id];
    span_of[id] = &s;
    retained[id] = true;
    ++attempts[id];
  }
  for (const SiteDrops& d : c.dropped_by_site) {
    auto it = id_of_name.find(c.sites[d.site].name);
    ASSERT_NE(it, id_of_name.end()) << c.sites[d.site].name;
    attempts[static_cast<size_t>(it->second)] += d.count;
  }
  // Drop accounting: every logged span is retained or dropped, once.
  uint64_t kept = 0;
  for (uint32_t i = 0; i < n; ++i) {
    ASSERT_EQ(attempts[i], 1u) << Names()[i];
    if (retained[i]) ++kept;
  }
  EXPECT_EQ(kept + c.dropped_events, n);
  EXPECT_LE(kept, params.cap);
  if (params.cap >= n) {
    EXPECT_EQ(kept, n);
    EXPECT_EQ(c.dropped_events, 0u);
  }

  std::unordered_map<uint64_t, int64_t> id_of_span;
  for (uint32_t i = 0; i < n; ++i) {
    if (span_of[i] != nullptr) id_of_span[span_of[i]->id] = i;
  }
  const Oracle oracle(w, retained, ring);
  int failures = 0;
  for (uint32_t i = 0; i < n && failures < 10; ++i) {
    if (!retained[i]) continue;
    const Span& s = *span_of[i];
    const LoggedSpan& logged = w.spans()[i];
    EXPECT_EQ(c.threads[s.thread].os_tid,
              w.os_tids()[logged.thread] & 0xFFFFFFFFu)
        << Names()[i];
    EXPECT_EQ(s.flags & (kSpanUnfinished | kSpanException), 0u);
    const Expected e = oracle.For(i);
    const int64_t actual =
        s.parent_id == 0 ? kNone : id_of_span.at(s.parent_id);
    const bool rerooted = (s.flags & kSpanRerooted) != 0;
    const bool matches = actual == e.parent && rerooted == e.lost;
    const bool lost_instead = e.may_be_lost && actual == kNone;
    if (!matches && !lost_instead) {
      ++failures;
      ADD_FAILURE() << Names()[i] << ": parent "
                    << (actual == kNone ? "none" : Names()[actual])
                    << (rerooted ? " (rerooted)" : "") << ", expected "
                    << (e.parent == kNone ? "none" : Names()[e.parent])
                    << (e.lost ? " (lost)" : "") << "; same-thread parent "
                    << logged.same_thread_parent << ", thread " << logged.thread
                    << ", scope " << logged.scope << ": "
                    << DescribeChain(w, retained, i);
    }
    if (!ring) EXPECT_FALSE(rerooted) << Names()[i];
  }

  if (ring && params.cap < n) {
    // The flight recorder keeps the newest spans of each thread: once a
    // thread's span is retained, so is every later one of that thread.
    std::vector<bool> seen_retained(params.threads, false);
    for (uint32_t i = 0; i < n; ++i) {
      const uint32_t t = w.spans()[i].thread;
      if (retained[i]) {
        seen_retained[t] = true;
      } else {
        EXPECT_FALSE(seen_retained[t])
            << Names()[i] << " was lost after a newer span was kept";
      }
    }
  }
  RecordProperty("retained", static_cast<int>(kept));
}

std::vector<Params> AllParams() {
  std::vector<Params> all;
  for (const OverflowPolicy policy :
       {OverflowPolicy::kDropNewest, OverflowPolicy::kRing}) {
    for (const uint32_t threads : {1u, 3u, 8u}) {
      for (const uint64_t cap : {17ull, 500ull, 3000ull, 1'000'000ull}) {
        for (const bool joined : {true, false}) {
          all.push_back(Params{threads, cap, policy, joined});
        }
      }
    }
  }
  return all;
}

INSTANTIATE_TEST_SUITE_P(Policies, StressTest, ::testing::ValuesIn(AllParams()),
                         ParamName);

}  // namespace
}  // namespace spanprof
