// sized_captures.h — captures whose spans carry a size argument, for the
// scaling tests (library and CLI).
#ifndef SPANPROF_TESTS_ANALYSIS_SCALING_SIZED_CAPTURES_H_
#define SPANPROF_TESTS_ANALYSIS_SCALING_SIZED_CAPTURES_H_

#include <cmath>
#include <cstdint>
#include <functional>
#include <random>

#include "spanprof/capture.h"
#include "tests/testing/capture_builder.h"

namespace spanprof::testing {

// A capture whose "file.tokenize" spans carry `bytes` and cost `cost(bytes)`.
inline Capture TokenizeCapture(const std::function<double(double)>& cost,
                               uint64_t seed) {
  CaptureBuilder b;
  const uint32_t main = b.Thread(1, "main");
  const uint32_t tokenize = b.Site("file.tokenize", "parse");
  const uint32_t fixed = b.Site("file.open");
  std::mt19937_64 engine(seed);
  std::uniform_real_distribution<double> log2_size(6, 18);
  std::normal_distribution<double> noise(0.0, 0.1);
  int64_t t = 0;
  uint64_t id = 1;
  for (int i = 0; i < 600; ++i) {
    const auto bytes = static_cast<int64_t>(std::exp2(log2_size(engine)));
    const auto ns = static_cast<int64_t>(cost(static_cast<double>(bytes)) *
                                         std::exp(noise(engine)));
    b.Add(id, 0, tokenize, main, t, t + ns).heartbeats =
        static_cast<uint64_t>(bytes);
    b.Args(id, {IntArg("bytes", bytes), IntArg("files", 1)});
    ++id;
    t += ns + 10;
    b.Add(id, 0, fixed, main, t, t + 50);
    b.Args(id, {IntArg("bytes", 4096)});
    ++id;
    t += 60;
  }
  return b.Build();
}

}  // namespace spanprof::testing

#endif  // SPANPROF_TESTS_ANALYSIS_SCALING_SIZED_CAPTURES_H_
