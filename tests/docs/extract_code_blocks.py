#!/usr/bin/env python3
"""Extracts the C++ and C code blocks of Markdown files, one source file each.

    extract_code_blocks.py --out DIR --source-root ROOT FILE.md...

Every fenced block whose info string is cpp, c++, cc or c becomes
DIR/<name>_<line>.cc or .c (<name> from the file: README.md -> readme,
docs/guide.md -> guide; <line> the fence's line), starting with a #line
directive, so that a compile error names the Markdown file and its line.
A block whose previous non-blank line is `<!-- fragment -->` (or
`<!-- fragment: why -->`) is an excerpt on purpose (it leaves out what is around it) and is skipped. Files are
rewritten only when their text changes (no needless rebuilds), and files
of blocks that are gone are removed.

DIR/blocks.cmake lists what the build compiles:
  SPANPROF_DOC_BLOCKS      every extracted file
  SPANPROF_DOC_QUICKSTART  the first C++ block of README.md (the README's
                           five-minute program, which the tests also run)
  SPANPROF_DOC_FRAGMENTS   the skipped blocks, as <file>:<line>
"""
import argparse
import os
import re
import sys

FENCE = re.compile(r"^(\s*)```\s*([A-Za-z+]*)\s*$")
LANGUAGES = {"cpp": ".cc", "c++": ".cc", "cc": ".cc", "c": ".c"}
# `<!-- fragment -->`, or with the reason: `<!-- fragment: an excerpt of ... -->`.
FRAGMENT = re.compile(r"^<!-- fragment(:.*)? -->$")


def blocks_of(path):
    """Yields (fence line, language extension, text, is_fragment)."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    i = 0
    previous = ""
    while i < len(lines):
        match = FENCE.match(lines[i])
        if not match:
            if lines[i].strip():
                previous = lines[i].strip()
            i += 1
            continue
        indent, language = match.group(1), match.group(2).lower()
        start = i
        body = []
        i += 1
        while i < len(lines) and lines[i].strip() != "```":
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line)
            i += 1
        if i >= len(lines):
            sys.exit(f"{path}:{start + 1}: code block never closed")
        i += 1
        if language in LANGUAGES:
            yield (start + 1, LANGUAGES[language], "\n".join(body),
                   FRAGMENT.match(previous) is not None)
        previous = "```"


def write_if_changed(path, text):
    try:
        with open(path, encoding="utf-8") as f:
            if f.read() == text:
                return
    except FileNotFoundError:
        pass
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--source-root", required=True)
    parser.add_argument("files", nargs="+")
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    written, fragments, quickstart = [], [], ""
    for path in args.files:
        relative = os.path.relpath(path, args.source_root)
        stem = os.path.splitext(os.path.basename(path))[0].lower()
        for line, extension, text, fragment in blocks_of(path):
            if fragment:
                fragments.append(f"{relative}:{line}")
                continue
            name = f"{stem}_{line}{extension}"
            write_if_changed(os.path.join(args.out, name),
                             f'#line {line + 1} "{relative}"\n{text}\n')
            written.append(name)
            if relative == "README.md" and extension == ".cc" and not quickstart:
                quickstart = name
    for name in os.listdir(args.out):
        if name.endswith((".cc", ".c")) and name not in written:
            os.remove(os.path.join(args.out, name))
    if not quickstart:
        sys.exit("README.md has no C++ code block: its first one is the "
                 "five-minute program the tests build and run")
    write_if_changed(os.path.join(args.out, "blocks.cmake"),
                     f'set(SPANPROF_DOC_BLOCKS "{";".join(written)}")\n'
                     f'set(SPANPROF_DOC_QUICKSTART "{quickstart}")\n'
                     f'set(SPANPROF_DOC_FRAGMENTS "{";".join(fragments)}")\n')


if __name__ == "__main__":
    main()
