// overhead_example: what do my spans cost in my hottest loop?
//
// A user's hot loop parses records ("id=17;price=1250;qty=3") and is
// instrumented two ways:
//
//   BM_ParsePerRecord   a span around every record: fine-grained, but each
//                       record costs only tens of nanoseconds, so two
//                       timestamps and two ring records per record show
//   BM_ParsePerBatch    one span around the batch: the same work, one span
//                       per few hundred records
//
// SPANPROF_BENCHMARK registers each twice, NAME/spanprof:off (no recording
// session) and NAME/spanprof:on (recording), and `spanprof overhead` gates
// the ratio of their medians:
//
//   build/demo/bin/overhead_example --benchmark_repetitions=10
//       --benchmark_enable_random_interleaving=true
//       --benchmark_out=BENCH.json --benchmark_out_format=json   (one line)
//   build/demo/bin/spanprof overhead BENCH.json --max-ratio 1.05
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "benchmark/benchmark.h"
#include "spanprof/benchmark.h"
#include "spanprof/spanprof.h"

namespace {

struct Record {
  int64_t id = 0;
  int64_t price = 0;
  int64_t quantity = 0;
};

// The digits after `key=` in `line`, or 0.
int64_t FieldValue(std::string_view line, std::string_view key) {
  const size_t at = line.find(key);
  if (at == std::string_view::npos) return 0;
  int64_t value = 0;
  for (size_t i = at + key.size(); i < line.size(); ++i) {
    const char c = line[i];
    if (c < '0' || c > '9') break;
    value = value * 10 + (c - '0');
  }
  return value;
}

Record ParseRecord(std::string_view line) {
  return Record{.id = FieldValue(line, "id="),
                .price = FieldValue(line, "price="),
                .quantity = FieldValue(line, "qty=")};
}

std::vector<std::string> MakeLines(int64_t count) {
  std::vector<std::string> lines;
  lines.reserve(static_cast<size_t>(count));
  for (int64_t i = 0; i < count; ++i) {
    lines.push_back("id=" + std::to_string(i) +
                    ";price=" + std::to_string(1000 + i % 977) +
                    ";qty=" + std::to_string(1 + i % 13));
  }
  return lines;
}

// A span around every record.
void BM_ParsePerRecord(benchmark::State& state) {
  const std::vector<std::string> lines = MakeLines(state.range(0));
  for (auto _ : state) {
    int64_t total = 0;
    for (const std::string& line : lines) {
      SPANPROF_SCOPE("record.parse", {.phase = "parse"});
      const Record record = ParseRecord(line);
      total += record.price * record.quantity;
    }
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
SPANPROF_BENCHMARK(BM_ParsePerRecord)->Arg(256);

// One span around the batch.
void BM_ParsePerBatch(benchmark::State& state) {
  const std::vector<std::string> lines = MakeLines(state.range(0));
  for (auto _ : state) {
    SPANPROF_SCOPE("batch.parse", {.phase = "parse"});
    int64_t total = 0;
    for (const std::string& line : lines) {
      const Record record = ParseRecord(line);
      total += record.price * record.quantity;
    }
    benchmark::DoNotOptimize(total);
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
}
SPANPROF_BENCHMARK(BM_ParsePerBatch)->Arg(256);

}  // namespace

BENCHMARK_MAIN();
