// The test captures moved to tests/testing/captures.h, the home of the helpers
// that the analysis, CLI, runtime and e2e tests share. This header only
// forwards there, so that a test written against the old path still builds;
// include the new path.
#include "tests/testing/captures.h"  // IWYU pragma: export
