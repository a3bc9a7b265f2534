// MergeCaptures(): captures of several processes on one timeline, their
// cross-process parents as links, the merged capture through both trace
// formats and the summary, and every rule that refuses or warns.
#include "spanprof/analysis/merge.h"

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/forest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "spanprof/internal/packed_args.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/text.h"

namespace spanprof::analysis {
namespace {

using spanprof::testing::CaptureBuilder;
using spanprof::testing::CounterArg;
using spanprof::testing::IntArg;
using spanprof::testing::Replace;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr int64_t kAnchor = 1'700'000'000'000'000'000;

// The coordinator: root [0, 10000] on main, "spawn" [1000, 9000] (span 2,
// the span its worker is started under), a cross-thread child on a pool
// thread.
Capture Coordinator() {
  CaptureBuilder b;
  Capture& c = b.capture();
  c.process_name = "coordinator";
  c.pid = 100;
  c.host = "host-a";
  c.trace_id = "0af7651916cd43dd8448eb211c80319c";
  c.span_id_seed = 0x1111;
  c.wall_clock_uncertainty_ns = 40;
  c.window_ns = 10'000;
  c.process_resources.peak_rss_kib = 500;
  c.process_resources.user_cpu_ns = 1'000;
  const uint32_t main = b.Thread(100, "main");
  const uint32_t pool = b.Thread(101, "pool");
  const uint32_t run = b.Site("app.run");
  const uint32_t spawn = b.Site("spawn", "control");
  const uint32_t work = b.Site("work", "compute");
  b.Add(1, 0, run, main, 0, 10'000);
  b.Add(2, 1, spawn, main, 1'000, 9'000).heartbeats = 4;
  b.Add(3, 1, work, pool, 500, 800);
  b.Args(3, {IntArg("size", 7)});
  return b.Build();
}

// A worker whose anchor is `offset_ns` after the coordinator's, a child of
// `remote_parent`: root [0, 3000], a "work" child [100, 2000] with a counter.
Capture Worker(int64_t pid, int64_t offset_ns, uint64_t remote_parent) {
  CaptureBuilder b;
  Capture& c = b.capture();
  c.process_name = "worker";
  c.pid = pid;
  c.host = "host-a";
  c.trace_id = "0af7651916cd43dd8448eb211c80319c";
  c.span_id_seed = 0x2222 + static_cast<uint64_t>(pid);
  c.wall_clock_anchor_ns = kAnchor + offset_ns;
  c.wall_clock_uncertainty_ns = 70;
  c.remote_parent_span_id = remote_parent;
  c.window_ns = 3'000;
  c.process_resources.peak_rss_kib = 900;
  c.process_resources.user_cpu_ns = 2'000;
  const uint32_t main = b.Thread(static_cast<uint64_t>(pid), "worker-main");
  const uint32_t run = b.Site("worker.run");
  const uint32_t work = b.Site("work", "compute");
  b.Add(1, 0, run, main, 0, 3'000);
  b.Add(2, 1, work, main, 100, 2'000).heartbeats = 3;
  b.Args(2, {CounterArg("items", 5)});
  return b.Build();
}

uint64_t ExternalIdOf(const Capture& capture, uint64_t id) {
  for (const Span& span : capture.spans) {
    if (span.id == id) return ExternalSpanId(capture, span);
  }
  return 0;
}

// The coordinator and one worker started (2 ms after it) under its span 2.
std::vector<MergeInput> Pair() {
  const Capture coordinator = Coordinator();
  return {{"coordinator.json", coordinator},
          {"worker.json", Worker(200, 2'000, ExternalIdOf(coordinator, 2))}};
}

MergeResult MergeOk(const std::vector<MergeInput>& inputs) {
  absl::StatusOr<MergeResult> merged = MergeCaptures(inputs);
  EXPECT_TRUE(merged.ok()) << merged.status();
  return merged.ok() ? *std::move(merged) : MergeResult();
}

const Span* SpanNamed(const Capture& capture, const std::string& name,
                      int64_t pid) {
  for (const Span& span : capture.spans) {
    if (capture.sites[span.site].name == name &&
        ThreadPid(capture, span.thread) == pid) {
      return &span;
    }
  }
  return nullptr;
}

std::string MergeError(const std::vector<MergeInput>& inputs) {
  absl::StatusOr<MergeResult> merged = MergeCaptures(inputs);
  EXPECT_FALSE(merged.ok());
  return merged.ok() ? "" : std::string(merged.status().message());
}

TEST(MergeTest, AlignsTimesThroughTheAnchors) {
  const MergeResult m = MergeOk(Pair());
  const Capture& c = m.capture;
  EXPECT_EQ(c.wall_clock_anchor_ns, kAnchor);
  ASSERT_THAT(c.processes, SizeIs(2));
  EXPECT_EQ(c.processes[0].time_offset_ns, 0);
  EXPECT_EQ(c.processes[1].time_offset_ns, 2'000);
  const Span* worker_run = SpanNamed(c, "worker.run", 200);
  ASSERT_NE(worker_run, nullptr);
  EXPECT_EQ(worker_run->start_ns, 2'000);
  EXPECT_EQ(worker_run->end_ns, 5'000);
  const Span* coordinator_run = SpanNamed(c, "app.run", 100);
  ASSERT_NE(coordinator_run, nullptr);
  EXPECT_EQ(coordinator_run->start_ns, 0);
  EXPECT_EQ(c.window_ns, 10'000);
  EXPECT_EQ(c.wall_clock_uncertainty_ns, 70);  // the largest
  EXPECT_EQ(m.anchor_uncertainty_ns, 70);
  // The input order does not matter: the earliest anchor comes first.
  std::vector<MergeInput> reversed = Pair();
  std::swap(reversed[0], reversed[1]);
  EXPECT_EQ(MergeOk(reversed).capture, c);
}

TEST(MergeTest, OneProcessPerCaptureWithItsPidAndName) {
  const Capture c = MergeOk(Pair()).capture;
  EXPECT_EQ(c.pid, 100);
  EXPECT_EQ(c.process_name, "coordinator");
  EXPECT_EQ(c.processes[0].pid, 100);
  EXPECT_EQ(c.processes[0].process_name, "coordinator");
  EXPECT_EQ(c.processes[1].pid, 200);
  EXPECT_EQ(c.processes[1].process_name, "worker");
  EXPECT_EQ(c.processes[1].host, "host-a");
  ASSERT_THAT(c.threads, SizeIs(3));
  EXPECT_EQ(c.threads[0].process, 0u);
  EXPECT_EQ(c.threads[1].process, 0u);
  EXPECT_EQ(c.threads[2].process, 1u);
  EXPECT_EQ(ThreadPid(c, 2), 200);
  // Sites with the same name and tags are shared; spans are unique.
  EXPECT_THAT(c.sites, SizeIs(4));
  EXPECT_THAT(c.spans, SizeIs(5));
  EXPECT_EQ(c.process_resources.user_cpu_ns, 3'000);  // summed
  EXPECT_EQ(c.process_resources.peak_rss_kib, 900);   // the largest
  // The JSON trace: each event under its own process, a process_name each.
  const std::string json = TraceToJson(c);
  EXPECT_THAT(json, HasSubstr("{\"ph\":\"M\",\"name\":\"process_name\","
                              "\"pid\":200,\"tid\":200,\"ts\":0,\"args\":"
                              "{\"name\":\"worker\"}}"));
  EXPECT_THAT(json, HasSubstr("\"name\":\"worker.run\",\"cat\":\"spanprof\","
                              "\"pid\":200,\"tid\":200"));
  EXPECT_THAT(json, HasSubstr("\"name\":\"app.run\",\"cat\":\"spanprof\","
                              "\"pid\":100,\"tid\":100"));
}

// Sites are shared only when every key field matches: the workers' "work"
// sites differ in dtype from each other and in device from the one they share.
TEST(MergeTest, SitesAreSharedOnlyWhenBackendDtypeAndDeviceMatch) {
  std::vector<MergeInput> inputs = Pair();
  inputs.push_back(
      {"worker2.json", Worker(300, 2'500, ExternalIdOf(inputs[0].capture, 2))});
  inputs[1].capture.sites[1].dtype = "f16";
  inputs[2].capture.sites[1].dtype = "f32";
  const Capture c = MergeOk(inputs).capture;
  // app.run, spawn, work (coordinator), worker.run, work f16, work f32.
  EXPECT_THAT(c.sites, SizeIs(6));
  inputs[2].capture.sites[1].dtype = "f16";
  EXPECT_THAT(MergeOk(inputs).capture.sites, SizeIs(5));
  inputs[2].capture.sites[1].device = "gpu1";
  EXPECT_THAT(MergeOk(inputs).capture.sites, SizeIs(6));
}

TEST(MergeTest, CrossProcessParentsBecomeLinks) {
  const MergeResult m = MergeOk(Pair());
  const Capture& c = m.capture;
  EXPECT_EQ(m.linked_roots, 1u);
  const Span* spawn = SpanNamed(c, "spawn", 100);
  const Span* worker_run = SpanNamed(c, "worker.run", 200);
  const Span* worker_work = SpanNamed(c, "work", 200);
  ASSERT_TRUE(spawn && worker_run && worker_work);
  EXPECT_EQ(worker_run->parent_id, spawn->id);
  EXPECT_EQ(worker_run->depth, spawn->depth + 1);
  EXPECT_EQ(worker_work->parent_id, worker_run->id);
  EXPECT_EQ(worker_work->depth, worker_run->depth + 1);
  // A valid forest, and the worker's time is not taken from the spawn span.
  const Summary summary = Summarize(c);
  EXPECT_THAT(summary.validation_issues, IsEmpty());
  for (const Row& row : summary.rows) {
    if (row.key.name == "spawn") EXPECT_EQ(row.self_ns, 8'000);
  }
  // Both formats draw it: the JSON as a flow between the two processes.
  const std::string json = TraceToJson(c);
  EXPECT_THAT(json,
              HasSubstr("\"pid\":100,\"tid\":100,\"ts\":1.000,"
                        "\"dur\":8.000,\"bind_id\":" +
                        std::to_string(spawn->id) + ",\"flow_out\":true"));
  EXPECT_THAT(json, HasSubstr("\"pid\":200,\"tid\":200,\"ts\":2.000,"
                              "\"dur\":3.000,\"bind_id\":" +
                              std::to_string(spawn->id) + ",\"flow_in\":true"));
  EXPECT_THAT(m.warnings, IsEmpty());
  EXPECT_THAT(m.notes, IsEmpty());
}

// Each span keeps the external id its own capture gave it (derived or
// exported), so the merged capture still names the same spans outside.
TEST(MergeTest, SpansKeepTheirExternalIds) {
  const std::vector<MergeInput> inputs = Pair();
  const Capture c = MergeOk(inputs).capture;
  for (const MergeInput& in : inputs) {
    const int64_t pid = in.capture.pid;
    for (const Span& span : in.capture.spans) {
      const Span* merged = SpanNamed(c, in.capture.sites[span.site].name, pid);
      ASSERT_NE(merged, nullptr);
      EXPECT_EQ(ExternalSpanId(c, *merged), ExternalSpanId(in.capture, span));
    }
  }
}

// A remote parent may name an alias: a later export of the same span.
TEST(MergeTest, AliasesResolve) {
  Capture coordinator = Coordinator();
  coordinator.exported_span_ids = {{2, 0xaaaa}, {2, 0xbbbb}};
  const std::vector<MergeInput> inputs = {
      {"coordinator.json", coordinator},
      {"worker.json", Worker(200, 2'000, 0xbbbb)}};
  const MergeResult m = MergeOk(inputs);
  const Span* spawn = SpanNamed(m.capture, "spawn", 100);
  const Span* worker_run = SpanNamed(m.capture, "worker.run", 200);
  ASSERT_TRUE(spawn && worker_run);
  EXPECT_EQ(worker_run->parent_id, spawn->id);
  EXPECT_EQ(ExternalSpanId(m.capture, *spawn), 0xaaaau);  // the first entry
  EXPECT_EQ(m.linked_roots, 1u);
}

// A chain of three processes: the grandchild's depths follow the child's.
TEST(MergeTest, ChainsOfProcessesLink) {
  const Capture coordinator = Coordinator();
  const Capture child = Worker(200, 2'000, ExternalIdOf(coordinator, 2));
  const Capture grandchild = Worker(300, 2'500, ExternalIdOf(child, 2));
  // Given out of order on purpose.
  const MergeResult m = MergeOk({{"grandchild.json", grandchild},
                                 {"coordinator.json", coordinator},
                                 {"child.json", child}});
  EXPECT_EQ(m.linked_roots, 2u);
  const Span* child_work = SpanNamed(m.capture, "work", 200);
  const Span* grand_run = SpanNamed(m.capture, "worker.run", 300);
  ASSERT_TRUE(child_work && grand_run);
  EXPECT_EQ(grand_run->parent_id, child_work->id);
  EXPECT_EQ(grand_run->depth, 4u);  // app.run 0, spawn 1, run 2, work 3
  EXPECT_THAT(Summarize(m.capture).validation_issues, IsEmpty());
}

TEST(MergeTest, RowsSayInHowManyProcessesTheyRan) {
  const Summary summary = Summarize(MergeOk(Pair()).capture);
  EXPECT_EQ(summary.process_count, 2u);
  EXPECT_EQ(summary.thread_count, 3u);
  for (const Row& row : summary.rows) {
    SCOPED_TRACE(row.label);
    EXPECT_EQ(row.processes, row.key.name == "work" ? 2u : 1u);
  }
  // A single-process capture: one process, and every row ran in it.
  const Summary single = Summarize(Coordinator());
  EXPECT_EQ(single.process_count, 1u);
  for (const Row& row : single.rows) EXPECT_EQ(row.processes, 1u);
  // The summary document carries both, and reads back.
  const std::string json = SummaryToJson(summary);
  EXPECT_THAT(json, HasSubstr("\"process_count\": 2,"));
  EXPECT_THAT(json, HasSubstr("\"processes\": 2,"));
  absl::StatusOr<Summary> back = ParseSummary(json, "s.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(*back, summary);
}

// The merged capture reads back exactly from both formats, with the same
// summary.
TEST(MergeTest, RoundTripsThroughBothTraceFormats) {
  Capture coordinator = Coordinator();
  coordinator.exported_span_ids = {{2, 0xaaaa}, {2, 0xbbbb}};
  const Capture c = MergeOk({{"coordinator.json", coordinator},
                             {"worker.json", Worker(200, 2'000, 0xbbbb)},
                             {"other.json", Worker(300, 7'000, 0)}})
                        .capture;
  const absl::StatusOr<Capture> json = ParseTrace(TraceToJson(c), "m.json");
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*json, c);
  const absl::StatusOr<Capture> pf =
      ParseTrace(CaptureToPerfetto(c), "m.pftrace");
  ASSERT_TRUE(pf.ok()) << pf.status();
  EXPECT_EQ(*pf, c);
  EXPECT_EQ(SummaryToJson(Summarize(*pf)), SummaryToJson(Summarize(c)));
}

// The capture a session end builds holds its arguments packed
// (Capture::packed_args), decoded one span at a time into storage that the
// next span's reuses: merged, such captures keep every span's own arguments.
Capture Packed(Capture capture) {
  auto packed = std::make_shared<internal::PackedArgs>();
  for (Span& span : capture.spans) {
    const std::span<const SpanArg> args(capture.args.data() + span.first_arg,
                                        span.arg_count);
    span.first_arg = packed->Append(args);
  }
  capture.args.clear();
  capture.packed_args = std::move(packed);
  return capture;
}

TEST(MergeTest, PackedCapturesMergeAsTheirUnpackedSelves) {
  const std::vector<MergeInput> plain = Pair();
  ASSERT_FALSE(plain[0].capture.args.empty());
  ASSERT_FALSE(plain[1].capture.args.empty());
  const Capture want = MergeOk(plain).capture;
  ASSERT_EQ(want.args.size(),
            plain[0].capture.args.size() + plain[1].capture.args.size());
  const Capture got = MergeOk({{"coordinator.json", Packed(plain[0].capture)},
                               {"worker.json", Packed(plain[1].capture)}})
                          .capture;
  EXPECT_EQ(got, want);
}

// A single-process trace does not change: no processes, no thread process.
TEST(MergeTest, SingleProcessTracesAreUnchanged) {
  const std::string json = TraceToJson(Coordinator());
  EXPECT_THAT(json, ::testing::Not(HasSubstr("\"processes\"")));
  EXPECT_THAT(json, ::testing::Not(HasSubstr("\"process\":")));
  const absl::StatusOr<Capture> back = ParseTrace(json, "t.json");
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_THAT(back->processes, IsEmpty());
}

// --- rules -----------------------------------------------------------------

TEST(MergeRulesTest, NeedsTwoCaptures) {
  EXPECT_THAT(MergeError({}), HasSubstr("at least two captures (got 0)"));
  EXPECT_THAT(MergeError({{"a.json", Coordinator()}}),
              HasSubstr("at least two captures (got 1)"));
}

TEST(MergeRulesTest, RefusesACaptureWithoutAnAnchor) {
  std::vector<MergeInput> inputs = Pair();
  inputs[1].capture.wall_clock_anchor_ns = 0;
  EXPECT_THAT(MergeError(inputs),
              HasSubstr("worker.json: the capture has no wall-clock anchor"));
}

TEST(MergeRulesTest, RefusesAForeignTrace) {
  std::vector<MergeInput> inputs = Pair();
  inputs[0].capture.source = "chrome-trace";
  EXPECT_THAT(MergeError(inputs),
              HasSubstr("coordinator.json: a foreign trace (source "
                        "\"chrome-trace\")"));
}

TEST(MergeRulesTest, RefusesAMergedCapture) {
  const Capture merged = MergeOk(Pair()).capture;
  EXPECT_THAT(
      MergeError({{"merged.json", merged}, {"other.json", Worker(300, 50, 0)}}),
      HasSubstr("merged.json: already a merged capture (2 "
                "processes)"));
}

TEST(MergeRulesTest, RefusesTheSameCaptureTwice) {
  const Capture coordinator = Coordinator();
  EXPECT_THAT(MergeError({{"a.json", coordinator}, {"b.json", coordinator}}),
              HasSubstr("a.json and b.json are the same capture (pid 100, "
                        "host \"host-a\", anchor "));
  // The same session written twice (another pid would be odd, but the seed
  // is what names a session).
  Capture copy = Worker(200, 9, 0);
  copy.span_id_seed = coordinator.span_id_seed;
  EXPECT_THAT(MergeError({{"a.json", coordinator}, {"c.json", copy}}),
              HasSubstr("a.json and c.json are the same capture (span id "
                        "seed 0000000000001111)"));
  // Seeds of 0 (older traces) are not compared.
  Capture old_a = Coordinator();
  Capture old_b = Worker(200, 9, 0);
  old_a.span_id_seed = 0;
  old_b.span_id_seed = 0;
  EXPECT_TRUE(MergeCaptures({{"a", old_a}, {"b", old_b}}).ok());
}

TEST(MergeRulesTest, DifferentTraceIdsMergeWithAWarning) {
  std::vector<MergeInput> inputs = Pair();
  inputs[1].capture.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  const MergeResult m = MergeOk(inputs);
  ASSERT_THAT(m.warnings, SizeIs(1));
  EXPECT_THAT(m.warnings[0],
              HasSubstr("2 different traces (coordinator.json "
                        "0af7651916cd43dd8448eb211c80319c, worker.json "
                        "4bf92f3577b34da6a3ce929d0e0e4736)"));
  EXPECT_EQ(m.capture.trace_id, "0af7651916cd43dd8448eb211c80319c");
}

// The worker's anchor says it started half a millisecond before the
// coordinator, so 501 µs before the span that started it (one of the two
// anchors jumped).
TEST(MergeRulesTest, WarnsWhenAChildStartsBeforeItsParentSpan) {
  const Capture coordinator = Coordinator();
  const MergeResult m = MergeOk(
      {{"coordinator.json", coordinator},
       {"worker.json", Worker(200, -500'000, ExternalIdOf(coordinator, 2))}});
  ASSERT_THAT(m.warnings, SizeIs(1));
  EXPECT_THAT(m.warnings[0],
              HasSubstr("worker.json starts 501.000 µs before its parent span "
                        "'spawn' of coordinator.json"));
  EXPECT_THAT(m.warnings[0], HasSubstr("clock jump"));
  // Within the uncertainties and the tolerance: no warning.
  Capture near = Worker(200, 1'000 - kMergeSkewToleranceNs / 2,
                        ExternalIdOf(coordinator, 2));
  EXPECT_THAT(
      MergeOk({{"coordinator.json", coordinator}, {"worker.json", near}})
          .warnings,
      IsEmpty());
  near.wall_clock_anchor_ns -= kMergeSkewToleranceNs;
  EXPECT_THAT(
      MergeOk({{"coordinator.json", coordinator}, {"worker.json", near}})
          .warnings,
      SizeIs(1));
}

TEST(MergeRulesTest, RefusesAnchorsMoreThanADayApart) {
  std::vector<MergeInput> inputs = Pair();
  inputs[1].capture.wall_clock_anchor_ns = kAnchor + kMergeMaxAnchorGapNs + 1;
  EXPECT_THAT(MergeError(inputs),
              HasSubstr("worker.json starts more than a day after "
                        "coordinator.json"));
  inputs[1].capture.wall_clock_anchor_ns = kAnchor + kMergeMaxAnchorGapNs;
  EXPECT_TRUE(MergeCaptures(inputs).ok());
}

TEST(MergeRulesTest, AMissingRemoteParentIsANote) {
  const MergeResult m = MergeOk({{"coordinator.json", Coordinator()},
                                 {"worker.json", Worker(200, 2'000, 0x1234)}});
  EXPECT_EQ(m.linked_roots, 0u);
  ASSERT_THAT(m.notes, SizeIs(1));
  EXPECT_THAT(m.notes[0],
              HasSubstr("worker.json: its remote parent span "
                        "0000000000001234 is in none of the captures"));
  const Span* worker_run = SpanNamed(m.capture, "worker.run", 200);
  ASSERT_NE(worker_run, nullptr);
  EXPECT_EQ(worker_run->parent_id, 0u);
  EXPECT_EQ(worker_run->depth, 0u);
  EXPECT_EQ(m.capture.processes[1].remote_parent_span_id, 0x1234u);
}

// Two processes that name each other's spans as parents: one link stays
// out, with a warning, so the forest has no loop.
TEST(MergeRulesTest, ALoopOfProcessesIsNotLinked) {
  Capture a = Worker(200, 0, 0);
  Capture b = Worker(300, 10, 0);
  a.remote_parent_span_id = ExternalIdOf(b, 2);
  b.remote_parent_span_id = ExternalIdOf(a, 2);
  const MergeResult m = MergeOk({{"a.json", a}, {"b.json", b}});
  EXPECT_EQ(m.linked_roots, 1u);
  EXPECT_THAT(m.warnings, ElementsAre(HasSubstr("each other's parents")));
  EXPECT_THAT(Summarize(m.capture).validation_issues, IsEmpty());
}

TEST(MergeRulesTest, WarnsWhenTwoProcessesShareAPid) {
  std::vector<MergeInput> inputs = Pair();
  inputs[1].capture.pid = 100;
  inputs[1].capture.host = "host-b";
  const MergeResult m = MergeOk(inputs);
  EXPECT_THAT(m.warnings,
              ElementsAre(HasSubstr("coordinator.json and worker.json have "
                                    "the same pid 100")));
  // Still two processes in both formats.
  const absl::StatusOr<Capture> pf =
      ParseTrace(CaptureToPerfetto(m.capture), "m.pftrace");
  ASSERT_TRUE(pf.ok()) << pf.status();
  EXPECT_EQ(*pf, m.capture);
  const absl::StatusOr<Capture> json =
      ParseTrace(TraceToJson(m.capture), "m.json");
  ASSERT_TRUE(json.ok()) << json.status();
  EXPECT_EQ(*json, m.capture);
}

TEST(MergeRulesTest, TotalsAddUp) {
  std::vector<MergeInput> inputs = Pair();
  inputs[0].capture.dropped_events = 3;
  inputs[0].capture.dropped_by_site = {{2, 3}};  // "work"
  inputs[1].capture.dropped_events = 2;
  inputs[1].capture.dropped_by_site = {{1, 2}};  // "work" too
  inputs[1].capture.overflow_policy = "ring";
  inputs[1].capture.finished_normally = false;
  inputs[1].capture.overhead_ns_per_span = 30;
  const Capture c = MergeOk(inputs).capture;
  EXPECT_EQ(c.dropped_events, 5u);
  ASSERT_THAT(c.dropped_by_site, SizeIs(1));
  EXPECT_EQ(c.sites[c.dropped_by_site[0].site].name, "work");
  EXPECT_EQ(c.dropped_by_site[0].count, 5u);
  EXPECT_EQ(c.overflow_policy, "ring");
  EXPECT_FALSE(c.finished_normally);
  EXPECT_EQ(c.overhead_ns_per_span, 30);
  EXPECT_EQ(c.event_limit, 2'000'000u);
}

// --- the merged trace's strict reader ---------------------------------------

void ExpectRejected(const std::string& json, const std::string& message) {
  const absl::StatusOr<Capture> read = ParseTrace(json, "m.json");
  ASSERT_FALSE(read.ok());
  EXPECT_THAT(std::string(read.status().message()), HasSubstr(message));
}

TEST(MergedTraceReaderTest, ThreadsNameAProcessInRange) {
  const std::string json = TraceToJson(MergeOk(Pair()).capture);
  ExpectRejected(Replace(json, "\"sort_index\":0,\"process\":1}",
                         "\"sort_index\":0,\"process\":2}"),
                 "m.json: $.metadata.threads[2].process: process index 2 out "
                 "of range (2 processes)");
  ExpectRejected(Replace(json, ",\"process\":1}", "}"),
                 "$.metadata.threads[2]: missing field \"process\"");
}

TEST(MergedTraceReaderTest, EventsAreUnderTheirThreadsProcess) {
  const std::string json = TraceToJson(MergeOk(Pair()).capture);
  // The worker's span under the coordinator's pid.
  ExpectRejected(Replace(json,
                         "\"name\":\"worker.run\",\"cat\":\"spanprof\","
                         "\"pid\":200",
                         "\"name\":\"worker.run\",\"cat\":\"spanprof\","
                         "\"pid\":100"),
                 "pid: 100 != the pid of metadata.threads[2]'s process (200)");
  // A thread_name event under a pid of no process.
  ExpectRejected(Replace(json, "\"name\":\"thread_name\",\"pid\":200",
                         "\"name\":\"thread_name\",\"pid\":300"),
                 "pid: 300 is not the pid of any process in "
                 "metadata.processes");
  // A thread of the other process.
  ExpectRejected(
      Replace(json, "\"name\":\"thread_name\",\"pid\":200",
              "\"name\":\"thread_name\",\"pid\":100"),
      "tid: 200 is not the tid of any thread in metadata.threads of pid "
      "100");
}

TEST(MergedTraceReaderTest, OnlyAMergedTraceNamesProcesses) {
  const std::string json = TraceToJson(Coordinator());
  ExpectRejected(Replace(json, "\"name\":\"main\",\"sort_index\":0}",
                         "\"name\":\"main\",\"sort_index\":0,\"process\":0}"),
                 "$.metadata.threads[0].process: a thread names its process "
                 "only in a merged trace");
}

// A summary of version 3 (before process counts) reads as one process.
TEST(MergedSummaryTest, Version3ReadsAsOneProcess) {
  std::string v3 = SummaryToJson(Summarize(Coordinator()));
  v3 = Replace(v3, "\"schema_version\": 5", "\"schema_version\": 3");
  v3 = Replace(v3, "  \"process_count\": 1,\n", "");
  v3 = Replace(v3, "  \"end_reason\": \"finished\",\n", "");
  v3 = Replace(v3, "  \"open_at_exit_events\": 0,\n", "");
  v3 = Replace(v3, "  \"drops\": [],\n", "");
  v3 = Replace(v3, "  \"failed_prepares\": 0,\n", "");
  for (size_t at;
       (at = v3.find("      \"hook_failures\": 0,\n")) != std::string::npos;) {
    v3.erase(at, std::string("      \"hook_failures\": 0,\n").size());
  }
  for (size_t at;
       (at = v3.find("      \"processes\": 1,\n")) != std::string::npos;) {
    v3.erase(at, std::string("      \"processes\": 1,\n").size());
  }
  const absl::StatusOr<Summary> read = ParseSummary(v3, "v3.json");
  ASSERT_TRUE(read.ok()) << read.status();
  EXPECT_EQ(read->schema_version, 3);
  EXPECT_EQ(read->process_count, 1u);
  for (const Row& row : read->rows) EXPECT_EQ(row.processes, 1u);
  // Version 3 has no process counts: they are unknown fields there.
  const absl::StatusOr<Summary> mixed =
      ParseSummary(Replace(SummaryToJson(Summarize(Coordinator())),
                           "\"schema_version\": 5", "\"schema_version\": 3"),
                   "mixed.json");
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(std::string(mixed.status().message()),
              HasSubstr("unknown field \"process_count\""));
}

TEST(MergedSummaryTest, ProcessCountsAreChecked) {
  const std::string json = SummaryToJson(Summarize(MergeOk(Pair()).capture));
  const absl::StatusOr<Summary> bad = ParseSummary(
      Replace(json, "\"process_count\": 2", "\"process_count\": 1"), "s");
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("processes (2) > threads (2) or process_count (1)"));
  const absl::StatusOr<Summary> zero = ParseSummary(
      Replace(json, "\"process_count\": 2", "\"process_count\": 0"), "s");
  ASSERT_FALSE(zero.ok());
  EXPECT_THAT(std::string(zero.status().message()),
              HasSubstr("$.process_count: a capture has at least one process"));
}

}  // namespace
}  // namespace spanprof::analysis
