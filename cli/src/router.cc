// The `spanprof` router: one table of commands, usage text, dispatch.
#include "spanprof/cli/router.h"

#include <iostream>
#include <new>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "commands.h"
#include "spanprof/internal/closest_name.h"
#include "trace_input.h"

namespace spanprof::cli {
namespace internal {
namespace {

// The project's version (CMake's PROJECT_VERSION), for `spanprof --version`.
constexpr std::string_view kVersion = SPANPROF_VERSION_STRING;

// The command table, in the order of the usage text.
constexpr Command kCommands[] = {
    {"compare",
     "compare BASE CAND [--metric M] [--absolute-tolerance ABS] "
     "[--relative-tolerance REL | --relative-tolerance-bps BPS] [--json OUT] "
     "[--fail-on-new] [--fail-on-missing] [--allow-missing] "
     "[--allow-incomplete] [--confidence C] [--fail-on-unknown] "
     "[--group-by-arg ARG] [--format FORMAT]",
     "regression gate: compare two summaries (or two directories of runs)",
     R"(Compares the rows of two summaries, matched by their full key (name +
phase + module + activity + backend + dtype + device), on one metric. A row REGRESSES only when the
increase Δ = CAND − BASE exceeds both tolerances:
    Δ > ABS   and   Δ × 10000 > BPS × BASE
(integer arithmetic, BPS = REL in basis points; a zero baseline regresses on
any Δ > ABS). An improvement
is the mirror image; anything else is within tolerance. The defaults, 5% and
500us on a duration metric, let two runs of one binary pass on a quiet
machine; a count metric is exact (0 and 0). Keys only in CAND are "new",
keys only in BASE "missing"; they fail the gate only with the --fail-on-*
switches. Allocation and counter metrics
are "not_measured" when a side did not measure them (no spanprof::alloc; no
row of that side has the counter, as in a version 1 summary).

Evidence: the gate FAILS, with a line saying why, when the candidate has no
spans, when the two sides have no row in common, or when the rows missing
from CAND held more than 10% of BASE's recorded thread time (their self_ns),
unless --allow-missing. It warns on stderr when host, clock, program
(process_name) or source differ. BASE and CAND may also be traces (spanprof's
own, or foreign Chrome Trace Event files such as clang -ftime-trace output):
they are summarized first.

Repeated runs: when BASE or CAND is a directory, each spanprof summary in it
(*.json declaring schema spanprof.summary; other files are skipped with a
note; summaries of different programs, or one capture twice, are refused)
is one run, and each row's metric is a sample over the runs. The shift
CAND − BASE (Hodges-Lehmann) and its interval (Mann-Whitney) decide (under
6 runs a side, Welch's t on log values: from 3 runs a side), at
--confidence over the whole table (Bonferroni: each of k tested rows at
1 − (1 − C)/k), with T = max(ABS, BPS × median(BASE) / 10000):
    regressed  the whole interval above T      improved  below −T
    same       the whole interval inside ±T    unknown   neither
An "unknown" row says roughly how many runs per side would decide it; it
fails the gate only with --fail-on-unknown. A metric with no spread over
the runs (heartbeats, allocations, counters) is decided exactly. Runs are
made with `spanprof run` or `spanprof ab`.

Options:
  --metric M                    total_ns self_ns mean_ns median_ns p95_ns
                                p99_ns max_ns total_heartbeats
                                self_heartbeats alloc_count alloc_bytes, or
                                counter:NAME (the rows' inclusive totals of
                                SPANPROF_COUNT counter NAME; a row without it
                                counts 0; a NAME neither summary has is a
                                usage error) (default p95_ns)
  --absolute-tolerance ABS      a duration with a unit ns, us, ms, s (50us,
                                1.5ms) or an integer in the metric's unit
                                (ns for durations); default 500us for
                                duration metrics, 0 for counts and for
                                directories of runs
  --relative-tolerance REL      a percentage (5%, 2.5%) or a fraction (0.05)
                                of the baseline; default 5% for duration
                                metrics and for directories of runs, else 0
  --relative-tolerance-bps BPS  the same in basis points (1000 = 10%)
  --json OUT                    also write a spanprof.comparison document
  --format table|github         print the human table (default) or GitHub
                                Actions commands: ::error for regressed
                                rows, ::warning for unknown ones
  --junit OUT.xml               also write a JUnit XML report (a test case
                                per row, failure = regressed)
  --fail-on-new                 fail when CAND has keys BASE lacks
  --fail-on-missing             fail when BASE has keys CAND lacks (any)
  --allow-missing               pass without evidence: an empty candidate,
                                no row in common, missing rows over 10% of
                                BASE's time
  --allow-incomplete            compare summaries with dropped spans or args,
                                unfinished spans or validation issues
                                (refused otherwise)
  --confidence C                repeated runs: the interval's confidence,
                                between 0.5 and 1, default 0.95
  --fail-on-unknown             repeated runs: fail on rows the runs cannot
                                decide
  --group-by-arg ARG            traces: key spans that have a string
                                argument ARG (SPANPROF_ARG_STR, or a foreign
                                trace's) by "NAME [ARG=value]" (clang
                                -ftime-trace: --group-by-arg detail gives a
                                row per source file)
  --format FORMAT               table (default), csv, tsv, json, jsonl (the
                                rows, numbers in ns) or md (for
                                $GITHUB_STEP_SUMMARY: a verdict line, then
                                the rows that moved)

Exit: 0 pass, 1 regression (or --fail-on-* policy failure, or no evidence),
2 usage error or unreadable, invalid or incomplete summary, or a directory
with no summary, of two programs or with one capture twice.

Example:
  spanprof compare base.json cand.json --metric p95_ns \
      --absolute-tolerance 500us --relative-tolerance 10% --json cmp.json
)",
     RunCompare, CompareFlagSpecs},
    {"report",
     "report FILE [--wide] [--sort COLUMN] [--top N] [--filter REGEX] "
     "[--group-by-arg ARG] [--format FORMAT]",
     "print the table of a summary or a trace",
     R"(Prints the console table (the one a session prints at its end) from a
summary, or from a trace by summarizing it first. The kind of FILE is detected
from its content; .json.gz traces are read too, and so are foreign Chrome
Trace Event files (clang -ftime-trace, node --trace-events-enabled, Chrome):
their X and B/E events are the spans, and what else they hold is skipped with
a note on stderr. Named counters get a column
each (the three largest; inclusive totals); heavy-tailed rows are marked
"heavy", with a note on what to do next (a size argument, spanprof scaling).
Counts have their digits grouped (4,000,000); the Calls and Self HB columns
widen to fit them.

Options:
  --wide                        do not cut labels at 40 characters: the Name
                                column is as wide as the longest label
  --sort COLUMN                 order rows by self (the default), total,
                                calls, mean, median, p95, p99, max,
                                heartbeats or share (largest first), or
                                name (A to Z)
  --top N                       show the first N rows (after --filter and
                                --sort); a line says how many are not shown
  --filter REGEX                show only rows whose label matches REGEX
                                (ECMAScript syntax, anywhere in the label:
                                'parse|lex', '^model\.')
  --group-by-arg ARG            traces: key spans that have a string
                                argument ARG (SPANPROF_ARG_STR, or a foreign
                                trace's) by "NAME [ARG=value]" (clang
                                -ftime-trace: --group-by-arg detail gives a
                                row per source file)
  --format FORMAT               table (default), csv, tsv, md, json or
                                jsonl: the rows with numbers in ns

Exit: 0 printed, 2 usage error or unreadable or invalid file.

Example:
  spanprof report build/spanprof-summary.json
)",
     RunReport, ReportFlagSpecs},
    {"validate", "validate FILE", "strict check of a summary or a trace",
     R"(Checks a summary with the strict reader (schema, types, every cross-field
invariant), or a trace with the strict trace reader plus the rules Perfetto's
JSON importer relies on: every X event has ts >= 0 and dur >= 0, pid and tid
fit in 32 bits, spans of one thread nest strictly, flow ids are unique and
every flow has both ends; and the span forest must be consistent (unique ids,
known parents, consistent depths). Each problem is printed on stdout.

Exit: 0 valid, 1 invalid, 2 usage error or unreadable file.

Example:
  spanprof validate build/spanprof-trace.json
)",
     RunValidate, NoFlagSpecs},
    {"summarize", "summarize TRACE [-o SUMMARY] [--group-by-arg ARG]",
     "recompute the summary from a trace",
     R"(Reads a trace (plain or .json.gz) and writes its spanprof.summary
document: the same summary the session wrote, field for field. Without -o the
summary goes to stdout; with -o it is written atomically (temporary file +
rename), creating parent directories. A foreign Chrome trace gives a summary
with "source": "chrome-trace" (notes on what was skipped go to stderr).

Options:
  -o, --output SUMMARY   where to write the summary
  --group-by-arg ARG     foreign Chrome traces: key spans that have a string
                         argument ARG by "NAME [ARG=value]"

Exit: 0 written, 2 usage error, unreadable or invalid trace, or write error.

Example:
  spanprof summarize build/spanprof-trace.json -o build/summary-again.json
)",
     RunSummarize, SummarizeFlagSpecs},
    {"folded", "folded TRACE [-o OUT] [--group-by-arg ARG]",
     "folded stacks for flamegraph.pl / speedscope",
     R"(Writes one line per distinct stack, "root;child;leaf SELF_NS", summed
over equal stacks, sorted, leaving out stacks with no self time. Stacks follow
each span's parent on the same thread or on another (a task run on a pool
thread appears under the span that submitted it). Frames are span names;
because flamegraph.pl and speedscope split on ';' unconditionally, a ';' in a
name is written as ':'.

