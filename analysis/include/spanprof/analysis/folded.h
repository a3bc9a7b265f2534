// spanprof/analysis/folded.h — folded stacks for flame graphs.
//
// `FoldedStacks()` renders a capture in the folded format that Brendan
// Gregg's flamegraph.pl, inferno and speedscope read: one line per distinct
// stack, `root;child;leaf self_ns`, frames named after the spans. The value is
// self time in nanoseconds, so a flame graph's widths add up to the recorded
// thread time.
//
// Stacks follow each span's parent, on the same thread or not: a task run on a
// pool thread under `spanprof::Bind` appears under the span that submitted it.
// Equal stacks are summed; lines are sorted by stack; stacks whose self time is
// 0 are left out. Both tools split frames on ';' unconditionally, so a ';' in a
// span name is written as ':' (and control characters as ' ').
//
// clang-format off
// Example:
//
//   spanprof::Capture capture = ...;
//   std::string folded = spanprof::analysis::FoldedStacks(capture);
//   // "app.run;solver.expand 1200345\napp.run;source.read 89012\n"
// clang-format on
#ifndef SPANPROF_ANALYSIS_FOLDED_H_
#define SPANPROF_ANALYSIS_FOLDED_H_

#include <string>
#include <string_view>

#include "spanprof/capture.h"

namespace spanprof::analysis {

// `FoldedFrameName()` is the frame text of a span name (';' → ':', control
// characters → ' ').
std::string FoldedFrameName(std::string_view name);

// `FoldedStacks()` renders the folded stacks of `capture` (pure).
std::string FoldedStacks(const Capture& capture);

}  // namespace spanprof::analysis

#endif  // SPANPROF_ANALYSIS_FOLDED_H_
