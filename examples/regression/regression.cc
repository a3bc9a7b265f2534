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
//   build/bin/regression_example
#include <spanprof/analysis/compare.h>
#include <spanprof/analysis/summary.h>
#include <spanprof/cli/router.h>
#include <spanprof/spanprof.h>

#include <chrono>
#include <cstdio>
#include <exception>
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

// Records one run of the workload into build/regression/<name>.json (and
// <name>-trace.json).
void Record(const std::string& name, std::chrono::microseconds forward) {
  spanprof::Config config;
  config.trace_path = std::string(kDir) + "/" + name + "-trace.json";
  config.summary_path = std::string(kDir) + "/" + name + ".json";
  config.quiet = true;
  spanprof::Profile(config, "regression.run", [&] {
    spanprof::SetThreadName("main");
    for (int step = 0; step < 5; ++step) Step(forward);
  });
  std::printf("recorded %s: %s\n", name.c_str(), config.summary_path.c_str());
}

}  // namespace

int main() {
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
  std::vector<std::string> words = {"spanprof",
                                    "compare",
                                    base,
                                    cand,
                                    "--metric",
                                    "p95_ns",
                                    "--absolute-tolerance",
                                    "500000",
                                    "--relative-tolerance-bps",
                                    "1000",
                                    "--json",
                                    json};
  std::vector<char*> argv;
  for (std::string& word : words) argv.push_back(word.data());
  argv.push_back(nullptr);
  std::printf(
      "\n$ spanprof compare %s %s --metric p95_ns "
      "--absolute-tolerance 500000 --relative-tolerance-bps 1000 "
      "--json %s\n",
      base.c_str(), cand.c_str(), json.c_str());
  std::fflush(stdout);
  const int gate =
      spanprof::cli::Run(static_cast<int>(argv.size() - 1), argv.data());
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