Options:
  -o, --output OUT     where to write the stacks (default stdout)
  --group-by-arg ARG   foreign Chrome traces: frames of spans with a string
                       argument ARG are "NAME [ARG=value]"

Exit: 0 written, 2 usage error, unreadable or invalid trace, or write error.

Example:
  spanprof folded build/spanprof-trace.json | flamegraph.pl > flame.svg
)",
     RunFolded, SummarizeFlagSpecs},
    {"export", "export otlp TRACE... [-o OUT.json] [--allow-invalid]",
     "traces as OpenTelemetry OTLP/JSON, for a Collector or a backend",
     R"(Writes the spans of one or more traces (.json, .json.gz or .pftrace, as
the session wrote them) as one OTLP/JSON ExportTraceServiceRequest: the body
of an OTLP/HTTP request (POST /v1/traces, Content-Type: application/json) or
a file for the OpenTelemetry Collector's otlpjsonfile receiver. Each process
is one resource (service.name = process name, host.name, process.pid; a
merged trace gives one per process it holds, with that process's spans); each
span keeps the trace id and span id spanprof gave it (the ids a traceparent
handed to another process), its parent (on another thread too; a root's
parent is the session's remote parent, SPANPROF_TRACEPARENT), its wall-clock
start and end (the trace's wall-clock anchor plus its session time), its
tags, arguments and counters as attributes, and status ERROR when an
exception left it. docs/formats.md ("OTLP/JSON export") lists every field;
docs/distributed.md says how to send the file.

Several traces make one request. Traces of different trace ids are exported
with a note (each span keeps its own). A trace without a trace id (written
by an older spanprof) gets one derived from its host, pid and anchor, with a
note. A trace without a wall-clock anchor (a foreign Chrome trace) is an
error, as is the same capture given twice. Spans that OTLP consumers cannot
place (one that ends before it starts, one that is its own parent, a parent
chain that loops) are named and refused (exit 1) unless --allow-invalid.

Options:
  -o, --output OUT.json   write atomically, creating parent directories
                          (default: stdout)
  --allow-invalid         export invalid spans as they are, with a warning

Exit: 0 written, 1 invalid spans refused, 2 usage error (a FORMAT other than
otlp), unreadable or unexportable trace, or write error.

Example:
  spanprof export otlp build/spanprof-trace.json -o build/otlp.json
  curl -X POST -H 'Content-Type: application/json' \
      --data-binary @build/otlp.json http://localhost:4318/v1/traces
)",
     RunExport, ExportFlagSpecs},
    {"query", "query TRACE... SQL [--file QUERY.sql] [--format FORMAT]",
     "SQL over the spans of traces, on Perfetto trace_processor's tables",
     R"(Loads the traces (.json, .json.gz, .pftrace, foreign Chrome traces, merged
captures) into an in-memory SQLite database and runs SQL on it. The tables
carry Perfetto trace_processor's names and meanings, so a trace_processor
query runs unchanged on what spanprof records:

  slice(id, ts, dur, track_id, category, name, depth, parent_id, arg_set_id,
        thread_dur)           ts and dur in ns; parent_id on the same thread
  thread_track(id, utid)  thread(utid, tid, name, upid)  process(upid, pid, name)
  args(arg_set_id, flat_key, key, int_value, string_value, real_value,
       value_type)            args.NAME, counters.NAME, tags.NAME
  flow(id, slice_out, slice_in)   one per cross-thread parent link
  span(id, name, phase, module, activity, backend, dtype, device, tid,
       thread_name, pid, ts, dur, self_dur, depth, parent_id,
       cross_thread_parent_id, heartbeats, unfinished)   spanprof's own view

docs/formats.md ("Query tables") gives every column. Several statements may
be given (separated by ';'); the rows of the last one that returns columns
are printed. Queries may create TEMP tables and views; changing the capture's
tables, ATTACH, PRAGMA with a value and load_extension() are refused. SQL
starting with "--" (a comment) must come from --file.

Options:
  -f, --file QUERY.sql   read the SQL from a file (then every argument is a
                         trace)
  --format FORMAT        table (default), csv, tsv, md, json or jsonl
  --group-by-arg ARG     foreign Chrome traces: spans with a string argument
                         ARG are named "NAME [ARG=value]"

Exit: 0 printed, 2 usage error, unreadable trace, or an SQL error (SQLite's
message with its line and column).

Example:
  spanprof query build/spanprof-trace.json \
      'SELECT name, COUNT(*), SUM(dur) FROM slice GROUP BY name'
)",
     RunQuery, QueryFlagSpecs},
    {"merge", "merge CAPTURE... -o OUT [--summary SUMMARY]",
     "captures of several processes into one trace on one timeline",
     R"(Merges the traces of cooperating processes (a coordinator and its
workers, each writing its own capture, e.g. with SPANPROF_OUT=trace-%p.json)
into one trace: one process per capture with its real pid and name, on one
timeline through the captures' wall-clock anchors (time 0 is the earliest
anchor). A capture started with SPANPROF_TRACEPARENT has its root spans made
children of the span that started it when that span's capture is merged too:
the link is drawn as a flow (an arrow) between the processes. `summarize`,
`report` and the other commands read the merged trace; its summary's rows
group across processes and say in how many processes each ran.

