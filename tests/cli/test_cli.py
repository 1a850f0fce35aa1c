"""The keras-adl command line: the delivery path end to end, and its one-line errors."""

import json
import os
import subprocess
import sys
import zipfile

import keras
import numpy as np
import pytest

from keras_adl import cli, recipes
from keras_adl.recipes.sequences.retrieval import SCORE_LEVELS


def _run(argv, capsys):
    code = cli.main(argv)
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.slow  # an end-to-end CLI run
def test_train_export_predict_dates(tmp_path, capsys):
    run_dir, export_dir = str(tmp_path / "run"), str(tmp_path / "export")
    code, out, _ = _run(
        [
            "train",
            "dates",
            "--samples",
            "128",
            "--epochs",
            "1",
            "--batch-size",
            "32",
            "--out",
            run_dir,
        ],
        capsys,
    )
    assert code == 0
    for name in ("model.keras", "run.json", "attention.png"):
        assert os.path.isfile(os.path.join(run_dir, name)), name
    assert "held_out_exact_match" in json.load(open(os.path.join(run_dir, "run.json")))["metrics"]
    assert not os.path.exists(os.path.join(run_dir, "backup"))  # removed after a finished run
    assert _run(["export", run_dir, export_dir], capsys)[0] == 0
    code, out, _ = _run(["predict", export_dir, "3 May 1998", "12/31/1999"], capsys)
    assert code == 0
    lines = out.strip().splitlines()
    assert [line.split("\t")[0] for line in lines] == ["3 May 1998", "12/31/1999"]
    # An empty input gets its own line, in order; the others are still served. Invalid UTF-8
    # (as a shell passes raw bytes: lone surrogates in Python) is answered, with a warning.
    bad = b"3 may 1998\xff".decode("utf-8", "surrogateescape")
    code, out, err = _run(["predict", export_dir, "3 May 1998", " ", bad, "12/31/1999"], capsys)
    assert code == 1 and err.splitlines() == [
        "keras-adl: warning: input 3: invalid UTF-8, read with U+FFFD in place of the bad bytes",
        "keras-adl: error: 1 of 4 input(s) got no answer (input 2: empty input: nothing to read)",
    ]
    rows = [line.split("\t") for line in out.splitlines()]
    assert [r[0] for r in rows] == ["3 May 1998", " ", "3 may 1998\ufffd", "12/31/1999"]
    assert rows[1][1] == "(empty input: nothing to read)"
    assert [rows[0][1], rows[3][1]] == [line.split("\t")[1] for line in lines]


@pytest.mark.slow  # an end-to-end CLI run
def test_train_export_predict_sort(tmp_path, capsys):
    run_dir, export_dir = str(tmp_path / "sort"), str(tmp_path / "sort_export")
    assert (
        _run(["train", "sort", "--samples", "64", "--epochs", "1", "--out", run_dir], capsys)[0]
        == 0
    )
    assert _run(["export", run_dir, export_dir], capsys)[0] == 0
    code, out, _ = _run(["predict", export_dir, "0.5 0.1 0.9", "0.3, 0.2, 0.1"], capsys)
    assert code == 0
    values = [sorted(line.split("\t")[1].split()) for line in out.strip().splitlines()]
    assert values == [
        sorted(["0.5000", "0.1000", "0.9000"]),
        sorted(["0.3000", "0.2000", "0.1000"]),
    ]
    # Inputs of different counts are each sorted over their own numbers; an input that is not
    # a list of numbers gets a line saying so and the others are still answered.
    code, out, err = _run(["predict", export_dir, "0.5 0.1", "0.5 zero 0.1", "0.3 0.2 0.1"], capsys)
    rows = [line.split("\t") for line in out.strip().splitlines()]
    assert code == 1 and [r[0] for r in rows] == ["0.5 0.1", "0.5 zero 0.1", "0.3 0.2 0.1"]
    assert sorted(rows[0][1].split()) == ["0.1000", "0.5000"]
    assert rows[1][1] == "(not a list of numbers)" and len(rows[2][1].split()) == 3
    assert (
        err == "keras-adl: error: 1 of 3 input(s) got no answer (input 2: not a list of numbers)\n"
    )


@pytest.mark.slow  # ~15 s; the transformer's training and export are tested in tests/models
def test_train_export_the_transformer_seq2seq(tmp_path, capsys):
    transformer_dir = str(tmp_path / "transformer")
    assert (
        _run(
            [
                "train",
                "dates",
                "--model",
                "transformer_seq2seq",
                "--samples",
                "64",
                "--epochs",
                "1",
                "--out",
                transformer_dir,
            ],
            capsys,
        )[0]
        == 0
    )
    assert _run(["export", transformer_dir, str(tmp_path / "t_export")], capsys)[0] == 0


@pytest.mark.slow  # an end-to-end CLI run: make test-slow (the families' layers, models and
# exports are tested in the fast suite)
def test_train_export_predict_copy_with_an_ntm(tmp_path, capsys):
    run_dir, export_dir = str(tmp_path / "copy"), str(tmp_path / "copy_export")
    code, out, err = _run(
        ["train", "copy", "--model", "ntm", "--samples", "64", "--epochs", "1", "--out", run_dir],
        capsys,
    )
    assert code == 0, err
    metrics = json.load(open(os.path.join(run_dir, "run.json")))["metrics"]
    assert {"held_out_bit_errors_per_sequence", "bit_errors_per_sequence_length_50"} <= set(metrics)
    assert os.path.isfile(os.path.join(run_dir, "addressing.png"))
    assert _run(["export", run_dir, export_dir], capsys)[0] == 0
    code, out, _ = _run(["predict", export_dir, "10110010", "01100110", "11110000"], capsys)
    assert code == 0
    rows = [line.split("\t") for line in out.strip().splitlines()]
    assert [r[0] for r in rows] == ["10110010", "01100110", "11110000"]
    assert all(len(r[1]) == 8 and set(r[1]) <= {"0", "1"} for r in rows)
    code, _, err = _run(["predict", export_dir, "1011", "0110"], capsys)
    assert code == 1 and "copies 8-bit vectors; received 4 bits" in err


@pytest.mark.slow  # ~20 s; the HyperModels' builds are tested in tests/recipes
def test_tune_copy_with_an_ntm(tmp_path, capsys):
    code, out, err = _run(
        [
            "tune",
            "copy",
            "--model",
            "ntm",
            "--trials",
            "1",
            "--samples",
            "64",
            "--out",
            str(tmp_path / "tune"),
        ],
        capsys,
    )
    assert code == 0, err
    best = json.loads(out.strip().splitlines()[-1])["best_hyperparameters"]
    assert {"controller_units", "memory_size", "learning_rate"} <= set(best)


def _write_png(path, image):
    import numpy as np
    import tensorflow as tf

    pixels = np.round(np.clip(image, 0, 1) * 255).astype("uint8")
    tf.io.write_file(path, tf.io.encode_png(pixels))
    return path


