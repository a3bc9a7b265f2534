// End to end: `spanprof merge` with the real binary, on the captures of two
// real processes (run_probe --spawn-child: a parent that starts itself
// again as a child with SPANPROF_TRACEPARENT naming its "probe.spawn" span)
// and on hand-made traces for the rules that refuse or warn.
#include <dirent.h>
#include <unistd.h>

#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/capture.h"
#include "tests/analysis/perfetto/decoded_trace.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/cli_runner.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::Spanprof;
using ::spanprof::testing::TempDir;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

bool Exists(const std::string& path) { return access(path.c_str(), F_OK) == 0; }

// The files of `dir` whose names start with `prefix`, sorted.
std::vector<std::string> FilesStartingWith(const std::string& dir,
                                           const std::string& prefix) {
  std::set<std::string> names;
  if (DIR* d = opendir(dir.c_str())) {
    while (dirent* e = readdir(d)) {
      const std::string name = e->d_name;
      if (name.rfind(prefix, 0) == 0) names.insert(dir + "/" + name);
    }
    closedir(d);
  }
  return {names.begin(), names.end()};
}

// Runs the probe as a parent that spawns a child under its "probe.spawn"
// span; each writes trace-<pid>.json into `dir`.
std::vector<std::string> RecordParentAndChild(const TempDir& dir) {
  const ProcessResult r = testing::RunProcess(
      {SPANPROF_TEST_BIN_DIR "/run_probe", "--spawn-child"},
      {{"SPANPROF", "1"},
       {"SPANPROF_QUIET", "1"},
       {"SPANPROF_OUT", dir.File("trace-%p.json")},
       {"SPANPROF_SUMMARY_OUT", dir.File("summary-%p.json")},
       {"SPANPROF_TRACEPARENT", "\x01unset"}});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return FilesStartingWith(dir.path().string(), "trace-");
}

TEST(MergeCliTest, MergesTwoRealProcessesIntoOneTimeline) {
  TempDir dir;
  const std::vector<std::string> traces = RecordParentAndChild(dir);
  ASSERT_THAT(traces, SizeIs(2));
  const std::string merged = dir.File("merged.json");
  const std::string summary_path = dir.File("merged-summary.json");
  const ProcessResult r = Spanprof(
      {"merge", traces[0], traces[1], "-o", merged, "--summary", summary_path});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Merged 2 captures (5 spans, 2 threads, 1 "
                               "cross-process link); timeline aligned to ±"));
  EXPECT_THAT(r.err, IsEmpty());

  // One capture, two processes with their real pids, one link between them.
  absl::StatusOr<Capture> c = analysis::ReadTrace(merged);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_THAT(c->processes, SizeIs(2));
  std::set<int64_t> pids;
  for (const std::string& path : traces) {
    absl::StatusOr<Capture> one = analysis::ReadTrace(path);
    ASSERT_TRUE(one.ok()) << one.status();
    pids.insert(one->pid);
  }
  EXPECT_EQ(pids,
            (std::set<int64_t>{c->processes[0].pid, c->processes[1].pid}));
  EXPECT_EQ(c->processes[0].process_name, "run_probe");
  std::map<uint64_t, const Span*> by_id;
  for (const Span& span : c->spans) by_id[span.id] = &span;
  int cross_process = 0;
  for (const Span& span : c->spans) {
    if (span.parent_id == 0) continue;
    const Span* parent = by_id.at(span.parent_id);
    if (ThreadPid(*c, parent->thread) == ThreadPid(*c, span.thread)) continue;
    ++cross_process;
    EXPECT_EQ(c->sites[parent->site].name, "probe.spawn");
    EXPECT_EQ(c->sites[span.site].name, "probe.run");
    // On one timeline: the child ran inside the span that started it.
    EXPECT_GE(span.start_ns, parent->start_ns);
    EXPECT_LE(span.end_ns, parent->end_ns);
  }
  EXPECT_EQ(cross_process, 1);

  // The summary: rows across processes, and `summarize` reproduces it.
  absl::StatusOr<analysis::Summary> summary =
      analysis::ReadSummary(summary_path);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->process_count, 2u);
  for (const analysis::Row& row : summary->rows) {
    EXPECT_EQ(row.processes, row.key.name == "probe.spawn" ? 1u : 2u)
        << row.label;
  }
  const ProcessResult again = Spanprof({"summarize", merged});
  ASSERT_EQ(again.exit_code, 0) << again.err;
  EXPECT_EQ(again.out, testing::ReadText(summary_path));
  const ProcessResult report = Spanprof({"report", merged});
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_THAT(report.out, HasSubstr("2 threads in 2 processes"));
  EXPECT_THAT(report.out, HasSubstr("  Procs"));
  const ProcessResult valid = Spanprof({"validate", merged});
  EXPECT_EQ(valid.exit_code, 0) << valid.out << valid.err;
}

