#include "analysis/src/perfetto/proto_encoder.h"

#include <cstdint>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace spanprof::analysis::internal {
namespace {

std::string Bytes(std::initializer_list<unsigned> bytes) {
  std::string out;
  for (unsigned b : bytes) out.push_back(static_cast<char>(b));
  return out;
}

std::string Varint(uint64_t value) {
  std::string out;
  AppendVarint(&out, value);
  return out;
}

TEST(ProtoEncoderTest, VarintsAreLittleEndianBase128) {
  EXPECT_EQ(Varint(0), Bytes({0x00}));
  EXPECT_EQ(Varint(1), Bytes({0x01}));
  EXPECT_EQ(Varint(127), Bytes({0x7f}));
  EXPECT_EQ(Varint(128), Bytes({0x80, 0x01}));
  EXPECT_EQ(Varint(300), Bytes({0xac, 0x02}));
  EXPECT_EQ(Varint(16383), Bytes({0xff, 0x7f}));
  EXPECT_EQ(Varint(16384), Bytes({0x80, 0x80, 0x01}));
  EXPECT_EQ(
      Varint(std::numeric_limits<uint64_t>::max()),
      Bytes({0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01}));
  for (uint64_t v : {0ULL, 127ULL, 128ULL, 1ULL << 35, ~0ULL}) {
    EXPECT_EQ(VarintSize(v), Varint(v).size()) << v;
  }
}

TEST(ProtoEncoderTest, FieldsCarryTheirKey) {
  std::string out;
  ProtoEncoder e(&out);
  e.Varint(1, 150);  // the protobuf documentation's example: 08 96 01
  EXPECT_EQ(out, Bytes({0x08, 0x96, 0x01}));
  out.clear();
  e.Bytes(2, "testing");
  EXPECT_EQ(out, Bytes({0x12, 0x07}) + "testing");
  out.clear();
  e.Varint(58, 64);  // a two-byte key: (58 << 3) | 0 = 464
  EXPECT_EQ(out, Bytes({0xd0, 0x03, 0x40}));
  out.clear();
  e.Fixed64(47, 0x0102030405060708ULL);  // (47 << 3) | 1 = 377
  EXPECT_EQ(
      out, Bytes({0xf9, 0x02, 0x08, 0x07, 0x06, 0x05, 0x04, 0x03, 0x02, 0x01}));
  out.clear();
  e.Int(4, -1);  // int64 -1: ten bytes of two's complement
  EXPECT_EQ(out, Bytes({0x20, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
                        0xff, 0x01}));
  out.clear();
  e.Double(5, 1.0);  // 0x3ff0000000000000, little-endian
  EXPECT_EQ(out, Bytes({0x29, 0, 0, 0, 0, 0, 0, 0xf0, 0x3f}));
}

TEST(ProtoEncoderTest, NestedMessagesGetTheirLengthBackPatched) {
  std::string out;
  ProtoEncoder e(&out);
  const size_t outer = e.BeginNested(1);
  e.Varint(10, 1);
  const size_t inner = e.BeginNested(11);
  e.Varint(9, 2);
  e.EndNested(inner);
  e.EndNested(outer);
  EXPECT_EQ(out, Bytes({0x0a, 0x06, 0x50, 0x01, 0x5a, 0x02, 0x48, 0x02}));
}

TEST(ProtoEncoderTest, LongNestedMessagesMoveTheirBodyForALongerLength) {
  std::string out;
  ProtoEncoder e(&out);
  const size_t outer = e.BeginNested(1);
  const std::string body(200, 'x');
  e.Bytes(2, body);  // 0x12, 0xc8 0x01, 200 bytes: 203 bytes
  e.EndNested(outer);
  ASSERT_EQ(out.size(), 1u + 2u + 203u);
  EXPECT_EQ(out.substr(0, 6), Bytes({0x0a, 0xcb, 0x01, 0x12, 0xc8, 0x01}));
  EXPECT_EQ(out.substr(6), body);
  out.clear();
  const size_t big = e.BeginNested(3);
  e.Bytes(1, std::string(20000, 'y'));  // a 3-byte length
  e.EndNested(big);
  EXPECT_EQ(out.substr(0, 4), Bytes({0x1a, 0xa4, 0x9c, 0x01}));  // 20004
  EXPECT_EQ(out.size(), 4u + 20004u);
}

}  // namespace
}  // namespace spanprof::analysis::internal