@pytest.mark.slow  # an end-to-end CLI run: make test-slow (the families' layers, models and
# exports are tested in the fast suite)
def test_train_export_predict_ram(tmp_path, capsys):
    import numpy as np

    from keras_adl.data.image_sources import load_sklearn_digits
    from keras_adl.data.translated_digits import translate_digits

    run_dir, export_dir = str(tmp_path / "ram"), str(tmp_path / "ram_export")
    code, _, err = _run(
        [
            "train",
            "translated_digits",
            "--model",
            "ram",
            "--samples",
            "128",
            "--epochs",
            "1",
            "--out",
            run_dir,
        ],
        capsys,
    )
    assert code == 0, err
    metrics = json.load(open(os.path.join(run_dir, "run.json")))["metrics"]
    assert {"held_out_error", "held_out_glimpses_on_digit"} == set(metrics)
    assert os.path.getsize(os.path.join(run_dir, "glimpses.png")) > 1000
    # the task's cosine decay spans this run: 1 epoch of 115 // 64 batches (13 of the 128
    # digits are the development split)
    import keras

    assert json.load(open(os.path.join(run_dir, "run.json")))["development_digits"] == 13
    optimizer = keras.models.load_model(os.path.join(run_dir, "model.keras")).optimizer
    schedule = keras.optimizers.schedules.deserialize(optimizer.get_config()["learning_rate"])
    assert schedule.decay_steps == 1
    assert _run(["export", run_dir, export_dir], capsys)[0] == 0
    images, labels = load_sklearn_digits(16)
    canvases, _, _ = translate_digits(images[:2], labels[:2], 32, rng=0)
    paths = [_write_png(str(tmp_path / f"digit{i}.png"), canvases[i]) for i in range(2)]
    np.save(str(tmp_path / "digit.npy"), canvases[0, :, :, 0])
    code, out, err = _run(["predict", export_dir, *paths, str(tmp_path / "digit.npy")], capsys)
    assert code == 0, err
    rows = [line.split("\t") for line in out.strip().splitlines()]
    assert [r[0] for r in rows] == paths + [str(tmp_path / "digit.npy")]
    assert all(r[1] in "0123456789" and r[3].count("(") == 4 for r in rows)
    assert rows[0][1:3] == rows[2][1:3]  # the PNG and the array of one image agree
    small = _write_png(str(tmp_path / "small.png"), np.zeros((16, 16, 1)))
    code, _, err = _run(["predict", export_dir, small], capsys)
    assert code == 1 and "reads 32×32 grayscale images" in err


@pytest.mark.slow  # an end-to-end CLI run
def test_train_export_predict_dram(tmp_path, capsys):
    from keras_adl.data.digit_strips import digit_strips
    from keras_adl.data.image_sources import load_sklearn_digits

    run_dir, export_dir = str(tmp_path / "dram"), str(tmp_path / "dram_export")
    command = ["train", "digit_strips_glimpses", "--samples", "128", "--epochs", "1"]
    code, _, err = _run([*command, "--out", run_dir], capsys)
    assert code == 0, err
    metrics = json.load(open(os.path.join(run_dir, "run.json")))["metrics"]
    assert {
        "held_out_exact_match",
        "held_out_token_accuracy",
        "held_out_pixels_seen",
        "held_out_reading_order",
    } == set(metrics)
    assert 0 < metrics["held_out_pixels_seen"] <= 1
    assert os.path.getsize(os.path.join(run_dir, "glimpses.png")) > 1000
    # the learning rate decays over this run
    with zipfile.ZipFile(os.path.join(run_dir, "model.keras")) as archive:
        config = json.loads(archive.read("config.json"))
    schedule = config["compile_config"]["optimizer"]["config"]["learning_rate"]
    # 1 epoch of 115 // 64 batches: 13 of the 128 digits are the development split
    assert schedule["class_name"] == "CosineDecay" and schedule["config"]["decay_steps"] == 1
    assert _run(["export", run_dir, export_dir], capsys)[0] == 0
    images, labels = load_sklearn_digits(16)
    strips, _, _ = digit_strips(images, labels, 2, rng=0)
    paths = [_write_png(str(tmp_path / f"strip{i}.png"), strips[i]) for i in range(2)]
    code, out, err = _run(["predict", export_dir, *paths], capsys)
    assert code == 0, err
    rows = [line.split("\t") for line in out.strip().splitlines()]
    assert [r[0] for r in rows] == paths
    # A caption of digits (possibly empty after one epoch) and the 12 glimpses (4 symbols × 3).
    assert all(set(r[1]) <= set("0123456789 ") and r[2].count("(") == 12 for r in rows)


@pytest.mark.slow  # an end-to-end CLI run
def test_train_export_predict_whole_image_baseline(tmp_path, capsys):
    from keras_adl.data.image_sources import load_sklearn_digits
    from keras_adl.data.translated_digits import translate_digits

    run_dir, export_dir = str(tmp_path / "convnet"), str(tmp_path / "convnet_export")
    command = ["train", "cluttered_digits_100", "--model", "convnet", "--samples", "128"]
    code, _, err = _run([*command, "--epochs", "1", "--out", run_dir], capsys)
    assert code == 0, err
    record = json.load(open(os.path.join(run_dir, "run.json")))
    assert set(record["metrics"]) == {"held_out_error"}
    assert record["image_shape"] == [96, 96, 1]  # sklearn's 16-pixel digits: a 6x canvas
    assert _run(["export", run_dir, export_dir], capsys)[0] == 0
    images, labels = load_sklearn_digits(16)
    canvases, _, _ = translate_digits(images[:2], labels[:2], 96, num_clutter=8, rng=0)
    paths = [_write_png(str(tmp_path / f"canvas{i}.png"), canvases[i]) for i in range(2)]
    code, out, err = _run(["predict", export_dir, *paths], capsys)
    assert code == 0, err
    rows = [line.split("\t") for line in out.strip().splitlines()]
    assert [r[0] for r in rows] == paths
    assert all(len(r) == 3 and r[1] in "0123456789" and r[2].startswith("p=") for r in rows)


@pytest.mark.slow  # ~15 s; the HyperModels build in tests/recipes/test_hypermodels.py
def test_tune_translated_digits(tmp_path, capsys):
    code, out, err = _run(
        [
            "tune",
            "translated_digits",
            "--trials",
            "1",
            "--samples",
            "128",
            "--out",
            str(tmp_path / "tune"),
        ],
        capsys,
    )
    assert code == 0, err
    best = json.loads(out.strip().splitlines()[-1])["best_hyperparameters"]
    assert {"patch_size", "num_scales", "location_std", "learning_rate"} <= set(best)


@pytest.mark.slow  # an end-to-end CLI run
def test_train_export_predict_captions(tmp_path, capsys):
    from keras_adl.data.digit_strips import digit_strips
    from keras_adl.data.image_sources import load_sklearn_digits

    run_dir, export_dir = str(tmp_path / "sat"), str(tmp_path / "sat_export")
    code, _, err = _run(
        ["train", "digit_strips", "--samples", "128", "--epochs", "1", "--out", run_dir], capsys
    )
    assert code == 0, err
    metrics = json.load(open(os.path.join(run_dir, "run.json")))["metrics"]
    assert {
        "held_out_exact_match",
        "held_out_token_accuracy",
        "held_out_alignment_hit_rate",
    } == set(metrics)
    assert os.path.getsize(os.path.join(run_dir, "attention.png")) > 1000
    assert _run(["export", run_dir, export_dir], capsys)[0] == 0
    images, labels = load_sklearn_digits(16)
    strips, _, _ = digit_strips(images, labels, 1, rng=0)
    path = _write_png(str(tmp_path / "strip.png"), strips[0])
    code, out, err = _run(["predict", export_dir, path], capsys)
    assert code == 0, err
    caption = out.splitlines()[0].split("\t")[1].split()  # may be empty after one epoch
    assert len(caption) <= 4 and all(token in "0123456789" for token in caption)


RELOAD_TEXT = r"""
import json, sys
sys.modules["keras_adl"] = None  # only tensorflow and tensorflow_text may be needed
import tensorflow as tf
import tensorflow_text  # noqa: F401
loaded = tf.saved_model.load(sys.argv[1])
out = loaded.signatures["serving_default"](inputs=tf.constant(json.loads(sys.argv[2])))
print(json.dumps([s.decode() for s in out["output"].numpy()]))
"""