CAPTURE... are at least two traces (.json, .json.gz or .pftrace) recorded by
spanprof with a wall-clock anchor; OUT ends in .json, .json.gz, .pftrace or
.perfetto-trace (optionally .gz). Printed: the largest anchor uncertainty
("timeline aligned to ±X µs"); warnings on stderr when the captures belong to
different trace ids, when a child process seems to start before the span that
started it (the anchors disagree: a clock jump or a skew between hosts), or
when two processes share a pid; a note when a remote parent is in none of the
captures (its roots stay roots).

Refused (exit 2, nothing written): fewer than two captures, a capture without
an anchor (older traces, foreign Chrome traces), a merged trace (merge the
original captures), the same capture twice (same pid, host and anchor, or the
same span id seed), anchors more than a day apart.

Options:
  -o, --output OUT      the merged trace, written atomically (required)
  --summary SUMMARY     also write its summary (as `spanprof summarize OUT`)

Exit: 0 written, 2 usage error, unreadable or refused input, or write error.

Example:
  spanprof merge build/trace-*.json -o build/merged.pftrace
)",
     RunMerge, MergeFlagSpecs},
    {"recover", "recover STREAM... [-o TRACE] [--summary-out SUMMARY]",
     "the trace and summary of a program that was killed or crashed",
     R"(While a session runs, spanprof copies what the threads recorded into a
stream file every 10 ms (SPANPROF_STREAM; by default the trace path with
".stream" added). A session that ends normally removes it. When the program
was killed (SIGKILL, the OOM killer), crashed (SIGSEGV, abort(),
std::terminate) or is still running, `recover` turns the stream into a trace
and a summary: spans still open at the last drain are marked unfinished, the
summary says complete: false and end_reason "crash:SIGSEGV" (the crash
handler wrote the stream's end) or "lost" (killed: what was recorded after
the last drain, about the last 10 ms, cannot be known). Corrupt or cut
chunks are skipped and counted on stderr; the stream is left in place.

STREAM... are stream files; several are merged into one capture (as
`spanprof merge`), which needs -o and --summary-out.

Options:
  -o, --output TRACE        the trace (.json, .json.gz, .pftrace); default:
                            the trace path the session was configured with
  --summary-out SUMMARY     the summary; default: the session's summary path

Exit: 0 wrote the outputs, 2 usage error, a file that is not a readable
stream, or a write error.

Example:
  spanprof recover build/spanprof-trace.json.stream -o build/crashed.pftrace       --summary-out build/crashed-summary.json
)",
     RunRecover, RecoverFlagSpecs},
    {"plot",
     "plot timeline TRACE | breakdown SUMMARY | compare BASE CAND | "
     "scaling TRACE... | flame TRACE... | flame --diff BASE CAND [options] "
     "[-o OUT.svg]",
     "deterministic SVG figures: timeline, breakdown, compare, scaling, "
     "flame",
     R"(Draws an SVG figure from real artifacts. The same input gives the same
bytes on every machine (no clocks, no floating point, sorted order), so
figures can be checked in and regenerated.

  plot timeline TRACE      a lane per thread, a row per nesting depth, spans
                           coloured by phase, labels where they fit, a time
                           axis, arrows to cross-thread children
  plot breakdown SUMMARY   inclusive and self time per row (a trace works
                           too: it is summarized first)
  plot compare BASE CAND   the metric per row in base and candidate, coloured
                           by verdict (regressed red, improved green, within
                           grey, new blue, missing orange), with the band
                           of values within tolerance of the base; BASE
                           and CAND may be directories of runs (as for
                           `compare`): bars are medians, and a whisker on
                           the candidate draws the shift's interval
  plot scaling TRACE...    per sized group (see `spanprof scaling`): bucket
                           medians and p95s of the duration against size on
                           log-log axes with the fitted line and exponent,
                           and the cost per unit of size (flat = linear)
  plot flame TRACE...      a flame graph: one frame per distinct stack, as
                           wide as its calls' inclusive time, a frame per
                           thread under "all" (--merge-threads: one tree);
                           cross-thread children sit under their parents
  plot flame --diff BASE CAND
                           the candidate's flame graph coloured by each
                           frame's change of self time (red slower, blue
                           faster); BASE and CAND are traces or directories
                           of runs' traces, and with directories only the
                           frames the repeated-runs gate calls regressed
                           or improved are coloured

