"""pairs without a translation memory streamed from disk: splits by a keyed hash of each source,
the tokenizer's bounded sample, the fitting pairs written once and batched as the in-memory
dataset batches them, ``--memory auto`` on too many pairs, and memory flat in the corpus."""

import json

import numpy as np
import pytest
import tensorflow as tf

from keras_adl import recipes
from keras_adl.recipes.sequences import data, tasks
from keras_adl.recipes.sequences.streaming import StreamedPairs, split_bucket
from keras_adl.training.rundir import RecipeError
from tests.peak_memory import script_peak_kb

WORDS = {
    "open": "ouvrir",
    "file": "fichier",
    "save": "enregistrer",
    "new": "nouveau",
    "window": "fenêtre",
    "close": "fermer",
    "Ёлка": "sapin",
    "東京": "Tokyo",
}
OPTIONS = dict(
    tokens="subword", vocab_size=200, copy_through="auto", target_case=None, max_length=12
)


def _pairs(count, seed=0, longest=6):
    rng = np.random.default_rng(seed)
    out = []
    for i in range(count):
        words = list(rng.choice(list(WORDS), size=int(rng.integers(1, longest + 1))))
        out.append((" ".join(words) + f" n{i}", " ".join(WORDS[w] for w in words) + f" n{i}"))
    return out


def _tsv(path, pairs):
    path.write_text("".join(f"{s}\t{t}\n" for s, t in pairs), encoding="utf-8")
    return str(path)


def _fitted(streamed):
    """The fitting pairs a `StreamedPairs` wrote, read back (slotted)."""
    records = tf.data.TFRecordDataset(streamed._path("fit")).as_numpy_iterator()
    return [tuple(r.decode("utf-8").split("\x00")) for r in records]


def test_the_split_is_a_keyed_hash_of_the_source_and_never_trains_on_held_out_pairs(tmp_path):
    pairs = _pairs(400)
    pairs += [(s, t + " bis") for s, t in pairs[:40]]  # a repeated source: one split
    streamed = StreamedPairs(_tsv(tmp_path / "p.tsv", pairs), 10**6, 0.1)
    held = set(streamed.held_out[0])
    assert all(split_bucket(s) < 1000 for s in held)
    assert 20 <= len(set(held)) <= 65  # a tenth of 400 distinct sources
    assert streamed.pairs == 440
    assert streamed.train_pairs + len(streamed.held_out[0]) == 440
    assert not held & set(streamed.sample[0])
    again = StreamedPairs(str(tmp_path / "p.tsv"), 10**6, 0.1)  # a resumed run's split
    assert again.held_out == streamed.held_out


def test_fitting_pairs_and_batches_are_those_of_the_in_memory_reader(tmp_path):
    pairs = _pairs(300, seed=1, longest=14)
    streamed = StreamedPairs(_tsv(tmp_path / "p.tsv", pairs), 10**6, 0.1)
    tokenizer = data.pair_tokenizer(*streamed.sample, OPTIONS, cased=True)
    sources, targets = streamed.sample  # every training pair (fewer than the sample's cap)
    expected = data.fitting_pairs(tokenizer, sources, targets, 12)
    assert 0 < streamed.fit(tokenizer, 12) == len(expected[0]) < len(sources)  # some too long
    assert _fitted(streamed) == list(zip(*tokenizer.slot_pairs(*expected[:2])))
    size = streamed.fitting
    batches, steps = streamed.dataset(tokenizer, size, 12)
    assert steps == 1
    ((inputs, target),) = list(batches)
    reference = next(iter(tokenizer.dataset(*expected[:2], size, 12, 12, shuffle=False)))
    for got, want in [(inputs["source"], reference[0]["source"]), (target, reference[1])]:
        assert sorted(map(tuple, got.numpy())) == sorted(map(tuple, want.numpy()))


def test_samples_caps_training_and_the_held_out_pairs_stay(tmp_path):
    path = _tsv(tmp_path / "p.tsv", _pairs(500, seed=2))
    full, capped = StreamedPairs(path, 10**6, 0.1), StreamedPairs(path, 30, 0.1)
    assert capped.train_pairs == 30 and capped.held_out == full.held_out


def test_two_pairs_give_one_to_train_and_one_held_out(tmp_path):
    streamed = StreamedPairs(_tsv(tmp_path / "p.tsv", [("Un", "One"), ("Deux", "Two")]), 10, 0.05)
    assert streamed.train_pairs == 1 and len(streamed.held_out[0]) == 1


