// A streaming ring reuses the chunks the stream holds: its memory stays flat
// and its thread takes no page fault after warm-up, however many spans it
// records; and a session end read back from the stream gives the same
// capture, byte for byte in every output format, as the rings would have.
//
// These tests drive the recorder's internal steps themselves (no helper
// thread drains here: the test calls Drain() between bursts), so what is
// drained when is deterministic.
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <condition_variable>
#include <csignal>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "collector/assemble.h"
#include "gtest/gtest.h"
#include "recorder/drain_bell.h"
#include "recorder/recorder_internal.h"
#include "runtime/src/recorder/ring_memory.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/table.h"
#include "spanprof/analysis/trace.h"
#include "spanprof/internal/compact_spans.h"
#include "spanprof/internal/packed_args.h"
#include "spanprof/spanprof.h"
#include "stream/stream_end.h"
#include "stream/stream_reader.h"
#include "stream/stream_writer.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using internal::ClockPair;
using internal::Session;
using internal::StreamWriter;
using internal::ThreadRing;
using spanprof::testing::ReadText;
using spanprof::testing::TempDir;

constexpr uint64_t kBurstSpans = 4096;

// A recording with a stream writer that the test drains itself.
class StreamedRecording {
 public:
  StreamedRecording(const std::string& path, bool reuse) {
    RecordingOptions options;
    options.max_events = 4'000'000;
    EXPECT_TRUE(StartRecording(options).ok());
    epoch_ = Session().epoch;
    auto opened = StreamWriter::Open(path, internal::FactsOf(Session()), {});
    EXPECT_TRUE(opened.ok()) << opened.status();
    if (opened.ok()) writer_ = std::move(*opened);
    if (reuse) internal::MarkSessionStreaming(epoch_, true);
  }
  ~StreamedRecording() {
    if (IsRecording()) static_cast<void>(StopRecording());
  }
  StreamedRecording(const StreamedRecording&) = delete;
  StreamedRecording& operator=(const StreamedRecording&) = delete;

  void Drain() { EXPECT_TRUE(writer_->Drain(epoch_)); }
  StreamWriter& writer() { return *writer_; }

 private:
  uint32_t epoch_ = 0;
  std::unique_ptr<StreamWriter> writer_;
};

long ThreadMinorFaults() {
  rusage usage{};
  getrusage(RUSAGE_THREAD, &usage);
  return usage.ru_minflt;
}

// Runs `bursts` bursts of spans (each with an argument when `with_args`) on
// a thread of its own; after each, the calling thread drains the stream
// before the next burst starts. Returns the recording thread's minor page
// faults and the ring bytes allocated during the bursts after the first
// `warmup` ones, and the side records its ring held at the end.
struct Steady {
  long faults = 0;
  uint64_t ring_bytes = 0;
  uint64_t side_held = 0;
  std::vector<bool> rang;  // per burst: whether it rang the drain bell
};
Steady RecordBursts(StreamedRecording& recording, int warmup, int bursts,
                    bool with_args = false) {
  std::mutex mu;
  std::condition_variable cv;
  int done = 0;     // bursts recorded
  int drained = 0;  // bursts drained
  Steady steady;
  // Reserved here: an allocation on the recording thread could fault.
  steady.rang.reserve(static_cast<size_t>(bursts));
  std::thread recorder([&] {
    long faults_before = 0;
    uint64_t bytes_before = 0;
    for (int k = 0; k < bursts; ++k) {
      if (k == warmup) {
        faults_before = ThreadMinorFaults();
        bytes_before = internal::RingBytesAllocated();
      }
      internal::TheDrainBell().Clear();
      for (uint64_t i = 0; i < kBurstSpans; ++i) {
        SPANPROF_SCOPE("reuse.step");
        if (with_args) SPANPROF_ARG("i", static_cast<int64_t>(i));
      }
      steady.rang.push_back(internal::TheDrainBell().Clear());
      std::unique_lock<std::mutex> lock(mu);
      ++done;
      cv.notify_all();
      cv.wait(lock, [&] { return drained == done; });
    }
    steady.faults = ThreadMinorFaults() - faults_before;
    steady.ring_bytes = internal::RingBytesAllocated() - bytes_before;
    const auto* ring = static_cast<const ThreadRing*>(internal::tls_state);
    steady.side_held = ring->side.storage() - ring->side.first();
  });
  for (int k = 0; k < bursts; ++k) {
    {
      std::unique_lock<std::mutex> lock(mu);
      cv.wait(lock, [&] { return done > drained; });
    }
    recording.Drain();
    std::lock_guard<std::mutex> lock(mu);
    ++drained;
    cv.notify_all();
  }
  recorder.join();
  return steady;
}

