// libFuzzer target; the properties are in fuzz_properties.h.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "tests/fuzz/fuzz_properties.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  if (!spanprof::fuzzing::StreamReaderHolds(input)) std::abort();
  return 0;
}
