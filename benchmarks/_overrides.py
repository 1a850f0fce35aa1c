"""``--set KEY=VALUE`` for the benchmarks that study a recipe's settings."""

import argparse


def parse_setting(text):
    """``KEY=VALUE`` as ``(key, value)``: an int, a float, ``None`` for ``none``, a bool for
    ``true`` / ``false``, a tuple of those for comma-separated values (``16,32``; ``()`` for
    an empty one), or (otherwise) the string."""
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected KEY=VALUE, received {text!r}")
    if value == "()":
        return key, ()
    if "," in value:
        return key, tuple(parse_setting(f"{key}={item}")[1] for item in value.split(",") if item)
    if value.lower() == "none":
        return key, None
    if value.lower() in ("true", "false"):
        return key, value.lower() == "true"
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
