#include <spanprof/spanprof.h>

int main() {
  return spanprof::ProfileFromEnvironment("consumer.main", [] {
    for (int i = 0; i < 3; ++i) {
      SPANPROF_SCOPE("consumer.work", {.phase = "work"});
      spanprof::Heartbeat();
    }
    return 0;
  });
}
