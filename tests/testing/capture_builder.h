// capture_builder.h — hand-built captures for the analysis, CLI and e2e tests.
//
// Example:
//
//   CaptureBuilder b;
//   uint32_t main = b.Thread(100, "main");
//   uint32_t site = b.Site("model.forward", "forward", "encoder");
//   b.Add(1, 0, site, main, 0, 100);        // root [0, 100]
//   b.Add(2, 1, site, main, 10, 30).heartbeats = 3;
//   spanprof::Capture capture = b.Build();  // sorted like the collector's
#ifndef SPANPROF_TESTS_TESTING_CAPTURE_BUILDER_H_
#define SPANPROF_TESTS_TESTING_CAPTURE_BUILDER_H_

#include <algorithm>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "spanprof/capture.h"

namespace spanprof::testing {

class CaptureBuilder {
 public:
  CaptureBuilder() {
    capture_.spanprof_version = "0.1.0";
    capture_.process_name = "test";
    capture_.pid = 4242;
    capture_.clock = "monotonic";
    capture_.wall_clock_anchor_ns = 1'700'000'000'000'000'000;
    capture_.window_ns = 1'000'000;
    capture_.event_limit = 1'000'000;
    capture_.overflow_policy = "drop";
  }

  uint32_t Thread(uint64_t os_tid, std::string name = "") {
    const uint32_t sort_index = static_cast<uint32_t>(capture_.threads.size());
    capture_.threads.push_back(ThreadInfo{os_tid, std::move(name), sort_index});
    return sort_index;
  }

  uint32_t Site(std::string name, std::string phase = "",
                std::string module = "", std::string activity = "") {
    capture_.sites.push_back(spanprof::Site{.name = std::move(name),
                                            .phase = std::move(phase),
                                            .module = std::move(module),
                                            .activity = std::move(activity)});
    return static_cast<uint32_t>(capture_.sites.size() - 1);
  }

  // A site with any of its fields set (backend, dtype, device too).
  uint32_t AddSite(spanprof::Site site) {
    capture_.sites.push_back(std::move(site));
    return static_cast<uint32_t>(capture_.sites.size() - 1);
  }

  // Adds a span; its depth is its parent's depth + 1 when the parent was
  // added before (0 otherwise). Returns the span for further edits, valid
  // until the next Add().
  Span& Add(uint64_t id, uint64_t parent_id, uint32_t site, uint32_t thread,
            int64_t start_ns, int64_t end_ns) {
    Span span;
    span.id = id;
    span.parent_id = parent_id;
    span.site = site;
    span.thread = thread;
    span.start_ns = start_ns;
    span.end_ns = end_ns;
    for (const Span& other : capture_.spans) {
      if (parent_id != 0 && other.id == parent_id) span.depth = other.depth + 1;
    }
    capture_.spans.push_back(span);
    return capture_.spans.back();
  }

  // Attaches user arguments to the span with `id`.
  void Args(uint64_t id, std::vector<SpanArg> args) {
    for (Span& span : capture_.spans) {
      if (span.id != id) continue;
      span.first_arg = static_cast<uint32_t>(capture_.args.size());
      span.arg_count = static_cast<uint16_t>(args.size());
      for (SpanArg& arg : args) capture_.args.push_back(std::move(arg));
    }
  }

  // Sets the allocation deltas of the span with `id` (the capture's
  // `span_allocs` column, built in span order by Build()).
  void Allocs(uint64_t id, int64_t count, int64_t bytes) {
    allocs_[id] = SpanAllocs{count, bytes};
  }

  Capture& capture() { return capture_; }

  // The capture with spans sorted by (thread, start_ns, depth), as the
  // collector hands it over.
  Capture Build() const {
    Capture capture = capture_;
    std::stable_sort(capture.spans.begin(), capture.spans.end(),
                     [](const Span& a, const Span& b) {
                       return std::tie(a.thread, a.start_ns, a.depth) <
                              std::tie(b.thread, b.start_ns, b.depth);
                     });
    if (!allocs_.empty()) {
      capture.span_allocs.clear();
      for (const Span& span : capture.spans) {
        const auto it = allocs_.find(span.id);
        capture.span_allocs.push_back(it != allocs_.end() ? it->second
                                                          : SpanAllocs{});
      }
    }
    return capture;
  }

 private:
  Capture capture_;
  std::map<uint64_t, SpanAllocs> allocs_;  // by span id
};

// `SpanArg` factories.
inline SpanArg IntArg(std::string key, int64_t value) {
  SpanArg arg;
  arg.key = std::move(key);
  arg.int_value = value;
  return arg;
}
inline SpanArg StringArg(std::string key, std::string text,
                         bool truncated = false) {
  SpanArg arg;
  arg.key = std::move(key);
  arg.is_string = true;
  arg.text = std::move(text);
  arg.truncated = truncated;
  return arg;
}
inline SpanArg DoubleArg(std::string key, double value) {
  SpanArg arg;
  arg.key = std::move(key);
  arg.is_double = true;
  arg.double_value = value;
  return arg;
}
// A named counter's self count (`SPANPROF_COUNT`); put counters after the
// numeric arguments in `Args()`, as the collector does.
inline SpanArg CounterArg(std::string key, int64_t value) {
  SpanArg arg;
  arg.key = std::move(key);
  arg.int_value = value;
  arg.is_counter = true;
  return arg;
}

// The index of the span with `id` in `capture.spans`.
inline size_t IndexOf(const Capture& capture, uint64_t id) {
  for (size_t i = 0; i < capture.spans.size(); ++i) {
    if (capture.spans[i].id == id) return i;
  }
  return capture.spans.size();
}

}  // namespace spanprof::testing

#endif  // SPANPROF_TESTS_TESTING_CAPTURE_BUILDER_H_
