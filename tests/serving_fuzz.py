"""A fuzz suite for exported text models: every ``serving_default`` answers every input.

`fuzz_strings` draws seeded strings of every category a user's text box can send (empty,
white space, NUL bytes, control characters, emoji, right-to-left and mixed scripts, combining
marks, invalid UTF-8, huge inputs, ordinary text); `check_answers_everything` feeds them to a
reloaded SavedModel's signature in batches of 0, 1, a mix of every category, and 10,000, and
checks that no call raises, every output has its documented dtype and shape (batch first),
numbers are finite, and the ``empty`` / ``truncated`` / ``invalid_utf8`` flags say what the
input was.
"""

import random

import numpy as np
import tensorflow as tf

ORDINARY = [
    "3 May 1998",
    "Tuesday, 14 May 2002",
    "The old man and the sea",
    "File not found.",
    "Don't panic!",
    "12/31/1999",
]
WHITE_SPACE = [" ", "\t", "\n", "\r\n", "\u00a0", "\u202f", "\u3000", "\u2028"]
CONTROL = ["\x07", "\x1b[31m", "\x08", "\x7f", "\u200b", "\u200e", "\u2066"]
EMOJI = ["😀", "👍🏽", "🇫🇷", "👨‍👩‍👧", "🧑🏿‍🚀", "❤️", "🫠"]
RIGHT_TO_LEFT = ["مرحبا بالعالم", "שלום עולם", "\u202bשלום\u202c", "سلام 123 دنیا"]
SCRIPTS = ["Straße", "Москва", "東京は大きい。", "Ελληνικά", "한국어", "हिन्दी", "ÉCHEC", "ﬁle"]
COMBINING = ["e\u0301", "a\u0308\u0308\u0308", "Z\u0351\u0352\u0357\u035b"]
INVALID = [b"\xff\xfe", b"\xc3", b"caf\xc3", b"\xed\xa0\x80", b"\xf0\x28\x8c\x28", b"\x80abc"]

CATEGORIES = (
    "ordinary",
    "empty",
    "white_space",
    "nul",
    "control",
    "emoji",
    "right_to_left",
    "mixed_scripts",
    "combining",
    "invalid_utf8",
    "huge",
)


