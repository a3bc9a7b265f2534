// spanprof/internal/packed_args.h — a capture's arguments packed, a few bytes
// each instead of a 32-byte SpanArg.
//
// A session end builds its capture only to write its own outputs (the trace,
// the summary, the table). Its arguments were the largest part of that
// capture: 32 bytes each, 96 a span with three, beside a 56-byte span. Packed,
// an integer argument takes a tag byte and its value's varint (4 bytes for a
// value under 2^20), so the session end's peak holds the spans and little
// more. Only that capture is packed (`Capture::packed_args`); a capture handed
// to the program, read from a file or recovered keeps `Capture::args`. The
// analysis library reads either through one function (ArgsOf), which decodes
// a span's arguments here.
//
// Nothing outside the libraries includes this header.
#ifndef SPANPROF_INTERNAL_PACKED_ARGS_H_
#define SPANPROF_INTERNAL_PACKED_ARGS_H_

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <span>
#include <unordered_map>
#include <vector>

#include "spanprof/capture.h"

namespace spanprof::internal {

// Each argument: a tag byte, then its key's index when the tag cannot hold
// it (a varint), its value (a zigzag varint, or a double's 8 bytes), and its
// text's index when it has one (a varint). Keys and texts are kept once each
// in tables of their own. Append() and Decode() are the whole format: a
// packed store never leaves its process.
class PackedArgs {
 public:
  // Appends one span's arguments; returns the offset the span's `first_arg`
  // names. UINT32_MAX: the store would pass 4 GiB (nothing appended).
  uint32_t Append(std::span<const SpanArg> args) {
    const size_t at = bytes_.size();
    if (at >= UINT32_MAX - kMaxArgBytes * args.size()) return UINT32_MAX;
    for (const SpanArg& arg : args) AppendOne(arg);
    return static_cast<uint32_t>(at);
  }

  // The `count` arguments at `offset`, into `out` (what it held goes). An
  // offset or count past what was appended yields what lies inside, never
  // more.
  void Decode(uint32_t offset, size_t count, std::vector<SpanArg>& out) const {
    out.clear();
    size_t at = offset;
    for (size_t k = 0; k < count && at < bytes_.size(); ++k) {
      SpanArg arg;
      if (!DecodeOne(at, arg)) return;
      out.push_back(std::move(arg));
    }
  }

  // Reserves room for `bytes` bytes of arguments.
  void Reserve(size_t bytes) { bytes_.reserve(bytes); }
  size_t size_bytes() const { return bytes_.size(); }
  // Whether any argument appended was a counter.
  bool any_counter() const { return any_counter_; }
  // Every distinct key, in the order first appended.
  const std::vector<ArgKey>& keys() const { return keys_; }

 private:
  // Tag bits: what a SpanArg says of itself, and a small key index.
  static constexpr uint8_t kDouble = 1;
  static constexpr uint8_t kCounter = 2;
  static constexpr uint8_t kString = 4;
  static constexpr uint8_t kTruncated = 8;
  static constexpr uint8_t kHasText = 16;
  static constexpr uint32_t kKeyShift = 5;
  static constexpr uint32_t kInlineKeys = 7;  // the tag's 3 bits; 7: a varint
  // A tag, a key varint, a value, a text varint.
  static constexpr size_t kMaxArgBytes = 1 + 5 + 10 + 5;

  void AppendOne(const SpanArg& arg) {
    const uint32_t key = KeyIndex(arg.key);
    uint8_t tag = static_cast<uint8_t>(
        (arg.is_double ? kDouble : 0) | (arg.is_counter ? kCounter : 0) |
        (arg.is_string ? kString : 0) | (arg.truncated ? kTruncated : 0) |
        (arg.text.empty() ? 0 : kHasText));
    tag = static_cast<uint8_t>(tag | (std::min(key, kInlineKeys) << kKeyShift));
    bytes_.push_back(tag);
    if (key >= kInlineKeys) PutVarint(key - kInlineKeys);
    if (arg.is_double) {
      uint8_t raw[sizeof(double)];
      std::memcpy(raw, &arg.double_value, sizeof(raw));
      bytes_.insert(bytes_.end(), raw, raw + sizeof(raw));
    } else {
      const auto value = static_cast<uint64_t>(arg.int_value);
      PutVarint((value << 1) ^ (0 - (value >> 63)));  // zigzag
    }
    if (!arg.text.empty()) {
      PutVarint(texts_.size());
      texts_.push_back(arg.text);
    }
    any_counter_ = any_counter_ || arg.is_counter;
  }

  bool DecodeOne(size_t& at, SpanArg& arg) const {
    const uint8_t tag = bytes_[at++];
    uint64_t key = tag >> kKeyShift;
    if (key == kInlineKeys) {
      if (!GetVarint(at, key)) return false;
      key += kInlineKeys;
    }
    if (key >= keys_.size()) return false;
    arg.key = keys_[key];
    arg.is_double = (tag & kDouble) != 0;
    arg.is_counter = (tag & kCounter) != 0;
    arg.is_string = (tag & kString) != 0;
    arg.truncated = (tag & kTruncated) != 0;
    if (arg.is_double) {
      if (bytes_.size() - at < sizeof(double)) return false;
      std::memcpy(&arg.double_value, bytes_.data() + at, sizeof(double));
      at += sizeof(double);
    } else {
      uint64_t zigzag = 0;
      if (!GetVarint(at, zigzag)) return false;
      arg.int_value = static_cast<int64_t>((zigzag >> 1) ^ (0 - (zigzag & 1)));
    }
    if ((tag & kHasText) != 0) {
      uint64_t text = 0;
      if (!GetVarint(at, text) || text >= texts_.size()) return false;
      arg.text = texts_[text];
    }
    return true;
  }

  uint32_t KeyIndex(const ArgKey& key) {
    // Keys are interned: one name, one address (a second copy of the
    // library has a table of its own, so a name may take two indices;
    // decoding gives each its own name back either way).
    const void* const address = key.data();
    const auto [it, added] =
        key_index_.emplace(address, static_cast<uint32_t>(keys_.size()));
    if (added) keys_.push_back(key);
    return it->second;
  }

  void PutVarint(uint64_t value) {
    while (value >= 0x80) {
      bytes_.push_back(static_cast<uint8_t>(value | 0x80));
      value >>= 7;
    }
    bytes_.push_back(static_cast<uint8_t>(value));
  }

  bool GetVarint(size_t& at, uint64_t& value) const {
    value = 0;
    for (uint32_t shift = 0; shift < 64 && at < bytes_.size(); shift += 7) {
      const uint8_t byte = bytes_[at++];
      value |= static_cast<uint64_t>(byte & 0x7f) << shift;
      if ((byte & 0x80) == 0) return true;
    }
    return false;
  }

  std::vector<uint8_t> bytes_;
  std::vector<ArgKey> keys_;
  std::unordered_map<const void*, uint32_t> key_index_;
  std::vector<ArgText> texts_;
  bool any_counter_ = false;
};

}  // namespace spanprof::internal

#endif  // SPANPROF_INTERNAL_PACKED_ARGS_H_
