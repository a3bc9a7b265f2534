// captures.h — hand-built captures that exercise every field the writers and
// readers carry (tags, cross-thread parents, arguments, flags, drops,
// allocations, validation issues), for the reader, compare and CLI tests.
#ifndef SPANPROF_TESTS_TESTING_CAPTURES_H_
#define SPANPROF_TESTS_TESTING_CAPTURES_H_

#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::testing {

struct RichOptions {
  bool alloc = false;       // alloc_measured, with per-span deltas
  bool drops = false;       // a site with drops and no retained span
  bool unfinished = false;  // one span flagged unfinished
  bool broken = false;      // overlapping siblings: validation issues
  bool counters = false;    // named counters on two spans, dropped_args
  bool strings = false;     // string arguments (one truncated), a span
                            // whose hook failed, failed prepares
  bool keys = false;        // two sites that differ only in dtype, both with
                      // backend and device, a span on each (worker thread)
  int64_t scale = 1;          // multiplies every time (for compare tests)
  int64_t forward_ns = 4000;  // duration of the first model.forward span
};

// A capture with two threads, four sites (one with ';', a newline and a
// quote in its name), a cross-thread child, recursion of one key, user
// arguments (a repeated key, a double), an exception flag and heartbeats;
// with `counters`, named counters after one span's arguments (one sharing
// an argument's name) and alone on another, and refused arguments.
inline Capture RichCapture(const RichOptions& o = {}) {
  CaptureBuilder b;
  const int64_t k = o.scale;
  const uint32_t main = b.Thread(100, "main");
  const uint32_t worker = b.Thread(101);
  const uint32_t run = b.Site("app.run");
  const uint32_t forward = b.Site("model.forward", "forward", "encoder");
  const uint32_t io = b.Site("io.read", "input", "", "load");
  const uint32_t odd = b.Site("we;ird\nname\"x", "p;h");
  const uint32_t lost = b.Site("lost.work", "lost");
  // With the default forward_ns (F = 4000): root [0, 10000], forward spans
  // [100, 4100] (with a nested [200, 300]) and [5000, 5700].
  const int64_t f = o.forward_ns;
  b.Add(1, 0, run, main, 0, (6'000 + f) * k).heartbeats = 50;
  b.Add(2, 1, forward, main, 100 * k, (100 + f) * k).heartbeats = 10;
  b.Add(6, 2, forward, main, 200 * k, 300 * k).heartbeats = 2;
  Span& third = b.Add(3, 1, forward, main, (f + 1'000) * k, (f + 1'700) * k);
  third.heartbeats = 5;
  third.flags = kSpanException;
  b.Add(4, 1, io, worker, 200 * k, 9'000 * k).heartbeats = 7;
  Span& leaf = b.Add(5, 4, odd, worker, 300 * k, 301 * k);
  if (o.unfinished) leaf.flags = kSpanUnfinished;
  if (o.broken) {
    // Overlaps span 3 (same parent, same thread) without nesting.
    b.Add(7, 1, run, main, (f + 1'500) * k, (f + 2'000) * k);
  }
  if (o.keys) {
    const uint32_t f16 = b.AddSite(Site{.name = "kernel.matmul",
                                        .phase = "compute",
                                        .backend = "cuda",
                                        .dtype = "f16",
                                        .device = "gpu0"});
    const uint32_t f32 = b.AddSite(Site{.name = "kernel.matmul",
                                        .phase = "compute",
                                        .backend = "cuda",
                                        .dtype = "f32",
                                        .device = "gpu0"});
    b.Add(8, 4, f16, worker, 400 * k, 900 * k).heartbeats = 3;
    b.Add(9, 4, f32, worker, 1'000 * k, 2'500 * k).heartbeats = 4;
  }
  if (o.alloc) {
    b.capture().alloc_measured = true;
    int64_t n = 1;
    for (const Span& span : b.capture().spans) {
      b.Allocs(span.id, n, n * 64);
      ++n;
    }
  }
  if (o.drops) {
    b.capture().dropped_events = 3;
    b.capture().dropped_by_site.push_back(SiteDrops{lost, 3});
  }
  b.capture().window_ns = (6'000 + f) * k;
  b.capture().overhead_ns_per_span = 9;
  b.capture().process_resources =
      ProcessResources{1000, 2000, 59528, 120, 0, 5, 1};
  Capture capture = b.Build();
  // Arguments contiguous in span order, as the collector lays them out.
  std::vector<SpanArg> args;
  for (Span& span : capture.spans) {
    if (span.id == 2) {
      span.first_arg = static_cast<uint32_t>(args.size());
      args.push_back(IntArg("size", 4096));
      args.push_back(DoubleArg("ratio", 0.25));
      args.push_back(IntArg("size", -1));
      span.arg_count = 3;
      if (o.counters) {
        args.push_back(CounterArg("bytes_copied", 4567));
        args.push_back(CounterArg("size", 2));
        span.arg_count = 5;
      }
    }
    if (span.id == 5 && o.counters) {
      span.first_arg = static_cast<uint32_t>(args.size());
      args.push_back(CounterArg("caf\xc3\xa9 hits", -3));
      span.arg_count = 1;
    }
    if (span.id == 4) {
      span.first_arg = static_cast<uint32_t>(args.size());
      args.push_back(DoubleArg("big", 1e20));
      args.push_back(IntArg("min", INT64_MIN));
      span.arg_count = 2;
      if (o.strings) {
        args.push_back(StringArg("file", "src/caf\xc3\xa9 \"q\".cc"));
        args.push_back(StringArg("shape", std::string(64, 'x'), true));
        args.push_back(StringArg("empty", ""));
        span.arg_count = 5;
      }
    }
    if (span.id == 6 && o.strings) {
      span.flags |= kSpanHookFailed;
      span.first_arg = static_cast<uint32_t>(args.size());
      args.push_back(StringArg("hook_error", "complete: device lost"));
      span.arg_count = 1;
    }
  }
  capture.args = args;
  if (o.counters) capture.dropped_args = 7;
  if (o.strings) capture.failed_prepares = 2;
  return capture;
}

// A random but well-formed capture: `threads` threads, a few sites, nested
// spans with random durations, drawn from `rng`.
inline Capture RandomCapture(std::mt19937_64& rng, int spans_per_thread = 20) {
  CaptureBuilder b;
  std::uniform_int_distribution<int> thread_count(1, 3);
  std::uniform_int_distribution<int64_t> gap(0, 50);
  std::uniform_int_distribution<int64_t> length(0, 5'000);
  const char* names[] = {"a", "b", "c.d", "e"};
  const char* phases[] = {"", "p", "q"};
  std::vector<uint32_t> sites;
  for (const char* name : names) {
    for (const char* phase : phases) sites.push_back(b.Site(name, phase));
  }
  std::uniform_int_distribution<size_t> pick(0, sites.size() - 1);
  uint64_t id = 1;
  const int threads = thread_count(rng);
  for (int t = 0; t < threads; ++t) {
    const uint32_t thread = b.Thread(static_cast<uint64_t>(200 + t));
    int64_t cursor = 0;
    // Each root gets up to three levels of strictly nested children.
    for (int s = 0; s < spans_per_thread;) {
      const uint64_t root = id++;
      const int64_t start = cursor + gap(rng);
      const int64_t end = start + 3 * length(rng) + 10;
      b.Add(root, 0, sites[pick(rng)], thread, start, end).heartbeats =
          static_cast<uint64_t>(length(rng));
      ++s;
      uint64_t parent = root;
      int64_t lo = start;
      int64_t hi = end;
      for (int depth = 0; depth < 3 && s < spans_per_thread; ++depth, ++s) {
        const int64_t child_start = lo + (hi - lo) / 4;
        const int64_t child_end = child_start + (hi - lo) / 2;
        const uint64_t child = id++;
        b.Add(child, parent, sites[pick(rng)], thread, child_start, child_end)
            .heartbeats = static_cast<uint64_t>(gap(rng));
        parent = child;
        lo = child_start;
        hi = child_end;
      }
      cursor = end;
    }
  }
  return b.Build();
}

struct HandOffOptions {
  // A user argument named "heartbeats" (negative) on span 6, beside the
  // span's own heartbeat count: a reader must keep the two apart.
  bool heartbeats_arg = false;
};

// Three threads (one unnamed); span 3 is a cross-thread child of 1 and the
// cross-thread parent of 4 (a hand-off chain), 6 (unfinished) a second
// cross-thread child of 1; spans 2 and 6 carry arguments.
inline Capture HandOffCapture(const HandOffOptions& o = {}) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(100, "main");
  const uint32_t worker = b.Thread(101, "worker");
  const uint32_t async = b.Thread(102);
  const uint32_t root = b.Site("app.run");
  const uint32_t parse = b.Site("file.parse", "parse");
  const uint32_t hand = b.Site("hand.off", "", "pool", "queue");
  const uint32_t leaf = b.Site("leaf", "parse");
  b.Add(1, 0, root, main, 0, 1000);
  b.Add(2, 1, parse, main, 10, 100).heartbeats = 5;
  b.Add(3, 1, hand, worker, 20, 500);
  b.Add(4, 3, leaf, async, 30, 200);
  b.Add(5, 3, leaf, worker, 40, 60);
  b.Add(6, 1, leaf, async, 300, 400).flags = kSpanUnfinished;
  b.Add(7, 2, leaf, main, 50, 50);
  b.Args(2, {IntArg("size", 4096), CounterArg("bytes", 7)});
  std::vector<SpanArg> args6 = {DoubleArg("ratio", 0.5)};
  if (o.heartbeats_arg) args6.push_back(IntArg("heartbeats", -2));
  b.Args(6, std::move(args6));
  return b.Build();
}

// main runs app.run (9 ms), which reads a file on main (file.read, 1.9 ms)
// and parses it on a pool thread (file.parse, `parse_ns` long): a
// cross-thread child. With `phases`, file.read and file.parse are in the
// phases "read" and "parse".
inline Capture ReadParseCapture(int64_t parse_ns, bool phases = false) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(7001, "main");
  const uint32_t pool = b.Thread(7002, "pool-0");
  const uint32_t run = b.Site("app.run");
  const uint32_t read = b.Site("file.read", phases ? "read" : "");
  const uint32_t parse = b.Site("file.parse", phases ? "parse" : "");
  b.Add(1, 0, run, main, 0, 9'000'000);
  b.Add(2, 1, read, main, 100'000, 2'000'000);
  b.Add(3, 1, parse, pool, 2'100'000, 2'100'000 + parse_ns);
  return b.Build();
}

}  // namespace spanprof::testing

#endif  // SPANPROF_TESTS_TESTING_CAPTURES_H_
