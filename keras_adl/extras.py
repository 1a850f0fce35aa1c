"""The optional dependencies (setup.cfg's extras) and the one error that names the missing one.

``pip install keras-adl`` brings what the layers, models, recipes and the ``keras-adl``
command need; pictures need ``keras-adl[plots]`` (matplotlib), scikit-learn's bundled digits
and the t-SNE map ``keras-adl[data]``, ``keras-adl tune`` ``keras-adl[tuner]``.
"""

import importlib
import importlib.util

# The distribution (what pip installs) of each optional top-level module.
DISTRIBUTIONS = {
    "matplotlib": "matplotlib",
    "sklearn": "scikit-learn",
    "keras_tuner": "keras-tuner",
}


class MissingExtra(ModuleNotFoundError):
    """An optional dependency is not installed; the message names the extra that brings it,
    e.g. ``drawing pictures needs matplotlib: pip install 'keras-adl[plots]'``.

    Attributes:
        name: the missing module (as in any ``ModuleNotFoundError``).
        package: its distribution, e.g. ``scikit-learn``.
        extra: the keras-adl extra that installs it, e.g. ``data``.
    """

    def __init__(self, module, extra, what):
        top = module.split(".")[0]
        self.package = DISTRIBUTIONS.get(top, top)
        self.extra = extra
        super().__init__(f"{what} needs {self.package}: pip install 'keras-adl[{extra}]'", name=top)


def require(module, extra, what):
    """``module`` imported, or `MissingExtra` naming ``extra`` when it is not installed.

    Args:
        module: e.g. ``"matplotlib.pyplot"``.
        extra: the keras-adl extra that installs it, e.g. ``"plots"``.
        what: what needs it, the subject of the message (``"drawing pictures"``).

    Raises:
        MissingExtra: ``module`` (or its package) is not installed. A module missing *inside*
            an installed package (a broken install) raises its own ``ModuleNotFoundError``.
    """
    try:
        return importlib.import_module(module)
    except ModuleNotFoundError as error:
        if error.name is None or not (module + ".").startswith(error.name + "."):
            raise
        raise MissingExtra(module, extra, what) from None


def require_spec(module, extra, what):
    """The import spec of the top-level ``module`` without importing it (`require` for a
    module that is slow to import, or only read from); `MissingExtra` when not installed."""
    spec = importlib.util.find_spec(module)
    if spec is None:
        raise MissingExtra(module, extra, what)
    return spec
