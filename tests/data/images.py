"""Small image sets shared by the digit-task tests."""

import numpy as np


def distinct_images(n=20, h=5, w=4, seed=0):
    """Images that identify themselves (random values, no two equal) and their labels."""
    rng = np.random.default_rng(seed)
    return rng.uniform(0.05, 1.0, (n, h, w)).astype("float32"), rng.integers(0, 10, n)
