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
#include "collector/ring_snapshot.h"
#include "gtest/gtest.h"
#include "recorder/recorder_internal.h"
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

// A step under a page (a small session's mapping batch): a read point that
// has not passed the page boundary after the start gives nothing back, and
// one past it gives back the whole pages before it, nothing beyond.
TEST(ReadPrefixReleaseTest, AStepUnderAPageGivesBackNoPartOfAPage) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<uint64_t> v(4 * page / sizeof(uint64_t));
  for (size_t i = 0; i < v.size(); ++i) v[i] = i;
  const auto begin = reinterpret_cast<uintptr_t>(v.data());
  // The data never starts on a page boundary: 8 bytes into the storage
  // when the storage starts on one.
  const size_t skip = begin % page == 0 ? sizeof(uint64_t) : 0;
  const char* data = reinterpret_cast<const char*>(v.data()) + skip;
  const uintptr_t at = begin + skip;
  const size_t to_boundary = (at + page - 1) / page * page - at;
  size_t released = 0;
  // 64-byte steps up to the boundary: each would round down to before the
  // start, and must not give back anything.
  for (size_t done = 64; done < to_boundary; done += 64) {
    internal::ReleaseReadPrefix(data, done, &released, 64);
    ASSERT_EQ(released, 0u) << done;
  }
  // Past the next boundary but one: the one whole page before it goes.
  const size_t done = to_boundary + page + 8;
  internal::ReleaseReadPrefix(data, done, &released, 64);
  EXPECT_EQ(released, to_boundary + page);
  // That page went back to the kernel: it reads as zeros now.
  EXPECT_EQ(v[(skip + to_boundary) / sizeof(uint64_t)], 0u);
  for (size_t i = (skip + done) / sizeof(uint64_t); i < v.size(); ++i) {
    ASSERT_EQ(v[i], i);
  }
  for (size_t i = 0; i < (skip + to_boundary) / sizeof(uint64_t); ++i) {
    ASSERT_EQ(v[i], i);  // the part page before the first boundary stays
  }
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

// The pieces of a mapping read for the last time go back a batch at a
// time: none while the batch is not full, all of a full batch's whole pages
// at once, a range pending when a piece far from it arrives, and the rest
// when the release ends. Anonymous memory stands in for the stream's
// mapping (mincore sees its pages go).
TEST(ReadPrefixReleaseTest, MappingReleaseGivesBackPiecesByTheBatch) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<uint64_t> v(size_t{1} << 20);  // 8 MiB, every page written
  for (size_t i = 0; i < v.size(); ++i) v[i] = i;
  const char* const bytes = reinterpret_cast<const char*>(v.data());
  const auto begin = reinterpret_cast<uintptr_t>(v.data());
  const uintptr_t first = (begin + page - 1) / page * page;
  // Whether page `p` (of Resident()) lies wholly in bytes [lo, hi) of `v`.
  const auto inside = [&](size_t p, size_t lo, size_t hi) {
    const size_t at = first - begin + p * page;
    return at >= lo && at + page <= hi;
  };
  constexpr size_t kPiece = size_t{128} << 10;
  constexpr size_t kBatch = size_t{1} << 20;
  {
    internal::MappingRelease mapping(kBatch);
    for (size_t at = 0; at + kPiece < kBatch; at += kPiece) {
      mapping.Add(bytes + at, kPiece);
    }
    for (const bool r : Resident(v)) ASSERT_TRUE(r);  // the batch is not full
    mapping.Add(bytes + kBatch - kPiece, kPiece);     // now it is
    std::vector<bool> resident = Resident(v);
    for (size_t p = 0; p < resident.size(); ++p) {
      ASSERT_EQ(resident[p], !inside(p, 0, kBatch)) << "page " << p;
    }
    // One piece, then one 3 MiB further: the first goes back at once.
    mapping.Add(bytes + kBatch, kPiece);
    mapping.Add(bytes + 4 * kBatch, kPiece);
    resident = Resident(v);
    for (size_t p = 0; p < resident.size(); ++p) {
      const bool gone =
          inside(p, 0, kBatch) || inside(p, kBatch, kBatch + kPiece);
      ASSERT_EQ(resident[p], !gone) << "page " << p;
    }
  }
  // The end gave back the last piece too, and nothing it was not given.
  const std::vector<bool> resident = Resident(v);
  for (size_t p = 0; p < resident.size(); ++p) {
    const bool gone = inside(p, 0, kBatch) ||
                      inside(p, kBatch, kBatch + kPiece) ||
                      inside(p, 4 * kBatch, 4 * kBatch + kPiece);
    ASSERT_EQ(resident[p], !gone) << "page " << p;
  }
  for (size_t i = (kBatch + kPiece) / sizeof(uint64_t);
       i < 4 * kBatch / sizeof(uint64_t); ++i) {
    ASSERT_EQ(v[i], i);
  }
}

// A mapped piece of side records (a stream chunk, up to 1 MiB) goes back as
// it is read, not only once read whole: each release gives back the whole
// pages before the read point, up to a page boundary, so that the next one
// takes the page the last one stopped in; what was not read stays intact.
TEST(ReadPrefixReleaseTest, APieceOfSideRecordsGoesBackAsItIsRead) {
  const auto page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  constexpr size_t kRecords = size_t{1} << 16;  // 2 MiB
  std::vector<internal::SideRecord> records(kRecords);
  for (size_t i = 0; i < kRecords; ++i) records[i].position = i;
  internal::SideRecords side;
  side.AddMapped(reinterpret_cast<const char*>(records.data()), kRecords);
  const auto begin = reinterpret_cast<uintptr_t>(records.data());
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last =
      (begin + kRecords * sizeof(internal::SideRecord)) / page * page;
  // Whether each page wholly inside `records` is resident.
  const auto resident = [&] {
    std::vector<unsigned char> pages((last - first) / page);
    // NOLINTNEXTLINE(performance-no-int-to-ptr): an address inside `records`
    EXPECT_EQ(
        mincore(reinterpret_cast<void*>(first), last - first, pages.data()), 0);
    std::vector<bool> out;
    for (const unsigned char p : pages) out.push_back((p & 1) != 0);
    return out;
  };
  // The pages wholly before record `done` are gone, the rest are there.
  const auto expect_read_to = [&](size_t done) {
    const uintptr_t read_end = begin + done * sizeof(internal::SideRecord);
    const std::vector<bool> pages = resident();
    for (size_t p = 0; p < pages.size(); ++p) {
      const bool gone = first + (p + 1) * page <= read_end;
      ASSERT_EQ(pages[p], !gone) << "page " << p << ", read " << done;
    }
    for (size_t i = done; i < kRecords; ++i) {
      ASSERT_EQ(side[i].position, i) << i;
    }
  };
  {
    internal::MappingRelease mapping(page);       // every add goes at once
    side.ReleaseRead(kRecords / 3 + 1, mapping);  // not on a page boundary
    mapping.Flush();
    expect_read_to(kRecords / 3 + 1);
    side.ReleaseRead(kRecords / 2 + 5, mapping);
    mapping.Flush();
    expect_read_to(kRecords / 2 + 5);
    // Read to its end: the piece's last page goes too.
    side.ReleaseRead(kRecords, mapping);
  }
  expect_read_to(kRecords);
}

}  // namespace
}  // namespace spanprof
