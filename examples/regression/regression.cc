// regression_example: the CI regression gate, end to end, in one program.
//
// It records the same small workload twice — a baseline, and a candidate in
// which one phase (`model.forward`) was made slower, 4 ms → 10 ms per call —
// into build/regression/, then runs the gate exactly as CI would:
//
//   spanprof compare build/regression/base.json build/regression/cand.json
//       --metric p95_ns --absolute-tolerance 500000
//       --relative-tolerance-bps 1000 --json build/regression/comparison.json
//
// here through the embeddable router (`spanprof::cli::Run`), so the table
// and the comparison document are the CLI's own. It exits 0 when the gate
// caught the regression of `model.forward` (the expected outcome) and 1 when
// it did not; 2 when something could not be recorded or read.
//
//   build/demo/bin/regression_example
//
// The repeated-runs gate: `--runs N --slowdown-percent P` records
// N baseline runs and N candidate runs, interleaved (base, cand, base, ...,
// so that drift on a shared machine falls on both), in which the candidate's
// `model.forward` is P% slower than the baseline's 4 ms, into
// build/regression/runs/{base,cand}/run-NNN.json, then runs
//
//   spanprof compare build/regression/runs/base build/regression/runs/cand
//       --metric median_ns
//
// at the default band of repeated runs (5%). It exits 0 when
// `model.forward` came out `regressed`, 3 when `unknown` (too few runs to
// decide), 1 otherwise, 2 when something could not be recorded.
//
//   build/demo/bin/regression_example --runs 10 --slowdown-percent 10
#include <spanprof/analysis/compare.h>
#include <spanprof/analysis/summary.h>
#include <spanprof/cli/router.h>
#include <spanprof/spanprof.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

