// Each copy of the runtime announces itself with an ELF note (section
// .note.spanprof, in a PT_NOTE segment of whatever object links it) whose
// descriptor is the link-time offset of the copy's `RuntimeCopyRecord`. A
// copy finds the others by walking the program headers of every loaded
// object (dl_iterate_phdr): no symbol lookup, so copies in the executable
// (whose symbols are not exported) and in plugins opened with RTLD_LOCAL are
// found alike, and the offset needs no relocation (the record is hidden), so
// a note is valid the moment its object is mapped.
//
// Two checks use it, so that no copy's spans are lost without a word:
//   * a recording that starts names every other copy loaded then;
//   * a copy loaded later (dlopen) says so from its static initializer when
//     another copy records at that moment.
#include "recorder/runtime_copies.h"

#include <dlfcn.h>
#include <link.h>
#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "spanprof/internal/recorder.h"

namespace spanprof::internal {

// The record a note points to. Layout v1 is fixed: copies of other spanprof
// versions read it.
struct RuntimeCopyRecord {
  uint32_t magic;
  uint32_t version;
  const std::atomic<uint32_t>* epoch;  // the copy's g_epoch
};

}  // namespace spanprof::internal

namespace {
constexpr uint32_t kRuntimeCopyMagic = 0x53505246;  // "SPRF"
}  // namespace

// Hidden, so the note's offset to it is fixed at link time in every object.
extern "C" __attribute__((visibility("hidden"), used))
const spanprof::internal::RuntimeCopyRecord spanprof_runtime_copy_record = {
    kRuntimeCopyMagic, 1, &spanprof::internal::g_epoch};

// A static link pulls this object out of the archive only for a symbol that
// is still undefined: the runtime's CMake target asks every consumer for this
// one (runtime/CMakeLists.txt), so each module that links the runtime
// carries the note and the load-time check below.
extern "C" __attribute__((used)) const int spanprof_runtime_copy_anchor = 1;

// n_namesz 9 ("spanprof\0"), n_descsz 8, n_type 1, the name padded to 12
// bytes, then the offset from the descriptor to the record.
asm(".pushsection .note.spanprof,\"a\",@note\n"
    ".balign 4\n"
    ".long 9\n"
    ".long 8\n"
    ".long 1\n"
    ".asciz \"spanprof\"\n"
    ".balign 4\n"
    ".quad spanprof_runtime_copy_record - .\n"
    ".popsection\n");

