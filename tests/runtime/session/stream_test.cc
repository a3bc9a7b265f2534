// The stream file: a session's kept stream recovers to the capture its
// outputs hold; corrupt, cut and foreign bytes are skipped, counted or
// refused, never trusted.
#include "spanprof/stream.h"

#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <string>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "recorder/recorder_internal.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/spanprof.h"
#include "stream/stream_format.h"
#include "tests/testing/session_config.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::QuietConfig;
using spanprof::testing::ReadText;
using spanprof::testing::TempDir;
using ::testing::HasSubstr;

Config StreamConfig(const TempDir& dir) {
  Config config = QuietConfig(dir);
  config.stream_path = dir.File("out/session.stream");
  config.keep_stream = true;
  return config;
}

// A session with nesting, arguments, a string argument, counts and a
// cross-thread child: everything the stream carries.
void RecordWork() {
  for (int i = 0; i < 300; ++i) {
    SPANPROF_SCOPE("outer", {.phase = "work"});
    SPANPROF_ARG("i", i);
    SPANPROF_ARG_STR("kind", i % 2 == 0 ? "even" : "odd");
    SPANPROF_COUNT("items", 3);
    SPANPROF_SCOPE("inner");
    Heartbeat(2);
  }
  std::thread helper(Bind([] {
    SetThreadName("helper");
    SPANPROF_SCOPE("helper.task");
  }));
  helper.join();
}

TEST(StreamTest, AKeptStreamRecoversToTheWrittenCapture) {
  TempDir dir;
  Profile(StreamConfig(dir), "stream.root", [] { RecordWork(); });
  const std::string bytes = ReadText(dir.File("out/session.stream"));
  ASSERT_FALSE(bytes.empty());
  absl::StatusOr<RecoveredCapture> recovered =
      RecoverStream(bytes, "session.stream");
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  EXPECT_TRUE(recovered->ended);
  EXPECT_EQ(recovered->skipped_chunks, 0u);
  EXPECT_EQ(recovered->torn_bytes, 0u);
  EXPECT_EQ(recovered->trace_path, dir.File("out/trace.json"));
  EXPECT_EQ(recovered->summary_path, dir.File("out/summary.json"));
  EXPECT_EQ(recovered->capture.end_reason, "finished");

  absl::StatusOr<Capture> written =
      analysis::ReadTrace(dir.File("out/trace.json"));
  ASSERT_TRUE(written.ok()) << written.status();
  const Capture& back = recovered->capture;
  ASSERT_EQ(back.spans.size(), written->spans.size());
  EXPECT_EQ(back.spans.size(), 602u);  // root, 300 x 2, the helper's one
  // The same rows, figure for figure: names, tags, nesting, durations,
  // heartbeats, counters and the cross-thread child.
  // Span for span: the same site, thread, parent, depth, flags, heartbeats
  // and arguments. Times agree within the clock calibration: the recovered
  // capture converts TSC ticks with the stream's last clock pair, the
  // session end with its own, each read to within tens of ns (a few ppm of
  // the session's length).
  const auto near = [](int64_t a, int64_t b) {
    const int64_t slack = std::max<int64_t>(2, std::max(a, b) / 20000);
    return a - b <= slack && b - a <= slack;
  };
  for (size_t i = 0; i < back.spans.size(); ++i) {
    const Span& a = back.spans[i];
    const Span& b = written->spans[i];
    EXPECT_EQ(back.sites[a.site], written->sites[b.site]) << i;
    EXPECT_EQ(a.thread, b.thread) << i;
    EXPECT_EQ(a.parent_id, b.parent_id) << i;
    EXPECT_EQ(a.depth, b.depth) << i;
    EXPECT_EQ(a.flags, b.flags) << i;
    EXPECT_EQ(a.heartbeats, b.heartbeats) << i;
    EXPECT_EQ(a.arg_count, b.arg_count) << i;
    EXPECT_TRUE(near(a.start_ns, b.start_ns))
        << a.start_ns << " " << b.start_ns;
    EXPECT_TRUE(near(a.end_ns, b.end_ns)) << a.end_ns << " " << b.end_ns;
  }
  const analysis::Summary from_stream = analysis::Summarize(back);
  const analysis::Summary from_trace = analysis::Summarize(*written);
  ASSERT_EQ(from_stream.rows.size(), from_trace.rows.size());
  for (size_t r = 0; r < from_stream.rows.size(); ++r) {
    EXPECT_EQ(from_stream.rows[r].label, from_trace.rows[r].label);
    EXPECT_EQ(from_stream.rows[r].calls, from_trace.rows[r].calls);
    EXPECT_EQ(from_stream.rows[r].counters, from_trace.rows[r].counters);
  }
  EXPECT_TRUE(from_stream.validation_issues.empty());
  EXPECT_EQ(back.args.size(), written->args.size());
  EXPECT_EQ(back.threads.size(), written->threads.size());
  EXPECT_EQ(back.trace_id, written->trace_id);
  EXPECT_EQ(back.pid, written->pid);
}