def test_a_validation_file_replaces_the_held_out_split(tmp_path):
    path = _tsv(tmp_path / "p.tsv", _pairs(100, seed=3))
    streamed = StreamedPairs(path, 10**6, 0.1, validation=(["Ёлка"], ["sapin"]))
    assert streamed.train_pairs == 100 and streamed.held_out == (["Ёлка"], ["sapin"])


@pytest.mark.parametrize(
    "content, message",
    [
        (b"a\tb\nc\td\n\xff\tx\n", "p.tsv:3: not valid UTF-8"),
        (b"a\tb\nno tab\n", "p.tsv:2: expected 'source<TAB>target'"),
        (b"\n\n", "gives 0 pairs to train on"),
    ],
)
def test_bad_files_give_one_line_naming_the_file_and_line(tmp_path, content, message):
    path = tmp_path / "p.tsv"
    path.write_bytes(content)
    with pytest.raises(RecipeError, match=message) as error:
        StreamedPairs(str(path), 10, 0.1)
    assert "\n" not in str(error.value)


def test_memory_auto_streams_only_more_pairs_than_a_memory_keeps(tmp_path, monkeypatch, capsys):
    path = _tsv(tmp_path / "p.tsv", _pairs(60))
    options = {"data": path, "memory": "auto"}
    assert not tasks.PairsTask.streams(options)
    monkeypatch.setattr(tasks, "MEMORY_MAX_PAIRS", 50)
    assert tasks.PairsTask.streams(options)
    assert "holds more than 50 pairs" in capsys.readouterr().out
    assert tasks.PairsTask.streams(dict(options, memory="off"))
    assert not tasks.PairsTask.streams(dict(options, memory="input"))
    assert not tasks.PairsTask.streams({"data": "gettext:fr", "memory": "off"})


@pytest.mark.slow  # a pairs run, ~20 s
def test_pairs_train_without_a_memory_on_streamed_pairs(tmp_path):
    path = _tsv(tmp_path / "p.tsv", _pairs(600, seed=4))
    out = tmp_path / "run"
    recipes.train(
        "pairs", str(out), epochs=2, batch_size=16, data=path, memory="off", jit_compile=False
    )
    record = json.loads((out / "run.json").read_text())
    assert record["streamed"] and record["memory"] == "off"
    assert record["train_pairs"] + record["held_out_pairs"] == 600
    assert record["metrics"]["held_out_pairs"] == record["held_out_pairs"]
    assert not (out / "memory.json").exists()


# What a run holds of its pairs: the pass, the tokenizer, the fitting pass, batches. The caps
# on what is kept (the tokenizer's sample, the held-out pairs) are lowered so that both sizes
# reach them: what is left to grow is what is read.
_DATA_PATH = """
from keras_adl.recipes.sequences import data, streaming
streaming.TOKENIZER_SAMPLE, streaming.HELD_OUT_KEPT = 5_000, 1_000
streamed = streaming.StreamedPairs(sys.argv[1], 10**9, 0.05)
options = dict(tokens="subword", vocab_size=500, copy_through="auto", max_length=40)
tokenizer = data.pair_tokenizer(*streamed.sample, options, cased=True)
streamed.fit(tokenizer, 40)
dataset, steps = streamed.dataset(tokenizer, 64, 40)
assert sum(1 for _ in dataset.take(200)) == 200
"""


def _corpus_file(path, count, seed=0):
    """``count`` pairs of 16 to 24 words (about 300 bytes a pair)."""
    rng = np.random.default_rng(seed)
    words = np.array([f"w{i}" for i in range(300)])
    with open(path, "w", encoding="utf-8") as f:
        for i, n in enumerate(rng.integers(16, 25, size=count)):
            source = " ".join(words[rng.integers(0, 300, size=n)])
            f.write(f"{source} {i}\t{source.upper()} {i}\n")
    return str(path)


@pytest.mark.slow  # two passes over 12 and 48 MB in fresh processes, ~2 min
def test_pairs_peak_memory_barely_moves_when_the_corpus_grows_four_times(tmp_path):
    peaks = []
    for count in (40_000, 160_000):
        path = _corpus_file(tmp_path / f"p{count}.tsv", count)
        peaks.append(script_peak_kb(_DATA_PATH, path))
    # streamed: +3 MB here; the same pairs also held as lists of strings: +32 MB
    assert peaks[1] - peaks[0] < 15_000, peaks