Options:
  -o, --output OUT.svg          write atomically, creating parent
                                directories (default: stdout)
  --width PX                    figure width, 480 to 8000 (default 1200 for
                                timeline, 1000 otherwise)
  timeline:
  --from NS, --to NS            show only this window (session-relative ns)
  --max-spans N                 draw at most the N longest spans
                                (default 20000)
  --max-threads N               draw at most the N busiest threads
                                (default 64)
  breakdown, compare:
  --rows N                      at most N rows, 0 for all (default 25)
  compare (as `spanprof compare`):
  --metric M                    default p95_ns
  --absolute-tolerance NS       default 0
  --relative-tolerance-bps BPS  default 0
  --allow-incomplete            draw summaries with drops or unfinished spans
  flame:
  --diff BASE CAND              colour the candidate by each frame's change of
                                self time (traces or run directories)
  --icicle                      roots at the top, children below
  --merge-threads               one tree over every thread
  scaling:
  --size ARG                    the size argument (as `spanprof scaling`)

Exit: 0 written (a regression drawn by compare too), 2 usage error,
unreadable or invalid input, or write error.

Example:
  spanprof plot timeline build/spanprof-trace.json -o timeline.svg
  spanprof plot compare base.json cand.json --absolute-tolerance 500000 \
      --relative-tolerance-bps 1000 -o compare.svg
)",
     RunPlot, PlotFlagSpecs},
    {"scaling",
     "scaling TRACE... [--size ARG] [--json OUT] [--baseline TRACE...] "
     "[--margin M] [--fail-on-unknown] [--group-by-arg ARG] [--format FORMAT]",
     "does a phase cost more per unit of size as sizes grow? (and the gate)",
     R"(For every group of spans (name + tags) with a numeric size argument
(SPANPROF_ARG("bytes", n)), puts the spans in power-of-2 size buckets and
fits duration = overhead + a*size^b over the bucket medians (Theil-Sen in
log-log space, bootstrap interval with a fixed seed). Verdict: constant
(b < 0.15), sublinear (< 0.85), linear (<= 1.2; n log n lands here),
superlinear (above, with the interval above 1), or unknown (fewer than 3
buckets of 3 spans, under one decade of sizes, or an interval wider than
0.6). Each counter (heartbeats, allocations) gets its own exponent: the one
that grows like the time is the driver, one that grows slower is a rider.
Several traces (runs of one program) pool their spans; a group with one
span per trace (a whole-program span) is fitted across the runs, each trace
one point (a wider interval).

Options:
  --size ARG           the size argument (default: every numeric argument
                       that varies within a group)
  --size counter:NAME  a span's own count of counter NAME as its size
  --format FORMAT      table (default), csv, tsv, md, json or jsonl
  --json OUT           also write the spanprof.scaling document
  --baseline TRACE...  the scaling gate: fail when a group's exponent rose
                       by more than the margin, the interval's lower bound
                       too, on the sizes both sides have
  --margin M           the gate's margin on the exponent (default 0.15)
  --fail-on-unknown    groups the gate cannot decide fail too
  --group-by-arg ARG   foreign Chrome traces: group spans by a string
                       argument too ("NAME [ARG=value]")

Exit: 0 analysed (also when no group is sized: a note says so), 1 the
gate found a rise (or an unknown group with --fail-on-unknown), 2 usage
error, unreadable trace, or a --size that no span has.

Example:
  spanprof scaling build/spanprof-trace.json --json build/scaling.json
  spanprof scaling slow.json --baseline base.json
)",
     RunScaling, ScalingFlagSpecs},
    {"overhead",
     "overhead BENCH.json [--max-ratio R] [--metric cpu_time|real_time] "
     "[--json OUT] [--format FORMAT]",
     "your spans' cost: gate Google Benchmark runs with recording on vs off",
     R"(Reads the JSON output of a Google Benchmark program whose benchmarks are
registered with SPANPROF_BENCHMARK (spanprof/benchmark.h: each runs as
NAME/spanprof:off, no recording session, and NAME/spanprof:on, recording).
Each run NAME/spanprof:on is paired with NAME/spanprof:off by the rest of its
name, Google Benchmark's decorations included (/64, /threads:2, /real_time).
Per side, the per-iteration time is the median over the repetitions (the
entries with run_type "iteration"; when the file holds only aggregates, the
"median" aggregate), converted from each entry's time_unit. A pair FAILS when
    median(on) / median(off) > R
Runs without a spanprof:on/off component are listed as not gated.

Run the benchmark program with
    --benchmark_repetitions=10 --benchmark_enable_random_interleaving=true
    --benchmark_out=BENCH.json --benchmark_out_format=json
so that on and off repetitions interleave and every repetition is kept.

Options:
  --max-ratio R   the largest on/off ratio that passes, a number > 0
                  (default 1.05: recording may cost 5%)
  --metric M      cpu_time (default) or real_time
  --format FORMAT table (default), csv, tsv, md, json or jsonl
  --json OUT      also write a spanprof.overhead document (atomically)

Exit: 0 every pair within R, 1 a pair above R, 2 usage error or unreadable
or invalid file (not JSON, no "benchmarks" array, a wrong type, a failed
benchmark, a run with one side missing, no pair at all).

Example:
  build/bin/overhead_example --benchmark_repetitions=10 \
      --benchmark_enable_random_interleaving=true \
      --benchmark_out=BENCH.json --benchmark_out_format=json
  spanprof overhead BENCH.json --max-ratio 1.03
)",
     RunOverhead, OverheadFlagSpecs},
    {"run",
     "run --runs N --out DIR [--warmup N] [--prepare CMD] [--keep-traces | "
     "--trace] [--force] -- PROGRAM [ARGS...]",
     "run a program N times, one summary per run (a side for compare)",
     R"(Runs PROGRAM (no shell; looked up in PATH when it has no '/') N times, one
after the other, each with SPANPROF=1 and its own output paths, and checks
that each run wrote a valid summary. The directory is one side for
`spanprof compare`:

  DIR/run-001.summary.json       SPANPROF_SUMMARY_OUT of run 1 (numbers are
                                 zero-padded to 3 digits, more above 999)
  DIR/traces/run-001.trace.pftrace  SPANPROF_OUT of run 1, with
                                 --keep-traces (DIR/traces/run-001.trace.json
                                 with --trace); without either, no trace is
                                 written (SPANPROF_OUT=off): writing one is
                                 most of a large capture's session end
  DIR/logs/run-001.stdout        the program's stdout and stderr (its stdin
  DIR/logs/run-001.stderr        is /dev/null)

