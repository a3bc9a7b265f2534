#!/usr/bin/env python3
"""The folder-order check (scripts/check-layers) passes on the tree and fails
on a copy of it with one include against the order, naming the file and line.

    check_layers_test.py SOURCE_ROOT

On a temporary copy of runtime/, analysis/ and cli/ it checks, in turn: the
copy passes; a model file that includes a report header fails with
`FILE:LINE: analysis/src/model may not include analysis/src/report`; a
summary file that includes a trace header (a folder of the same level)
fails; a file in a folder the order does not name fails, naming the folder.
"""

import os
import sys
import tempfile

import source_check_support


def first_file(root, folder, suffix):
    names = sorted(n for n in os.listdir(os.path.join(root, folder)) if n.endswith(suffix))
    if not names:
        sys.exit(f"check_layers_test: no {suffix} file in {folder}")
    return f"{folder}/{names[0]}"


def add_include(root, path, header):
    """Appends `#include "header"` to path; returns its line number."""
    with open(os.path.join(root, path), encoding="utf-8") as f:
        lines = f.read().splitlines()
    lines.append(f'#include "{header}"')
    with open(os.path.join(root, path), "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")
    return len(lines)


def expect(condition, message, output):
    source_check_support.expect("check_layers_test", condition, message, output)


def main():
    source = os.path.abspath(sys.argv[1])
    script = os.path.join(source, "scripts", "check-layers")
    with tempfile.TemporaryDirectory(prefix="check_layers_") as work:
        root = os.path.join(work, "tree")
        source_check_support.copy_sources(source, root)
        rc, out = source_check_support.run_check(script, root)
        expect(rc == 0, f"the unmodified copy fails (exit {rc})", out)

        # Upward: the model includes a report header.
        model = first_file(root, "analysis/src/model", ".cc")
        report = first_file(root, "analysis/src/report", ".h")
        original = open(os.path.join(root, model), encoding="utf-8").read()
        line = add_include(root, model, report.removeprefix("analysis/src/"))
        rc, out = source_check_support.run_check(script, root)
        wanted = f"{model}:{line}: analysis/src/model may not include analysis/src/report"
        expect(rc == 1, f"an upward include passes (exit {rc})", out)
        expect(wanted in out, f"the output does not say '{wanted}'", out)
        with open(os.path.join(root, model), "w", encoding="utf-8") as f:
            f.write(original)

        # Sideways: two folders of one level (the summary and the JSON trace).
        summary = first_file(root, "analysis/src/summary", ".cc")
        trace = first_file(root, "analysis/src/trace", ".h")
        line = add_include(root, summary, trace.removeprefix("analysis/src/"))
        rc, out = source_check_support.run_check(script, root)
        wanted = f"{summary}:{line}: analysis/src/summary may not include analysis/src/trace"
        expect(rc == 1, f"an include between siblings passes (exit {rc})", out)
        expect(wanted in out, f"the output does not say '{wanted}'", out)
        with open(os.path.join(root, summary), "w", encoding="utf-8") as f:
            f.write(open(os.path.join(source, summary), encoding="utf-8").read())

        # A folder the order does not name.
        os.makedirs(os.path.join(root, "analysis/src/unplaced"))
        with open(os.path.join(root, "analysis/src/unplaced/x.cc"), "w") as f:
            f.write('#include "status_macros.h"\n')
        rc, out = source_check_support.run_check(script, root)
        wanted = "folder analysis/src/unplaced is not in the folder order"
        expect(rc == 1, f"an unplaced folder passes (exit {rc})", out)
        expect(wanted in out, f"the output does not say '{wanted}'", out)
    print("check_layers_test: the check passes on the tree and catches an "
          "upward include, a sideways include and an unplaced folder")
    return 0


if __name__ == "__main__":
    sys.exit(main())
