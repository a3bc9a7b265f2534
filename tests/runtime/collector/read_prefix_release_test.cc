// A session end reads its inputs (side records, pending arguments) once, in
// order, and gives each one's pages back to the kernel as it goes, so that
// the capture it builds takes their place: what went back is only what was
// read, and every argument still arrives whole on its span.
#include <sys/mman.h>
#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "collector/ring_parser.h"
#include "gtest/gtest.h"
#include "spanprof/spanprof.h"

namespace spanprof {
namespace {

// Whether each page of `v`'s storage wholly inside it is resident.
std::vector<bool> Resident(const std::vector<uint64_t>& v) {
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(v.data());
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + v.size() * sizeof(uint64_t)) / page * page;
  std::vector<unsigned char> pages((last - first) / page);
  // NOLINTNEXTLINE(performance-no-int-to-ptr): an address inside `v`
  EXPECT_EQ(mincore(reinterpret_cast<void*>(first), last - first, pages.data()),
            0);
  std::vector<bool> resident;
  for (const unsigned char p : pages) resident.push_back((p & 1) != 0);
  return resident;
}

TEST(ReadPrefixReleaseTest, GivesBackOnlyWholePagesAlreadyRead) {
  // 8 MiB, every page written.
  std::vector<uint64_t> v(size_t{1} << 20);
  for (size_t i = 0; i < v.size(); ++i) v[i] = i;
  size_t released = 0;

  // Under a MiB read: nothing goes yet (a call per chunk stays cheap).
  internal::ReleaseReadPrefix(v, 1000, &released);
  EXPECT_EQ(released, 0u);
  for (const bool r : Resident(v)) ASSERT_TRUE(r);

  const size_t done = v.size() / 2 + 3;  // not on a page boundary
  internal::ReleaseReadPrefix(v, done, &released);
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(v.data());
  const uintptr_t first = (begin + page - 1) / page * page;
  ASSERT_GT(released, size_t{1} << 20);
  EXPECT_LE(released, done * sizeof(uint64_t));
  EXPECT_EQ((begin + released) % page, 0u);
  const std::vector<bool> resident = Resident(v);
  const size_t gone = (begin + released - first) / page;
  for (size_t p = 0; p < resident.size(); ++p) {
    ASSERT_EQ(resident[p], p >= gone) << "page " << p << " of " << gone;
  }
  // What was not read yet is intact, from the page that holds `done` on.
  for (size_t i = done; i < v.size(); ++i) ASSERT_EQ(v[i], i);

  // The same point again gives nothing more back.
  const size_t before = released;
  internal::ReleaseReadPrefix(v, done, &released);
  EXPECT_EQ(released, before);
}

TEST(ReadPrefixReleaseTest, EveryArgumentSurvivesTheRelease) {
  // 300,000 arguments: several MiB of side records read back and of pending
  // arguments, each given back as the collector reads past it.
  constexpr int64_t kSpans = 300'000;
  RecordingOptions options;
  options.max_events = 2 * kSpans + 16;
  ASSERT_TRUE(StartRecording(options).ok());
  for (int64_t i = 0; i < kSpans; ++i) {
    SPANPROF_SCOPE("item");
    SPANPROF_ARG("i", i);
  }
  const Capture capture = StopRecording();
  ASSERT_EQ(capture.spans.size(), static_cast<size_t>(kSpans));
  ASSERT_EQ(capture.args.size(), static_cast<size_t>(kSpans));
  for (size_t k = 0; k < capture.spans.size(); ++k) {
    const Span& span = capture.spans[k];
    ASSERT_EQ(span.arg_count, 1u) << k;
    const SpanArg& arg = capture.args[span.first_arg];
    ASSERT_EQ(arg.key, "i") << k;
    ASSERT_EQ(arg.int_value, static_cast<int64_t>(k)) << k;
  }
}

}  // namespace
}  // namespace spanprof
