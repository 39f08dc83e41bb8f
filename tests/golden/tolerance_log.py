"""Numeric tolerance checks of the reference checkers, measured like the C++ tests' checks
(tests/test_util.h): when the environment variable CUSET_TOLERANCE_LOG names a file, every check
appends one line `<file relative to the repository>:<line> TAB <observed> TAB <bound>` to it
(O_APPEND: tests run in parallel processes); scripts/test-numerics.sh aggregates the lines."""
import math
import os
import sys

_ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def record(observed, bound, depth=1):
    """Appends the check made `depth` frames up (1: the caller) to $CUSET_TOLERANCE_LOG, if set."""
    path = os.environ.get("CUSET_TOLERANCE_LOG")
    if not path:
        return
    frame = sys._getframe(depth)
    site = f"{os.path.relpath(os.path.abspath(frame.f_code.co_filename), _ROOT)}:{frame.f_lineno}"
    line = f"{site}\t{float(observed)!r}\t{float(bound)!r}\n".encode()
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    try:
        os.write(fd, line)
    finally:
        os.close(fd)


def within(observed, bound):
    """observed <= bound (False for a NaN), recorded at the caller's line."""
    record(observed, bound, depth=2)
    return not math.isnan(observed) and observed <= bound


def worst(a, b):
    """The larger of two differences, NaN if either is NaN (max() would drop a NaN)."""
    return math.nan if math.isnan(a) or math.isnan(b) else max(a, b)
