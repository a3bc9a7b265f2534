// spanprof/tags.h — the optional labels of a span.
//
// A span is grouped by its name plus these tags, in the summary, the table
// and the regression gate. Tags are written as a braced initializer of string
// literals next to the span's name.
//
// clang-format off
// Example:
//
//   #include <spanprof/span.h>
//
//   void Load();  // the program's
//
//   SPANPROF_SCOPE("model.forward", {.phase = "forward", .module = "encoder"});
//   spanprof::Run("input.load", {.phase = "input", .activity = "load"},
//                 [&] { Load(); });
//   SPANPROF_SCOPE("kernel.matmul", {.phase = "compute", .backend = "cuda",
//                                    .dtype = "f16", .device = "gpu0"});
// clang-format on
#ifndef SPANPROF_TAGS_H_
#define SPANPROF_TAGS_H_

namespace spanprof {

// `Tags` are the optional labels of a span: `phase`, `module`, `activity`,
// and the key fields of work that runs somewhere specific: `backend` (e.g.
// "cuda"), `dtype` (e.g. "f16") and `device` (e.g. "gpu0"). Each is a string
// literal (or any string with static storage duration: sites keep the
// pointer); empty means unset. Spans group by name + all six tags. Designated
// initializers name the fields in this order. A plain aggregate: copy it
// freely, on any thread.
struct Tags {
  const char* phase = "";
  const char* module = "";
  const char* activity = "";
  const char* backend = "";
  const char* dtype = "";
  const char* device = "";
};

}  // namespace spanprof

#endif  // SPANPROF_TAGS_H_
