// The real indexer_example binary, run with SPANPROF=1 into a temp dir: the
// phases, tags, arguments, heartbeats and cross-thread workers of the guide's
// walk-through, the --slow-parse regression that `spanprof compare` finds,
// and the named counter whose growth `spanprof scaling` measures.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "spanprof/analysis/scaling.h"
#include "spanprof/analysis/summary.h"
#include "spanprof/analysis/trace.h"
#include "tests/testing/lookup.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

using spanprof::testing::FindRow;
using spanprof::testing::ProcessResult;
using spanprof::testing::ReadText;
using spanprof::testing::RunProcess;
using spanprof::testing::TempDir;
using ::testing::HasSubstr;

constexpr int kFiles = 24;

struct IndexerRun {
  ProcessResult process;
  std::string trace;
  std::string summary;
  std::string work;
};

IndexerRun RunIndexer(const TempDir& dir, const std::string& name,
                      std::vector<std::string> extra_args = {}) {
  IndexerRun run;
  run.trace = dir.File(name + "/trace.json");
  run.summary = dir.File(name + "/summary.json");
  run.work = dir.File(name + "/work");
  std::vector<std::string> argv = {SPANPROF_TEST_BIN_DIR "/indexer_example",
                                   "--files",
                                   std::to_string(kFiles),
                                   "--threads",
                                   "2",
                                   "--work-dir",
                                   run.work};
  argv.insert(argv.end(), extra_args.begin(), extra_args.end());
  run.process = RunProcess(argv,
                           {{"SPANPROF", "1"},
                            {"SPANPROF_QUIET", "1"},
                            {"SPANPROF_OUT", run.trace},
                            {"SPANPROF_SUMMARY_OUT", run.summary}},
                           dir.path().string());
  return run;
}

// "indexer: 24 files, B bytes, T tokens, ..." -> {files, bytes, tokens}.
std::vector<uint64_t> Counts(const std::string& out) {
  unsigned long long files = 0;
  unsigned long long bytes = 0;
  unsigned long long tokens = 0;
  if (std::sscanf(out.c_str(), "indexer: %llu files, %llu bytes, %llu tokens",
                  &files, &bytes, &tokens) != 3) {
    return {};
  }
  return {files, bytes, tokens};
}

TEST(IndexerExampleTest, RecordsEveryPhaseWithTagsArgsAndHeartbeats) {
  TempDir dir;
  const IndexerRun run = RunIndexer(dir, "base");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  const std::vector<uint64_t> counts = Counts(run.process.out);
  ASSERT_EQ(counts.size(), 3u) << run.process.out;
  EXPECT_EQ(counts[0], static_cast<uint64_t>(kFiles));
  EXPECT_TRUE(std::filesystem::exists(run.work + "/index.tsv"));

  const auto summary = analysis::ReadSummary(run.summary);
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->complete);
  EXPECT_EQ(summary->thread_count, 3u);  // main + 2 workers
  EXPECT_TRUE(summary->validation_issues.empty());

  struct Expected {
    const char* name;
    const char* phase;
    const char* module;
    uint64_t calls;
  };
  const uint64_t files = kFiles;
  for (const Expected& e :
       std::vector<Expected>{{"indexer.run", "", "", 1},
                             {"corpus.discover", "discover", "fs", 1},
                             {"corpus.process", "process", "pool", 1},
                             {"worker.run", "", "pool", 2},
                             {"file.read", "read", "fs", files},
                             {"file.tokenize", "parse", "lexer", files},
                             {"file.parse", "parse", "parser", files},
                             {"symbols.build", "analyze", "index", 1},
                             {"refs.resolve", "analyze", "index", 1},
                             {"index.write", "write", "fs", 1}}) {
    SCOPED_TRACE(e.name);
    const analysis::Row* row = FindRow(*summary, e.name);
    ASSERT_NE(row, nullptr);
    EXPECT_EQ(row->key.phase, e.phase);
    EXPECT_EQ(row->key.module, e.module);
    EXPECT_EQ(row->calls, e.calls);
  }
  EXPECT_EQ(summary->rows.size(), 10u);
  EXPECT_EQ(summary->event_count, 8 + 3 * files);  // 2 of them worker.run
  EXPECT_EQ(FindRow(*summary, "worker.run")->threads, 2u);
  // One heartbeat per token, all counted by the tokenizer.
  EXPECT_EQ(summary->recorded_heartbeats, counts[2]);
  EXPECT_EQ(FindRow(*summary, "file.tokenize")->self_heartbeats, counts[2]);

  // The trace: the workers are cross-thread children of corpus.process, and
  // the span arguments add up to what the program printed.
  const auto trace = analysis::ReadTrace(run.trace);
  ASSERT_TRUE(trace.ok()) << trace.status();
  std::map<uint64_t, const Span*> by_id;
  for (const Span& span : trace->spans) by_id[span.id] = &span;
  std::map<std::string, int64_t> arg_sums;
  int cross_thread_workers = 0;
  for (const Span& span : trace->spans) {
    const std::string& name = trace->sites[span.site].name;
    for (uint32_t a = span.first_arg; a < span.first_arg + span.arg_count;
         ++a) {
      arg_sums[name + "." + trace->args[a].key] += trace->args[a].int_value;
    }
    if (name == "worker.run") {
      ASSERT_NE(span.parent_id, 0u);
      const Span* parent = by_id.at(span.parent_id);
      EXPECT_EQ(trace->sites[parent->site].name, "corpus.process");
      if (parent->thread != span.thread) ++cross_thread_workers;
    }
  }
  EXPECT_EQ(cross_thread_workers, 2);
  EXPECT_EQ(arg_sums["corpus.discover.files"], kFiles);
  EXPECT_EQ(arg_sums["file.read.bytes"], static_cast<int64_t>(counts[1]));
  EXPECT_EQ(arg_sums["file.tokenize.tokens"], static_cast<int64_t>(counts[2]));
  EXPECT_GT(arg_sums["file.parse.definitions"], 0);
  EXPECT_GT(arg_sums["file.parse.calls"], 0);
}

