// The `process_resources` object's writer. Its reader is in
// process_resources_reader.cc: the session end writes summaries and traces
// but reads no JSON, so a program that links spanprof statically takes this
// object without the reader's reference to simdjson (and, linked
// --as-needed, never loads libsimdjson.so).
#include "resources/process_resources.h"

#include "json/json_writer.h"
#include "spanprof/capture.h"

namespace spanprof::analysis::internal {

void WriteProcessResources(JsonWriter& w, const ProcessResources& resources) {
  w.BeginObject();
  for (const ResourceField& field : kResourceFields) {
    w.Key(field.name);
    w.Int(resources.*field.member);
  }
  w.EndObject();
}

}  // namespace spanprof::analysis::internal
