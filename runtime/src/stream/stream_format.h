// stream_format.h — the one description of the `spanprof.stream` file
// (version 1), shared by its writer (the session's drain thread) and its
// reader (`spanprof recover`). docs/formats.md ("Stream") explains it field
// by field.
//
// A stream is a 32-byte file header, then chunks. Each chunk is a 32-byte
// header and a payload; its checksum covers both, so a torn or corrupt chunk
// is skipped and counted, never trusted. Integers are little-endian.
//
// Example:
//
//   StreamEncoder e;
//   e.U64(position);
//   AppendChunk(kChunkRecords, slot, seq, e.bytes(), &out);
#ifndef SPANPROF_RUNTIME_SRC_STREAM_STREAM_FORMAT_H_
#define SPANPROF_RUNTIME_SRC_STREAM_STREAM_FORMAT_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

namespace spanprof::internal {

// The file header: the magic text, then the version and header size (u32
// each), then 8 reserved zero bytes.
inline constexpr std::string_view kStreamMagic = "spanprof.stream\n";
inline constexpr uint32_t kStreamVersion = 1;
inline constexpr size_t kStreamHeaderBytes = 32;

// A chunk header: magic, kind, slot, payload size (u32 each), sequence
// number (u64), checksum (u32: CRC-32C of the header's first 24 bytes and
// the payload), reserved (u32, zero).
inline constexpr uint32_t kChunkMagic = 0x4B435053;  // "SPCK"
inline constexpr size_t kChunkHeaderBytes = 32;
// A payload is at most this large (the writer splits larger batches).
inline constexpr uint32_t kMaxChunkPayload = 8u << 20;

enum ChunkKind : uint32_t {
  kChunkSession = 1,   // the session's description (first chunk)
  kChunkSites = 2,     // u32 first id, u32 count, 7 strings a site
  kChunkCounters = 3,  // u32 first id, u32 count, a string each
  kChunkThread = 4,    // u64 OS tid, string name (slot: the thread)
  kChunkRecords = 5,   // u64 first position, 16-byte records
  kChunkSide = 6,      // u64 first index, 32-byte side records
  kChunkClock = 7,     // u64 TSC, u64 CLOCK_MONOTONIC ns: a clock pair
  kChunkDrops = 8,     // u64 dropped args, u32 n, n x (u32 site, u64 spans)
  kChunkEnd = 9,       // string: how the session ended
  kChunkScopes = 10,   // u64 from, u32 n, n x (u64 push index, u64 pop
                       // index, 32-byte push): a flight recorder's scopes
                       // that began before side record `from` and were
                       // still open there
};

// CRC-32C (Castagnoli, reflected: iSCSI's and ext4's), with the SSE4.2
// instruction where the CPU has it (8 bytes a step: the drain copies every
// record through it) and a table elsewhere; both give the same value.
class Crc32c {
 public:
  static constexpr std::array<uint32_t, 256> MakeTable() {
    std::array<uint32_t, 256> table{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k)
        c = (c & 1u) ? 0x82F63B78u ^ (c >> 1) : c >> 1;
      table[i] = c;
    }
    return table;
  }
  void Update(const void* data, size_t size) {
    const auto* p = static_cast<const unsigned char*>(data);
#if defined(__x86_64__)
    if (HasSse42()) {
      state_ = UpdateSse42(state_, p, size);
      return;
    }
#endif
    state_ = UpdateTable(state_, p, size);
  }
  uint32_t value() const { return state_ ^ 0xFFFFFFFFu; }

  // The register after `size` bytes from `state`, a byte at a time from the
  // table (any CPU; tests compare the instruction's paths with it).
  static uint32_t UpdateTable(uint32_t state, const unsigned char* p,
                              size_t size) {
    static constexpr std::array<uint32_t, 256> kTable = MakeTable();
    for (size_t i = 0; i < size; ++i) {
      state = kTable[(state ^ p[i]) & 0xFFu] ^ (state >> 8);
    }
    return state;
  }

#if defined(__x86_64__)
  static bool HasSse42() {
    static const bool has = __builtin_cpu_supports("sse4.2") != 0;
    return has;
  }

