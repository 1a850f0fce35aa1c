"""Test configuration: two logical CPUs, seeds, warnings from our code as errors, and the
backend selection.

The suite runs on TensorFlow. With ``KERAS_BACKEND=jax`` or ``torch`` (``make test-backends``)
only the tests marked ``portable`` run: the ops tests and each layer's full harness, which use
nothing but Keras and NumPy; ``tf_only`` marks the tests of a portable module that use TensorFlow
itself (``tf.function``, ``tf.GradientTape``, SavedModel). ``cross_backend`` tests compare
``.keras`` files written by the other backends' runs and run only when
``KERAS_ADL_CROSS_BACKEND_DIR`` names the folder they share.

Tests that read Debian data (``make data``) say so with ``tests.debian_data.needs``: without
the data they skip, naming the package; in CI (``CI=true``) they fail, and so does any other
skip, so a CI run cannot pass with part of the suite left out.

Warnings issued by ``keras_adl`` modules, and the Keras warnings that signal a bug in a layer
(a mask silently dropped, unbuilt state), are turned into errors by ``filterwarnings`` in
``setup.cfg``.
"""

import os

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("KERAS_BACKEND", "tensorflow")

import pytest  # noqa: E402

# The `saved` fixture of the picture tests (tests/pictures.py); pytester runs the suite's own hooks
# on small test files (tests/test_debian_data.py).
pytest_plugins = ["tests.pictures", "pytester"]

BACKEND = os.environ["KERAS_BACKEND"]


def pytest_configure(config):
    for line in (
        "portable: runs on every Keras backend (make test-backends)",
        "tf_only: uses TensorFlow itself, inside a portable module",
        "cross_backend: loads .keras files saved by the other backends (make test-backends)",
        "debian_data(*packages): reads these Debian packages' data (tests/debian_data.py)",
    ):
        config.addinivalue_line("markers", line)
    xdist_controller = bool(getattr(config.option, "numprocesses", None)) and not hasattr(
        config, "workerinput"
    )
    if BACKEND != "tensorflow" or xdist_controller:  # (under `-n N` the workers run the tests)
        return
    # Must run before TensorFlow initialises its devices: split the one CPU into two logical
    # devices so that tf.distribute.MirroredStrategy tests have two replicas.
    import tensorflow as tf

    cpus = tf.config.list_physical_devices("CPU")
    tf.config.set_logical_device_configuration(
        cpus[0], [tf.config.LogicalDeviceConfiguration(), tf.config.LogicalDeviceConfiguration()]
    )


def pytest_collection_modifyitems(config, items):
    def runs_here(item):
        if item.get_closest_marker("cross_backend") and not os.environ.get(
            "KERAS_ADL_CROSS_BACKEND_DIR"
        ):
            return False
        if BACKEND == "tensorflow":
            return True
        return bool(item.get_closest_marker("portable")) and not item.get_closest_marker("tf_only")

    kept = [item for item in items if runs_here(item)]
    if len(kept) < len(items):
        config.hook.pytest_deselected(items=[item for item in items if not runs_here(item)])
        items[:] = kept


def pytest_runtest_setup(item):
    marker = item.get_closest_marker("debian_data")
    if marker is not None:
        from tests import debian_data

        debian_data.require(*marker.args)


def _fail_a_skip_in_ci(report):
    # In CI a skip is a failure: a missing package or extra must not pass unnoticed.
    if report.skipped and not hasattr(report, "wasxfail"):
        from tests import debian_data

        if debian_data.in_ci():
            reason = report.longrepr[2] if isinstance(report.longrepr, tuple) else report.longrepr
            report.outcome = "failed"
            report.longrepr = f"skipped in CI, which must run every test: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    _fail_a_skip_in_ci((yield).get_result())


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    _fail_a_skip_in_ci((yield).get_result())  # a whole module skipped (importorskip at the top)


def _resident_kb():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") // 1024


@pytest.fixture(autouse=True)
def _seed_and_policy(request):
    import keras

    keras.utils.set_random_seed(1234)
    keras.config.set_dtype_policy("float32")
    yield
    keras.config.set_dtype_policy("float32")
    log = os.environ.get("KERAS_ADL_TEST_MEMORY_LOG")
    if log:  # the worker's resident memory after each test (it climbs: see `make test-slow`)
        with open(log, "a") as f:
            f.write(f"{os.getpid()} {_resident_kb()} {request.node.nodeid}\n")