// The Perfetto trace, decoded by protoc: one process track per process with
// its real pid, each thread under its own process, and the flow between
// them (flow_ids on the parent's slice, terminating_flow_ids on the
// child's, on two processes' threads).
TEST(MergeCliTest, ThePerfettoTraceHasTwoProcessesAndAFlow) {
  if (!testing::HaveProtoc()) SPANPROF_SKIP_UNLESS_CI("protoc is missing");
  TempDir dir;
  const std::vector<std::string> traces = RecordParentAndChild(dir);
  ASSERT_THAT(traces, SizeIs(2));
  const std::string merged = dir.File("merged.pftrace");
  const ProcessResult r =
      Spanprof({"merge", traces[0], traces[1], "-o", merged});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::unique_ptr<testing::TextMessage> trace =
      testing::DecodeTrace(testing::ReadText(merged));
  ASSERT_NE(trace, nullptr);
  std::map<uint64_t, int64_t> process_of_track;  // process uuid -> pid
  std::map<uint64_t, int64_t> thread_pid;        // thread uuid -> pid
  std::map<uint64_t, uint64_t> thread_parent;    // thread uuid -> parent
  std::map<uint32_t, uint64_t> sequence_track;
  for (const testing::TextMessage* packet : trace->Children("packet")) {
    if (const testing::TextMessage* track = packet->Child("track_descriptor")) {
      const uint64_t uuid = track->Uint("uuid");
      if (const testing::TextMessage* p = track->Child("process")) {
        process_of_track[uuid] = static_cast<int64_t>(p->Uint("pid"));
        EXPECT_EQ(p->Get("process_name").value_or(""), "run_probe");
      }
      if (const testing::TextMessage* t = track->Child("thread")) {
        thread_pid[uuid] = static_cast<int64_t>(t->Uint("pid"));
        thread_parent[uuid] = track->Uint("parent_uuid");
      }
    }
    if (const testing::TextMessage* d =
            packet->Child("trace_packet_defaults")) {
      if (const testing::TextMessage* e = d->Child("track_event_defaults")) {
        sequence_track[static_cast<uint32_t>(packet->Uint(
            "trusted_packet_sequence_id"))] = e->Uint("track_uuid");
      }
    }
  }
  ASSERT_THAT(process_of_track, SizeIs(2));
  std::set<int64_t> pids;
  for (const auto& [uuid, pid] : process_of_track) pids.insert(pid);
  EXPECT_THAT(pids, SizeIs(2));
  ASSERT_THAT(thread_pid, SizeIs(2));
  for (const auto& [uuid, pid] : thread_pid) {
    ASSERT_TRUE(process_of_track.count(thread_parent[uuid]));
    EXPECT_EQ(process_of_track[thread_parent[uuid]], pid);
  }
  // Flow ids: started on one process's thread, ended on the other's.
  std::map<uint64_t, int64_t> flow_start_pid;
  std::map<uint64_t, int64_t> flow_end_pid;
  for (const testing::TextMessage* packet : trace->Children("packet")) {
    const testing::TextMessage* event = packet->Child("track_event");
    if (event == nullptr) continue;
    const auto seq =
        static_cast<uint32_t>(packet->Uint("trusted_packet_sequence_id"));
    if (!sequence_track.count(seq)) continue;
    const int64_t pid = thread_pid[sequence_track[seq]];
    for (const std::string& id : event->All("flow_ids")) {
      flow_start_pid[std::stoull(id)] = pid;
    }
    for (const std::string& id : event->All("terminating_flow_ids")) {
      flow_end_pid[std::stoull(id)] = pid;
    }
  }
  int cross = 0;
  for (const auto& [id, pid] : flow_end_pid) {
    ASSERT_TRUE(flow_start_pid.count(id)) << id;
    if (flow_start_pid[id] != pid) ++cross;
  }
  EXPECT_EQ(cross, 1);
  // And it reads back as the JSON merge does.
  const std::string json = dir.File("merged.json");
  ASSERT_EQ(Spanprof({"merge", traces[0], traces[1], "-o", json}).exit_code, 0);
  absl::StatusOr<Capture> from_pf = analysis::ReadTrace(merged);
  absl::StatusOr<Capture> from_json = analysis::ReadTrace(json);
  ASSERT_TRUE(from_pf.ok()) << from_pf.status();
  ASSERT_TRUE(from_json.ok()) << from_json.status();
  EXPECT_EQ(*from_pf, *from_json);
}

