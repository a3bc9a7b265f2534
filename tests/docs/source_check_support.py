"""What the tests of the source checks (scripts/check-layers,
scripts/check-names) share: a copy of the source folders to break, a run of
the check on it, and a failure that shows the check's output.

    with source_check_support.checked_copy("my_test", "check-x") as (script, root):
        ...  # break the copy under root, run_check(script, root), expect(...)
"""

import contextlib
import os
import shutil
import subprocess
import sys
import tempfile


def copy_sources(source, root):
    """Copies runtime/, analysis/ and cli/ of `source` into `root`."""
    for tree in ("runtime", "analysis", "cli"):
        shutil.copytree(os.path.join(source, tree), os.path.join(root, tree),
                        ignore=shutil.ignore_patterns("build"))


def run_check(script, root):
    """Runs `script --root root`; returns its exit code and its output."""
    result = subprocess.run(
        [sys.executable, script, "--root", root],
        capture_output=True,
        text=True,
        check=False,
    )
    return result.returncode, result.stdout + result.stderr


def expect(name, condition, message, output):
    """Fails test `name` with `message` and the check's output unless
    `condition` holds."""
    if not condition:
        print(f"{name}: {message}\n--- output ---\n{output}")
        sys.exit(1)


@contextlib.contextmanager
def checked_copy(name, check):
    """A temporary copy of the source folders of the tree named by the
    command line's first argument, on which scripts/<check> passes (test
    `name` fails otherwise); yields the check's path and the copy's root."""
    source = os.path.abspath(sys.argv[1])
    script = os.path.join(source, "scripts", check)
    with tempfile.TemporaryDirectory(prefix=name + "_") as work:
        root = os.path.join(work, "tree")
        copy_sources(source, root)
        rc, out = run_check(script, root)
        expect(name, rc == 0, f"the unmodified copy fails (exit {rc})", out)
        yield script, root


def expect_caught(name, script, root, wanted, what):
    """Runs the check on the broken copy: test `name` fails unless it exits
    1 and its output says `wanted` (`what` names the breakage)."""
    rc, out = run_check(script, root)
    expect(name, rc == 1, f"{what} passes (exit {rc})", out)
    expect(name, wanted in out, f"the output does not say '{wanted}'", out)


@contextlib.contextmanager
def restored(root, path):
    """Puts file `path` (under `root`) back as it was when the block ends."""
    full = os.path.join(root, path)
    with open(full, encoding="utf-8") as f:
        original = f.read()
    try:
        yield
    finally:
        with open(full, "w", encoding="utf-8") as f:
            f.write(original)
