"""What the picture tests share: the figures a plotting function saves (the `saved` fixture,
imported by a test module to use it), a PNG's size, and the checks that a function saved one
figure and closed it."""

import pathlib
import struct

import matplotlib
import numpy as np
import pytest
from matplotlib.figure import Figure

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture
def saved(monkeypatch):
    """The figures the plotting functions save, captured as they are saved."""
    figures = []
    original = Figure.savefig

    def savefig(self, *args, **kwargs):
        figures.append(self)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(Figure, "savefig", savefig)
    return figures


def png_size(path):
    """(width, height) in pixels from the PNG header."""
    data = pathlib.Path(path).read_bytes()
    assert data.startswith(PNG_SIGNATURE) and data[12:16] == b"IHDR"
    return struct.unpack(">II", data[16:24])


def one_closed_figure(saved):
    """The one figure saved, after checking it was closed: no figure leaks across calls."""
    assert len(saved) == 1
    assert plt.get_fignums() == []
    return saved[0]


def image_data(ax, index=0):
    """The array of ``ax``'s ``index``-th image."""
    return np.asarray(ax.get_images()[index].get_array())
