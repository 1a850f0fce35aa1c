"""Loading the repository's scripts (examples, benchmarks) as modules, for the tests that read
their settings or call their functions."""

import importlib.util
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_script(relative_path):
    """The script at ``relative_path`` (from the repository's root), imported as a module."""
    path = os.path.join(ROOT, relative_path)
    name = "script_" + relative_path.replace("/", "_")[:-3]
    module_spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module
