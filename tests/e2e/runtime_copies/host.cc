// runtime_copies_host PLUGIN before|after: records a session that calls a
// plugin's spans, with the plugin opened (RTLD_LOCAL) before or after the
// recording starts, and prints how many spans of each it captured. Built
// twice by the tests: against the static runtime (the plugin has a second
// copy: its spans are lost, and spanprof must say so on stderr) and against
// a shared libspanprof_runtime (one runtime: the plugin's spans are there).
#include <dlfcn.h>

#include <cstdio>
#include <cstring>
#include <string>

#include "spanprof/recording.h"
#include "spanprof/span.h"

namespace {

using PluginWork = void (*)(int);

PluginWork OpenPlugin(const char* path) {
  void* plugin = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (plugin == nullptr) {
    std::fprintf(stderr, "runtime_copies_host: %s\n", dlerror());
    return nullptr;
  }
  return reinterpret_cast<PluginWork>(
      dlsym(plugin, "runtime_copies_plugin_work"));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3 || (std::strcmp(argv[2], "before") != 0 &&
                    std::strcmp(argv[2], "after") != 0)) {
    std::fprintf(stderr, "usage: runtime_copies_host PLUGIN before|after\n");
    return 2;
  }
  const bool before = std::strcmp(argv[2], "before") == 0;
  PluginWork work = before ? OpenPlugin(argv[1]) : nullptr;
  if (before && work == nullptr) return 1;
  if (const absl::Status s = spanprof::StartRecording({}); !s.ok()) {
    std::fprintf(stderr, "runtime_copies_host: %s\n",
                 std::string(s.message()).c_str());
    return 1;
  }
  {
    SPANPROF_SCOPE("host.root");
    if (!before) work = OpenPlugin(argv[1]);
    if (work == nullptr) return 1;
    work(1000);
  }
  const spanprof::Capture capture = spanprof::StopRecording();
  int host = 0;
  int plugin = 0;
  for (const spanprof::Span& span : capture.spans) {
    const std::string& name = capture.sites[span.site].name;
    if (name == "host.root") ++host;
    if (name == "plugin.work") ++plugin;
  }
  std::printf("host.root spans: %d\nplugin.work spans: %d\n", host, plugin);
  return 0;
}
