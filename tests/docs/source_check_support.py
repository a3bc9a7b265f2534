"""What the tests of the source checks (scripts/check-layers,
scripts/check-names) share: a copy of the source folders to break, a run of
the check on it, and a failure that shows the check's output.

    from source_check_support import copy_sources, expect, run_check
"""

import os
import shutil
import subprocess
import sys


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
