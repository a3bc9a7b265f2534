#!/usr/bin/env python3
"""Extracts the `Example:` block of every installed public header, one source
file each, so that the build compiles them (ctest docs.header_examples).

    extract_header_examples.py --out DIR --source-root ROOT

The headers are those the install rule copies (runtime/include,
analysis/include, cli/include, runtime/benchmark/include). A header comment's
example is written as

    // clang-format off
    // Example:
    //
    //   code, indented three spaces after the slashes
    //
    // clang-format on

(`// clang-format off/on` keep the formatter from rewrapping the code; an
example without them fails here). Prose lines between `Example...:` and the
code are skipped; the code ends at `// clang-format on`.

Each example becomes DIR/<header path with _>.cc: the header, then the block.
The block's leading `#include` lines go to the top of the file. A block
with a function definition at its left margin (`int main(`, `void
BM_Parse(`) is a file on its own; any other block is the body of a function
returning int (so `return` works). Placeholders read as "what you have": a
value `= ...;` (or `= ...,`) compiles as `= {}`, and `{ ... }` or a `...`
line compile as empty. An example may call functions of the reader's program (`Work()`,
`Load()`): it declares them first, before its code (the blocks are compiled,
not linked). Files are rewritten only when their text changes.

DIR/header_examples.cmake sets SPANPROF_HEADER_EXAMPLES (the files) and, for
each, SPANPROF_HEADER_EXAMPLE_<file stem>_COMPONENT (runtime, analysis, cli or
benchmark: the target whose headers it needs).
"""
import argparse
import os
import re
import sys

INCLUDE_DIRS = {
    "runtime/include": "runtime",
    "analysis/include": "analysis",
    "cli/include": "cli",
    "runtime/benchmark/include": "benchmark",
}
EXAMPLE = re.compile(r"^// Example\b")
CODE = re.compile(r"^//   ")
TOP_LEVEL = re.compile(r"^(#include\b|[A-Za-z_][\w:<>,\s*&]*\s+[\w:]+\(.*\)\s*(const\s*)?\{)")


def example_of(path):
    """(line, code lines) of the header's example, or None; exits on an
    example outside `// clang-format off/on`."""
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    for i, line in enumerate(lines):
        if not EXAMPLE.match(line):
            continue
        if i == 0 or lines[i - 1].strip() != "// clang-format off":
            sys.exit(f"{path}:{i + 1}: the Example block is not inside "
                     "`// clang-format off` / `// clang-format on` (the "
                     "formatter rewraps it)")
        code = []
        start = None
        for j in range(i + 1, len(lines)):
            text = lines[j]
            if text.strip() == "// clang-format on":
                break
            if not text.startswith("//"):
                sys.exit(f"{path}:{j + 1}: the Example block has no "
                         "`// clang-format on`")
            if CODE.match(text):
                if start is None:
                    start = j + 1
                code.append(text[len("//   "):])
            elif start is not None:
                code.append("" if text.strip() == "//" else
                            "// " + text[2:].strip())
        else:
            sys.exit(f"{path}:{i + 1}: the Example block has no "
                     "`// clang-format on`")
        if start is None:
            sys.exit(f"{path}:{i + 1}: the Example block has no code")
        while code and not code[-1].strip():
            code.pop()
        return start, code
    return None


def placeholders(line):
    line = re.sub(r"=\s*\.\.\.(?=\s*[,;])", "= {}", line)
    line = line.replace("{ ... }", "{}")
    if line.strip() == "...":
        return ""
    line = re.sub(r"^(\s*)\.\.\.(\s*//.*)$", r"\1\2", line)
    return line


def render(header, path, start, code):
    out = [f"// The Example block of {header} ({path}), compiled by the",
           "// tests (tests/docs/extract_header_examples.py).",
           f"#include <{header}>",
           "",
           "#include <cstdint>",
           "#include <cstdio>",
           "#include <iostream>",
           "#include <string>",
           "#include <string_view>",
           "#include <thread>",
           "#include <vector>",
           ""]
    # Leading #include lines go to the top of the file.
    includes = 0
    while includes < len(code) and (code[includes].startswith("#include")
                                    or (includes and not code[includes].strip())):
        includes += 1
    out += [line for line in code[:includes] if line.strip()]
    start += includes
    body = [placeholders(line) for line in code[includes:]]
    top_level = any(TOP_LEVEL.match(line) for line in body if line.strip())
    if top_level:
        out.append(f'#line {start} "{path}"')
        out += body
    else:
        # Not in an anonymous namespace: a function the example declares in
        # the body would then be a static one never defined.
        out += ["int Example();",
                "int Example() {",
                f'#line {start} "{path}"']
        out += body
        out += ["  return 0;", "}"]
    return "\n".join(out) + "\n"


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--source-root", required=True)
    args = parser.parse_args()
    root = os.path.abspath(args.source_root)
    os.makedirs(args.out, exist_ok=True)
    written = []
    cmake = []
    for include_dir, component in INCLUDE_DIRS.items():
        base = os.path.join(root, include_dir)
        for directory, dirs, files in os.walk(base):
            dirs.sort()
            for name in sorted(files):
                if not name.endswith(".h"):
                    continue
                path = os.path.join(directory, name)
                found = example_of(path)
                if found is None:
                    continue
                header = os.path.relpath(path, base)
                source = header.replace("/", "_").replace(".h", ".cc")
                text = render(header, os.path.relpath(path, root), *found)
                target = os.path.join(args.out, source)
                old = None
                if os.path.exists(target):
                    with open(target, encoding="utf-8") as f:
                        old = f.read()
                if old != text:
                    with open(target, "w", encoding="utf-8") as f:
                        f.write(text)
                written.append(source)
                stem = source[:-len(".cc")]
                cmake.append(f"set(SPANPROF_HEADER_EXAMPLE_{stem}_COMPONENT "
                             f"{component})")
    for name in os.listdir(args.out):
        if name.endswith(".cc") and name not in written:
            os.remove(os.path.join(args.out, name))
    cmake.insert(0, "set(SPANPROF_HEADER_EXAMPLES " + " ".join(written) + ")")
    listing = os.path.join(args.out, "header_examples.cmake")
    text = "\n".join(cmake) + "\n"
    old = open(listing, encoding="utf-8").read() if os.path.exists(listing) else None
    if old != text:
        with open(listing, "w", encoding="utf-8") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