TEST(StreamTest, ANormalEndRemovesTheStream) {
  TempDir dir;
  Config config = StreamConfig(dir);
  config.keep_stream = false;
  bool existed = false;
  Profile(config, "stream.root", [&] {
    SPANPROF_SCOPE("work");
    existed = std::filesystem::exists(dir.File("out/session.stream"));
  });
  EXPECT_TRUE(existed);  // there while the session ran
  EXPECT_FALSE(std::filesystem::exists(dir.File("out/session.stream")));
  EXPECT_TRUE(std::filesystem::exists(dir.File("out/trace.json")));
}

// Descriptors of this process open on a file whose path contains `name`.
int OpenDescriptorsOf(const std::string& name) {
  int open = 0;
  for (const auto& entry :
       std::filesystem::directory_iterator("/proc/self/fd")) {
    std::error_code error;
    const std::filesystem::path target =
        std::filesystem::read_symlink(entry.path(), error);
    if (!error && target.string().find(name) != std::string::npos) ++open;
  }
  return open;
}

// A removed stream's name goes at once; its descriptor is closed on a
// thread of its own (freeing a large file's pages is a tenth of a session
// end), and it is closed, not leaked.
TEST(StreamTest, ARemovedStreamIsClosedToo) {
  TempDir dir;
  Config config = StreamConfig(dir);
  config.keep_stream = false;
  int open_during = 0;
  Profile(config, "stream.root", [&] {
    RecordWork();
    open_during = OpenDescriptorsOf("session.stream");
  });
  EXPECT_EQ(open_during, 1);
  EXPECT_FALSE(std::filesystem::exists(dir.File("out/session.stream")));
  // Waits for the closing thread, however slow the machine (no timing is
  // asserted: only that it happens).
  for (int i = 0; i < 6000 && OpenDescriptorsOf("session.stream") > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(OpenDescriptorsOf("session.stream"), 0);
}

// A large trace that a session end replaces is held open across the rename
// and closed on a thread of its own, where the kernel frees its pages: the
// new trace replaces it whole, and its descriptor is closed, not leaked.
TEST(StreamTest, AReplacedLargeTraceIsClosedToo) {
  TempDir dir;
  Config config = StreamConfig(dir);
  std::filesystem::create_directories(dir.File("out"));
  {
    std::ofstream old(dir.File("out/trace.json"), std::ios::binary);
    const std::string block(size_t{1} << 20, 'x');
    for (int i = 0; i < 17; ++i) old << block;
  }
  Profile(config, "stream.root", [] { RecordWork(); });
  absl::StatusOr<Capture> trace =
      analysis::ReadTrace(dir.File("out/trace.json"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_GT(trace->spans.size(), 600u);
  // Waits for the closing thread, however slow the machine (no timing is
  // asserted: only that it happens).
  for (int i = 0; i < 6000 && OpenDescriptorsOf("trace.json") > 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(OpenDescriptorsOf("trace.json"), 0);
}

TEST(StreamTest, StreamOffWritesNoStream) {
  TempDir dir;
  Config config = StreamConfig(dir);
  config.stream_path = "off";
  Profile(config, "stream.root", [&] {
    SPANPROF_SCOPE("work");
    EXPECT_FALSE(std::filesystem::exists(dir.File("out/session.stream")));
  });
  EXPECT_TRUE(std::filesystem::exists(dir.File("out/trace.json")));
  for (const auto& entry :
       std::filesystem::directory_iterator(dir.File("out"))) {
    EXPECT_NE(entry.path().extension(), ".stream") << entry.path();
  }
}

TEST(StreamTest, TheDefaultStreamIsTheTracePathWithStreamAdded) {
  TempDir dir;
  Config config = StreamConfig(dir);
  config.stream_path.clear();
  bool existed = false;
  Profile(config, "stream.root", [&] {
    existed = std::filesystem::exists(dir.File("out/trace.json.stream"));
  });
  EXPECT_TRUE(existed);
}

TEST(StreamTest, AStreamThatCannotBeCreatedRefusesTheSession) {
  TempDir dir;
  testing::WriteText(dir.File("file"), "x");
  Config config = StreamConfig(dir);
  config.stream_path = dir.File("file/below/s.stream");
  bool ran = false;
  try {
    Profile(config, "stream.root", [&] { ran = true; });
    FAIL() << "the session started";
  } catch (const Error& e) {
    EXPECT_THAT(e.what(), HasSubstr("SPANPROF_STREAM"));
    EXPECT_THAT(e.what(), HasSubstr(dir.File("file/below/s.stream")));
  }
  EXPECT_FALSE(ran);
  EXPECT_FALSE(IsRecording());
}

// A session end killed before its rename leaves a temporary file beside
// the output; the next session of the same outputs removes it (a live
// writer's, and other names, stay).
TEST(StreamTest, TemporaryFilesOfAKilledWriterGoAtTheNextStart) {
  TempDir dir;
  const pid_t child = fork();
  if (child == 0) _exit(0);
  ASSERT_GT(child, 0);
  waitpid(child, nullptr, 0);  // a pid that no longer runs
  std::filesystem::create_directories(dir.File("out"));
  const std::string stale =
      dir.File("out/.trace.json." + std::to_string(child) + ".0.tmp");
  const std::string live =
      dir.File("out/.summary.json." + std::to_string(getppid()) + ".4.tmp");
  const std::string other = dir.File("out/.notes.txt.tmp");
  for (const std::string& path : {stale, live, other}) {
    testing::WriteText(path, "partial");
  }
  Profile(StreamConfig(dir), "stream.root", [] { SPANPROF_SCOPE("work"); });
  EXPECT_FALSE(std::filesystem::exists(stale));
  EXPECT_TRUE(std::filesystem::exists(live));
  EXPECT_TRUE(std::filesystem::exists(other));
}

std::string KeptStream(const TempDir& dir) {
  Profile(StreamConfig(dir), "stream.root", [] { RecordWork(); });
  return ReadText(dir.File("out/session.stream"));
}

TEST(StreamTest, ACorruptChunkIsSkippedAndCountedNeverTrusted) {
  TempDir dir;
  std::string bytes = KeptStream(dir);
  // A bit flipped in the middle of the file: the chunk holding it fails
  // its checksum.
  bytes[bytes.size() / 2] = static_cast<char>(bytes[bytes.size() / 2] ^ 0x10);
  absl::StatusOr<RecoveredCapture> recovered = RecoverStream(bytes, "s");
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  EXPECT_EQ(recovered->skipped_chunks, 1u);
  EXPECT_GT(recovered->skipped_bytes, 0u);
  EXPECT_TRUE(
      analysis::Summarize(recovered->capture).validation_issues.empty());
}

// A scopes chunk that contradicts itself (a push at or past the index it
// is for, a pop before it, a record that is no push, no entry, more
// entries than bytes) is skipped and counted, never applied; a consistent
// one is read.
TEST(StreamTest, AScopesChunkThatContradictsItselfIsSkippedAndCounted) {
  TempDir dir;
  const std::string bytes = KeptStream(dir);
  const auto entry = [](uint64_t index, uint64_t pop, uint32_t kind) {
    internal::StreamEncoder e;
    e.U64(index);
    e.U64(pop);
    const internal::SideRecord push{7, kind, 0, 0, 0};
    e.Raw(&push, sizeof(push));
    return e.bytes();
  };
  const auto chunk = [](uint64_t from, uint32_t n, const std::string& entries) {
    internal::StreamEncoder e;
    e.U64(from);
    e.U32(n);
    e.Raw(entries.data(), entries.size());
    std::string out;
    internal::AppendChunk(internal::kChunkScopes, 0, 1000, e.bytes(), &out);
    return out;
  };
  const std::string open = entry(3, UINT64_MAX, internal::kSideContextPush);
  for (const std::string& bad :
       {chunk(3, 1, open), chunk(9, 1, entry(3, 5, internal::kSideContextPush)),
        chunk(9, 1, entry(3, UINT64_MAX, internal::kSideArgInt)),
        chunk(9, 0, ""), chunk(9, 2, open)}) {
    absl::StatusOr<RecoveredCapture> recovered =
        RecoverStream(bytes + bad, "s");
    ASSERT_TRUE(recovered.ok()) << recovered.status();
    EXPECT_EQ(recovered->skipped_chunks, 1u);
  }
  absl::StatusOr<RecoveredCapture> good =
      RecoverStream(bytes + chunk(9, 1, open), "s");
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ(good->skipped_chunks, 0u);
}

// Every prefix of a stream (a program killed while writing) reads as a
// valid capture of what was whole, or, before the session chunk ends, as
// an error naming the file.
TEST(StreamTest, EveryCutReadsAsAValidCaptureOrAnError) {
  TempDir dir;
  const std::string bytes = KeptStream(dir);
  size_t previous_spans = 0;
  // Cuts at growing steps, and the whole file last (a step may pass over
  // it: the drain thread decides how the chunks fall).
  for (size_t cut = 0; cut <= bytes.size();
       cut = cut == bytes.size() ? cut + 1
                                 : std::min(bytes.size(), cut + 1 + cut / 64)) {
    absl::StatusOr<RecoveredCapture> recovered =
        RecoverStream(std::string_view(bytes).substr(0, cut), "cut.stream");
    if (!recovered.ok()) {
      EXPECT_THAT(std::string(recovered.status().message()),
                  HasSubstr("cut.stream"));
      EXPECT_EQ(previous_spans, 0u) << "cut at " << cut;
      continue;
    }
    const analysis::Summary summary = analysis::Summarize(recovered->capture);
    EXPECT_TRUE(summary.validation_issues.empty()) << "cut at " << cut;
    EXPECT_EQ(recovered->skipped_chunks, 0u) << "cut at " << cut;
    if (cut < bytes.size()) EXPECT_FALSE(recovered->ended);
    EXPECT_GE(recovered->capture.spans.size() + 1, previous_spans);
    previous_spans = recovered->capture.spans.size();
  }
  EXPECT_EQ(previous_spans, 602u);
}

// A kill may cut a drain between any two of its chunks (they go out in
// several writes): at every cut, each span whose end is in the stream has
// its arguments and counts there too, never an ended span without them.
TEST(StreamTest, EveryCutKeepsTheArgumentsOfEachEndedSpan) {
  TempDir dir;
  const std::string bytes = KeptStream(dir);
  size_t ended = 0;
  for (size_t cut = 0; cut <= bytes.size(); cut += 1 + cut / 256) {
    absl::StatusOr<RecoveredCapture> recovered =
        RecoverStream(std::string_view(bytes).substr(0, cut), "cut.stream");
    if (!recovered.ok()) continue;
    const Capture& capture = recovered->capture;
    for (const Span& span : capture.spans) {
      if (capture.sites[span.site].name != "outer" ||
          (span.flags & kSpanUnfinished) != 0) {
        continue;
      }
      ++ended;
      // "i", "kind" and the "items" count.
      ASSERT_EQ(span.arg_count, 3u)
          << "cut at " << cut << " of " << bytes.size() << ", span " << span.id;
    }
  }
  EXPECT_GT(ended, 300u);
}

// The inode of `path`, 0 while it does not exist: a flight recorder's
// stream starts its next file under the same name.
ino_t InodeOf(const std::string& path) {
  struct stat info {};
  return ::stat(path.c_str(), &info) == 0 ? info.st_ino : 0;
}

// The stream's files as `spanprof recover` reads them: the full one first
// when the stream rotated.
std::vector<std::string> FlightFiles(const std::string& stream) {
  std::vector<std::string> files;
  if (std::filesystem::exists(stream + ".old")) {
    files.push_back(ReadText(stream + ".old"));
  }
  files.push_back(ReadText(stream));
  return files;
}

// A flight recorder's worker that runs its whole life under a context
// (Bind) and ends before the session: its stream starts a new file twice
// after the push of that context scope, so no file holds the push, only
// its pop. Each file starts with the scopes open at its first side record,
// so the worker's spans are recovered as the session's own outputs hold
// them, under the context's span, or flagged where its begin went with an
// older file. Without them the pop of a scope with no push set every span
// of the worker aside.
TEST(StreamTest, AFlightRecordersBoundWorkerKeepsItsSpansAcrossFiles) {
  TempDir dir;
  Config config = StreamConfig(dir);
  config.recording.overflow = OverflowPolicy::kRing;
  config.recording.max_events = 4096;
  const std::string stream = config.stream_path;
  Profile(config, "flight.root", [&stream] {
    std::thread worker(Bind([&stream] {
      SetThreadName("bound-worker");
      ino_t file = InodeOf(stream);
      for (int64_t i = 0, files = 0; files < 2; ++i) {
        SPANPROF_SCOPE("worker.step");
        SPANPROF_ARG("i", i);
        if (i % 64 == 0 && InodeOf(stream) != file) {
          file = InodeOf(stream);
          ++files;
        }
      }
    }));
    worker.join();
    SPANPROF_SCOPE("after.worker");
  });
  const std::vector<std::string> files = FlightFiles(stream);
  absl::StatusOr<RecoveredCapture> recovered =
      RecoverStream(std::vector<std::string_view>(files.begin(), files.end()),
                    "session.stream");
  ASSERT_TRUE(recovered.ok()) << recovered.status();
  const Capture& capture = recovered->capture;
  uint64_t root = 0;
  for (const Span& span : capture.spans) {
    if (capture.sites[span.site].name == "flight.root") root = span.id;
  }
  uint64_t steps = 0;
  for (const Span& span : capture.spans) {
    if (capture.sites[span.site].name != "worker.step") continue;
    ++steps;
    EXPECT_EQ(capture.threads[span.thread].name, "bound-worker");
    // Under the context's span: linked to it where the capture holds it,
    // else flagged as having lost it; never a root that says nothing.
    if (root != 0) {
      EXPECT_EQ(span.parent_id, root) << "span " << span.id;
    } else {
      EXPECT_EQ(span.parent_id, 0u) << "span " << span.id;
      EXPECT_NE(span.flags & kSpanRerooted, 0) << "span " << span.id;
    }
  }
  // As many as the session's own outputs hold: the newest events, up to
  // the cap of 4,096.
  absl::StatusOr<Capture> written =
      analysis::ReadTrace(dir.File("out/trace.json"));
  ASSERT_TRUE(written.ok()) << written.status();
  const auto written_steps =
      std::count_if(written->spans.begin(), written->spans.end(),
                    [&written](const Span& span) {
                      return written->sites[span.site].name == "worker.step";
                    });
  EXPECT_EQ(steps, static_cast<uint64_t>(written_steps));
  EXPECT_GT(steps, 2000u);
}

TEST(StreamTest, WhatIsNotAStreamIsRefused) {
  absl::StatusOr<RecoveredCapture> text =
      RecoverStream("{\"traceEvents\": []}", "trace.json");
  ASSERT_FALSE(text.ok());
  EXPECT_THAT(std::string(text.status().message()),
              HasSubstr("trace.json: not a spanprof stream"));
  std::string future = "spanprof.stream\n";
  future += std::string("\x02\0\0\0\x20\0\0\0", 8) + std::string(8, '\0');
  absl::StatusOr<RecoveredCapture> newer = RecoverStream(future, "new.stream");
  ASSERT_FALSE(newer.ok());
  EXPECT_THAT(std::string(newer.status().message()),
              HasSubstr("unsupported spanprof.stream version 2"));
}

}  // namespace
}  // namespace spanprof
