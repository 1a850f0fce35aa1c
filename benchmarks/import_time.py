"""What ``import keras_adl`` costs over ``import keras``, per backend.

For each backend, in fresh processes: the wall time of ``import keras`` (the anchor) and of
``import keras_adl`` after it (what our package adds: its modules, and whatever Keras or NumPy
modules they pull in that ``import keras`` did not), the median over ``--repeats`` runs; and,
from ``python -X importtime``, the summed self time of the ``keras_adl`` modules and the three
slowest of them. The issue's bound: ours adds at most 100 ms.

    python benchmarks/import_time.py --repeats 7
"""

import argparse
import os
import statistics
import subprocess
import sys

TIMED = """
import time
t0 = time.perf_counter()
import keras
t1 = time.perf_counter()
import keras_adl
t2 = time.perf_counter()
print(t1 - t0, t2 - t1)
"""


def _run(args, backend):
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    return subprocess.run(
        [sys.executable, *args], env=env, capture_output=True, text=True, check=True
    )


def importtime(backend):
    """``(total self ms of keras_adl modules, [(ms, module)] slowest three)``."""
    done = _run(["-X", "importtime", "-c", "import keras; import keras_adl"], backend)
    ours = []
    for line in done.stderr.splitlines():
        if not line.startswith("import time:") or "|" not in line:
            continue
        fields = [f.strip() for f in line.split(":", 1)[1].split("|")]
        if fields[0].isdigit() and fields[2].lstrip().startswith("keras_adl"):
            ours.append((int(fields[0]) / 1000, fields[2].strip()))
    return sum(ms for ms, _ in ours), sorted(ours, reverse=True)[:3]


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--backends", nargs="+", default=["tensorflow", "jax", "torch"])
    args = parser.parse_args(argv)
    print(
        "| backend | import keras (s) | + import keras_adl (ms) | keras_adl modules' self time (ms) | slowest |"
    )
    print("|---|--:|--:|--:|---|")
    for backend in args.backends:
        runs = [
            [float(v) for v in _run(["-c", TIMED], backend).stdout.split()]
            for _ in range(args.repeats)
        ]
        keras_s = statistics.median(r[0] for r in runs)
        added_ms = 1000 * statistics.median(r[1] for r in runs)
        own, slowest = importtime(backend)
        top = ", ".join(f"{name} {ms:.1f}" for ms, name in slowest)
        print(f"| {backend} | {keras_s:.2f} | {added_ms:.0f} | {own:.0f} | {top} |", flush=True)


if __name__ == "__main__":
    main()
