"""The machine line every benchmark prints with its figures (RESULTS.md records it)."""

import importlib
import os
import platform


def machine(*packages):
    """CPU count and model, OS, GPUs, and the versions of Python, TensorFlow, Keras and
    ``packages`` (import names, e.g. ``"sklearn"``)."""
    import keras
    import tensorflow as tf

    cpu = "unknown CPU"
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f if "model name" in line)
    except (OSError, StopIteration):
        pass
    gpus = len(tf.config.list_physical_devices("GPU"))
    versions = [f"TensorFlow {tf.__version__}", f"Keras {keras.__version__}"]
    for name in packages:
        module = importlib.import_module(name)
        versions.append(f"{getattr(module, '__name__', name)} {module.__version__}")
    gpu_text = "no GPU" if not gpus else f"{gpus} GPU" + ("s" if gpus > 1 else "")
    return (
        f"{os.cpu_count()} CPU ({cpu}), {platform.system()} {platform.machine()}, {gpu_text}; "
        f"Python {platform.python_version()}, " + ", ".join(versions)
    )