  // The register after `size` bytes from `state`, with the instruction. From
  // three lanes of kLane bytes up, three CRCs run side by side: the
  // instruction takes three cycles but can start every cycle, so one chain
  // leaves two thirds of the unit idle. The CRC register is linear in its
  // start and its data, so the lanes join as shift(shift(a) ^ b) ^ c, where
  // shift() is the register after kLane zero bytes (Shift()'s tables).
  __attribute__((target("sse4.2"))) static uint32_t UpdateSse42(
      uint32_t state, const unsigned char* p, size_t size) {
    uint64_t c = state;
    if (size >= 3 * kLane) {
      const LaneShift& shift = Shift();
      for (; size >= 3 * kLane; size -= 3 * kLane, p += 3 * kLane) {
        uint64_t a = c;
        uint64_t b = 0;
        uint64_t d = 0;
        for (size_t i = 0; i < kLane; i += 8) {
          uint64_t w0 = 0;
          uint64_t w1 = 0;
          uint64_t w2 = 0;
          std::memcpy(&w0, p + i, 8);
          std::memcpy(&w1, p + kLane + i, 8);
          std::memcpy(&w2, p + 2 * kLane + i, 8);
          a = __builtin_ia32_crc32di(a, w0);
          b = __builtin_ia32_crc32di(b, w1);
          d = __builtin_ia32_crc32di(d, w2);
        }
        const uint32_t ab =
            shift.Apply(static_cast<uint32_t>(a)) ^ static_cast<uint32_t>(b);
        c = shift.Apply(ab) ^ static_cast<uint32_t>(d);
      }
    }
    for (; size >= 8; size -= 8, p += 8) {
      uint64_t word = 0;
      std::memcpy(&word, p, 8);
      c = __builtin_ia32_crc32di(c, word);
    }
    auto c32 = static_cast<uint32_t>(c);
    for (; size > 0; --size, ++p) c32 = __builtin_ia32_crc32qi(c32, *p);
    return c32;
  }
#endif

 private:
#if defined(__x86_64__)
  static constexpr size_t kLane = 4096;

  // shift(s) = the register after kLane zero bytes from s, as four tables
  // by byte of s (linear: the XOR of each byte's share).
  struct LaneShift {
    uint32_t table[4][256];
    uint32_t Apply(uint32_t s) const {
      return table[0][s & 0xFFu] ^ table[1][(s >> 8) & 0xFFu] ^
             table[2][(s >> 16) & 0xFFu] ^ table[3][s >> 24];
    }
  };
  // Built once: the shift of each of the 32 bits (kLane / 8 instructions
  // each), then every byte value as the XOR of its bits' shifts. (A lambda
  // would not inherit the target attribute the instruction needs.)
  __attribute__((target("sse4.2"))) static LaneShift BuildShift() {
    uint32_t bit[32];
    for (int k = 0; k < 32; ++k) {
      uint64_t r = uint64_t{1} << k;
      for (size_t i = 0; i < kLane; i += 8) r = __builtin_ia32_crc32di(r, 0);
      bit[k] = static_cast<uint32_t>(r);
    }
    LaneShift built{};
    for (int j = 0; j < 4; ++j) {
      for (uint32_t v = 0; v < 256; ++v) {
        uint32_t x = 0;
        for (int k = 0; k < 8; ++k) {
          if ((v >> k) & 1u) x ^= bit[8 * j + k];
        }
        built.table[j][v] = x;
      }
    }
    return built;
  }
  static const LaneShift& Shift() {
    static const LaneShift shift = BuildShift();
    return shift;
  }
#endif
  uint32_t state_ = 0xFFFFFFFFu;
};

inline void PutU32(unsigned char* at, uint32_t v) {
  for (int i = 0; i < 4; ++i) at[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline void PutU64(unsigned char* at, uint64_t v) {
  for (int i = 0; i < 8; ++i) at[i] = static_cast<unsigned char>(v >> (8 * i));
}
inline uint32_t GetU32(const unsigned char* at) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; --i) v = (v << 8) | at[i];
  return v;
}
inline uint64_t GetU64(const unsigned char* at) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | at[i];
  return v;
}