TEST(StreamReuseTest, RingMemoryStaysFlatAndTheThreadTakesNoPageFault) {
  TempDir dir;
  StreamedRecording recording(dir.File("s.stream"), /*reuse=*/true);
  // 200 bursts: 819,200 spans, 25 MiB of records that a ring keeping
  // everything would have allocated after warm-up.
  const Steady steady = RecordBursts(recording, /*warmup=*/8, /*bursts=*/208);
  EXPECT_EQ(steady.ring_bytes, 0u);
  EXPECT_EQ(steady.faults, 0);
  const Capture capture =
      internal::StopRecordingThroughStream(recording.writer(), "finished");
  // Every span came back from the stream, though the ring reused its chunks.
  EXPECT_EQ(capture.spans.size(), 208 * kBurstSpans);
  EXPECT_EQ(capture.dropped_events, 0u);
}

TEST(StreamReuseTest, ArgumentsKeepTheRingFlatToo) {
  TempDir dir;
  StreamedRecording recording(dir.File("s.stream"), /*reuse=*/true);
  // 819,200 arguments: 25 MiB of side records that a side buffer keeping
  // everything would have held.
  const Steady steady = RecordBursts(recording, /*warmup=*/8, /*bursts=*/208,
                                     /*with_args=*/true);
  EXPECT_EQ(steady.ring_bytes, 0u);
  EXPECT_EQ(steady.faults, 0);
  // What one burst needs, in a few reused segments.
  EXPECT_LE(steady.side_held, 4 * kBurstSpans);
  const Capture capture =
      internal::StopRecordingThroughStream(recording.writer(), "finished");
  ASSERT_EQ(capture.spans.size(), 208 * kBurstSpans);
  ASSERT_EQ(capture.args.size(), 208 * kBurstSpans);
  EXPECT_EQ(capture.dropped_args, 0u);
  // Every argument came back from the stream, on its own span.
  for (size_t k = 0; k < capture.spans.size(); k += 4099) {
    const Span& span = capture.spans[k];
    ASSERT_EQ(span.arg_count, 1u);
    EXPECT_EQ(capture.args[span.first_arg].key, "i");
  }
  uint64_t sum = 0;
  for (const SpanArg& arg : capture.args) {
    sum += static_cast<uint64_t>(arg.int_value);
  }
  EXPECT_EQ(sum, 208 * (kBurstSpans * (kBurstSpans - 1) / 2));
}

TEST(StreamReuseTest, WithoutStreamingTheRingKeepsGrowing) {
  // The same bursts with reuse off: the check above can fail.
  TempDir dir;
  StreamedRecording recording(dir.File("s.stream"), /*reuse=*/false);
  const Steady steady = RecordBursts(recording, /*warmup=*/8, /*bursts=*/40,
                                     /*with_args=*/true);
  EXPECT_GE(steady.ring_bytes, 32 * kBurstSpans * sizeof(internal::Record));
  EXPECT_GE(steady.side_held, 40 * kBurstSpans);
}