The program inherits spanprof's environment with SPANPROF=1,
SPANPROF_SUMMARY_OUT, SPANPROF_OUT and SPANPROF_STREAM (a scratch directory
under $TMPDIR, removed at the end) set, replacing inherited values; other
SPANPROF_* variables (SPANPROF_MAX_EVENTS, SPANPROF_QUIET, ...) pass
through. A progress line per run goes to stderr ("run 3/10: 0.84 s"), the
wall times to stdout at the end.

--warmup N runs the program N times first, not counted (their summaries are
dropped, their output goes to DIR/logs/warmup-001.stdout, ...): caches, page
cache and CPU frequency settle before the runs that count. --prepare CMD
runs CMD with /bin/sh -c before every run, warm-ups included (clear a cache,
reset a database); its output goes to DIR/logs/prepare.stdout and .stderr.
A --prepare that fails stops everything like a failed run, naming the run it
came before.
DIR is created when missing. A DIR holding the files of earlier runs is
refused unless --force, which deletes exactly those files; a DIR holding any
other .json file is refused (compare would read a summary there as a run).

A run that exits non-zero, is killed by a signal, or writes no valid
summary stops everything: the message names the run, the command, its exit
status or signal, and the last lines of its stderr. SIGINT (Ctrl-C),
SIGTERM or SIGHUP to spanprof kills the running program's whole process
group, removes what that run wrote and the scratch directory, keeps the
completed runs and exits 130, 143 or 129.

