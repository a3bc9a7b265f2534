#!/usr/bin/env python3
"""The reserved-name check (scripts/check-names) passes on the tree and fails
on a copy of it with one reserved name, naming the file, line and name.

    check_names_test.py SOURCE_ROOT

On a temporary copy of runtime/, analysis/ and cli/ it checks, in turn: the
copy passes; a variable named `_Pending` (underscore, capital) fails; a
function named `drain__now` (a double underscore inside) fails; a global
variable `_pending_count` (underscore, lower case) and a macro
`_drain_now` fail; the same names inside a comment, a string and a raw
string pass, so do the compiler's own names (`__builtin_expect`,
`__attribute__`), and so does an underscore and a lower-case letter inside
a namespace, a class or a function.
"""

import os

import source_check_support


def append(root, path, text):
    """Appends text to path; returns the line number of its first line."""
    full = os.path.join(root, path)
    with open(full, encoding="utf-8") as f:
        lines = f.read().splitlines()
    with open(full, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n" + text + "\n")
    return len(lines) + 1


def main():
    with source_check_support.checked_copy("check_names_test", "check-names") as (
        script,
        root,
    ):
        target = "cli/src/main.cc"
        for name, text in (("_Pending", "static int _Pending = 0;"),
                           ("drain__now", "static void drain__now() {}"),
                           ("_pending_count",
                            "static int _pending_count = 0;"),
                           ("_drain_now", "#define _drain_now() 0")):
            with source_check_support.restored(root, target):
                line = append(root, target, text)
                source_check_support.expect_caught(
                    "check_names_test", script, root,
                    f"{target}:{line}: {name} is a name C++ reserves",
                    f"`{text}`")

        append(root, target, "\n".join((
            "// _Pending and drain__now in a comment",
            "/* _Pending across",
            "   drain__now lines */",
            'static const char* kA = "_Pending drain__now";',
            'static const char* kB = R"sql(SELECT * FROM __t)sql";',
            "static const char kC = '_';",
            "[[maybe_unused]] static bool Likely(bool b) {",
            "  return __builtin_expect(b, 1);",
            "}",
            "namespace spanprof {",
            "[[maybe_unused]] static int _in_a_namespace = 0;",
            "struct Held {",
            "  int _member = 0;",
            "};",
            "}  // namespace spanprof",
            "[[maybe_unused]] static int Local() {",
            "  int _local = 1;",
            "  return _local;",
            "}",
        )))
        rc, out = source_check_support.run_check(script, root)
        source_check_support.expect(
            "check_names_test", rc == 0,
            f"names in comments or literals fail (exit {rc})", out)
    print("check_names_test: passed")


if __name__ == "__main__":
    main()
