// The span resolver on hand-built events: an X or M event, as the event
// readers leave it, checked against a hand-built `TraceMetadata`.
#include "trace/span_resolver.h"

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "json/strict_json.h"
#include "spanprof/capture.h"
#include "trace/strict_event_reader.h"
#include "trace/trace_metadata_reader.h"
#include "trace/trace_reader.h"

namespace spanprof::analysis::internal {
namespace {

using ::testing::HasSubstr;

constexpr std::string_view kSource = "build/t.json";
constexpr int64_t kPid = 7;

// Two sites (one with tags) and two threads of process 7.
TraceMetadata Metadata(bool alloc_measured = false) {
  TraceMetadata metadata;
  Capture& c = metadata.capture;
  c.pid = kPid;
  c.alloc_measured = alloc_measured;
  c.sites.push_back(Site{.name = "app.run"});
  c.sites.push_back(
      Site{.name = "model.forward", .phase = "forward", .module = "encoder"});
  c.threads.push_back(ThreadInfo{.os_tid = 100, .name = "main"});
  c.threads.push_back(ThreadInfo{.os_tid = 101, .name = "worker"});
  metadata.sorted_tids = {{kPid, 100}, {kPid, 101}};
  metadata.sorted_pids = {kPid};
  return metadata;
}

// An X event of site 1 on thread 1, as its metadata says it must be.
struct Event {
  TraceEvent event{.index = 3, .is_span = true, .pid = kPid, .tid = 101};
  PendingSpan pending;
  Event() {
    pending.name = "model.forward";
    pending.cat = "forward";
    pending.site = 1;
    pending.thread = 1;
    pending.phase = "forward";
    pending.module = "encoder";
  }
};

absl::Status Resolve(const TraceMetadata& metadata, Event& e) {
  const JsonPath root = JsonPath::Root();
  const JsonPath events = root.Field("traceEvents");
  return SpanResolver(kSource, metadata)
      .ResolveSpan(events, e.pending, e.event);
}

void ExpectRefused(const TraceMetadata& metadata, Event e,
                   std::string_view expected) {
  const absl::Status status = Resolve(metadata, e);
  ASSERT_FALSE(status.ok()) << "accepted: " << expected;
  EXPECT_THAT(std::string(status.message()), HasSubstr(std::string(expected)));
}

TEST(SpanResolverTest, AcceptsAnEventThatMatchesItsSiteAndThread) {
  const TraceMetadata metadata = Metadata();
  Event e;
  ASSERT_TRUE(Resolve(metadata, e).ok());
  EXPECT_EQ(e.pending.span.site, 1u);
  EXPECT_EQ(e.pending.span.thread, 1u);
}

TEST(SpanResolverTest, RefusesIndexesOutOfRange) {
  const TraceMetadata metadata = Metadata();
  Event site;
  site.pending.site = 2;
  ExpectRefused(metadata, site,
                "build/t.json: $.traceEvents[3].args.site: site index 2 out "
                "of range (2 sites)");
  Event thread;
  thread.pending.thread = 5;
  ExpectRefused(metadata, thread,
                "$.traceEvents[3].args.thread: thread index 5 out of range "
                "(2 threads)");
}

TEST(SpanResolverTest, RefusesWhatDiffersFromTheSite) {
  const TraceMetadata metadata = Metadata();
  Event name;
  name.pending.name = "model.backward";
  ExpectRefused(metadata, name,
                "$.traceEvents[3].name: \"model.backward\" != "
                "metadata.sites[1].name \"model.forward\"");
  Event cat;
  cat.pending.cat = "spanprof";
  ExpectRefused(metadata, cat,
                "$.traceEvents[3].cat: expected \"forward\" (the site's "
                "phase), got \"spanprof\"");
  Event missing_tag;
  missing_tag.pending.module.reset();
  ExpectRefused(metadata, missing_tag,
                "$.traceEvents[3].args.module: does not match "
                "metadata.sites[1].module \"encoder\"");
  Event extra_tag;
  extra_tag.pending.device = "gpu0";
  ExpectRefused(metadata, extra_tag,
                "$.traceEvents[3].args.device: does not match "
                "metadata.sites[1].device \"\" (an unset tag is left out)");
}

TEST(SpanResolverTest, RefusesWhatDiffersFromTheThread) {
  const TraceMetadata metadata = Metadata();
  Event tid;
  tid.event.tid = 100;
  ExpectRefused(metadata, tid,
                "$.traceEvents[3].tid: 100 != metadata.threads[1].tid (101)");
  Event pid;
  pid.event.pid = 8;
  ExpectRefused(metadata, pid, "$.traceEvents[3].pid: 8 != metadata.pid (7)");
}

TEST(SpanResolverTest, AllocationFieldsFollowMetadata) {
  Event without;
  ExpectRefused(Metadata(/*alloc_measured=*/true), without,
                "alloc_count and alloc_bytes are required when "
                "metadata.alloc_measured is true");
  Event with;
  with.pending.has_alloc_count = with.pending.has_alloc_bytes = true;
  ExpectRefused(Metadata(), with,
                "alloc_count and alloc_bytes must be left out when "
                "metadata.alloc_measured is false");
  Event measured;
  measured.pending.has_alloc_count = measured.pending.has_alloc_bytes = true;
  EXPECT_TRUE(Resolve(Metadata(/*alloc_measured=*/true), measured).ok());
}

TEST(SpanResolverTest, ChecksMetaEventsPidAndTid) {
  const TraceMetadata metadata = Metadata();
  const SpanResolver resolver(kSource, metadata);
  const JsonPath root = JsonPath::Root();
  const JsonPath events = root.Field("traceEvents");
  TraceEvent thread_name{.index = 1, .pid = kPid, .tid = 100};
  EXPECT_TRUE(resolver.ResolveMetaEvent(events, thread_name).ok());
  TraceEvent process_name{
      .index = 0, .is_process_name = true, .pid = kPid, .tid = kPid};
  EXPECT_TRUE(resolver.ResolveMetaEvent(events, process_name).ok());

  TraceEvent unknown_tid{.index = 2, .pid = kPid, .tid = 102};
  absl::Status status = resolver.ResolveMetaEvent(events, unknown_tid);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("$.traceEvents[2].tid: 102 is not the tid of any "
                        "thread in metadata.threads"));
  TraceEvent other_pid{.index = 2, .pid = 9, .tid = 100};
  status = resolver.ResolveMetaEvent(events, other_pid);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("$.traceEvents[2].pid: 9 != metadata.pid (7)"));
  process_name.tid = 100;
  status = resolver.ResolveMetaEvent(events, process_name);
  EXPECT_THAT(std::string(status.message()),
              HasSubstr("$.traceEvents[0].tid: expected the pid (7), got 100"));
}

}  // namespace
}  // namespace spanprof::analysis::internal