// A streaming ring that has to take new memory rings the drain bell, so
// that the helper thread drains at once rather than at its next timed pass
// (a burst between two passes would otherwise grow the ring by all of it);
// one that reuses what the stream holds never rings it, and neither does a
// ring that does not stream.
TEST(StreamReuseTest, OnlyAStreamingRingTakingNewMemoryRingsTheDrainBell) {
  for (const bool with_args : {false, true}) {
    SCOPED_TRACE(with_args ? "with arguments" : "without arguments");
    TempDir dir;
    {
      StreamedRecording recording(dir.File("s.stream"), /*reuse=*/true);
      const Steady steady =
          RecordBursts(recording, /*warmup=*/8, /*bursts=*/24, with_args);
      ASSERT_EQ(steady.ring_bytes, 0u);
      ASSERT_EQ(steady.rang.size(), 24u);
      EXPECT_TRUE(steady.rang.front());  // a new thread's ring grows
      EXPECT_EQ(std::count(steady.rang.begin() + 8, steady.rang.end(), true),
                0);
    }
    StreamedRecording recording(dir.File("t.stream"), /*reuse=*/false);
    const Steady steady =
        RecordBursts(recording, /*warmup=*/8, /*bursts=*/12, with_args);
    EXPECT_EQ(std::count(steady.rang.begin(), steady.rang.end(), true), 0);
  }
}

// A session that ends before the drain catches up (the usual short one):
// its rings hold every record and side record when the end reads the stream
// back. The stream holds them all, so their memory goes before the capture
// is built: blocks beyond the prefaulter's few leave the cache, the side
// records' pages go back to the kernel, and so do the stream writer's
// buffers.
TEST(StreamReuseTest, TheEndGivesTheRingsMemoryBackBeforeTheCapture) {
  constexpr uint64_t kSpans = 300'000;  // 9.6 MB of records, as many of side
  TempDir dir;
  for (int session = 0; session < 2; ++session) {
    StreamedRecording recording(dir.File("s.stream"), /*reuse=*/true);
    for (uint64_t i = 0; i < kSpans; ++i) {
      SPANPROF_SCOPE("release.step");
      SPANPROF_ARG("i", static_cast<int64_t>(i));
    }
    const auto* ring = static_cast<const ThreadRing*>(internal::tls_state);
    ASSERT_NE(ring, nullptr);
    ASSERT_GE(ring->side.held(), kSpans);
    ASSERT_GT(internal::RingBytesAllocated(), 0u);
    // The drain's buffers held a chunk of side records (2 MiB) or two.
    recording.Drain();
    ASSERT_GT(recording.writer().BufferedBytes(), size_t{1} << 20);
    const Capture capture =
        internal::StopRecordingThroughStream(recording.writer(), "finished");
    // Without the release: 73 blocks cached, 300,000 side records held,
    // and the writer's side chunk buffer kept (a string moved from a short
    // one keeps its capacity).
    EXPECT_LE(internal::CachedBlocks(), internal::ReadyBlocks());
    EXPECT_LE(recording.writer().BufferedBytes(), size_t{64});
    EXPECT_LE(ring->side.held(),
              2 * internal::kBlockBytes / sizeof(internal::SideRecord));
    // Everything came back from the stream, in both sessions (the second
    // one's side buffer replaced the given-back one).
    ASSERT_EQ(capture.spans.size(), kSpans);
    ASSERT_EQ(capture.args.size(), kSpans);
    int64_t sum = 0;
    for (const SpanArg& arg : capture.args) sum += arg.int_value;
    EXPECT_EQ(sum, static_cast<int64_t>(kSpans * (kSpans - 1) / 2));
  }
}