TEST(IndexerExampleTest, SlowParseDoesTheSameWorkAndCompareFindsTheRegression) {
  TempDir dir;
  const IndexerRun base = RunIndexer(dir, "base");
  const IndexerRun slow = RunIndexer(dir, "slow", {"--slow-parse"});
  ASSERT_EQ(base.process.exit_code, 0) << base.process.err;
  ASSERT_EQ(slow.process.exit_code, 0) << slow.process.err;
  // Same input, same tokens, same index: only the time differs.
  EXPECT_EQ(Counts(base.process.out), Counts(slow.process.out));
  EXPECT_THAT(slow.process.out, HasSubstr("[--slow-parse]"));
  const std::string base_index = ReadText(base.work + "/index.tsv");
  EXPECT_FALSE(base_index.empty());
  EXPECT_EQ(base_index, ReadText(slow.work + "/index.tsv"));

  const auto base_summary = analysis::ReadSummary(base.summary);
  const auto slow_summary = analysis::ReadSummary(slow.summary);
  ASSERT_TRUE(base_summary.ok()) << base_summary.status();
  ASSERT_TRUE(slow_summary.ok()) << slow_summary.status();
  const analysis::Row* base_tok = FindRow(*base_summary, "file.tokenize");
  const analysis::Row* slow_tok = FindRow(*slow_summary, "file.tokenize");
  ASSERT_TRUE(base_tok && slow_tok);
  EXPECT_EQ(base_tok->self_heartbeats, slow_tok->self_heartbeats);
  // Quadratic vs linear: many times slower, even on the median file (one
  // function, about a hundred tokens). The median, because a busy machine
  // can stall any few spans.
  EXPECT_GT(slow_tok->median_ns, 3 * base_tok->median_ns);

  const std::string spanprof = SPANPROF_TEST_BIN_DIR "/spanprof";
  // Same work: the heartbeat gate passes.
  const ProcessResult same_work =
      RunProcess({spanprof, "compare", base.summary, slow.summary, "--metric",
                  "self_heartbeats"});
  EXPECT_EQ(same_work.exit_code, 0) << same_work.out << same_work.err;
  // More time: a total-time gate fails on the tokenizer (at least 2x and
  // +1 ms). Total, not median: most files are small, and the quadratic cost
  // is in the few large ones (tens of ms in all, against well under 1 ms).
  const ProcessResult gate = RunProcess(
      {spanprof, "compare", base.summary, slow.summary, "--metric", "total_ns",
       "--absolute-tolerance", "1000000", "--relative-tolerance-bps", "10000"});
  EXPECT_EQ(gate.exit_code, 1) << gate.out << gate.err;
  bool tokenizer_regressed = false;
  std::istringstream lines(gate.out);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("regressed", 0) == 0 &&
        line.find("file.tokenize") != std::string::npos) {
      tokenizer_regressed = true;
    }
  }
  EXPECT_TRUE(tokenizer_regressed) << gate.out;
}

// file.tokenize's `bytes_touched` counts, summed; -1 when a span does not
// have exactly one.
int64_t BytesTouched(const Capture& trace) {
  int64_t sum = 0;
  for (const Span& span : trace.spans) {
    if (trace.sites[span.site].name != "file.tokenize") continue;
    int found = 0;
    for (uint32_t a = span.first_arg; a < span.first_arg + span.arg_count;
         ++a) {
      const SpanArg& arg = trace.args[a];
      if (!arg.is_counter) continue;
      if (arg.key != "bytes_touched") return -1;
      ++found;
      sum += arg.int_value;
    }
    if (found != 1) return -1;
  }
  return sum;
}