namespace spanprof::internal {
namespace {

constexpr char kNoteName[] = "spanprof";
constexpr uint32_t kNoteType = 1;

struct FoundCopy {
  const RuntimeCopyRecord* record;
  std::string object;
};

std::string ExecutablePath() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "the executable";
  return std::string(path, static_cast<size_t>(n));
}

uint64_t AlignUp(uint64_t n, uint64_t align) {
  return (n + align - 1) & ~(align - 1);
}

// The name of the object `info` describes; the executable's (which the
// loader leaves empty) is read from /proc only when asked for.
std::string ObjectName(const dl_phdr_info& info) {
  return info.dlpi_name != nullptr && info.dlpi_name[0] != '\0'
             ? info.dlpi_name
             : ExecutablePath();
}

// The records announced by the notes of one PT_NOTE segment, but this copy's
// own: every program start scans the executable, and naming it costs a
// readlink that a program run without spanprof should not pay.
void ScanNotes(const char* begin, const char* end, uint64_t align,
               const dl_phdr_info& object, std::vector<FoundCopy>* found) {
  const char* p = begin;
  while (end - p >= 12) {
    uint32_t header[3];  // n_namesz, n_descsz, n_type
    std::memcpy(header, p, sizeof(header));
    const char* name = p + 12;
    const uint64_t name_size = AlignUp(header[0], align);
    const uint64_t desc_size = AlignUp(header[1], align);
    if (name_size + desc_size > static_cast<uint64_t>(end - name)) return;
    const char* desc = name + name_size;
    if (header[2] == kNoteType && header[0] == sizeof(kNoteName) &&
        header[1] == sizeof(int64_t) &&
        std::memcmp(name, kNoteName, sizeof(kNoteName)) == 0) {
      int64_t offset = 0;
      std::memcpy(&offset, desc, sizeof(offset));
      const auto* record =
          reinterpret_cast<const RuntimeCopyRecord*>(desc + offset);
      if (record != &spanprof_runtime_copy_record &&
          record->magic == kRuntimeCopyMagic && record->version >= 1) {
        found->push_back(FoundCopy{record, ObjectName(object)});
      }
    }
    p = desc + desc_size;
  }
}

int VisitObject(dl_phdr_info* info, size_t /*size*/, void* data) {
  auto* found = static_cast<std::vector<FoundCopy>*>(data);
  for (ElfW(Half) i = 0; i < info->dlpi_phnum; ++i) {
    const ElfW(Phdr)& ph = info->dlpi_phdr[i];
    if (ph.p_type != PT_NOTE) continue;
    // The loader maps the segment at the object's base plus its address.
    const char* begin =
        reinterpret_cast<const char*>(  // NOLINT(performance-no-int-to-ptr)
            info->dlpi_addr + ph.p_vaddr);
    ScanNotes(begin, begin + ph.p_memsz, ph.p_align == 8 ? 8 : 4, *info, found);
  }
  return 0;
}

std::vector<FoundCopy> OtherCopies() {
  std::vector<FoundCopy> found;
  dl_iterate_phdr(VisitObject, &found);
  std::vector<FoundCopy> others;
  for (FoundCopy& copy : found) {
    if (copy.record != &spanprof_runtime_copy_record) {
      others.push_back(std::move(copy));
    }
  }
  return others;
}

// This copy's object (the executable or a shared object).
std::string OwnObject() {
  Dl_info info{};
  if (dladdr(&spanprof_runtime_copy_record, &info) != 0 &&
      info.dli_fname != nullptr && info.dli_fname[0] != '\0') {
    return info.dli_fname;
  }
  return ExecutablePath();
}

constexpr char kAdvice[] =
    "link one shared spanprof runtime (-DBUILD_SHARED_LIBS=ON) into every "
    "module of the process (docs/c-api.md, \"One runtime per process\")";

// A copy loaded while another records: its spans go nowhere. The check runs
// when the object is loaded (at program start or in dlopen, under the
// loader's lock, so no other object is half-loaded meanwhile).
struct LoadTimeCheck {
  LoadTimeCheck() noexcept {
    try {
      for (const FoundCopy& other : OtherCopies()) {
        if (other.record->epoch->load(std::memory_order_relaxed) == 0) {
          continue;
        }
        std::fprintf(stderr,
                     "spanprof: warning: a second copy of the spanprof "
                     "runtime was loaded (in %s) while the copy in %s "
                     "records; spans recorded through the second copy are "
                     "lost: %s\n",
                     OwnObject().c_str(), other.object.c_str(), kAdvice);
        return;
      }
    } catch (...) {  // NOLINT(bugprone-empty-catch): only a warning is lost
    }
  }
};
const LoadTimeCheck load_time_check;

}  // namespace

std::vector<RuntimeCopy> OtherRuntimeCopies() {
  std::vector<RuntimeCopy> copies;
  for (const FoundCopy& other : OtherCopies()) {
    copies.push_back(
        RuntimeCopy{other.object,
                    other.record->epoch->load(std::memory_order_relaxed) != 0});
  }
  return copies;
}

void WarnAboutOtherRuntimeCopies() {
  static auto* mu = new std::mutex();
  static auto* warned = new std::set<std::string>();
  std::vector<RuntimeCopy> copies;
  try {
    copies = OtherRuntimeCopies();
  } catch (...) {  // NOLINT(bugprone-empty-catch): only a warning is lost
    return;
  }
  const std::lock_guard<std::mutex> lock(*mu);
  for (const RuntimeCopy& copy : copies) {
    if (!warned->insert(copy.object).second) continue;
    std::fprintf(stderr,
                 "spanprof: warning: %s carries a second copy of the "
                 "spanprof runtime; this recording (the copy in %s) does not "
                 "see the spans recorded through it, which are lost: %s\n",
                 copy.object.c_str(), OwnObject().c_str(), kAdvice);
  }
}

}  // namespace spanprof::internal