// Spans on three threads (`steps` each, and an inner span every 100) with
// integer, double, string and counter arguments (some of a span's after its
// child's, some added by an enrich hook after their span ended) and
// cross-thread parents, drained twice while they record.
void RecordMixedWork(StreamedRecording& recording, int steps = 3000) {
  SPANPROF_SCOPE("mixed.root");
  std::vector<std::thread> threads;
  for (int t = 0; t < 3; ++t) {
    threads.emplace_back(Bind([t, steps] {
      SetThreadName(("mixed-" + std::to_string(t)).c_str());
      for (int i = 0; i < steps; ++i) {
        SPANPROF_SCOPE("mixed.step");
        SPANPROF_ARG("i", i);
        if (i % 3 == 0) SPANPROF_ARG_STR("label", "item-" + std::to_string(i));
        if (i % 5 == 0) SPANPROF_COUNT("fives");
        if (i % 7 == 0) SPANPROF_ARG("ratio", i * 0.5);
        if (i % 11 == 0) spanprof::Heartbeat(static_cast<uint64_t>(i % 4));
        if (i % 100 == 0) {
          {
            SPANPROF_SCOPE("mixed.inner");
            SPANPROF_ARG("t", t);
          }
          // The step's argument and count after its child's: out of span
          // order when the collector attaches them.
          SPANPROF_ARG("after_inner", i);
          SPANPROF_COUNT("fives");
        }
        if (i % 50 == 0) {
          // Arguments that come after their span ended (enrich), and the
          // step's own after them.
          spanprof::Run("mixed.enriched", Hooks{}.WithEnrich([i] {
            SPANPROF_ARG("enriched", i);
            SPANPROF_COUNT("fives");
          }),
                        [] {});
          SPANPROF_ARG("after_enriched", i);
        }
      }
    }));
  }
  recording.Drain();
  for (std::thread& thread : threads) thread.join();
  recording.Drain();
}

// The same capture, in every output, whether the session end reads it back
// from the stream, its arguments packed as the session end's own outputs
// have them, or the rings give it; `steps` as in RecordMixedWork().
void ExpectTheSameOutputs(int steps) {
  TempDir dir;
  StreamedRecording recording(dir.File("s.stream"), /*reuse=*/false);
  RecordMixedWork(recording, steps);
  internal::SessionState& session = Session();
  std::vector<ThreadRing*> rings;
  ClockPair stop{};
  ASSERT_TRUE(internal::EndActiveSession(session, &rings, &stop));
  const Capture streamed = internal::CollectThroughStream(
      recording.writer(), session, rings, stop, "finished",
      /*give_back=*/false, /*pack_args=*/true);
  const Capture collected = internal::CollectEndedSession(session, rings, stop);
  ASSERT_EQ(collected.spans.size(),
            1u + 3 * (steps + steps / 100 + steps / 50));
  ASSERT_GT(collected.args.size(), collected.spans.size());
  ASSERT_NE(streamed.packed_args, nullptr);
  EXPECT_TRUE(streamed.args.empty());
  // Its spans compact too, so every output below reads them from there.
  ASSERT_NE(streamed.compact_spans, nullptr);
  EXPECT_TRUE(streamed.spans.empty());
  ASSERT_EQ(streamed.compact_spans->size(), collected.spans.size());
  EXPECT_LT(streamed.packed_args->size_bytes(),
            collected.args.size() * sizeof(SpanArg) / 4);
  for (const std::string format : {"json", "pftrace"}) {
    const std::string a = dir.File("streamed." + format);
    const std::string b = dir.File("collected." + format);
    ASSERT_TRUE(analysis::WriteTrace(streamed, a).ok());
    ASSERT_TRUE(analysis::WriteTrace(collected, b).ok());
    EXPECT_EQ(ReadText(a), ReadText(b)) << format;
  }
  const std::string a = dir.File("streamed.summary.json");
  const std::string b = dir.File("collected.summary.json");
  const analysis::Summary streamed_summary = analysis::Summarize(streamed);
  const analysis::Summary collected_summary = analysis::Summarize(collected);
  ASSERT_TRUE(analysis::WriteSummary(streamed_summary, a).ok());
  ASSERT_TRUE(analysis::WriteSummary(collected_summary, b).ok());
  EXPECT_EQ(ReadText(a), ReadText(b));
  EXPECT_EQ(analysis::FormatTable(streamed_summary, {.capture = &streamed}),
            analysis::FormatTable(collected_summary, {.capture = &collected}));
}

TEST(StreamReuseTest, TheStreamGivesTheSameOutputsAsTheRings) {
  ExpectTheSameOutputs(3000);
}