Options:
  -n, --runs N   the number of runs, 1 to 100000
  -o, --out DIR  the directory of the series
  --warmup N     N runs first that are not counted (default 0)
  --prepare CMD  a shell command run before every run
  --keep-traces  keep each run's trace as DIR/traces/run-NNN.trace.pftrace
  --trace        keep each run's trace as JSON, DIR/traces/run-NNN.trace.json
  --force        replace the files of earlier runs in DIR

Exit: 0 every run succeeded, 1 a run (or --prepare) failed, 130/143/129 stopped by
SIGINT/SIGTERM/SIGHUP, 2 usage error, a refused or unwritable DIR, or a
PROGRAM that cannot be started.

Example:
  spanprof run --runs 10 --out build/runs/base -- build/bin/app --input x
)",
     RunRun, RunFlagSpecs},
    {"ab",
     "ab --runs N --out DIR [--warmup N] [--prepare CMD] [--keep-traces | "
     "--trace] [--force] -- BASE [ARGS...] -- CAND [ARGS...]",
     "interleaved runs of a baseline and a candidate (base, cand, base, ...)",
     R"(Runs a baseline and a candidate command N times each, interleaved: base 1,
cand 1, base 2, cand 2, ... so that a machine that drifts (other jobs,
thermal limits, a cache warming up) slows both sides alike. Each side is a
series exactly as `spanprof run` writes it, in DIR/base and DIR/cand, ready
for `spanprof compare DIR/base DIR/cand`.

The words after the first -- up to the next -- are the baseline command;
everything after that second -- is the candidate command (it may contain
further -- words; the baseline cannot). No shell is involved: quote words as
you would for any program.

Progress lines name the side ("base 3/10: 0.84 s", "cand 3/10: 0.91 s").
Directories, environment, warm-ups (base and cand interleaved too),
--prepare and failures as for `spanprof run`; both directories are checked
before anything runs.

The last line on stdout is the verdict on the root span (the row with the
largest total time), by the statistics of `spanprof compare DIR/base
DIR/cand` over the runs (the Hodges-Lehmann shift of its total time and the
shift's Mann-Whitney interval, at 95% over all rows) with no tolerance:
    cand is 1.08× [1.05, 1.11] the time of base (root span, median over 10 runs)
when the interval excludes no change, else
    no difference detected (root span: cand is 1.01× [0.97, 1.04] ...)

Options:
  -n, --runs N   the number of runs of each side, 1 to 100000
  -o, --out DIR  the directory of the two series (DIR/base, DIR/cand)
  --warmup N     N runs of each side first that are not counted
  --prepare CMD  a shell command run before every run of either side
  --keep-traces  keep each run's trace as .pftrace in DIR/base/traces/, ...
  --trace        keep each run's trace as JSON in DIR/base/traces/, ...
  --force        replace the files of earlier runs in DIR/base and DIR/cand

Exit: 0 every run succeeded, 1 a run (or --prepare) failed, 130/143/129 stopped by
SIGINT/SIGTERM/SIGHUP, 2 usage error, a refused or unwritable DIR, or a
program that cannot be started.

Example:
  spanprof ab --runs 10 --out build/ab -- build/main/app -- build/pr/app
  spanprof compare build/ab/base build/ab/cand
)",
     RunAb, RunFlagSpecs},
};