@pytest.mark.slow  # an end-to-end CLI run (the word level)
def test_train_export_predict_users_text_pairs(tmp_path, capsys):
    numbers = ["one", "two", "three", "four"]
    french = ["un", "deux", "trois", "quatre"]
    # French typography: a no-break space before "!", a capital É (the file is UTF-8).
    lines = [
        f"{numbers[i]} {numbers[j]}!\t{french[i]} {french[j]}\u00a0!"
        for i in range(4)
        for j in range(4)
    ] + ["Error\tÉchec", "error!\téchec\u202f!"]
    french += ["échec", "!"]
    data = tmp_path / "pairs.tsv"
    data.write_text("\n".join(lines * 4) + "\n", encoding="utf-8")
    run_dir, export_dir = str(tmp_path / "run"), str(tmp_path / "export")
    code, _, err = _run(
        [
            "train",
            "pairs",
            "--data",
            str(data),
            "--epochs",
            "1",
            "--batch-size",
            "16",
            "--max-length",
            "6",
            "--tokens",
            "word",
            "--out",
            run_dir,
        ],
        capsys,
    )
    assert code == 0, err
    assert set(json.load(open(os.path.join(run_dir, "tokenizer.json")))["target"]) == set(french)
    run = json.load(open(os.path.join(run_dir, "run.json")))
    assert run["held_out_pairs"] == 4  # 5% of 72, seeded
    # 10% of the other 68 set aside (not trained on) to choose the memory's threshold
    assert run["train_pairs"] == 61 and run["memory_development_pairs"] == 7
    assert run["memory_pairs"] == 68 and 0.0 <= run["memory_threshold"] <= 1.01
    metrics = run["metrics"]
    assert {"held_out_bleu", "held_out_chrf", "held_out_exact_match"} <= set(metrics)
    assert 0.0 <= metrics["held_out_chrf"] <= 100.0 and metrics["held_out_pairs"] == 4
    assert sum(b["pairs"] for b in metrics["held_out_by_source_length"].values()) == 4
    assert _run(["export", run_dir, export_dir], capsys)[0] == 0
    inputs = ["one two", "Four\u00a0three !"]
    code, out, _ = _run(["predict", export_dir, *inputs], capsys)
    assert code == 0
    predicted = [line.split("\t")[1] if "\t" in line else "" for line in out.splitlines()]
    result = subprocess.run(
        [sys.executable, "-c", RELOAD_TEXT, export_dir, json.dumps(inputs)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == predicted
    assert all(set(p.split()) <= set(french) for p in predicted)
    # Longer than the model's 6 tokens: translated from its first 6, and said so.
    long_input = "one two three four one two three four"
    code, out, err = _run(["predict", export_dir, "one two", long_input], capsys)
    assert code == 0 and len(out.splitlines()) == 2
    assert "input 2: 8 tokens; the model reads 6, so only the first 6 were translated" in err


def test_text_pair_errors_are_one_line(tmp_path, capsys):
    bad = tmp_path / "bad.tsv"
    bad.write_text("good\tbon\nno tab here\n")
    code, _, err = _run(
        ["train", "pairs", "--data", str(bad), "--out", str(tmp_path / "r")], capsys
    )
    assert (
        code == 1
        and err.strip()
        == f"keras-adl: error: {bad}:2: expected 'source<TAB>target', found 0 tab(s)"
    )
    code, _, err = _run(["train", "pairs", "--out", str(tmp_path / "r")], capsys)
    assert code == 2 and "required: --data" in err and err.count("\n") == 1
    code, _, err = _run(
        ["train", "pairs", "--data", str(tmp_path / "none.tsv"), "--out", "x"], capsys
    )
    assert code == 1 and "not found" in err
    assert not os.path.exists(tmp_path / "r")


NAMES = [
    "rapport",
    "Écran",
    "données",
    "日本語のファイル",
    "Привет",
    "Straße",
    "photo",
    "notes",
    "Öl",
    "café",
] + [f"fichier{i}" for i in range(40)]
TEMPLATES = [  # English, French: French typography puts a no-break space before ! ? :
    ("File {} not found!", "Fichier {} introuvable\u00a0!"),
    ("Cannot open {}", "Impossible d'ouvrir {}"),
    ("Delete {}?", "Supprimer {}\u00a0?"),
    ("{} saved", "{} enregistré"),
    ("Error in {}: unknown value", "Erreur dans {}\u00a0: valeur inconnue"),
    ("Rename {}", "Renommer {}"),
    ("Copy {} to the clipboard", "Copier {} dans le presse-papiers"),
    ("Open {} read-only", "Ouvrir {} en lecture seule"),
    ("{} is empty", "{} est vide"),
    ("Print {}", "Imprimer {}"),
]


def _write_po(path):
    """A French .po catalog of 500 messages (each name in each template)."""
    entries = ['msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n']
    for english, french in TEMPLATES:
        for name in NAMES:
            entries.append(f'msgid "{english.format(name)}"\nmsgstr "{french.format(name)}"\n')
    path.write_text("\n".join(entries), encoding="utf-8")
    return str(path)


def _scored_alike(run_dir, export_dir, catalog, capsys):
    """``keras-adl evaluate`` of a run and of its export on the 500 pairs of ``catalog``:
    checked equal, and returned."""
    scores = []
    for path in (run_dir, export_dir):
        code, out, err = _run(["evaluate", path, catalog], capsys)
        assert code == 0, err
        scores.append(json.loads(out))
    assert scores[0] == scores[1] and scores[0]["pairs"] == 500
    return scores


@pytest.mark.slow  # an end-to-end CLI run: make test-slow (the families' layers, models and
# exports are tested in the fast suite)
def test_train_export_predict_evaluate_gettext_pairs(tmp_path, capsys):
    """The sequences family's fast CLI run: 500 messages of a .po catalog (no-break spaces,
    accented capitals, Cyrillic, Japanese), subwords, held-out figures, export, predict and
    evaluate."""
    catalog_dir = tmp_path / "po"
    catalog_dir.mkdir()
    catalog = _write_po(catalog_dir / "demo.po")
    run_dir, export_dir = str(tmp_path / "run"), str(tmp_path / "export")
    argv = ["train", "pairs", "--data", f"gettext:{catalog_dir}", "--epochs", "2"]
    argv += ["--model", "attention_seq2seq"]  # non-empty outputs after 2 short epochs
    argv += ["--batch-size", "32", "--vocab-size", "300", "--max-length", "16", "--samples", "400"]
    argv += ["--out", run_dir]
    code, _, err = _run(argv, capsys)
    assert code == 0, err
    run = json.load(open(os.path.join(run_dir, "run.json")))
    assert run["tokens"] == "subword" and run["held_out_pairs"] == 25  # 5% of 500, seeded
    assert run["train_pairs_available"] == 475  # --samples 400 of them, a seeded subset
    assert run["train_pairs"] + run["train_pairs_too_long"] + 40 == 400  # 40: development
    assert run["memory_development_pairs"] == 40 and run["memory_pairs"] == 400
    assert 100 < run["source_vocabulary"] <= 300 + 4 + 10  # about --vocab-size, with specials
    vocabulary = json.load(open(os.path.join(run_dir, "tokenizer.json")))
    assert vocabulary["level"] == "subword" and "本" in vocabulary["target"]
    assert run["target_case"] == "keep" and vocabulary["cased_target"] is True
    metrics = run["metrics"]
    assert 0.0 <= metrics["held_out_chrf"] <= 100.0 and metrics["held_out_pairs"] == 25
    assert set(metrics["held_out_normalized"]) == {"bleu", "chrf", "exact_match"}
    assert os.path.isfile(os.path.join(run_dir, "attention.png"))
    assert _run(["export", run_dir, export_dir], capsys)[0] == 0
    inputs = ["File Écran not found!", "Delete\u00a0日本語のファイル?", "Привет saved"]
    code, out, _ = _run(["predict", export_dir, *inputs], capsys)
    assert code == 0
    rows = [line.split("\t") for line in out.splitlines()]
    assert [row[0] for row in rows] == inputs
    assert all(len(row) == 2 and row[1].strip() and "##" not in row[1] for row in rows)
    code, _, err = _run(["predict", export_dir, " ".join(["Delete"] * 20)], capsys)
    assert code == 0 and "input 1: 20 tokens; the model reads 16" in err
    # The run (Keras model, greedy decoding) and its export (SavedModel) score alike.
    scores = _scored_alike(run_dir, export_dir, catalog, capsys)
    assert set(scores[0]["by_source_length"]) <= {"1-6", "7-12", "13+"}


@pytest.mark.slow  # an end-to-end CLI run, ~1 min
def test_a_model_that_reads_its_memory_trains_exports_and_answers_as_its_run(tmp_path, capsys):
    """``--memory input``: the model is trained on each pair with its best match among the
    other training pairs; the export retrieves inside the SavedModel, answers a training
    source with its translation, and scores as the run does."""
    catalog = _write_po(tmp_path / "demo.po")
    run_dir, export_dir = str(tmp_path / "run"), str(tmp_path / "export")
    argv = ["train", "pairs", "--data", catalog, "--memory", "input", "--epochs", "1"]
    argv += ["--batch-size", "32", "--vocab-size", "300", "--max-length", "16"]
    code, _, err = _run([*argv, "--out", run_dir], capsys)
    assert code == 0, err
    run = json.load(open(os.path.join(run_dir, "run.json")))
    assert run["memory"] == "input" and run["options"]["memory"] == "input"
    memory = json.load(open(os.path.join(run_dir, "memory.json")))
    assert memory["input"] is True and len(memory["sources"]) == run["memory_pairs"]
    model = keras.saving.load_model(os.path.join(run_dir, "model.keras"))
    sizes = run["source_vocabulary"] + SCORE_LEVELS + run["target_vocabulary"]
    assert model.get_layer("source_embedding").input_dim == sizes
    assert _run(["export", run_dir, export_dir], capsys)[0] == 0
    stored, translation = memory["sources"][1], memory["targets"][1]
    code, out, _ = _run(["predict", export_dir, stored, stored + "s"], capsys)
    assert code == 0 and out.splitlines()[0] == f"{stored}\t{translation}"
    _scored_alike(run_dir, export_dir, catalog, capsys)
    os.remove(os.path.join(run_dir, "memory.json"))  # as a run stopped before its figures
    for argv in (["export", run_dir, str(tmp_path / "again")], ["evaluate", run_dir, catalog]):
        code, _, err = _run(argv, capsys)
        assert code == 1 and "this --memory input run has no memory.json" in err
        assert err.count("\n") == 1


def test_evaluate_errors_are_one_line(tmp_path, capsys):
    code, _, err = _run(["evaluate", str(tmp_path), "x.tsv"], capsys)
    assert code == 1 and "is neither a run of `keras-adl train` nor an export" in err
    (tmp_path / "run.json").write_text(json.dumps({"task": "pairs", "model": "encoder_decoder"}))
    code, _, err = _run(["evaluate", str(tmp_path), "no/such.tsv"], capsys)
    assert code == 1 and "data 'no/such.tsv' not found" in err
    (tmp_path / "run.json").write_text(json.dumps({"task": "copy", "model": "ntm"}))
    code, _, err = _run(["evaluate", str(tmp_path), __file__], capsys)
    assert code == 1 and err.strip() == (
        "keras-adl: error: evaluate scores models on your own data (pairs); the figures of "
        "'copy' are in its run's run.json"
    )


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--tokens", "bpe"], "argument --tokens: invalid choice: 'bpe'"),
        (["--vocab-size", "0"], "--vocab-size must be a positive integer; received 0"),
        (["--data", "gettext:xx"], "no gettext catalog (.mo or .po) found in"),
        (["--data", "gettext:no language"], "gettext source must be a language code"),
    ],
)
def test_pairs_options_are_checked(tmp_path, capsys, argv, message):
    data = ["--data", __file__] if "--data" not in argv else []
    code, _, err = _run(["train", "pairs", *data, *argv, "--out", str(tmp_path / "r")], capsys)
    assert code == (2 if "--tokens" in argv else 1)  # 2: argparse's own syntax errors
    assert message in err and err.count("\n") == 1
    assert not os.path.exists(tmp_path / "r")


