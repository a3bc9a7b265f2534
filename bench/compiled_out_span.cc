// BM_SpanCompiledOut: the same loop as BM_SpanEnabled in a translation unit
// built with SPANPROF_ENABLED=0 (bench/CMakeLists.txt sets it for this file
// only), so every macro compiles to nothing. It must match BM_EmptyLoop.
#include "benchmark/benchmark.h"
#include "spanprof/spanprof.h"

#if SPANPROF_ENABLED
#error "compiled_out_span.cc must be built with SPANPROF_ENABLED=0"
#endif

namespace {

void BM_SpanCompiledOut(benchmark::State& state) {
  for (auto _ : state) {
    SPANPROF_SCOPE("bench.compiled_out");
    benchmark::ClobberMemory();
  }
}

}  // namespace

BENCHMARK(BM_SpanCompiledOut)->Iterations(50'000'000);  // as BM_EmptyLoop
