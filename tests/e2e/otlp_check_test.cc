// The OTLP check: `spanprof export otlp` output, from real example traces,
// loads against the official OpenTelemetry .proto definitions in protobufjs
// (tests/otlp/verify_otlp.js): fromObject, verify, a protobuf wire round
// trip, ids, parent links and times.
//
// Needs `node` and what `scripts/install-otlp-check` installs (protobufjs
// and the .proto files) in $SPANPROF_OTLP_CHECK_DIR or
// <source>/build/otlp-check; skipped, saying which is missing, otherwise (and
// failed under CI=true).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <iostream>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "spanprof/analysis/file_io.h"
#include "spanprof/analysis/otlp.h"
#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"
#include "tests/testing/test_support.h"

namespace spanprof {
namespace {

namespace fs = std::filesystem;
using ::spanprof::testing::CaptureBuilder;
using ::spanprof::testing::FindInPath;
using ::spanprof::testing::ProcessResult;
using ::spanprof::testing::ReadText;
using ::spanprof::testing::RunProcess;
using ::spanprof::testing::TempDir;
using ::spanprof::testing::ToolInstallDir;
using ::spanprof::testing::WriteText;
using ::testing::HasSubstr;

class OtlpCheckTest : public ::testing::Test {
 protected:
  void SetUp() override {
    node_ = FindInPath("node");
    const fs::path dir =
        ToolInstallDir("SPANPROF_OTLP_CHECK_DIR", "otlp-check");
    protobufjs_ = dir / "node_modules" / "protobufjs";
    protos_ = dir / "protos";
    std::string missing;
    if (!node_) missing += " node";
    if (!fs::exists(protobufjs_ / "package.json")) {
      missing += " protobufjs (looked in " + protobufjs_.string() + ")";
    }
    if (!fs::exists(protos_ / "opentelemetry" / "proto" / "collector" /
                    "trace" / "v1" / "trace_service.proto")) {
      missing += " the OpenTelemetry .proto files (looked in " +
                 protos_.string() + ")";
    }
    if (!missing.empty()) {
      SPANPROF_SKIP_UNLESS_CI("OTLP check skipped: not installed:"
                              << missing
                              << ". Run scripts/install-otlp-check.");
    }
  }

  // Runs example `name` with profiling on, its trace at `trace`.
  void Record(const std::string& name, const std::string& trace) {
    const std::string example = SPANPROF_TEST_BIN_DIR "/" + name;
    if (!fs::exists(example)) {
      SPANPROF_SKIP_UNLESS_CI(
          "OTLP check skipped: "
          << example << " is not built (SPANPROF_BUILD_EXAMPLES=OFF?)");
    }
    const ProcessResult run =
        RunProcess({example}, {{"SPANPROF", "1"},
                               {"SPANPROF_OUT", trace},
                               {"SPANPROF_SUMMARY_OUT", trace + ".summary"},
                               {"SPANPROF_QUIET", "1"}});
    ASSERT_EQ(run.exit_code, 0) << run.err;
    ASSERT_TRUE(fs::exists(trace));
  }

  // Runs the multiprocess example (a coordinator and three workers) with
  // profiling on; returns the four processes' traces (none when it failed).
  std::vector<std::string> RecordMultiprocess() {
    const std::string example = SPANPROF_TEST_BIN_DIR "/multiprocess_example";
    const ProcessResult run = RunProcess(
        {example}, {{"SPANPROF", "1"},
                    {"SPANPROF_OUT", dir_.File("mp/trace-%p.json")},
                    {"SPANPROF_SUMMARY_OUT", dir_.File("mp/s-%p.json")},
                    {"SPANPROF_QUIET", "1"}});
    EXPECT_EQ(run.exit_code, 0) << run.err;
    std::vector<std::string> traces;
    if (run.exit_code != 0) return traces;
    for (const auto& entry : fs::directory_iterator(dir_.File("mp"))) {
      if (entry.path().filename().string().rfind("trace-", 0) == 0) {
        traces.push_back(entry.path().string());
      }
    }
    return traces;
  }

