// plot_flame_command.h — `spanprof plot flame` (private to the CLI).
#ifndef SPANPROF_CLI_SRC_PLOT_FLAME_COMMAND_H_
#define SPANPROF_CLI_SRC_PLOT_FLAME_COMMAND_H_

#include <string>
#include <vector>

#include "commands.h"

namespace spanprof::cli::internal {

// `FlameFigure()` runs `spanprof plot flame` with `args` after "flame":
// `TRACE... [-o OUT.svg] [--icicle] [--merge-threads] [--width PX]`, or
// `--diff BASE CAND`, each side a trace or a directory of runs' traces.
int FlameFigure(const std::vector<std::string>& args, const CommandIo& io);

// The flags `plot flame` accepts (for the help test, through PlotFlagSpecs).
std::vector<FlagSpec> FlameFlagSpecs();

}  // namespace spanprof::cli::internal

#endif  // SPANPROF_CLI_SRC_PLOT_FLAME_COMMAND_H_
