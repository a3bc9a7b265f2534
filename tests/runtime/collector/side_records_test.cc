// A thread's side records as the collector reads them (SideRecords): those
// in memory of their own first, then pieces read where they lie in a mapped
// stream file, unaligned, in any number; read by index in order or not,
// cut, copied out and given back.
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "collector/ring_snapshot.h"
#include "gtest/gtest.h"
#include "recorder/recorder_internal.h"

namespace spanprof::internal {
namespace {

SideRecord Numbered(uint64_t n) {
  return SideRecord{.position = n,
                    .kind = kSideArgInt,
                    .key = static_cast<uint32_t>(n % 7),
                    .value = n * 3,
                    .side = 0};
}

// `counts` pieces of records numbered on from `first`, laid out one after
// another in `bytes` at an odd offset (as chunk payloads lie in a stream).
std::vector<std::pair<const char*, size_t>> LayOut(
    std::vector<char>& bytes, uint64_t first,
    const std::vector<size_t>& counts) {
  size_t total = 0;
  for (const size_t n : counts) total += n;
  bytes.assign(total * sizeof(SideRecord) + 13 * counts.size() + 1, 0);
  std::vector<std::pair<const char*, size_t>> pieces;
  size_t at = 1;  // unaligned for SideRecord
  uint64_t n = first;
  for (const size_t count : counts) {
    pieces.emplace_back(bytes.data() + at, count);
    for (size_t k = 0; k < count; ++k, ++n) {
      const SideRecord record = Numbered(n);
      std::memcpy(bytes.data() + at, &record, sizeof(record));
      at += sizeof(record);
    }
    at += 13;  // another chunk's bytes between two pieces
  }
  return pieces;
}

void ExpectNumbered(const SideRecords& side, size_t k, uint64_t n) {
  const SideRecord record = side[k];
  EXPECT_EQ(record.position, n) << k;
  EXPECT_EQ(record.value, n * 3) << k;
  EXPECT_EQ(record.key, n % 7) << k;
}

TEST(SideRecordsTest, OwnedThenMappedPiecesReadInOrderAndOutOfIt) {
  std::vector<char> bytes;
  const auto pieces = LayOut(bytes, 2, {3, 1, 5, 2});
  SideRecords side;
  for (const auto& [at, count] : pieces) side.AddMapped(at, count);
  side.Prepend({Numbered(0), Numbered(1)});
  ASSERT_EQ(side.size(), 13u);
  for (size_t k = 0; k < side.size(); ++k) ExpectNumbered(side, k, k);
  for (const size_t k : {12u, 0u, 5u, 2u, 9u, 6u, 11u, 3u}) {
    ExpectNumbered(side, k, k);
  }
}

TEST(SideRecordsTest, TruncateKeepsThePrefixAcrossPieces) {
  std::vector<char> bytes;
  const auto pieces = LayOut(bytes, 1, {4, 4, 4});
  SideRecords side;
  for (const auto& [at, count] : pieces) side.AddMapped(at, count);
  side.Prepend({Numbered(0)});
  side.Truncate(7);  // within the second piece
  ASSERT_EQ(side.size(), 7u);
  for (size_t k = 0; k < side.size(); ++k) ExpectNumbered(side, k, k);
  side.Truncate(5);  // at the first piece's end
  ASSERT_EQ(side.size(), 5u);
  ExpectNumbered(side, 4, 4);
  side.Truncate(1);  // only what is owned
  ASSERT_EQ(side.size(), 1u);
  ExpectNumbered(side, 0, 0);
  side.Truncate(0);
  EXPECT_TRUE(side.empty());
}

TEST(SideRecordsTest, OwnedCopiesTheMappedRecordsOutInOrder) {
  std::vector<char> bytes;
  const auto pieces = LayOut(bytes, 1, {2, 3});
  SideRecords side;
  for (const auto& [at, count] : pieces) side.AddMapped(at, count);
  side.Prepend({Numbered(0)});
  std::vector<SideRecord>& owned = side.Owned();
  ASSERT_EQ(owned.size(), 6u);
  owned.push_back(Numbered(6));
  ASSERT_EQ(side.size(), 7u);
  for (size_t k = 0; k < side.size(); ++k) ExpectNumbered(side, k, k);
  side.Clear();
  EXPECT_TRUE(side.empty());
}

}  // namespace
}  // namespace spanprof::internal
