"""Importing keras-adl loads only what the active backend needs."""

import os
import subprocess
import sys

import keras
import pytest

pytestmark = pytest.mark.portable

# Optional or TensorFlow-only packages that `import keras_adl` must not load by itself.
HEAVY = ("tensorflow_text", "keras_tuner", "matplotlib", "sklearn", "keras_hub", "gensim")
CHECK = """
import sys
import keras
before = set(sys.modules)
import keras_adl, keras_adl.ops, keras_adl.layers, keras_adl.models
print(" ".join(sorted({m.split(".")[0] for m in set(sys.modules) - before})))
"""


def test_import_keras_adl_adds_no_heavy_or_tensorflow_only_module():
    backend = keras.backend.backend()
    env = dict(os.environ, KERAS_BACKEND=backend, TF_CPP_MIN_LOG_LEVEL="3")
    done = subprocess.run(
        [sys.executable, "-c", CHECK], env=env, capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    added = set(done.stdout.split())
    forbidden = set(HEAVY) | ({"tensorflow"} if backend != "tensorflow" else set())
    assert "keras_adl" in added
    assert not added & forbidden, f"import keras_adl on {backend} loads {sorted(added & forbidden)}"
