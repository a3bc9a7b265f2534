// The plugin that runtime_copies_host opens: 1,000 spans per call, recorded
// through whichever runtime the plugin was linked with.
#include "spanprof/span.h"

extern "C" __attribute__((visibility("default"))) void
runtime_copies_plugin_work(int spans) {
  for (int i = 0; i < spans; ++i) {
    SPANPROF_SCOPE("plugin.work");
  }
}
