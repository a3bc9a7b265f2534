#!/usr/bin/env python3
"""docs/architecture.md names every folder of runtime/, analysis/src/, cli/
and tests/ that holds a file.

    architecture_folders_test.py SOURCE_ROOT

A folder is named when its path from the repository root appears in the doc
as a whole path (`runtime/src/recorder`, optionally with a trailing slash),
not only as the start of a longer one. Below tests/data and tests/fuzz the
folders are data (corpora, recorded traces) and are not listed. Build trees
(build/, or any folder holding CMakeCache.txt) are skipped. Prints each
missing folder and exits 1 when there is one.
"""
import os
import re
import sys

TREES = ["runtime", "analysis/src", "cli", "tests"]
DATA = ["tests/data", "tests/fuzz"]


def folders(root):
    for tree in TREES:
        for directory, subdirs, files in os.walk(os.path.join(root, tree)):
            relative = os.path.relpath(directory, root)
            subdirs[:] = sorted(
                d for d in subdirs
                if d != "build" and not d.startswith(".")
                and not os.path.exists(os.path.join(directory, d, "CMakeCache.txt"))
                and relative not in DATA)
            if any(not f.startswith(".") for f in files):
                yield relative


def named(doc, folder):
    pattern = r"(?<![\w./-])" + re.escape(folder) + r"/?(?![\w./-])"
    return re.search(pattern, doc) is not None


def main():
    root = os.path.abspath(sys.argv[1])
    with open(os.path.join(root, "docs", "architecture.md"), encoding="utf-8") as f:
        doc = f.read()
    missing = [folder for folder in folders(root) if not named(doc, folder)]
    for folder in missing:
        print(f"docs/architecture.md does not name the folder {folder} "
              "(add it to the \"Folders\" table)")
    if missing:
        return 1
    print("docs/architecture.md names every folder of runtime/, analysis/src/, "
          "cli/ and tests/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
