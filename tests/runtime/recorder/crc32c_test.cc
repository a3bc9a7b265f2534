// The stream's chunk checksum (CRC-32C): the writer and the reader share one
// implementation, so a stream reading back proves nothing about the value.
// These check it against the standard's check value and the instruction's
// paths (one chain, three lanes side by side) against the table's.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "stream/stream_format.h"

namespace spanprof {
namespace {

using internal::Crc32c;

uint32_t Crc(const std::string& bytes) {
  Crc32c crc;
  crc.Update(bytes.data(), bytes.size());
  return crc.value();
}

TEST(Crc32cTest, GivesTheStandardCheckValue) {
  // The check value of CRC-32C (RFC 3720, iSCSI): "123456789".
  EXPECT_EQ(Crc("123456789"), 0xE3069283u);
  EXPECT_EQ(Crc(""), 0u);
  // RFC 3720 B.4: 32 bytes of zeros.
  EXPECT_EQ(Crc(std::string(32, '\0')), 0x8A9136AAu);
}

TEST(Crc32cTest, EveryPathGivesTheTablesValue) {
  std::mt19937_64 random(42);
  std::vector<unsigned char> bytes(3 * 4096 * 3 + 777);
  for (unsigned char& b : bytes) b = static_cast<unsigned char>(random());
  // Sizes around the three-lane threshold and its multiples, odd tails and
  // offsets (unaligned starts), from a non-initial state as a chunk's
  // payload after its header is.
  for (const size_t size :
       {size_t{0}, size_t{7}, size_t{8}, size_t{4095}, size_t{3 * 4096 - 1},
        size_t{3 * 4096}, size_t{3 * 4096 + 1}, size_t{3 * 4096 * 2 + 13},
        size_t{3 * 4096 * 3 + 700}}) {
    for (const size_t offset : {size_t{0}, size_t{3}}) {
      const unsigned char* p = bytes.data() + offset;
      const uint32_t start = 0x12345678u;
      const uint32_t table = Crc32c::UpdateTable(start, p, size);
#if defined(__x86_64__)
      if (Crc32c::HasSse42()) {
        EXPECT_EQ(Crc32c::UpdateSse42(start, p, size), table)
            << "size " << size << " offset " << offset;
      }
#endif
      // Split anywhere, the parts give the whole's value.
      Crc32c whole;
      whole.Update(p, size);
      Crc32c parts;
      parts.Update(p, size / 3);
      parts.Update(p + size / 3, size - size / 3);
      EXPECT_EQ(whole.value(), parts.value()) << "size " << size;
      EXPECT_EQ(whole.value(),
                Crc32c::UpdateTable(0xFFFFFFFFu, p, size) ^ 0xFFFFFFFFu)
          << "size " << size;
    }
  }
}

}  // namespace
}  // namespace spanprof
