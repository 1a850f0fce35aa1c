"""How fast `keras-adl` answers before any training: `--help`, `list`, a task's help and an
argument error, against the import of the package with TensorFlow (what every command paid
before the CLI parsed its arguments first).

    python benchmarks/cli_startup.py --repeats 5
"""

import argparse
import os
import statistics
import subprocess
import sys
import time

COMMANDS = {
    "keras-adl --help": ["--help"],
    "keras-adl list": ["list"],
    "keras-adl train copy --help": ["train", "copy", "--help"],
    "keras-adl train poems --out x (error)": ["train", "poems", "--out", "x"],
    "keras-adl export no/run y (error)": ["export", "no/such/run", "y"],
}
# The anchor: importing keras_adl with Keras and TensorFlow, as every command did before.
ANCHOR = [sys.executable, "-c", "import keras_adl.layers"]


def seconds(argv, repeats):
    times = []
    env = dict(os.environ, TF_CPP_MIN_LOG_LEVEL="3")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run(argv, capture_output=True, env=env, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args(argv)
    anchor = seconds(ANCHOR, args.repeats)
    print(f"median of {args.repeats} runs; anchor: `import keras_adl.layers` {anchor:.2f} s")
    print("| command | seconds | anchor / command |")
    print("|---|---:|---:|")
    for name, command in COMMANDS.items():
        took = seconds([sys.executable, "-m", "keras_adl", *command], args.repeats)
        print(f"| `{name}` | {took:.2f} | {anchor / took:.0f} |")


if __name__ == "__main__":
    main()