// Past 65,536 spans the end reserves the spans', side records' and
// arguments' storage ahead and a helper thread faults it in while the
// stream is read back, parsed and the arguments attached.
TEST(StreamReuseTest, StorageReservedAheadGivesTheSameOutputs) {
  ExpectTheSameOutputs(25'000);
}

// Writing the stream fails part way (the file-size limit stands in for a
// full disk) after the ring reused chunks and side records the stream held:
// the session end joins what the stream holds to what the rings kept, and
// every span comes back with its own argument. In a forked child: the limit
// is the process's.
TEST(StreamReuseTest, AStreamThatFailsPartWayIsJoinedToTheRings) {
  TempDir dir;
  const std::string path = dir.File("s.stream");
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    StreamedRecording recording(path, /*reuse=*/true);
    // Eight drained bursts on a worker: its ring reuses what the stream
    // holds.
    RecordBursts(recording, /*warmup=*/2, /*bursts=*/8, /*with_args=*/true);
    // No write may make the file longer now; two more bursts on this
    // thread, which the stream never gets.
    struct stat info {};
    EXPECT_EQ(stat(path.c_str(), &info), 0);
    signal(SIGXFSZ, SIG_IGN);
    const rlimit limit{static_cast<rlim_t>(info.st_size),
                       static_cast<rlim_t>(info.st_size)};
    EXPECT_EQ(setrlimit(RLIMIT_FSIZE, &limit), 0);
    for (uint64_t i = 0; i < 2 * kBurstSpans; ++i) {
      SPANPROF_SCOPE("reuse.step");
      SPANPROF_ARG("i", static_cast<int64_t>(i % kBurstSpans));
    }
    const Capture capture =
        internal::StopRecordingThroughStream(recording.writer(), "finished");
    EXPECT_TRUE(recording.writer().failed());
    EXPECT_EQ(capture.spans.size(), 10 * kBurstSpans);
    EXPECT_EQ(capture.args.size(), 10 * kBurstSpans);
    EXPECT_EQ(capture.dropped_events, 0u);
    EXPECT_EQ(capture.dropped_args, 0u);
    // Each span's argument is its own: 0 to 4,095 in each burst, in order
    // on each thread.
    std::vector<int64_t> next(capture.threads.size(), 0);
    for (const Span& span : capture.spans) {
      ASSERT_EQ(span.arg_count, 1u);
      const SpanArg& arg = capture.args[span.first_arg];
      EXPECT_EQ(arg.key, "i");
      int64_t& expected = next.at(span.thread);
      EXPECT_EQ(arg.int_value, expected);
      expected = (expected + 1) % static_cast<int64_t>(kBurstSpans);
    }
    _exit(::testing::Test::HasFailure() ? 1 : 0);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << status;
  EXPECT_EQ(WEXITSTATUS(status), 0) << "the child's failures are above";
}

// The reader counts each thread's begin records as it checks them, so
// that the session end sizes the capture without reading every record (and
// faulting the whole file in) once more: the counts are the records' own.
TEST(StreamReuseTest, TheReaderCountsEachThreadsBegins) {
  TempDir dir;
  const std::string path = dir.File("s.stream");
  StreamedRecording recording(path, /*reuse=*/false);
  RecordMixedWork(recording);
  const Capture capture =
      internal::StopRecordingThroughStream(recording.writer(), "finished");
  const std::string bytes = ReadText(path);
  absl::StatusOr<internal::StreamContents> read =
      internal::ReadStream(bytes, path, /*own_session=*/false);
  ASSERT_TRUE(read.ok()) << read.status();
  std::vector<internal::RingSnapshot>& snaps = read->inputs.snaps;
  ASSERT_EQ(snaps.size(), 4u);  // the root's thread and three workers
  uint64_t total = 0;
  for (internal::RingSnapshot& snap : snaps) {
    const uint64_t counted = snap.begins;
    ASSERT_NE(counted, UINT64_MAX);
    total += counted;
    EXPECT_GT(counted, 0u);
    const uint32_t slot = snap.slot;
    std::vector<internal::RingSnapshot> one;
    one.push_back(std::move(snap));
    one[0].begins = UINT64_MAX;  // read the records themselves
    EXPECT_EQ(counted, internal::CountBegins(one)) << "slot " << slot;
  }
  EXPECT_EQ(total, capture.spans.size());
}

}  // namespace
}  // namespace spanprof