def _draw(rng, category):
    """One input of ``category``, as UTF-8 bytes (or invalid bytes)."""
    if category == "ordinary":
        return rng.choice(ORDINARY).encode()
    if category == "empty":
        return b""
    if category == "white_space":
        return "".join(rng.choices(WHITE_SPACE, k=rng.randint(1, 6))).encode()
    if category == "nul":
        return rng.choice(["\x00", "a\x00b", "\x00\x00 3 may", "1998\x00"]).encode()
    if category == "control":
        return (rng.choice(CONTROL) + rng.choice(ORDINARY) + rng.choice(CONTROL)).encode()
    if category == "emoji":
        return " ".join(rng.choices(EMOJI + ORDINARY[:2], k=rng.randint(1, 5))).encode()
    if category == "right_to_left":
        return rng.choice(RIGHT_TO_LEFT).encode()
    if category == "mixed_scripts":
        return " ".join(rng.choices(SCRIPTS + ORDINARY, k=rng.randint(2, 6))).encode()
    if category == "combining":
        return (rng.choice(COMBINING) * rng.randint(1, 50)).encode()
    if category == "invalid_utf8":
        return rng.choice(ORDINARY).encode()[: rng.randint(0, 5)] + rng.choice(INVALID)
    if category == "huge":
        piece = rng.choice(ORDINARY + SCRIPTS) + " "
        return (piece * (rng.randint(5_000, 20_000) // len(piece))).encode()
    raise ValueError(category)


def fuzz_strings(per_category=100, seed=0, categories=CATEGORIES):
    """``{category: [bytes]}``: ``per_category`` seeded inputs of each category."""
    rng = random.Random(seed)
    return {c: [_draw(rng, c) for _ in range(per_category)] for c in categories}


def signature(export_dir):
    """The reloaded export's ``serving_default`` and the name of its one string input."""
    loaded = tf.saved_model.load(export_dir)
    serve = loaded.signatures["serving_default"]
    (name,) = serve.structured_input_signature[1]
    return serve, name, loaded


def _check(outputs, batch, shapes):
    assert set(outputs) == set(shapes), sorted(outputs)
    for key, (dtype, shape) in shapes.items():
        value = outputs[key]
        assert value.dtype == dtype, (key, value.dtype)
        assert value.shape.rank == len(shape) + 1, (key, value.shape)
        assert value.shape[0] == batch, (key, value.shape, batch)
        for got, want in zip(value.shape[1:], shape):
            assert want is None or got == want, (key, value.shape, shape)
        if dtype.is_floating:
            assert np.all(np.isfinite(value.numpy())), key


def check_answers_everything(
    export_dir, shapes, per_category=100, seed=0, large_batch=10_000, text=True
):
    """Feeds the fuzz suite to the export's ``serving_default``; returns the count of inputs
    tried per category (and per batch size) for the record.

    Args:
        export_dir: a SavedModel whose signature takes one ``tf.string [B]`` input.
        shapes: ``{output: (dtype, trailing shape)}``: every output, its dtype and its shape
            after the batch dimension (``None`` where it varies).
        per_category: inputs drawn of each category, served one category per batch.
        seed: the seed of the draws.
        large_batch: the size of the last batch (ordinary and mixed inputs).
        text: the export reads text: ordinary text is not ``empty`` and ``huge`` inputs come
            back ``truncated`` (not so for an export that reads numbers).
    """
    serve, name, _ = signature(export_dir)
    counts = {}
    strings = fuzz_strings(per_category, seed)

    def call(batch):
        outputs = serve(**{name: tf.constant(batch, tf.string)})
        _check(outputs, len(batch), shapes)
        return {k: v.numpy() for k, v in outputs.items()}

    call([])
    counts["batch of 0"] = 1
    call([b""])
    counts["batch of 1"] = 1
    for category, batch in strings.items():
        out = call(batch)
        counts[category] = len(batch)
        if "empty" in out:
            if category in ("empty", "white_space"):
                assert out["empty"].all(), category
            readable = ("ordinary", "mixed_scripts", "right_to_left", "huge")
            if text and category in readable:
                assert not out["empty"].any(), category
        if "invalid_utf8" in out:
            assert out["invalid_utf8"].all() == (category == "invalid_utf8"), category
            assert out["invalid_utf8"].any() == (category == "invalid_utf8"), category
        if text and category == "huge":
            assert out["truncated"].all()
        if "truncated" in out and category in ("empty", "white_space"):
            assert not out["truncated"].any(), category
    mixed = [s for batch in strings.values() for s in batch]
    random.Random(seed).shuffle(mixed)
    call(mixed)
    counts["mixed batch"] = len(mixed)
    ordinary = fuzz_strings(large_batch // 2, seed + 1, ("ordinary", "mixed_scripts"))
    call(ordinary["ordinary"] + ordinary["mixed_scripts"])
    counts[f"batch of {large_batch}"] = large_batch
    return counts


ARRAY_CATEGORIES = ("zeros", "ones", "uniform", "nan", "infinite", "negative", "huge")


def _array(rng, category, shape):
    if category == "zeros":
        return np.zeros(shape, "float32")
    if category == "ones":
        return np.ones(shape, "float32")
    x = rng.uniform(0.0, 1.0, shape).astype("float32")
    spots = rng.random(shape) < 0.05
    spots.flat[rng.integers(spots.size)] = True  # at least one value of each example
    if category == "nan":
        x[spots] = np.nan
    elif category == "infinite":
        x[spots] = np.where(rng.random(spots.sum()) < 0.5, np.inf, -np.inf)
    elif category == "negative":
        x = -x
    elif category == "huge":
        x = x * 1e30
    return x


def check_arrays_answered(export_dir, example_shape, shapes, per_category=20, large_batch=10_000):
    """The array counterpart of `check_answers_everything`, for exports of images or
    sequences: batches of 0, 1, each category of values (zeros, ones, uniform, NaN, infinite,
    negative, huge) and ``large_batch`` uniform examples; no call raises, outputs have their
    documented dtypes and shapes and are finite, and ``invalid_values`` flags the examples
    whose values were not readable as given. Returns the count of examples per category."""
    loaded = tf.saved_model.load(export_dir)
    serve = loaded.signatures["serving_default"]
    (name,) = serve.structured_input_signature[1]
    rng = np.random.default_rng(0)
    counts = {}

    def call(batch):
        outputs = serve(**{name: tf.constant(batch)})
        _check(outputs, len(batch), shapes)
        return {k: v.numpy() for k, v in outputs.items()}

    call(np.zeros((0, *example_shape), "float32"))
    counts["batch of 0"] = 1
    for category in ARRAY_CATEGORIES:
        batch = np.stack([_array(rng, category, example_shape) for _ in range(per_category)])
        out = call(batch)
        counts[category] = per_category
        flagged = out["invalid_values"]
        if category in ("nan", "infinite"):
            assert flagged.all(), category
        if category in ("zeros", "uniform"):
            assert not flagged.any(), category
    call(_array(rng, "uniform", (1, *example_shape)))
    counts["batch of 1"] = 1
    call(rng.uniform(0.0, 1.0, (large_batch, *example_shape)).astype("float32"))
    counts[f"batch of {large_batch}"] = large_batch
    return counts