  ProcessResult Export(std::vector<std::string> traces,
                       const std::string& out) {
    std::vector<std::string> argv = {SPANPROF_TEST_BIN_DIR "/spanprof",
                                     "export", "otlp"};
    argv.insert(argv.end(), traces.begin(), traces.end());
    argv.push_back("-o");
    argv.push_back(out);
    return RunProcess(argv);
  }

  ProcessResult Verify(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {
        *node_,         SPANPROF_TEST_SOURCE_DIR "/tests/otlp/verify_otlp.js",
        "--protobufjs", protobufjs_.string(),
        "--protos",     protos_.string()};
    argv.insert(argv.end(), args.begin(), args.end());
    ProcessResult result = RunProcess(argv);
    std::cout << result.out << result.err;
    return result;
  }

  TempDir dir_;
  std::optional<std::string> node_;
  fs::path protobufjs_;
  fs::path protos_;
};

// The async example hands tasks to other threads under spanprof::Bind: its
// export has cross-thread parents, which must resolve like any other.
TEST_F(OtlpCheckTest, AsyncExampleExportPassesTheProtobufCheck) {
  const std::string trace = dir_.File("async.json");
  Record("async_example", trace);
  const std::string otlp = dir_.File("async.otlp.json");
  const ProcessResult exported = Export({trace}, otlp);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const ProcessResult check =
      Verify({"--min-spans", "5", "--expect-cross-thread", otlp});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_THAT(check.out, HasSubstr("ok " + otlp));
}

// The multiprocess example: a coordinator and three worker processes
// it started with its spans' traceparents. Their four captures export as one
// trace whose three workers hang under the coordinator's spawn spans.
TEST_F(OtlpCheckTest, MultiprocessExampleExportsOneTraceAcrossFourProcesses) {
  const std::vector<std::string> traces = RecordMultiprocess();
  ASSERT_EQ(traces.size(), 4u);
  const std::string otlp = dir_.File("mp.otlp.json");
  const ProcessResult exported = Export(traces, otlp);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_THAT(exported.err, ::testing::Not(HasSubstr("different traces")));
  const ProcessResult check =
      Verify({"--min-spans", "20", "--expect-cross-process", "3", otlp});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_THAT(check.out, HasSubstr("4 resource(s)"));
  EXPECT_THAT(check.out, HasSubstr("3 cross-process"));
  EXPECT_THAT(check.out, HasSubstr("0 to a remote parent"));
  // One trace id for all four processes.
  const size_t ids = check.out.find("trace id(s) ");
  ASSERT_NE(ids, std::string::npos);
  EXPECT_EQ(check.out.find_first_of(" ;", ids + 12), ids + 12 + 32)
      << check.out;
}

// The same four captures merged into one trace first: the export still
// has one resource per process (each its own service.name and process.pid),
// and the links between them are cross-process links the checker resolves.
TEST_F(OtlpCheckTest, AMergedMultiprocessTraceIsOneResourcePerProcess) {
  const std::vector<std::string> traces = RecordMultiprocess();
  ASSERT_EQ(traces.size(), 4u);
  std::vector<std::string> merge = {SPANPROF_TEST_BIN_DIR "/spanprof", "merge"};
  merge.insert(merge.end(), traces.begin(), traces.end());
  const std::string merged = dir_.File("merged.json");
  merge.insert(merge.end(), {"-o", merged});
  const ProcessResult merged_run = RunProcess(merge);
  ASSERT_EQ(merged_run.exit_code, 0) << merged_run.err;
  const std::string otlp = dir_.File("merged.otlp.json");
  const ProcessResult exported = Export({merged}, otlp);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  const ProcessResult check =
      Verify({"--min-spans", "20", "--expect-cross-process", "3", otlp});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_THAT(check.out, HasSubstr("4 resource(s)"));
  EXPECT_THAT(check.out, HasSubstr("3 cross-process"));
}

// Two processes' captures, one read from the Perfetto protobuf trace, in one
// request: one resource each, both pass.
TEST_F(OtlpCheckTest, SeveralCapturesAndAPerfettoTraceInOneRequestPass) {
  const std::string async_trace = dir_.File("async.json");
  const std::string indexer_trace = dir_.File("indexer.pftrace");
  Record("async_example", async_trace);
  Record("indexer_example", indexer_trace);
  const std::string otlp = dir_.File("both.otlp.json");
  const ProcessResult exported = Export({async_trace, indexer_trace}, otlp);
  ASSERT_EQ(exported.exit_code, 0) << exported.err;
  EXPECT_THAT(exported.err, HasSubstr("2 different traces"));
  const ProcessResult check = Verify({"--min-spans", "10", otlp});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_THAT(check.out, HasSubstr("2 resource(s)"));
}

// What the examples do not show: a span left by an exception, a remote
// parent, and a child process whose remote parent is an alias of a span of
// its parent process (rewritten to the primary id, so the link resolves).
TEST_F(OtlpCheckTest, ExceptionsAndRemoteParentsPass) {
  CaptureBuilder parent_builder;
  const uint32_t main = parent_builder.Thread(10, "main");
  const uint32_t root = parent_builder.Site("coordinator.run");
  const uint32_t spawn = parent_builder.Site("worker.spawn", "spawn");
  parent_builder.Add(1, 0, root, main, 0, 5000);
  parent_builder.Add(2, 1, spawn, main, 100, 4000).flags = kSpanException;
  Capture parent = parent_builder.Build();
  parent.trace_id = "4bf92f3577b34da6a3ce929d0e0e4736";
  parent.span_id_seed = 42;
  parent.remote_parent_span_id = 0x00f067aa0ba902b7;
  parent.exported_span_ids = {{2, 0xaaaa}, {2, 0xbbbb}};
  Capture child = parent;
  child.pid += 1;
  child.span_id_seed = 43;
  child.remote_parent_span_id = 0xbbbb;  // an alias of the parent's span 2
  child.exported_span_ids.clear();
  const analysis::OtlpInput inputs[] = {{"parent", &parent}, {"child", &child}};
  absl::StatusOr<analysis::OtlpExport> exported = analysis::ExportOtlp(inputs);
  ASSERT_TRUE(exported.ok()) << exported.status();
  ASSERT_EQ(exported->rewritten_remote_parents, 1u);
  const std::string otlp = dir_.File("linked.otlp.json");
  ASSERT_TRUE(analysis::WriteFileAtomically(otlp, exported->json).ok());
  const ProcessResult check = Verify(
      {"--remote-parent", "00f067aa0ba902b7", "--expect-error-status", otlp});
  EXPECT_EQ(check.exit_code, 0) << check.err;
  EXPECT_THAT(check.out, HasSubstr("1 to a remote parent"));
  // Without the allowance, the coordinator's remote parent is a dangling
  // link: the checker must say so.
  const ProcessResult strict = Verify({otlp});
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_THAT(strict.err, HasSubstr("00f067aa0ba902b7"));
}

// The checker is not a rubber stamp: broken files fail it.
TEST_F(OtlpCheckTest, TheCheckerRejectsBrokenFiles) {
  const std::string trace = dir_.File("async.json");
  Record("async_example", trace);
  const std::string otlp = dir_.File("good.otlp.json");
  ASSERT_EQ(Export({trace}, otlp).exit_code, 0);
  const std::string good = ReadText(otlp);
  struct Mutation {
    std::string from;
    std::string to;
    std::string expected;
  };
  const Mutation mutations[] = {
      {"\"kind\":1", "\"kind\":\"SPAN_KIND_INTERNAL\"", "enum"},
      {"\"kind\":1", "\"kind\":1,\"kindd\":1", "unknown field"},
      {"\"spanId\":\"", "\"spanId\":\"ab", "hex digits"},
      {"\"traceId\":\"", "\"traceId\":\"X", "hex"},
      {"\"startTimeUnixNano\":\"", "\"startTimeUnixNano\":\"-", "decimal"},
      {"\"parentSpanId\":\"", "\"parentSpanId\":\"f", "parentSpanId"},
  };
  for (const Mutation& m : mutations) {
    const size_t at = good.find(m.from);
    ASSERT_NE(at, std::string::npos) << m.from;
    std::string bad = good;
    bad.replace(at, m.from.size(), m.to);
    const std::string file = dir_.File("bad.otlp.json");
    WriteText(file, bad);
    const ProcessResult check = Verify({file});
    EXPECT_EQ(check.exit_code, 1) << m.to;
    EXPECT_THAT(check.err, HasSubstr(m.expected)) << m.to;
  }
}

}  // namespace
}  // namespace spanprof