// The checksum of a chunk: its header's first 24 bytes, then the payload.
inline uint32_t ChunkChecksum(const unsigned char* header, const void* payload,
                              size_t size) {
  Crc32c crc;
  crc.Update(header, 24);
  crc.Update(payload, size);
  return crc.value();
}

// Builds a payload.
class StreamEncoder {
 public:
  void U32(uint32_t v) {
    unsigned char b[4];
    PutU32(b, v);
    bytes_.append(reinterpret_cast<const char*>(b), 4);
  }
  void U64(uint64_t v) {
    unsigned char b[8];
    PutU64(b, v);
    bytes_.append(reinterpret_cast<const char*>(b), 8);
  }
  // A string: u32 size, then its bytes.
  void String(std::string_view s) {
    U32(static_cast<uint32_t>(s.size()));
    bytes_.append(s);
  }
  void Raw(const void* data, size_t size) {
    bytes_.append(static_cast<const char*>(data), size);
  }
  const std::string& bytes() const { return bytes_; }
  void clear() { bytes_.clear(); }
  // Gives the buffer's memory back (assigning an empty encoder would not:
  // a string moved from a short one keeps its own capacity).
  void Release() { std::string().swap(bytes_); }
  size_t capacity() const { return bytes_.capacity(); }

 private:
  std::string bytes_;
};

// Reads a payload; every read past the end fails (and keeps failing).
class StreamDecoder {
 public:
  explicit StreamDecoder(std::string_view bytes) : bytes_(bytes) {}
  bool U32(uint32_t* v) {
    if (!Has(4)) return false;
    *v = GetU32(Here());
    at_ += 4;
    return true;
  }
  bool U64(uint64_t* v) {
    if (!Has(8)) return false;
    *v = GetU64(Here());
    at_ += 8;
    return true;
  }
  bool String(std::string* s) {
    uint32_t size = 0;
    if (!U32(&size) || !Has(size)) return ok_ = false;
    s->assign(bytes_.data() + at_, size);
    at_ += size;
    return true;
  }
  // `size` raw bytes into `out` (a trivially copyable record).
  bool Raw(void* out, size_t size) {
    if (!Has(size)) return false;
    std::memcpy(out, bytes_.data() + at_, size);
    at_ += size;
    return true;
  }
  std::string_view Rest() const { return bytes_.substr(at_); }
  bool ok() const { return ok_; }

 private:
  bool Has(size_t n) {
    if (!ok_ || bytes_.size() - at_ < n) return ok_ = false;
    return true;
  }
  const unsigned char* Here() const {
    return reinterpret_cast<const unsigned char*>(bytes_.data() + at_);
  }
  std::string_view bytes_;
  size_t at_ = 0;
  bool ok_ = true;
};

// Appends a whole chunk to `out`: its header, then a payload of two parts
// (`head`, then `body`: records copied straight from where they are).
inline void AppendChunk(uint32_t kind, uint32_t slot, uint64_t seq,
                        std::string_view head, std::string_view body,
                        std::string* out) {
  unsigned char header[kChunkHeaderBytes] = {};
  PutU32(header, kChunkMagic);
  PutU32(header + 4, kind);
  PutU32(header + 8, slot);
  PutU32(header + 12, static_cast<uint32_t>(head.size() + body.size()));
  PutU64(header + 16, seq);
  Crc32c crc;
  crc.Update(header, 24);
  crc.Update(head.data(), head.size());
  crc.Update(body.data(), body.size());
  PutU32(header + 24, crc.value());
  out->append(reinterpret_cast<const char*>(header), sizeof(header));
  out->append(head);
  out->append(body);
}
inline void AppendChunk(uint32_t kind, uint32_t slot, uint64_t seq,
                        std::string_view payload, std::string* out) {
  AppendChunk(kind, slot, seq, payload, {}, out);
}

// The file header.
inline std::string StreamFileHeader() {
  std::string header(kStreamMagic);
  unsigned char rest[16] = {};
  PutU32(rest, kStreamVersion);
  PutU32(rest + 4, static_cast<uint32_t>(kStreamHeaderBytes));
  header.append(reinterpret_cast<const char*>(rest), sizeof(rest));
  return header;
}

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SRC_STREAM_STREAM_FORMAT_H_
