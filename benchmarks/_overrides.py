"""``--set KEY=VALUE`` and ``--decay`` for the benchmarks that study a recipe's settings."""

import argparse


def parse_setting(text):
    """``KEY=VALUE`` as ``(key, value)``: an int, a float, ``None`` for ``none``, or
    (otherwise) the string."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, received {text!r}")
    if value.lower() == "none":
        return key, None
    try:
        number = float(value)
    except ValueError:
        return key, value
    return key, int(number) if number.is_integer() and "." not in value else number


def add_set_argument(parser, what, flag="--set"):
    """Add ``flag KEY=VALUE ...`` (a list of ``(key, value)``, default empty) to ``parser``;
    ``what`` names the settings it overrides in the help."""
    parser.add_argument(
        flag,
        nargs="+",
        default=[],
        type=parse_setting,
        metavar="KEY=VALUE",
        help=f"override {what} (the recipe's setting names)",
    )


def add_decay_argument(parser):
    """Add ``--decay``: the learning rate decays (cosine) over the run."""
    parser.add_argument(
        "--decay",
        action="store_true",
        help="cosine learning-rate decay to 1%% of the initial rate over the run",
    )


def decayed(learning_rate, steps):
    """``learning_rate`` decaying along a cosine to 1% of itself over ``steps`` steps (the
    recipes' `cosine_decay`)."""
    from keras_adl.recipes.base import cosine_decay

    return cosine_decay(learning_rate, steps, final_fraction=0.01)