@pytest.mark.slow  # ~20 s; every family's `tune` runs end to end in make test-slow
def test_tune_reports_best_hyperparameters(tmp_path, capsys):
    code, out, err = _run(
        [
            "tune",
            "sort",
            "--trials",
            "2",
            "--epochs",
            "1",
            "--samples",
            "64",
            "--out",
            str(tmp_path),
        ],
        capsys,
    )
    assert code == 0, err
    best = json.loads(out.strip().splitlines()[-1])["best_hyperparameters"]
    assert {"units", "learning_rate"} <= set(best)
    code, _, err = _run(["tune", "pairs", "--data", __file__, "--out", str(tmp_path)], capsys)
    assert code == 1 and "not on 'pairs'" in err


def _document_tree(root):
    words = {"sports": ["goal", "match", "team", "score"], "politics": ["vote", "law", "party"]}
    for label, topic in words.items():
        os.makedirs(root / label)
        for i in range(24):
            later = topic[(i + 1) % len(topic)]
            text = f"The {topic[i % len(topic)]} was big. We saw the {later} on day {i}!"
            (root / label / f"{i:02d}.txt").write_text(text)
    return str(root)


@pytest.mark.slow  # an end-to-end CLI run: make test-slow (the families' layers, models and
# exports are tested in the fast suite)
def test_train_export_predict_users_documents(tmp_path, capsys):
    data = _document_tree(tmp_path / "docs")
    run_dir, export_dir = str(tmp_path / "han"), str(tmp_path / "han_export")
    code, out, err = _run(
        [
            "train",
            "documents",
            "--data",
            data,
            "--epochs",
            "1",
            "--batch-size",
            "8",
            "--out",
            run_dir,
        ],
        capsys,
    )
    assert code == 0, err
    run = json.load(open(os.path.join(run_dir, "run.json")))
    assert run["class_names"] == ["politics", "sports"] and run["best_epoch"] == 1
    # split by a hash of each text (the test documents: a fifth, the development ones: a tenth)
    held, development = run["metrics"]["held_out_documents"], run["development_documents"]
    assert held >= 1 and development >= 2 and run["train_documents"] >= 24
    assert run["train_documents"] + held + development == 48
    assert {"held_out_accuracy", "held_out_documents"} == set(run["metrics"])
    assert "goal" in json.load(open(os.path.join(run_dir, "tokenizer.json")))["vocabulary"]
    html = open(os.path.join(run_dir, "attention.html"), encoding="utf-8").read()
    assert "<span" in html and os.path.getsize(os.path.join(run_dir, "attention.png")) > 1000
    assert _run(["export", run_dir, export_dir], capsys)[0] == 0
    essay = tmp_path / "essay.txt"
    essay.write_text("A long match. The team scored a goal!")
    code, out, err = _run(["predict", export_dir, "The vote. A new law.", str(essay)], capsys)
    assert code == 0, err
    lines = [line.split("\t") for line in out.splitlines()]
    assert [line[0] for line in lines] == ["The vote. A new law.", str(essay)]
    assert all(line[1] in ("politics", "sports") and line[2].startswith("p=") for line in lines)
    assert lines[1][3].split(": ")[1] in ("a long match", "the team scored a goal")
    code, out, err = _run(["predict", export_dir, "!!!", "The\tvote."], capsys)
    assert code == 1 and "(input 1: no words this model can read)" in err
    assert out.splitlines()[0] == "!!!\t(no words this model can read)"
    assert out.splitlines()[1].split("\t")[0] == "The vote."


@pytest.mark.slow  # ~30 s; the HAN HyperModel builds in tests/models/test_han.py
def test_tune_needle(tmp_path, capsys):
    code, out, err = _run(
        ["tune", "needle", "--trials", "1", "--samples", "256", "--out", str(tmp_path / "tune")],
        capsys,
    )
    assert code == 0, err
    best = json.loads(out.strip().splitlines()[-1])["best_hyperparameters"]
    assert {"embedding_dim", "encoder_units", "units", "dropout", "learning_rate"} <= set(best)