namespace {

constexpr char kDir[] = "build/regression";

void Sleep(std::chrono::microseconds duration) {
  std::this_thread::sleep_for(duration);
}

// One step of the workload: load input, run the model, write output.
void Step(std::chrono::microseconds forward) {
  {
    SPANPROF_SCOPE("input.load", {.phase = "input", .activity = "load"});
    Sleep(std::chrono::milliseconds(2));
    spanprof::Heartbeat(2);
  }
  {
    SPANPROF_SCOPE("model.forward", {.phase = "forward", .module = "encoder"});
    Sleep(forward);
    spanprof::Heartbeat(4);
  }
  {
    SPANPROF_SCOPE("output.write", {.phase = "output"});
    Sleep(std::chrono::milliseconds(1));
    spanprof::Heartbeat(1);
  }
}

// Records one run of the workload into <dir>/<name>.json (and
// <name>-trace.json when `trace`).
void Record(const std::string& name, std::chrono::microseconds forward,
            const std::string& dir = kDir, bool trace = true) {
  spanprof::Config config;
  if (trace) config.trace_path = dir + "/" + name + "-trace.json";
  config.summary_path = dir + "/" + name + ".json";
  config.quiet = true;
  spanprof::Profile(config, "regression.run", [&] {
    spanprof::SetThreadName("main");
    for (int step = 0; step < 5; ++step) Step(forward);
  });
  if (trace) {
    std::printf("recorded %s: %s\n", name.c_str(), config.summary_path.c_str());
  }
}

// Runs `spanprof <words...>` through the embeddable router, echoing the
// command line; returns its exit code.
int RunSpanprof(std::vector<std::string> words) {
  std::printf("\n$ spanprof");
  for (const std::string& word : words) std::printf(" %s", word.c_str());
  std::printf("\n");
  std::fflush(stdout);
  words.insert(words.begin(), "spanprof");
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  return spanprof::cli::Run(static_cast<int>(argv.size() - 1), argv.data());
}

// The repeated-runs gate: `runs` interleaved runs a side, the candidate's
// model.forward `slowdown_percent` slower.
int RepeatedRuns(int runs, int slowdown_percent) {
  const std::string dir = std::string(kDir) + "/runs";
  const auto base_forward = std::chrono::microseconds(4000);
  const auto cand_forward =
      std::chrono::microseconds(4000 + 40 * slowdown_percent);
  try {
    std::filesystem::remove_all(dir);  // the runs of an earlier call
    for (int i = 1; i <= runs; ++i) {
      char name[32];
      std::snprintf(name, sizeof(name), "run-%03d", i);
      Record(name, base_forward, dir + "/base", /*trace=*/false);
      Record(name, cand_forward, dir + "/cand", /*trace=*/false);
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "regression_example: %s\n", e.what());
    return 2;
  }
  std::printf("recorded %d runs a side, interleaved: %s/base, %s/cand\n", runs,
              dir.c_str(), dir.c_str());
  const std::string json = dir + "/comparison.json";
  const int gate = RunSpanprof({"compare", dir + "/base", dir + "/cand",
                                "--metric", "median_ns", "--json", json});
  std::printf("(exit %d; comparison written to %s)\n\n", gate, json.c_str());
  if (gate == spanprof::cli::kExitUsage) return 2;
  std::vector<std::string> notes;
  const auto base = spanprof::analysis::ReadSummaryRuns(dir + "/base", &notes);
  const auto cand = spanprof::analysis::ReadSummaryRuns(dir + "/cand", &notes);
  if (!base.ok() || !cand.ok()) return 2;
  const auto comparison = spanprof::analysis::CompareRuns(
      *base, *cand,
      {.metric = spanprof::analysis::CompareMetric::kMedianNs,
       .relative_tolerance_bps =
           spanprof::analysis::kRunsDefaultRelativeToleranceBps});
  if (!comparison.ok()) return 2;
  for (const spanprof::analysis::ComparisonRow& row : comparison->rows) {
    if (row.key.name != "model.forward") continue;
    std::printf(
        "regression_example: model.forward +%d%% with %d runs a side: %s\n",
        slowdown_percent, runs, std::string(RowStatusName(row.status)).c_str());
    if (row.status == spanprof::analysis::RowStatus::kRegressed) return 0;
    if (row.status == spanprof::analysis::RowStatus::kUnknown) return 3;
  }
  return 1;
}

// `--runs N --slowdown-percent P`: whether both were given, and well.
bool ParseRunsFlags(int argc, char** argv, int* runs, int* slowdown) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    const int value = std::atoi(argv[i + 1]);
    if (flag == "--runs" && value > 0) {
      *runs = value;
    } else if (flag == "--slowdown-percent" && value >= 0) {
      *slowdown = value;
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && *runs > 0;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc > 1) {
    int runs = 0;
    int slowdown = 10;
    if (!ParseRunsFlags(argc, argv, &runs, &slowdown)) {
      std::fprintf(stderr,
                   "usage: regression_example [--runs N "
                   "[--slowdown-percent P]]\n");
      return 2;
    }
    return RepeatedRuns(runs, slowdown);
  }
  const std::string base = std::string(kDir) + "/base.json";
  const std::string cand = std::string(kDir) + "/cand.json";
  const std::string json = std::string(kDir) + "/comparison.json";
  try {
    Record("base", std::chrono::milliseconds(4));
    Record("cand", std::chrono::milliseconds(10));
  } catch (const std::exception& e) {
    std::fprintf(stderr, "regression_example: %s\n", e.what());
    return 2;
  }

  // The gate, exactly as on the command line.
  const int gate = RunSpanprof(
      {"compare", base, cand, "--metric", "p95_ns", "--absolute-tolerance",
       "500000", "--relative-tolerance-bps", "1000", "--json", json});
  std::printf("(exit %d; comparison written to %s)\n\n", gate, json.c_str());
  if (gate == spanprof::cli::kExitUsage) return 2;

  // Which key did it flag? The same comparison through the library API.
  const auto base_summary = spanprof::analysis::ReadSummary(base);
  const auto cand_summary = spanprof::analysis::ReadSummary(cand);
  if (!base_summary.ok() || !cand_summary.ok()) return 2;
  const auto comparison = spanprof::analysis::Compare(
      *base_summary, *cand_summary,
      {.metric = spanprof::analysis::CompareMetric::kP95Ns,
       .absolute_tolerance_ns = 500'000,
       .relative_tolerance_bps = 1000});
  if (!comparison.ok()) return 2;
  for (const spanprof::analysis::ComparisonRow& row : comparison->rows) {
    if (row.key.name == "model.forward" &&
        row.status == spanprof::analysis::RowStatus::kRegressed &&
        gate == spanprof::cli::kExitRegression) {
      std::printf("regression_example: the gate caught %s (+%lld ns at p95)\n",
                  row.label.c_str(), static_cast<long long>(*row.delta));
      return 0;
    }
  }
  std::printf(
      "regression_example: the gate did NOT catch the slower "
      "model.forward\n");
  return 1;
}