const Command* FindCommand(std::string_view name) {
  for (const Command& command : kCommands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

// The options every command takes (trace_input.h).
constexpr std::string_view kInputOptionsHelp =
    "Every command also takes:\n"
    "  --max-input-bytes N  the most bytes an input may hold in memory\n"
    "                       (default: a gzip file 64x its size, anything\n"
    "                       not a regular file 16 GiB, both at most 16 GiB)\n"
    "  --allow-truncated    read a .pftrace cut short (no end packet) as far\n"
    "                       as it goes; its summary is not complete\n";

void PrintUsage(std::ostream& os, const CommandIo& io) {
  os << "usage: " << io.program << " <command> [arguments]\n\n"
     << "Commands:\n";
  for (const Command& command : kCommands) {
    std::string name(command.name);
    name.resize(11, ' ');
    os << "  " << name << command.summary << "\n";
  }
  os << "\nRun '" << io.program
     << " <command> --help' for a command's arguments, '" << io.program
     << " --version' for the version.\n"
     << "Exit codes: 0 pass, 1 regression, invalid file or failed run, 2 "
        "usage error or unreadable input.\n"
     << kInputOptionsHelp;
}

void PrintCommandUsage(std::ostream& os, const CommandIo& io,
                       const Command& command) {
  os << "usage: " << io.program << " " << command.synopsis << "\n";
}

void PrintCommandHelp(std::ostream& os, const CommandIo& io,
                      const Command& command) {
  PrintCommandUsage(os, io, command);
  os << "\n"
     << command.summary << ".\n\n"
     << command.help << "\n"
     << kInputOptionsHelp;
}

bool WantsHelp(const std::vector<std::string>& args) {
  for (const std::string& arg : args) {
    if (arg == "--") return false;
    if (arg == "--help" || arg == "-h") return true;
  }
  return false;
}

std::string ProgramName(int argc, char** argv) {
  if (argc < 1 || argv == nullptr || argv[0] == nullptr || argv[0][0] == 0) {
    return "spanprof";
  }
  std::string_view path = argv[0];
  if (const size_t slash = path.rfind('/'); slash != std::string_view::npos) {
    path.remove_prefix(slash + 1);
  }
  return path.empty() ? "spanprof" : std::string(path);
}

// "unknown command 'reprot'; did you mean 'report'?" (the suggestion only
// when a command is close to what was typed), then the usage.
int UnknownCommand(const CommandIo& io, std::string_view name) {
  std::vector<std::string_view> names = {"help", "version"};
  for (const Command& command : kCommands) names.push_back(command.name);
  io.err << io.program << ": unknown command '" << name << "'";
  const std::string_view meant = spanprof::internal::ClosestName(name, names);
  if (!meant.empty()) io.err << "; did you mean '" << meant << "'?";
  io.err << "\n";
  PrintUsage(io.err, io);
  return kExitUsage;
}

}  // namespace

std::span<const Command> Commands() { return kCommands; }

std::vector<FlagSpec> NoFlagSpecs() { return {}; }

int UsageError(const CommandIo& io, std::string_view command,
               std::string_view message) {
  io.err << io.program << " " << command << ": " << message << "\n";
  if (const Command* found = FindCommand(command)) {
    PrintCommandUsage(io.err, io, *found);
    io.err << "Run '" << io.program << " " << command
           << " --help' for details.\n";
  }
  return kExitUsage;
}

int UsageError(const CommandIo& io, std::string_view command,
               const absl::Status& status) {
  const absl::string_view message = status.message();
  return UsageError(io, command,
                    std::string_view(message.data(), message.size()));
}

int Failure(const CommandIo& io, std::string_view command,
            const absl::Status& status) {
  io.err << io.program << " " << command << ": " << status.message() << "\n";
  return kExitUsage;
}

}  // namespace internal

