#!/usr/bin/env python3
"""Fails when a file of the source tree cites an internal issue number.

    no_issue_references.py SOURCE_DIR

Docs and comments give the reason for a choice, not the number of the
tracker entry it came from: readers outside the project cannot follow
such a number. Scans every text file under SOURCE_DIR except .git and
build trees (a directory holding CMakeCache.txt, and build/); prints
each offending line as FILE:LINE: TEXT and exits 1 when there is one.
"""
import os
import re
import sys

# The word issue (or issues, any case), an optional space, an optional #,
# digits: with or without the space and the "#".
PATTERN = re.compile(r"\bissues? ?#?[0-9]+", re.IGNORECASE)


def main():
    root = os.path.abspath(sys.argv[1])
    found = 0
    for directory, subdirs, files in os.walk(root):
        subdirs[:] = [d for d in subdirs
                      if d != ".git" and not (directory == root and d == "build")
                      and not os.path.exists(os.path.join(directory, d, "CMakeCache.txt"))]
        for name in files:
            path = os.path.join(directory, name)
            try:
                with open(path, encoding="utf-8") as f:
                    lines = f.read().split("\n")
            except (UnicodeDecodeError, OSError):
                continue  # binary data, not docs or comments
            for number, line in enumerate(lines, 1):
                if PATTERN.search(line):
                    found += 1
                    print(f"{os.path.relpath(path, root)}:{number}: {line.strip()}")
    if found:
        print(f"{found} line(s) cite an internal issue number: give the reason instead")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
