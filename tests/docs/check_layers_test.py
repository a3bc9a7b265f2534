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


def main():
    with source_check_support.checked_copy("check_layers_test", "check-layers") as (
        script,
        root,
    ):
        # Upward (the model includes a report header) and sideways (two
        # folders of one level: the summary and the JSON trace).
        for including, included, what in (
            ("model", "report", "an upward include"),
            ("summary", "trace", "an include between siblings"),
        ):
            path = first_file(root, f"analysis/src/{including}", ".cc")
            header = first_file(root, f"analysis/src/{included}", ".h")
            with source_check_support.restored(root, path):
                line = add_include(root, path, header.removeprefix("analysis/src/"))
                source_check_support.expect_caught(
                    "check_layers_test", script, root,
                    f"{path}:{line}: analysis/src/{including} may not include "
                    f"analysis/src/{included}", what)

        # A folder the order does not name.
        os.makedirs(os.path.join(root, "analysis/src/unplaced"))
        with open(os.path.join(root, "analysis/src/unplaced/x.cc"), "w") as f:
            f.write('#include "status_macros.h"\n')
        source_check_support.expect_caught(
            "check_layers_test", script, root,
            "folder analysis/src/unplaced is not in the folder order",
            "an unplaced folder")
    print("check_layers_test: the check passes on the tree and catches an "
          "upward include, a sideways include and an unplaced folder")
    return 0


if __name__ == "__main__":
    sys.exit(main())