int Run(int argc, char** argv, std::ostream& out, std::ostream& err) {
  const internal::CommandIo io{out, err, internal::ProgramName(argc, argv)};
  if (argc < 2 || argv == nullptr || argv[1] == nullptr) {
    err << io.program << ": missing command\n";
    internal::PrintUsage(err, io);
    return kExitUsage;
  }
  const std::string_view name = argv[1];
  std::vector<std::string> args;
  for (int i = 2; i < argc; ++i) {
    if (argv[i] != nullptr) args.emplace_back(argv[i]);
  }
  if (name == "--version" || name == "version") {
    out << io.program << " " << internal::kVersion << "\n";
    return kExitPass;
  }
  if (name == "--help" || name == "-h") {
    internal::PrintUsage(out, io);
    return kExitPass;
  }
  if (name == "help") {
    if (args.empty()) {
      internal::PrintUsage(out, io);
      return kExitPass;
    }
    const internal::Command* command = internal::FindCommand(args[0]);
    if (command == nullptr) return internal::UnknownCommand(io, args[0]);
    internal::PrintCommandHelp(out, io, *command);
    return kExitPass;
  }
  const internal::Command* command = internal::FindCommand(name);
  if (command == nullptr) return internal::UnknownCommand(io, name);
  if (internal::WantsHelp(args)) {
    internal::PrintCommandHelp(out, io, *command);
    return kExitPass;
  }
  const absl::StatusOr<internal::InputOptions> input =
      internal::TakeInputOptions(args);
  if (!input.ok()) return internal::UsageError(io, name, input.status());
  internal::UseInputOptions(*input);
  try {
    return command->run(args, io);
  } catch (const std::bad_alloc&) {
    // The readers report this with the file and byte; this is the rest.
    err << io.program << " " << name << ": out of memory\n";
    return kExitUsage;
  }
}

int Run(int argc, char** argv) { return Run(argc, argv, std::cout, std::cerr); }

}  // namespace spanprof::cli
