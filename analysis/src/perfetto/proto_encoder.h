// proto_encoder.h — a small protocol-buffer wire encoder (private to the
// analysis library): varints, fixed-width numbers and length-delimited
// fields, appended to a caller-owned string. No libprotobuf.
//
// Nested messages get a one-byte length placeholder that `EndNested()`
// back-patches; a message of 128 bytes or more moves its body to make room
// for the longer varint (rare for trace packets, which are mostly < 40 bytes).
//
// Example:
//
//   std::string out;
//   ProtoEncoder e(&out);
//   size_t packet = e.BeginNested(1);   // Trace.packet
//   e.Varint(10, 1);                    // trusted_packet_sequence_id
//   e.EndNested(packet);
#ifndef SPANPROF_ANALYSIS_SRC_PERFETTO_PROTO_ENCODER_H_
#define SPANPROF_ANALYSIS_SRC_PERFETTO_PROTO_ENCODER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace spanprof::analysis::internal {

// Protocol-buffer wire types.
enum WireType : uint32_t {
  kWireVarint = 0,
  kWireFixed64 = 1,
  kWireLengthDelimited = 2,
  kWireFixed32 = 5,
};

// The key of a field: (field number << 3) | wire type.
constexpr uint64_t FieldKey(uint32_t field, WireType type) {
  return (uint64_t{field} << 3) | type;
}

// Bytes a varint of `value` takes (1..10).
constexpr size_t VarintSize(uint64_t value) {
  size_t size = 1;
  while (value >= 0x80) {
    value >>= 7;
    ++size;
  }
  return size;
}

// Writes the varint of `value` at `p`; returns the byte after it.
inline char* WriteVarint(char* p, uint64_t value) {
  while (value >= 0x80) {
    *p++ = static_cast<char>((value & 0x7f) | 0x80);
    value >>= 7;
  }
  *p++ = static_cast<char>(value);
  return p;
}

inline void AppendVarint(std::string* out, uint64_t value) {
  char buffer[10];
  out->append(buffer, WriteVarint(buffer, value));
}

// `ProtoEncoder` appends fields to `*out`. Not thread-safe; the string must
// outlive it.
class ProtoEncoder {
 public:
  explicit ProtoEncoder(std::string* out) : out_(out) {}

  // uint32/uint64/bool/enum fields, and int32/int64 fields holding values
  // >= 0. A negative int64 is its two's complement (10 bytes), as protobuf's
  // int64 encoding wants.
  void Varint(uint32_t field, uint64_t value) {
    char buffer[20];
    char* p = WriteVarint(buffer, FieldKey(field, kWireVarint));
    out_->append(buffer, WriteVarint(p, value));
  }
  void Int(uint32_t field, int64_t value) {
    Varint(field, static_cast<uint64_t>(value));
  }
  void Fixed64(uint32_t field, uint64_t value) {
    char buffer[18];
    char* p = WriteVarint(buffer, FieldKey(field, kWireFixed64));
    for (int i = 0; i < 8; ++i) {
      *p++ = static_cast<char>((value >> (8 * i)) & 0xff);
    }
    out_->append(buffer, p);
  }
  void Double(uint32_t field, double value) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    Fixed64(field, bits);
  }
  // string/bytes fields.
  void Bytes(uint32_t field, std::string_view bytes) {
    AppendVarint(out_, FieldKey(field, kWireLengthDelimited));
    AppendVarint(out_, bytes.size());
    out_->append(bytes);
  }

  // Starts an embedded message; returns the mark `EndNested()` takes.
  size_t BeginNested(uint32_t field) {
    AppendVarint(out_, FieldKey(field, kWireLengthDelimited));
    out_->push_back('\0');
    return out_->size() - 1;
  }
  // Writes the length of the message started at `mark`.
  void EndNested(size_t mark) {
    const size_t length = out_->size() - mark - 1;
    if (length < 0x80) {
      (*out_)[mark] = static_cast<char>(length);
      return;
    }
    const size_t size = VarintSize(length);
    out_->insert(mark + 1, size - 1, '\0');
    WriteVarint(out_->data() + mark, length);
  }

 private:
  std::string* out_;
};

// `SmallEncoder` has `ProtoEncoder`'s interface over a caller's buffer: it
// writes at `p` and never grows, and every nested message must stay under
// 128 bytes (its length is one byte, written by `EndNested()`). For packets
// whose size the caller bounds, written where a string append would cost more
// than the fields. `end()` is the byte after the last written.
class SmallEncoder {
 public:
  explicit SmallEncoder(char* p) : p_(p) {}

  void Varint(uint32_t field, uint64_t value) {
    p_ = WriteVarint(p_, FieldKey(field, kWireVarint));
    p_ = WriteVarint(p_, value);
  }
  void Int(uint32_t field, int64_t value) {
    Varint(field, static_cast<uint64_t>(value));
  }
  void Fixed64(uint32_t field, uint64_t value) {
    p_ = WriteVarint(p_, FieldKey(field, kWireFixed64));
    for (int i = 0; i < 8; ++i) {
      *p_++ = static_cast<char>((value >> (8 * i)) & 0xff);
    }
  }
  void Double(uint32_t field, double value) {
    uint64_t bits;
    std::memcpy(&bits, &value, sizeof bits);
    Fixed64(field, bits);
  }
  void Bytes(uint32_t field, std::string_view bytes) {
    p_ = WriteVarint(p_, FieldKey(field, kWireLengthDelimited));
    p_ = WriteVarint(p_, bytes.size());
    if (!bytes.empty()) std::memcpy(p_, bytes.data(), bytes.size());
    p_ += bytes.size();
  }
  char* BeginNested(uint32_t field) {
    p_ = WriteVarint(p_, FieldKey(field, kWireLengthDelimited));
    return p_++;
  }
  void EndNested(char* mark) { *mark = static_cast<char>(p_ - mark - 1); }

  char* end() const { return p_; }

 private:
  char* p_;
};

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_PERFETTO_PROTO_ENCODER_H_
