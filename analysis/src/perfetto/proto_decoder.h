// proto_decoder.h — a small protocol-buffer wire decoder (private to the
// analysis library), the reading half of proto_encoder.h: it walks the
// fields of one message held in a string_view, without copying or
// allocating. No libprotobuf.
//
// Every length is checked against the bytes left before it is used, so a
// hostile length can neither read past the end nor make anyone allocate;
// a varint longer than 10 bytes, a truncated field and the wire types
// protobuf retired (groups, 3 and 4) are errors. Offsets are absolute: the
// decoder of a nested message is given the offset of its first byte in the
// file, so every error can name the byte it is about.
//
// Example:
//
//   ProtoDecoder d(packet_bytes, packet_offset);
//   ProtoField f;
//   while (d.Next(&f)) {
//     if (f.number == 10 && f.type == kWireVarint) sequence = f.value;
//   }
//   if (d.error() != nullptr) ...;  // at byte d.error_offset()
#ifndef SPANPROF_ANALYSIS_SRC_PERFETTO_PROTO_DECODER_H_
#define SPANPROF_ANALYSIS_SRC_PERFETTO_PROTO_DECODER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

// Same-folder include, so that tests can include this header as
// "analysis/src/perfetto/proto_decoder.h" (WireType is the encoder's).
#include "proto_encoder.h"  // NOLINT(build/include_subdir)

namespace spanprof::analysis::internal {

// One field: its number, wire type and value (varint, fixed64 or fixed32 in
// `value`; a length-delimited field's bytes in `bytes`, which start at byte
// `offset + key_size + length size`, given as `bytes_offset`). `offset` is
// the absolute offset of the field's key.
struct ProtoField {
  uint32_t number = 0;
  WireType type = kWireVarint;
  uint64_t value = 0;
  std::string_view bytes;
  size_t offset = 0;
  size_t bytes_offset = 0;
};

// `ProtoDecoder` reads the fields of one message in order. Not thread-safe;
// the bytes must outlive it and every `ProtoField::bytes` it returns.
class ProtoDecoder {
 public:
  ProtoDecoder(std::string_view bytes, size_t offset)
      : data_(bytes), base_(offset) {}

  // Reads the next field into `*field`; false at the end of the message or
  // on an error (then `error()` is not null).
  bool Next(ProtoField* field) {
    if (pos_ >= data_.size() || error_ != nullptr) return false;
    field->offset = base_ + pos_;
    uint64_t key = 0;
    if (!ReadVarint(&key)) return false;
    const uint64_t number = key >> 3;
    if (number == 0 || number > 0x1fffffff) {
      return Fail(field->offset, "field number 0 or beyond 2^29");
    }
    field->number = static_cast<uint32_t>(number);
    switch (key & 7) {
      case kWireVarint:
        field->type = kWireVarint;
        return ReadVarint(&field->value);
      case kWireFixed64:
        field->type = kWireFixed64;
        return ReadFixed(8, &field->value);
      case kWireFixed32:
        field->type = kWireFixed32;
        return ReadFixed(4, &field->value);
      case kWireLengthDelimited:
        field->type = kWireLengthDelimited;
        return ReadBytes(field);
      default:
        return Fail(field->offset,
                    "unsupported wire type (a group, or not "
                    "protobuf)");
    }
  }

  // Null while no error occurred; else what went wrong, at byte
  // `error_offset()` of the file.
  const char* error() const { return error_; }
  size_t error_offset() const { return error_offset_; }

 private:
  bool Fail(size_t offset, const char* what) {
    error_ = what;
    error_offset_ = offset;
    return false;
  }

  bool ReadVarint(uint64_t* out) {
    const size_t start = pos_;
    uint64_t value = 0;
    for (int shift = 0; shift < 70; shift += 7) {
      if (pos_ >= data_.size()) {
        return Fail(base_ + start, "truncated varint");
      }
      const auto byte = static_cast<uint8_t>(data_[pos_++]);
      if (shift < 64) value |= uint64_t{byte & 0x7fu} << shift;
      if ((byte & 0x80) == 0) {
        *out = value;
        return true;
      }
    }
    return Fail(base_ + start, "varint longer than 10 bytes");
  }

  bool ReadFixed(size_t size, uint64_t* out) {
    if (data_.size() - pos_ < size) {
      return Fail(base_ + pos_, "truncated fixed-width field");
    }
    uint64_t value = 0;
    for (size_t i = 0; i < size; ++i) {
      value |= uint64_t{static_cast<uint8_t>(data_[pos_ + i])} << (8 * i);
    }
    pos_ += size;
    *out = value;
    return true;
  }

  bool ReadBytes(ProtoField* field) {
    const size_t length_at = pos_;
    uint64_t length = 0;
    if (!ReadVarint(&length)) return false;
    if (length > data_.size() - pos_) {
      return Fail(base_ + length_at,
                  "length beyond the end of the enclosing message");
    }
    field->bytes = data_.substr(pos_, static_cast<size_t>(length));
    field->bytes_offset = base_ + pos_;
    field->value = length;
    pos_ += static_cast<size_t>(length);
    return true;
  }

  std::string_view data_;
  size_t base_;
  size_t pos_ = 0;
  const char* error_ = nullptr;
  size_t error_offset_ = 0;
};

}  // namespace spanprof::analysis::internal

#endif  // SPANPROF_ANALYSIS_SRC_PERFETTO_PROTO_DECODER_H_
