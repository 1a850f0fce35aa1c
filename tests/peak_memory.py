"""The peak resident memory of a ``keras-adl`` command run in a fresh process (its own
``VmHWM``: a child's ``ru_maxrss`` starts from its parent's peak at the fork)."""

import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

_PEAK = """
import sys
from keras_adl.cli import main
try:
    main(sys.argv[1:])
finally:
    with open("/proc/self/status") as f:
        print("PEAK", next(l for l in f if l.startswith("VmHWM:")).split()[1], file=sys.stderr)
"""


_REPORT = """
with open("/proc/self/status") as f:
    print("PEAK", next(l for l in f if l.startswith("VmHWM:")).split()[1], file=sys.stderr)
"""


def cli_peak_kb(*argv, timeout=900):
    """Runs ``keras-adl ARGV`` in a fresh process; its peak resident memory in KiB (the
    command must succeed)."""
    return _peak_kb(_PEAK, argv, timeout)


def script_peak_kb(code, *argv, timeout=900):
    """Runs the Python ``code`` (``sys`` imported, ``sys.argv[1:]`` = ``ARGV``) in a fresh
    process; its peak resident memory in KiB (the code must succeed)."""
    return _peak_kb("import sys\n" + code + _REPORT, argv, timeout)


def _peak_kb(code, argv, timeout):
    command = [sys.executable, "-c", code, *map(str, argv)]
    env = dict(os.environ, PYTHONPATH=ROOT, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(command, capture_output=True, text=True, env=env, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    peaks = [line for line in done.stderr.splitlines() if line.startswith("PEAK")]
    return int(peaks[-1].split()[1])