// --- rules, on hand-made traces ------------------------------------------

Capture Made(int64_t pid, int64_t anchor_offset_ns, uint64_t seed) {
  CaptureBuilder b;
  Capture& c = b.capture();
  c.pid = pid;
  c.process_name = "p" + std::to_string(pid);
  c.host = "h";
  c.wall_clock_anchor_ns += anchor_offset_ns;
  c.span_id_seed = seed;
  c.trace_id = "0af7651916cd43dd8448eb211c80319c";
  const uint32_t t = b.Thread(static_cast<uint64_t>(pid));
  b.Add(1, 0, b.Site("run"), t, 0, 1000);
  return b.Build();
}

std::string Write(const TempDir& dir, const std::string& name,
                  const Capture& capture) {
  const std::string path = dir.File(name);
  EXPECT_TRUE(analysis::WriteTrace(capture, path).ok());
  return path;
}

TEST(MergeCliTest, UsageErrors) {
  TempDir dir;
  const std::string a = Write(dir, "a.json", Made(1, 0, 11));
  const std::string out = dir.File("out.json");
  ProcessResult r = Spanprof({"merge", a, "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("needs at least two captures (got one)"));
  r = Spanprof({"merge", a, a});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("-o OUT is required"));
  r = Spanprof({"merge", a, a, "-o", dir.File("out.svg")});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("a trace path ends in .json"));
  EXPECT_FALSE(Exists(out));
}

TEST(MergeCliTest, RefusalsNameTheFileAndWriteNothing) {
  TempDir dir;
  const std::string a = Write(dir, "a.json", Made(1, 0, 11));
  const std::string b = Write(dir, "b.pftrace", Made(2, 500, 22));
  Capture old = Made(3, 0, 0);
  old.wall_clock_anchor_ns = 0;
  const std::string no_anchor = Write(dir, "old.json", old);
  const std::string out = dir.File("out.json");

  ProcessResult r = Spanprof({"merge", a, no_anchor, "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("spanprof merge: " + no_anchor +
                               ": the capture has no wall-clock anchor"));
  r = Spanprof({"merge", a, a, "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(a + " and " + a + " are the same capture"));
  r = Spanprof({"merge", a, dir.File("missing.json"), "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("missing.json"));
  EXPECT_FALSE(Exists(out));

  // A merged trace is refused as an input; the merge itself reads both
  // formats.
  const std::string merged = dir.File("merged.pftrace");
  r = Spanprof({"merge", a, b, "-o", merged});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string c = Write(dir, "c.json", Made(4, 900, 33));
  r = Spanprof({"merge", merged, c, "-o", out});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr(merged + ": already a merged capture (2 "
                                        "processes)"));
  EXPECT_FALSE(Exists(out));
}

TEST(MergeCliTest, WarningsAndNotesGoToStderr) {
  TempDir dir;
  Capture other_trace = Made(2, 500, 22);
  other_trace.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  other_trace.remote_parent_span_id = 0xdead;
  const std::string a = Write(dir, "a.json", Made(1, 0, 11));
  const std::string b = Write(dir, "b.json.gz", other_trace);
  const std::string out = dir.File("out.json.gz");
  const ProcessResult r = Spanprof({"merge", a, b, "-o", out});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.err, HasSubstr("spanprof merge: warning: the captures belong "
                               "to 2 different traces"));
  EXPECT_THAT(r.err, HasSubstr("spanprof merge: note: " + b +
                               ": its remote parent span 000000000000dead "
                               "is in none of the captures"));
  EXPECT_THAT(r.out, HasSubstr("0 cross-process links"));
  absl::StatusOr<Capture> c = analysis::ReadTrace(out);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_THAT(c->processes, SizeIs(2));
}

}  // namespace
}  // namespace spanprof
