// `spanprof plot`: a placeholder route until the SVG figures land
// (analysis/src/svg_plot.cc). Replace `RunPlot` and its row in router.cc.
#include <string>
#include <vector>

#include "commands.h"
#include "spanprof/cli/router.h"

namespace spanprof::cli::internal {

int RunPlot(const std::vector<std::string>& /*args*/, const CommandIo& io) {
  io.err << io.program << " plot: not yet available\n";
  return kExitUsage;
}

}  // namespace spanprof::cli::internal
