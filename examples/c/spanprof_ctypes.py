#!/usr/bin/env python3
"""spanprof from Python through the C API (spanprof/spanprof_c.h) and ctypes.

Usage:
  SPANPROF=1 python3 examples/c/spanprof_ctypes.py LIBRARY

LIBRARY is build/demo/runtime/libspanprof_c.so (scripts/demo; the default static
build: one shared object that holds the whole runtime) or, in a
-DBUILD_SHARED_LIBS=ON build, build/.../runtime/libspanprof.so. Writes the
trace and the summary where SPANPROF_OUT / SPANPROF_SUMMARY_OUT say, like any
spanprof program. tests/e2e/python_ctypes_test.cc runs it.
"""

import contextlib
import ctypes
import sys


class Tags(ctypes.Structure):
    """struct spanprof_tags: a site's six tags; None (NULL) leaves one unset."""

    _fields_ = [(field, ctypes.c_char_p) for field in
                ("phase", "module", "activity", "backend", "dtype", "device")]


def load(path):
    lib = ctypes.CDLL(path)
    # Declare every signature: ctypes' default (int arguments and results)
    # would truncate the 64-bit handles and tokens.
    handle, token = ctypes.c_void_p, ctypes.c_uint64
    lib.spanprof_site_get.argtypes = [ctypes.c_char_p] * 4
    lib.spanprof_site_get.restype = handle
    lib.spanprof_site_get_tagged.argtypes = [ctypes.c_char_p,
                                             ctypes.POINTER(Tags)]
    lib.spanprof_site_get_tagged.restype = handle
    lib.spanprof_key_get.argtypes = [ctypes.c_char_p]
    lib.spanprof_key_get.restype = handle
    lib.spanprof_begin.argtypes = [handle]
    lib.spanprof_begin.restype = token
    lib.spanprof_end.argtypes = [token]
    lib.spanprof_end.restype = None
    lib.spanprof_arg_int.argtypes = [handle, ctypes.c_int64]
    lib.spanprof_arg_int.restype = None
    lib.spanprof_arg_double.argtypes = [handle, ctypes.c_double]
    lib.spanprof_arg_double.restype = None
    lib.spanprof_arg_str.argtypes = [handle, ctypes.c_char_p]
    lib.spanprof_arg_str.restype = None
    lib.spanprof_heartbeat.argtypes = [ctypes.c_uint64]
    lib.spanprof_heartbeat.restype = None
    lib.spanprof_set_thread_name.argtypes = [ctypes.c_char_p]
    lib.spanprof_set_thread_name.restype = None
    lib.spanprof_session_start_from_env.argtypes = [ctypes.c_char_p]
    lib.spanprof_session_start_from_env.restype = ctypes.c_int
    lib.spanprof_session_stop.argtypes = []
    lib.spanprof_session_stop.restype = ctypes.c_int
    lib.spanprof_last_error.argtypes = []
    lib.spanprof_last_error.restype = ctypes.c_char_p
    return lib


@contextlib.contextmanager
def span(lib, site):
    token = lib.spanprof_begin(site)
    try:
        yield
    finally:
        lib.spanprof_end(token)


def main():
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    lib = load(sys.argv[1])
    if lib.spanprof_session_start_from_env(b"py.run") != 0:
        print(lib.spanprof_last_error().decode(), file=sys.stderr)
        return 2
    lib.spanprof_set_thread_name(b"python-main")
    # Sites and keys once; the strings are copied, so temporaries are fine.
    step = lib.spanprof_site_get(b"py.step", b"compute", b"python", None)
    # The key fields (backend, dtype, device) take the struct form.
    square = lib.spanprof_site_get_tagged(
        b"py.square", ctypes.byref(Tags(backend=b"cpython", dtype=b"int",
                                        device=b"cpu0")))
    index = lib.spanprof_key_get(b"index")
    scale = lib.spanprof_key_get(b"scale")
    label = lib.spanprof_key_get(b"label")
    total = 0
    for i in range(5):
        with span(lib, step):
            lib.spanprof_arg_int(index, i)
            lib.spanprof_arg_double(scale, i / 4)
            lib.spanprof_arg_str(label, f"step-{i}".encode())
            with span(lib, square):
                total += sum(k * k for k in range(1000 * (i + 1)))
                lib.spanprof_heartbeat(i + 1)
    print(f"spanprof_ctypes: total {total}")
    if lib.spanprof_session_stop() != 0:
        print(lib.spanprof_last_error().decode(), file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