def test_document_task_errors_are_one_line(tmp_path, capsys):
    code, _, err = _run(["train", "documents", "--out", str(tmp_path / "r")], capsys)
    assert code == 2 and "required: --data" in err and err.count("\n") == 1
    code, _, err = _run(
        ["train", "fortunes", "--data", str(tmp_path / "none"), "--out", str(tmp_path / "r")],
        capsys,
    )
    assert code == 1 and err.count("\n") == 1 and "--data" in err and "not found" in err
    flat = tmp_path / "flat"
    flat.mkdir()
    (flat / "a.txt").write_text("no label directory")
    code, _, err = _run(
        ["train", "documents", "--data", str(flat), "--out", str(tmp_path / "r")], capsys
    )
    assert code == 1 and err.count("\n") == 1


class _Interrupt(keras.callbacks.Callback):
    """Stops training with a KeyboardInterrupt after ``step`` steps of the first epoch."""

    def __init__(self, step):
        super().__init__()
        self.step = step

    def on_train_batch_end(self, batch, logs=None):
        if batch + 1 == self.step:
            raise KeyboardInterrupt("simulated interruption")


class _CountSteps(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.steps = 0

    def on_train_batch_end(self, batch, logs=None):
        self.steps += 1


@pytest.mark.slow  # ~20 s
def test_interrupted_training_resumes_mid_epoch(tmp_path, capsys):
    out = str(tmp_path / "run")
    settings = dict(epochs=2, batch_size=8, samples=64, checkpoint_every=3)  # 8 steps an epoch
    with pytest.raises(KeyboardInterrupt):
        recipes.train("dates", out=out, callbacks=[_Interrupt(5)], **settings)
    (last,) = os.listdir(os.path.join(out, "backup"))  # the last checkpoint, after 3 of 5 steps
    progress = json.load(open(os.path.join(out, "backup", last, "progress.json")))
    assert progress.pop("optimizer") == "Adam"  # the recipe's, which a resume must match
    assert progress.pop("state")["elapsed"] > 0  # the training time, counted across resumes
    assert progress == {"epoch": 0, "step": 3, "global_step": 3}
    counter = _CountSteps()
    _, history, _ = recipes.train("dates", out=out, callbacks=[counter], **settings)
    assert "resuming epoch 1 at step 4 of 8" in capsys.readouterr().out
    assert counter.steps == 5 + 8 and history.epoch == [1]
    assert not os.path.exists(os.path.join(out, "backup"))


@pytest.mark.parametrize(
    "argv, message",
    [
        (["train", "poems", "--out", "x"], "unknown task 'poems'"),
        (
            ["train", "dates", "--model", "lstm", "--out", "x"],
            "unknown model 'lstm' for task 'dates'",
        ),
        (
            ["train", "dates", "--checkpoint-every", "-1", "--out", "x"],
            "--checkpoint-every must be a positive integer",
        ),
        (["export", "x", "y", "--beam-width", "0"], "--beam-width must be a positive integer"),
        (["train", "copy", "--model", "gru", "--out", "x"], "unknown model 'gru' for task 'copy'"),
        (["train", "dates", "--epochs", "0", "--out", "x"], "--epochs must be a positive integer"),
        (["train", "dates", "--strategy", "tpu", "--out", "x"], "--strategy must be"),
        (["export", "no/such/run", "y"], "no/such/run/run.json not found"),
        (["predict", "no/such/export", "3 may 1998"], "no SavedModel in 'no/such/export'"),
    ],
)
def test_errors_are_one_line(argv, message, capsys):
    code, _, err = _run(argv, capsys)
    assert code == 1
    assert err.strip().splitlines() == [err.strip()] and message in err


def test_existing_export_dir_is_refused_and_left_untouched(tmp_path, capsys):
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    (run_dir / "run.json").write_text("{}")
    (run_dir / "model.keras").write_text("")
    existing = tmp_path / "export"
    existing.mkdir()
    code, _, err = _run(["export", str(run_dir), str(existing)], capsys)
    assert code == 1 and "already exists" in err
    assert list(existing.iterdir()) == []


def test_console_entry_reports_syntax_errors_without_traceback():
    result = subprocess.run(
        [sys.executable, "-m", "keras_adl", "export"], capture_output=True, text=True, timeout=120
    )
    assert result.returncode == 2
    assert result.stderr.strip().splitlines()[-1].startswith("keras-adl: error: ")
    assert "Traceback" not in result.stderr
    bare = subprocess.run(
        [sys.executable, "-m", "keras_adl"], capture_output=True, text=True, timeout=120
    )
    assert bare.returncode == 2 and bare.stdout.startswith("usage: keras-adl")
    assert bare.stderr == ""
    result = subprocess.run(
        [sys.executable, "-m", "keras_adl", "train", "poems", "--out", "x"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    # One line and nothing else: no TensorFlow start-up logs, no traceback.
    from keras_adl import recipes

    assert result.stderr.splitlines() == [
        f"keras-adl: error: unknown task 'poems'; choose one of {sorted(recipes.all_tasks())}"
    ]
    assert "'associative_recall', 'cluttered_digits'" in result.stderr


@pytest.mark.parametrize("argv", [[], ["--verbose"]])
def test_bare_command_prints_the_usage_and_the_commands(argv, capsys):
    code, out, err = _run(argv, capsys)
    assert code == 2 and err == ""
    assert out.startswith("usage: keras-adl [-h] [--verbose]")
    for command in ("list", "train", "tune", "export", "evaluate", "predict"):
        assert f"    {command} " in out, command


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["list"],
        ["--help"],
        ["train", "copy", "--help"],
        ["train", "pairs", "--data", "no/such.tsv", "--out", "x"],
        ["export", "no/such/run", "y"],
    ],
)
def test_help_list_and_argument_errors_do_not_import_tensorflow(argv):
    result = subprocess.run(
        [sys.executable, "-X", "importtime", "-m", "keras_adl", *argv],
        capture_output=True,
        text=True,
        timeout=120,
    )
    imported = {
        line.rsplit("|", 1)[-1].strip()
        for line in result.stderr.splitlines()
        if line.startswith("import time:")
    }
    assert "keras_adl.cli" in imported
    assert not imported & {"tensorflow", "keras", "keras_tuner", "numpy"}
    assert result.returncode in (0, 1, 2) and "Traceback" not in result.stderr


def test_list_shows_every_task_with_models_and_defaults(capsys):
    from keras_adl import recipes

    code, out, _ = _run(["list"], capsys)
    assert code == 0
    for name, (recipe, task) in recipes.all_tasks().items():
        assert f"  {name} " in out and recipe.name + ":" in out
        assert f"models: {', '.join(task.models)} (default {task.models[0]})" in out
    assert "--epochs 3 --batch-size 32 --samples 20000" in out  # the memory tasks' defaults
    assert "dnc: --batch-size 16" in out and "ntm: --batch-size 2" in out  # recall's


def test_task_help_shows_its_own_options_and_defaults(capsys):
    assert cli.main(["train", "pairs", "--help"]) == 0
    out = capsys.readouterr().out
    assert "placeholders (%s, {0}, $VAR)" in " ".join(out.split())  # % kept as typed
    assert "--max-length" in out and "(default: 32)" in out and "--data" in out
    assert "transformer_seq2seq" in out and "encoder_decoder" in out
    assert cli.main(["train", "copy", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--max-length" not in out and "(default: 32)" in out  # the batch of the NTM recipe
    assert cli.main(["train", "associative_recall", "--help"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(default: 32; dnc 16, ntm 2)" in out
    # each default said once, and no "(default: None)" for options without one
    assert "(default: None)" not in out and "(default: False)" not in out
    assert "ntm 2) (default" not in out
    assert "--epochs EPOCHS passes over the training data (default: " in out


def test_train_batch_size_defaults_to_the_models(tmp_path):
    def batch(*argv):
        *_, args, _ = cli.parse_task_command("train", [*argv, "--out", str(tmp_path)])
        return args.batch_size

    assert batch("associative_recall", "--model", "dnc") == 16
    assert batch("associative_recall", "--model", "ntm") == batch("associative_recall") == 2
    assert batch("associative_recall", "--model", "lstm") == 32
    assert batch("associative_recall", "--model", "dnc", "--batch-size", "8") == 8
    assert batch("copy", "--model", "dnc") == 32
    assert batch("repeat_copy") == 2 and batch("repeat_copy", "--model", "dnc") == 32


def test_out_directory_of_another_run_is_refused_in_one_line(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text(
        json.dumps({"task": "copy", "model": "ntm", "options": {}, "status": "training"})
    )
    code, _, err = _run(["train", "dates", "--out", str(out)], capsys)
    assert code == 1 and err.count("\n") == 1
    assert "holds a run of task 'copy' with model 'ntm'; pass --overwrite" in err
    run = {
        "task": "dates",
        "model": "attention_seq2seq",
        "epochs": 3,
        "batch_size": 64,
        "samples": 20000,
        "options": {},
        "status": "finished",
    }
    (out / "run.json").write_text(json.dumps(run))
    code, _, err = _run(["train", "dates", "--out", str(out)], capsys)
    assert code == 1 and "holds a finished run of 'dates'; pass --overwrite" in err
    # An interrupted run resumes only with the same settings (its steps were counted in them).
    (out / "run.json").write_text(json.dumps(dict(run, status="training")))
    code, _, err = _run(["train", "dates", "--epochs", "5", "--out", str(out)], capsys)
    assert code == 1 and "holds a run of 'dates' with epochs=3; pass --overwrite" in err
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.txt").write_text("mine")
    code, _, err = _run(["train", "dates", "--out", str(other)], capsys)
    assert code == 1 and "holds no keras-adl run" in err
    code, _, err = _run(["train", "dates", "--overwrite", "--out", str(other)], capsys)
    assert code == 1 and "holds no keras-adl run" in err  # --overwrite deletes runs only
    assert (other / "notes.txt").read_text() == "mine"
    code, _, err = _run(
        ["train", "dates", "--overwrite", "--out", str(other / "notes.txt")], capsys
    )
    assert code == 1 and "is a file; give a directory" in err


def test_a_resume_matches_an_option_added_since_only_when_it_is_left_unset(tmp_path):
    from keras_adl.training.rundir import BACKUP_DIR, RecipeError, check_run_dir

    out = tmp_path / "run"
    (out / BACKUP_DIR).mkdir(parents=True)
    settings = dict(epochs=1, batch_size=64, samples=10, options={"vocab_size": 8000})
    previous = dict(settings, task="pretrain_mlm", model="bert", status="training")
    (out / "run.json").write_text(json.dumps(previous))  # recorded before --num-layers existed
    now = dict(settings, options={"vocab_size": 8000, "num_layers": None})
    assert check_run_dir(str(out), "pretrain_mlm", "bert", now) is True
    now["options"]["num_layers"] = 4
    with pytest.raises(RecipeError, match="holds a run of 'pretrain_mlm' with options="):
        check_run_dir(str(out), "pretrain_mlm", "bert", now)


def test_pretraining_sizes_are_checked_before_the_corpus_is_read(tmp_path, capsys):
    argv = ["train", "pretrain_mlm", "--model-dim", "30", "--num-heads", "4"]
    corpus = tmp_path / "corpus.txt"
    corpus.write_text("Été ça.\n\nПривет мир.\n", encoding="utf-8")
    code, _, err = _run([*argv, "--data", str(corpus), "--out", str(tmp_path / "r")], capsys)
    assert code == 1 and err.count("\n") == 1
    assert "--model-dim (30) must be divisible by --num-heads (4)" in err
    argv = ["tune", "pretrain_lm", "--num-layers", "4", "--data", str(corpus)]
    code, _, err = _run([*argv, "--out", str(tmp_path / "t")], capsys)
    assert code == 1 and err.count("\n") == 1
    assert "tune searches the model's size; --num-layers is an option of train" in err


def test_overwrite_starts_fresh(tmp_path, capsys):
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json").write_text(json.dumps({"task": "copy", "model": "ntm"}))
    (out / "stale.png").write_text("")
    bad = tmp_path / "bad.tsv"
    bad.write_text("no tab here\n")
    code, _, err = _run(
        ["train", "pairs", "--data", str(bad), "--overwrite", "--out", str(out)], capsys
    )
    assert code == 1 and "expected 'source<TAB>target'" in err
    assert not out.exists()  # the old run was deleted, and the failed one left nothing


def test_data_of_the_wrong_kind_is_named(tmp_path, capsys):
    code, _, err = _run(["train", "pairs", "--data", str(tmp_path), "--out", "x"], capsys)
    assert (
        code == 1 and f"--data {str(tmp_path)!r} is a directory; task 'pairs' reads a file" in err
    )
    code, _, err = _run(["train", "cluttered_digits", "--data", __file__, "--out", "x"], capsys)
    assert code == 1 and "is a file; task 'cluttered_digits' reads a directory" in err


def _topic_corpus_file(path, seed=0):
    """Paragraphs each drawing words from one of three topics and a few fillers (one with an
    accent): a topic's words should end up each other's neighbours."""
    import random

    rng = random.Random(seed)
    topics = {
        "sea": ["ship", "wave", "boat", "sail", "fish", "harbour"],
        "farm": ["cow", "field", "barn", "wheat", "tractor", "horse"],
        "music": ["song", "piano", "violin", "choir", "melody", "drum"],
    }
    fillers = ["the", "a", "of", "and", "with", "Été"]
    paragraphs = []
    for _ in range(1500):
        words = rng.choices(topics[rng.choice(list(topics))], k=6) + rng.choices(fillers, k=3)
        rng.shuffle(words)
        paragraphs.append(" ".join(words) + ".")
    path.write_text("\n\n".join(paragraphs), encoding="utf-8")
    return str(path), topics


@pytest.mark.slow  # an end-to-end CLI run
def test_train_export_predict_word2vec(tmp_path, capsys):
    """The embeddings family's fast CLI run: a planted-topic corpus, its figures, pictures and
    projector files, and an export serving neighbours."""
    corpus, topics = _topic_corpus_file(tmp_path / "corpus.txt")
    run_dir, export_dir = str(tmp_path / "run"), str(tmp_path / "export")
    argv = ["train", "word2vec", "--data", corpus, "--epochs", "3", "--min-count", "1"]
    argv += ["--dim", "16", "--window", "3", "--subsample", "0.05", "--batch-size", "256"]
    code, _, err = _run([*argv, "--out", run_dir], capsys)
    assert code == 0, err
    run = json.load(open(os.path.join(run_dir, "run.json")))
    assert run["vocabulary"] == 24 and run["documents"] == 1500
    assert run["settings"]["dim"] == 16 and run["settings"]["window"] == 3
    for name in ("embeddings.png", "model.keras", "vocabulary.json"):
        assert os.path.isfile(os.path.join(run_dir, name)), name
    words = open(os.path.join(run_dir, "metadata.tsv"), encoding="utf-8").read().split("\n")[:-1]
    vectors = np.loadtxt(os.path.join(run_dir, "vectors.tsv"), delimiter="\t")
    assert vectors.shape == (24, 16) and "été" in words
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-3)
    assert _run(["export", run_dir, export_dir], capsys)[0] == 0
    code, out, err = _run(["predict", export_dir, "Piano", "emu", "SHIP"], capsys)
    assert code == 1 and "1 of 3 input(s) got no answer (input 2: not in the vocabulary)" in err
    rows = [line.split("\t") for line in out.splitlines()]
    assert [r[0] for r in rows] == ["Piano", "emu", "SHIP"]
    assert rows[1][1] == "(not in the vocabulary)"
    for row, topic in ((rows[0], "music"), (rows[2], "sea")):
        neighbours = [item.rsplit(" ", 1)[0] for item in row[1].split(", ")][:5]
        assert len(set(neighbours) & set(topics[topic])) >= 4, (row, topics[topic])


@pytest.mark.slow  # ~20 s; the HyperModel's build and fit are tested in tests/recipes
def test_tune_word2vec(tmp_path, capsys):
    corpus = tmp_path / "corpus.txt"
    pairs = ["tiger cat", "king queen", "man woman", "book paper", "money cash"]
    corpus.write_text("\n\n".join(" ".join(pairs[i % 5 : i % 5 + 3]) for i in range(600)))
    argv = ["tune", "word2vec", "--data", str(corpus), "--trials", "2", "--epochs", "1"]
    code, out, err = _run([*argv, "--min-count", "1", "--out", str(tmp_path / "tune")], capsys)
    assert code == 0, err
    best = json.loads(out.strip().splitlines()[-1])["best_hyperparameters"]
    assert {"dim", "window", "negatives", "subsample", "learning_rate"} <= set(best)


def _fortunes_dir(path):
    """Fortunes of the nine topics, each with its own planted word."""
    from keras_adl.data.fortunes import FORTUNE_TOPICS

    path.mkdir()
    rng = np.random.default_rng(0)
    fillers = "the a of and to in is it that was Été ça".split()
    for topic in FORTUNE_TOPICS:
        texts = [" ".join([topic] + list(rng.choice(fillers, 6))) + "." for _ in range(12)]
        (path / f"{topic}.u8").write_text("\n%\n".join(texts) + "\n", encoding="utf-8")
    return str(path)


def _sentences_corpus(path):
    rng = np.random.default_rng(1)
    words = "the cat dog sat on mat ran red blue house tree river Été élan Привет мир 東京".split()
    documents = []
    for _ in range(200):
        sentences = [" ".join(rng.choice(words, rng.integers(4, 9))) + "." for _ in range(3)]
        documents.append(" ".join(sentences))
    path.write_text("\n\n".join(documents), encoding="utf-8")
    return str(path)


@pytest.mark.slow  # ~90 s: end-to-end CLI runs of small models (d = 32 and 128)
def test_pretrain_finetune_generate_end_to_end(tmp_path, capsys):
    """The pretraining family from the command line: masked-LM pretraining, fine-tuning from
    it, a causal LM exported with generation, each predict on raw (non-ASCII) text."""
    corpus = _sentences_corpus(tmp_path / "corpus.txt")
    mlm, finetuned, lm = (str(tmp_path / name) for name in ("mlm", "ft", "lm"))
    common = ["--data", corpus, "--vocab-size", "120", "--batch-size", "16", "--steps", "6"]
    sizes = ["--num-layers", "1", "--model-dim", "32", "--num-heads", "4"]
    sizes += ["--intermediate-dim", "64"]
    assert _run(["train", "pretrain_mlm", *common, *sizes, "--out", mlm], capsys)[0] == 0
    run = json.load(open(os.path.join(mlm, "run.json")))
    expected = dict(num_layers=1, model_dim=32, num_heads=4, intermediate_dim=64)
    assert {k: run["settings"][k] for k in expected} == expected
    assert {"held_out_masked_accuracy", "most_frequent_token_accuracy"} <= set(run["metrics"])
    assert os.path.isfile(os.path.join(mlm, "training.png"))
    code, _, err = _run(["export", mlm, str(tmp_path / "no")], capsys)
    assert code == 1 and "finetune --init RUN" in err
    fortunes = _fortunes_dir(tmp_path / "fortunes")
    long_fortune = " ".join(["love Été ça the cat sat on the mat."] * 80)  # many windows
    with open(os.path.join(fortunes, "love.u8"), "a", encoding="utf-8") as f:
        f.write(f"%\n{long_fortune}\n")
    argv = ["train", "finetune", "--init", mlm, "--data", fortunes, "--epochs", "1"]
    assert _run([*argv, "--out", finetuned], capsys)[0] == 0
    run = json.load(open(os.path.join(finetuned, "run.json")))
    assert run["weights"] == "pretrained" and 0.0 <= run["metrics"]["held_out_accuracy"] <= 1.0
    assert {k: run["settings"][k] for k in expected} == expected  # the pretrained run's sizes
    assert run["windows"] == 8 and 0.0 <= run["metrics"]["held_out_first_window_accuracy"] <= 1
    export = str(tmp_path / "ft_export")
    assert _run(["export", finetuned, export], capsys)[0] == 0
    code, out, _ = _run(["predict", export, "science of ça", "Привет мир", long_fortune], capsys)
    windows = [line.split("\t")[-1] for line in out.strip().splitlines()]
    assert code == 0 and windows[:2] == ["windows=1", "windows=1"] and windows[2] == "windows=8"
    code, _, err = _run(
        ["train", "finetune", "--init", corpus, "--out", str(tmp_path / "x")], capsys
    )
    assert code == 1 and "--init" in err
    assert _run(["train", "pretrain_lm", *common, "--num-layers", "1", "--out", lm], capsys)[0] == 0
    run = json.load(open(os.path.join(lm, "run.json")))
    assert run["settings"]["num_layers"] == 1 and run["settings"]["model_dim"] == 128
    assert run["metrics"]["held_out_perplexity"] > 1.0
    export = str(tmp_path / "lm_export")
    assert _run(["export", lm, export], capsys)[0] == 0
    code, out, _ = _run(["predict", export, "Привет мир", "東京"], capsys)
    lines = out.strip().splitlines()
    assert code == 0 and [line.split("\t")[0] for line in lines] == ["Привет мир", "東京"]
    assert lines[0].split("\t")[1].startswith("Привет мир")  # the prompt as written
    assert all(os.path.isfile(os.path.join(d, "attention.png")) for d in (mlm, finetuned, lm))
    # GPT fine-tuning from the causal LM (auxiliary LM loss), exported on raw text.
    gpt_run, gpt_export = str(tmp_path / "gpt_ft"), str(tmp_path / "gpt_export")
    argv = ["train", "finetune", "--model", "gpt", "--init", lm, "--data", fortunes]
    assert _run([*argv, "--epochs", "1", "--out", gpt_run], capsys)[0] == 0
    run = json.load(open(os.path.join(gpt_run, "run.json")))
    assert run["weights"] == "pretrained" and 0.0 <= run["metrics"]["held_out_accuracy"] <= 1.0
    assert _run(["export", gpt_run, gpt_export], capsys)[0] == 0
    code, out, _ = _run(["predict", gpt_export, "law of Été", "東京"], capsys)
    assert code == 0 and len(out.strip().splitlines()) == 2
    code, _, err = _run([*argv[:4], "--init", mlm, "--out", str(tmp_path / "y")], capsys)
    assert code == 1 and "pretrain_lm run directory for gpt" in err
    # tune: the schedule of fine-tuning the pretrained encoder.
    argv = ["tune", "finetune", "--init", mlm, "--data", fortunes, "--trials", "2"]
    code, out, _ = _run([*argv, "--epochs", "1", "--out", str(tmp_path / "tune")], capsys)
    best = json.loads(out.strip().splitlines()[-1])["best_hyperparameters"]
    assert code == 0 and set(best) == {"learning_rate", "warmup_fraction"}


def _pairs_file(path):
    rng = np.random.default_rng(2)
    english = "the file is open closed saved lost cannot be found on disk".split()
    french = {
        "the": "le",
        "file": "fichier",
        "is": "est",
        "open": "ouvert",
        "closed": "fermé",
        "saved": "enregistré",
        "lost": "perdu",
        "cannot": "ne peut",
        "be": "être",
        "found": "trouvé",
        "on": "sur",
        "disk": "disque",
    }
    lines = []
    for _ in range(300):
        words = list(rng.choice(english, rng.integers(2, 6)))
        lines.append(" ".join(words) + "\t" + " ".join(french[w] for w in words) + "\u00a0!")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


@pytest.mark.slow  # ~2 min: five runs, three exports
def test_contextual_family_end_to_end(tmp_path, capsys):
    """word2vec → biLM and CoVe → the fortunes classifier on every kind of features, each
    exported and served raw (non-ASCII) strings; the biLM's export equals the in-process
    embedder."""
    import tensorflow as tf

    from keras_adl.models import elmo_embedder
    from keras_adl.text.characters import text_character_ids

    corpus = _sentences_corpus(tmp_path / "corpus.txt")
    fortunes = _fortunes_dir(tmp_path / "fortunes")
    w2v, bilm, cove = (str(tmp_path / name) for name in ("w2v", "bilm", "cove"))
    argv = ["train", "word2vec", "--data", corpus, "--min-count", "1", "--epochs", "1"]
    assert _run([*argv, "--out", w2v], capsys)[0] == 0
    argv = ["train", "pretrain_bilm", "--data", corpus, "--steps", "5", "--epochs", "2"]
    assert _run([*argv, "--max-words", "8", "--out", bilm], capsys)[0] == 0
    metrics = json.load(open(os.path.join(bilm, "run.json")))["metrics"]
    assert metrics["held_out_forward_perplexity"] > 1 and metrics["unigram_perplexity"] > 1
    assert len(metrics["train_over_held_out_per_epoch"]) == 2
    assert os.path.isfile(os.path.join(bilm, "training.png"))
    argv = ["train", "cove", "--data", _pairs_file(tmp_path / "pairs.tsv"), "--vectors", w2v]
    assert _run([*argv, "--epochs", "1", "--vocab-size", "60", "--out", cove], capsys)[0] == 0
    metrics = json.load(open(os.path.join(cove, "run.json")))["metrics"]
    assert {"held_out_bleu", "held_out_beam4_bleu", "held_out_token_accuracy"} <= set(metrics)
    code, _, err = _run(["train", "cove", "--data", corpus, "--out", str(tmp_path / "x")], capsys)
    assert code == 1 and "--vectors" in err
    for features in ("static", "cove", "elmo", "elmo_top"):
        run_dir = str(tmp_path / f"ff_{features}")
        argv = ["train", "fortunes_features", "--features", features, "--data", fortunes]
        argv += ["--vectors", w2v, "--bilm", bilm, "--cove", cove, "--epochs", "1"]
        code, _, err = _run([*argv, "--out", run_dir], capsys)
        assert code == 0, (features, err)
        metrics = json.load(open(os.path.join(run_dir, "run.json")))["metrics"]
        assert 0 <= metrics["held_out_accuracy"] <= 1
    assert os.path.isfile(os.path.join(str(tmp_path / "ff_elmo"), "scalar_mix.png"))
    code, _, err = _run(
        [
            "train",
            "fortunes_features",
            "--features",
            "elmo",
            "--vectors",
            w2v,
            "--out",
            str(tmp_path / "y"),
        ],
        capsys,
    )
    assert code == 1 and "--features elmo needs --bilm" in err
    argv = ["tune", "fortunes_features", "--features", "static", "--vectors", w2v, "--data"]
    code, out, _ = _run(
        [*argv, fortunes, "--trials", "1", "--epochs", "1", "--out", str(tmp_path / "tune")], capsys
    )
    best = json.loads(out.strip().splitlines()[-1])["best_hyperparameters"]
    assert code == 0 and set(best) == {"units", "dropout", "learning_rate"}
    texts = ["Le chat de l'Été\u00a0!", "Привет, мир 東京"]
    for run_dir in (bilm, cove, str(tmp_path / "ff_elmo")):
        export = run_dir + "_export"
        assert _run(["export", run_dir, export], capsys)[0] == 0
        code, out, _ = _run(["predict", export, *texts], capsys)
        lines = out.strip().splitlines()
        assert code == 0 and [line.split("\t")[0] for line in lines] == texts
    from keras_adl.data.fortunes import FORTUNE_TOPICS

    assert out.splitlines()[0].split("\t")[1] in FORTUNE_TOPICS
    served = tf.saved_model.load(bilm + "_export").signatures["serving_default"](
        texts=tf.constant(texts)
    )
    model = keras.models.load_model(os.path.join(bilm, "model.keras"))
    _, characters = text_character_ids(tf.constant(texts), 32, 20)
    expected = keras.ops.convert_to_numpy(elmo_embedder(model)(characters))
    mask = served["mask"].numpy()
    np.testing.assert_allclose(
        served["layers"].numpy(), expected * mask[:, None, :, None], rtol=1e-5, atol=1e-5
    )
    assert mask.sum(1).tolist() == [5, 3]


def test_minutes_without_epochs_leaves_the_epochs_to_the_budget_on_held_out_tasks(monkeypatch):
    from keras_adl import cli
    from keras_adl.cli import commands

    seen = {}
    monkeypatch.setattr(commands, "load_tensorflow", lambda **kwargs: None)
    monkeypatch.setattr(cli.recipes, "train", lambda *args, **kwargs: seen.update(args=args))
    argv = ["train", "pairs", "--data", "gettext:fr", "--minutes", "30", "--out", "/nonexistent"]
    assert cli.main(argv) == 0
    task, out, model, epochs = seen["args"][:4]
    assert (task, model, epochs) == ("pairs", "transformer_seq2seq", cli.EPOCHS_UNDER_A_BUDGET)
    assert cli.main(argv + ["--epochs", "4"]) == 0 and seen["args"][3] == 4
    word2vec = ["train", "word2vec", "--minutes", "30", "--out", "/nonexistent"]
    assert cli.main(word2vec) == 0 and seen["args"][3] == 3  # the task's own default


@pytest.mark.parametrize(
    "argv, message",
    [
        (["--patience", "2"], "--patience watches a held-out loss, and task 'word2vec' has no"),
        (["--minutes", "0"], "--minutes must be a positive number"),
        (["--learning-rate", "-1"], "--learning-rate must be a positive number"),
    ],
)
def test_stopping_and_rate_options_are_checked_before_tensorflow(capsys, argv, message):
    from keras_adl import cli

    assert cli.main(["train", "word2vec", "--out", "/nonexistent", *argv]) == 1
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1


@pytest.mark.parametrize(
    "option, message",
    [
        (["--temperature", "-1"], "--temperature must be a number >= 0; received -1.0"),
        (["--top-p", "0"], "--top-p must be a number in (0, 1]; received 0.0"),
        (["--top-k", "-2"], "--top-k must be an integer >= 0; received -2"),
        (["--max-new-tokens", "-1"], "--max-new-tokens must be an integer >= 0; received -1"),
    ],
)
def test_sampling_settings_out_of_range_are_one_line(tmp_path, capsys, option, message):
    (tmp_path / "saved_model.pb").write_bytes(b"")
    (tmp_path / "keras_adl_task.json").write_text(
        json.dumps({"task": "pretrain_lm", "model": "gpt"})
    )
    code, _, err = _run(["predict", str(tmp_path), "The sea", *option], capsys)
    assert code == 1 and err == f"keras-adl: error: {message}\n"


def test_sampling_settings_need_an_export_that_generates(tmp_path, capsys):
    from keras_adl.data.dates import SOURCE_VOCAB, TARGET_VOCAB
    from keras_adl.models import attention_seq2seq
    from keras_adl.recipes.sequences.serving import export_seq2seq
    from keras_adl.training.rundir import write_task_file

    export_dir = str(tmp_path / "dates")
    model = attention_seq2seq(len(SOURCE_VOCAB), len(TARGET_VOCAB), 4, 8)
    export_seq2seq(model, export_dir, SOURCE_VOCAB, TARGET_VOCAB, 11)
    write_task_file(export_dir, task="dates", model="attention_seq2seq")
    code, _, err = _run(["predict", export_dir, "3 May 1998", "--seed", "3"], capsys)
    assert code == 1 and err.startswith("keras-adl: error: --temperature, --top-k, --top-p,")
    assert err.endswith(f"how a pretrain_lm export generates; {export_dir!r} is a dates export\n")
    code, out, _ = _run(["predict", export_dir, "3 May 1998"], capsys)
    assert code == 0 and out.startswith("3 May 1998\t")
