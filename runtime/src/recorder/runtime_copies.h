// One runtime per process: finding the other copies of the spanprof runtime
// that a process holds (a plugin linked with its own static spanprof), so
// that their spans are never lost without a word (docs/architecture.md,
// "One runtime per process").
#ifndef SPANPROF_RUNTIME_SRC_RECORDER_RUNTIME_COPIES_H_
#define SPANPROF_RUNTIME_SRC_RECORDER_RUNTIME_COPIES_H_

#include <string>
#include <vector>

namespace spanprof::internal {

// A copy of the runtime found in a loaded object of this process.
struct RuntimeCopy {
  std::string object;  // the file of the executable or shared object
  bool recording = false;
};

// `OtherRuntimeCopies()` lists the copies of the runtime in this process
// other than the calling one (each announces itself with an ELF note, so
// copies in the executable and in objects opened with RTLD_LOCAL are found
// alike). Walks the loaded objects (dl_iterate_phdr): microseconds; not for
// the hot path.
std::vector<RuntimeCopy> OtherRuntimeCopies();

// `WarnAboutOtherRuntimeCopies()` prints, once per object, on stderr, which
// other loaded objects carry a copy of the runtime whose spans this
// recording will not see. Called when a recording starts.
void WarnAboutOtherRuntimeCopies();

}  // namespace spanprof::internal

#endif  // SPANPROF_RUNTIME_SRC_RECORDER_RUNTIME_COPIES_H_
