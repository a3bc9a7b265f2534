// query_report: what `spanprof query` costs on a large trace, phase by phase.
//
//   query_report TRACE [SQL]
//
// Reads TRACE (any format `spanprof query` reads), loads it into the query
// database and runs SQL (default: the per-name totals of docs/performance.md,
// `SELECT name, COUNT(*), SUM(dur) FROM slice GROUP BY name`), printing wall
// time per phase, the load rate in spans per second and the peak RSS. The
// last line, `result: ...`, gives the figures as key=value pairs. Times are
// reported, never asserted: bench/query-speed runs it under the build lock
// so that no compile shares the machine meanwhile.
#include <sys/resource.h>

#include <cstdint>
#include <cstdio>
#include <ctime>
#include <string>
#include <vector>

#include "spanprof/analysis/query.h"
#include "spanprof/analysis/table_output.h"
#include "spanprof/analysis/trace.h"

namespace {

double WallSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) +
         static_cast<double>(ts.tv_nsec) * 1e-9;
}

int64_t PeakRssKib() {
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: query_report TRACE [SQL]\n");
    return 2;
  }
  const std::string path = argv[1];
  const std::string sql =
      argc == 3 ? argv[2]
                : "SELECT name, COUNT(*), SUM(dur) FROM slice GROUP BY name";
  const double t0 = WallSeconds();
  absl::StatusOr<spanprof::Capture> capture =
      spanprof::analysis::ReadTrace(path);
  if (!capture.ok()) {
    std::fprintf(stderr, "query_report: %s\n",
                 std::string(capture.status().message()).c_str());
    return 2;
  }
  const double t1 = WallSeconds();
  const std::vector<spanprof::analysis::QueryInput> inputs = {
      {path, &*capture}};
  absl::StatusOr<spanprof::analysis::QueryDatabase> db =
      spanprof::analysis::QueryDatabase::Load(inputs);
  if (!db.ok()) {
    std::fprintf(stderr, "query_report: %s\n",
                 std::string(db.status().message()).c_str());
    return 2;
  }
  const double t2 = WallSeconds();
  absl::StatusOr<spanprof::analysis::OutputTable> rows = db->Run(sql);
  if (!rows.ok()) {
    std::fprintf(stderr, "query_report: %s\n",
                 std::string(rows.status().message()).c_str());
    return 2;
  }
  const double t3 = WallSeconds();
  std::fputs(spanprof::analysis::RenderTable(
                 *rows, spanprof::analysis::TableFormat::kTable)
                 .c_str(),
             stdout);
  const auto spans = static_cast<double>(db->slice_count());
  std::printf(
      "read   %8.3f s\nload   %8.3f s  (%.2f M spans/s)\n"
      "query  %8.3f s\ntotal  %8.3f s\npeak RSS %lld MiB\n",
      t1 - t0, t2 - t1, spans / (t2 - t1) / 1e6, t3 - t2, t3 - t0,
      static_cast<long long>(PeakRssKib() / 1024));
  std::printf(
      "result: spans=%lld read_s=%.3f load_s=%.3f load_mspans_per_s=%.2f "
      "query_s=%.3f total_s=%.3f\n",
      static_cast<long long>(db->slice_count()), t1 - t0, t2 - t1,
      spans / (t2 - t1) / 1e6, t3 - t2, t3 - t0);
  return 0;
}
