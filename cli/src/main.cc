// The `spanprof` command: a thin main over the embeddable router.
#include "spanprof/cli/router.h"

int main(int argc, char** argv) { return spanprof::cli::Run(argc, argv); }