// The exponent of `bytes_touched` against file.tokenize's `tokens`.
double CountExponent(const Capture& trace) {
  const analysis::NamedCapture captures[] = {{"trace.json", &trace}};
  analysis::ScalingOptions options;
  options.size_arg = "tokens";
  const auto report = analysis::AnalyzeScaling(captures, options);
  EXPECT_TRUE(report.ok()) << report.status();
  if (!report.ok()) return 0;
  for (const analysis::ScalingGroup& group : report->groups) {
    if (group.key.name != "file.tokenize") continue;
    for (const analysis::CounterScaling& counter : group.counters) {
      if (counter.name == "bytes_touched" && counter.exponent.has_value()) {
        return counter.exponent->estimate;
      }
    }
  }
  ADD_FAILURE() << "no bytes_touched exponent for file.tokenize";
  return 0;
}

// The tokenizer counts the bytes it touches: each byte once in the baseline
// (up to the end of the last token), the rest of the file for every token
// with --slow-parse. Counts are deterministic, and so is their growth with
// the file's tokens: exponent 1 and 2. (Time's exponent depends on the
// machine; docs/cli.md, "scaling", shows real ones.)
TEST(IndexerExampleTest, TheTokenizerCountsTheBytesItTouches) {
  TempDir dir;
  const IndexerRun base = RunIndexer(dir, "base");
  const IndexerRun slow = RunIndexer(dir, "slow", {"--slow-parse"});
  ASSERT_EQ(base.process.exit_code, 0) << base.process.err;
  ASSERT_EQ(slow.process.exit_code, 0) << slow.process.err;
  const std::vector<uint64_t> counts = Counts(base.process.out);
  ASSERT_EQ(counts.size(), 3u) << base.process.out;
  const auto base_trace = analysis::ReadTrace(base.trace);
  const auto slow_trace = analysis::ReadTrace(slow.trace);
  ASSERT_TRUE(base_trace.ok()) << base_trace.status();
  ASSERT_TRUE(slow_trace.ok()) << slow_trace.status();
  EXPECT_EQ(base_trace->dropped_args, 0u);

  const int64_t bytes = static_cast<int64_t>(counts[1]);
  const int64_t base_touched = BytesTouched(*base_trace);
  EXPECT_LE(base_touched, bytes);
  EXPECT_GE(base_touched, bytes - 4 * kFiles);  // a file ends "}\n\n"
  EXPECT_GT(BytesTouched(*slow_trace), 100 * base_touched);
  EXPECT_NEAR(CountExponent(*base_trace), 1.0, 0.1);
  EXPECT_NEAR(CountExponent(*slow_trace), 2.0, 0.1);
}

// The corpus spans two decades of file sizes, which `spanprof scaling`
// needs to judge an exponent.
TEST(IndexerExampleTest, FileSizesSpanTwoDecades) {
  TempDir dir;
  const IndexerRun run = RunIndexer(dir, "base");
  ASSERT_EQ(run.process.exit_code, 0) << run.process.err;
  const auto trace = analysis::ReadTrace(run.trace);
  ASSERT_TRUE(trace.ok()) << trace.status();
  int64_t smallest = INT64_MAX;
  int64_t largest = 0;
  for (const Span& span : trace->spans) {
    if (trace->sites[span.site].name != "file.tokenize") continue;
    const SpanArg& tokens = trace->args[span.first_arg];
    ASSERT_EQ(tokens.key, "tokens");
    smallest = std::min(smallest, tokens.int_value);
    largest = std::max(largest, tokens.int_value);
  }
  EXPECT_GE(largest, 100 * smallest) << smallest << " to " << largest;
}

TEST(IndexerExampleTest, DisabledRunIndexesAndWritesNoCapture) {
  TempDir dir;
  const auto result =
      RunProcess({SPANPROF_TEST_BIN_DIR "/indexer_example", "--files", "8"},
                 {{"SPANPROF", "0"}}, dir.path().string());
  ASSERT_EQ(result.exit_code, 0) << result.err;
  EXPECT_THAT(result.out, HasSubstr("indexer: 8 files"));
  EXPECT_FALSE(std::filesystem::exists(dir.File("build")));
}

TEST(IndexerExampleTest, BadArgumentIsAUsageError) {
  const auto result =
      RunProcess({SPANPROF_TEST_BIN_DIR "/indexer_example", "--files", "zero"});
  EXPECT_EQ(result.exit_code, 2);
  EXPECT_THAT(result.err, HasSubstr("--files"));
}

}  // namespace
}  // namespace spanprof
