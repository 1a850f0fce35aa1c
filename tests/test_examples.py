"""Every example script runs end to end with tiny settings; the benchmark script too."""

import importlib.util
import json
import os
import subprocess
import sys

import numpy as np
import pytest

from tests import debian_data

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def load_script(relative_path):
    path = os.path.join(ROOT, relative_path)
    spec = importlib.util.spec_from_file_location(os.path.basename(path)[:-3], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_attention_layers_example_learns_to_attend(tmp_path):
    # Fast learning test of the attention family: 2000 lookups x 12 epochs, half the demo's
    # steps (whose seeds 0-3 reached 0.99 training accuracy by epoch 9, 6, 6, 7 of 12; seed 0
    # here: 0.98 held-out accuracy, 0.98 attention on the answer). The model must answer the
    # lookup and put its Bahdanau attention peak on the answer token. The example also writes
    # its picture and checks that the reloaded SavedModel predicts the same (it raises
    # otherwise).
    example = load_script("examples/attention_layers.py")
    result = example.main(["--samples", "2000", "--epochs", "12", "--out", str(tmp_path)])
    assert result["accuracy"] >= 0.95
    assert result["attention_hit"] >= 0.9
    assert os.path.getsize(result["picture"]) > 1000
    assert os.path.isdir(tmp_path / "saved_model")


@pytest.mark.slow  # 12-18 s; the builder's short learning test on dates is in make test
def test_seq2seq_dates_example_smoke(tmp_path):
    # Tiny settings: the learning itself is tested in tests/models/test_seq2seq.py; this runs the
    # demo's whole path (fit, decode, picture, export, reload, serve raw strings). The script
    # raises if the reloaded SavedModel disagrees with the in-memory model.
    example = load_script("examples/seq2seq_dates.py")
    result = example.main(
        ["--train", "256", "--test", "32", "--epochs", "1", "--units", "16", "--out", str(tmp_path)]
    )
    assert os.path.getsize(result["picture"]) > 1000
    assert os.path.isfile(os.path.join(result["export_dir"], "saved_model.pb"))


def _benchmark_smoke(script):
    """The stdout of ``benchmarks/<script> --smoke``, which must exit cleanly."""
    command = [sys.executable, os.path.join(ROOT, "benchmarks", script), "--smoke"]
    return subprocess.run(command, capture_output=True, text=True, timeout=600, check=True).stdout


@pytest.mark.slow  # ~8 s; the attention layers' example learns in the fast suite (above)
def test_attention_benchmark_smoke():
    out = _benchmark_smoke("attention.py")
    assert "MultiHeadSelfAttention" in out and "Bahdanau step" in out


@pytest.mark.slow  # ~35 s: six processes
def test_attention_memory_benchmark_smoke():
    out = _benchmark_smoke("attention_memory.py")
    rows = [line for line in out.splitlines() if line.startswith("| tensorflow")]
    assert len(rows) == 6, out  # 2 lengths × 3 systems, each measured in its own process
    assert not any("failed" in row or "error" in row for row in rows), out


@pytest.mark.slow  # ~18 s; the figure itself is in benchmarks/RESULTS.md
def test_attention_vs_length_benchmark_smoke():
    benchmark = load_script("benchmarks/attention_vs_length.py")
    results = benchmark.main(["--smoke"])
    assert set(results) == {"attention_seq2seq", "encoder_decoder"}
    assert [row[0] for row in results["attention_seq2seq"][0]] == ["4-10", "11-20", "21-32"]


@pytest.mark.slow  # ~12 s alone, most of it the SavedModel export; make test keeps the memory
# family's learning test (tests/models/test_memory.py) within its 8 minutes
def test_ntm_copy_example_smoke(tmp_path):
    # Tiny settings: the learning is tested in tests/models/test_memory.py. The script raises if
    # the reloaded SavedModel disagrees with the in-memory model.
    example = load_script("examples/ntm_copy.py")
    result = example.main(
        [
            "--steps",
            "5",
            "--max-length",
            "3",
            "--memory-size",
            "8",
            "--controller-units",
            "16",
            "--out",
            str(tmp_path),
        ]
    )
    assert result["bit_errors"] >= 0
    assert os.path.getsize(result["picture"]) > 1000
    assert os.path.isfile(os.path.join(result["export_dir"], "saved_model.pb"))


@pytest.mark.slow  # fourteen model compilations, seven under XLA: about two minutes
def test_memory_speed_benchmark_smoke(tmp_path):
    benchmark = load_script("benchmarks/memory_speed.py")
    results = benchmark.main(["--smoke", "--out", str(tmp_path)])
    assert [(r[0], r[1]) for r in results["jit"]] == [
        ("ntm", 2),
        ("dnc", 2),
        ("dnc, sparse K = 2", 2),
    ]
    assert [r[0] for r in results["memory_size"]] == [8, 16]
    assert all(len(r[1]) == 4 and min(r[1]) > 0 for r in results["memory_size"])
    assert all(t > 0 for r in results["jit"] for t in r[2:])
    assert os.path.getsize(results["picture"]) > 1000


@pytest.mark.slow  # 12-18 s; RAM's learning test (tests/models/test_ram.py) is in make test
def test_ram_digits_example_smoke(tmp_path):
    # Tiny settings: the learning is tested in tests/models/test_ram.py. The script raises if
    # the reloaded SavedModel disagrees with the in-memory model.
    example = load_script("examples/ram_digits.py")
    result = example.main(["--epochs", "1", "--units", "16", "--out", str(tmp_path)])
    assert 0.0 <= result["error"] <= 1.0 and 0.0 <= result["on_digit"] <= 1.0
    assert os.path.getsize(result["picture"]) > 1000
    assert os.path.isfile(os.path.join(result["export_dir"], "saved_model.pb"))


@pytest.mark.slow  # 12-18 s; captioning's learning test (tests/models/test_captioning.py): slow
def test_caption_digits_example_smoke(tmp_path):
    example = load_script("examples/caption_digits.py")
    result = example.main(["--epochs", "1", "--units", "8", "--out", str(tmp_path)])
    assert 0.0 <= result["alignment"] <= 1.0
    assert os.path.getsize(result["picture"]) > 1000
    assert os.path.isfile(os.path.join(result["export_dir"], "saved_model.pb"))


def test_dram_benchmark_draws_strips_from_idx_files_with_data(tmp_path):
    from tests.data.test_image_sources import _write_split

    rng = np.random.default_rng(0)
    for prefix, count in (("train", 30), ("t10k", 12)):
        images = rng.integers(0, 256, (count, 28, 28))
        _write_split(str(tmp_path), prefix, images, np.arange(count) % 10, compress=True)
    benchmark = load_script("benchmarks/dram_strips.py")
    args = benchmark.parse_args(["--data", str(tmp_path), "--samples", "20"])
    (train_x, train_y), (test_x, test_y) = benchmark.load_items(args, 1400)
    assert train_x.shape == (20, 28, 28) and train_y.tolist() == list(np.arange(20) % 10)
    assert test_x.shape == (12, 28, 28) and 0.0 <= train_x.min() and train_x.max() <= 1.0
    # without --data: scikit-learn's digits, split as benchmarks/captioning.py splits them
    (train_x, _), (test_x, _) = benchmark.load_items(benchmark.parse_args([]), 1400)
    assert train_x.shape == (1400, 16, 16) and len(test_x) == 397


@pytest.mark.slow  # an example smoke test; make test checks DRAM's training rule, not its learning
def test_dram_strips_example_smoke(tmp_path):
    example = load_script("examples/dram_strips.py")
    result = example.main(["--epochs", "1", "--units", "16", "--out", str(tmp_path)])
    assert 0.0 <= result["exact_match"] <= 1.0 and 0.0 < result["pixels_seen"] <= 1.0
    assert os.path.getsize(result["picture"]) > 1000
    assert os.path.isfile(os.path.join(result["export_dir"], "saved_model.pb"))


@pytest.mark.slow  # 12-18 s; HAN's learning test on the needle task is in make test
def test_han_documents_example_smoke(tmp_path):
    example = load_script("examples/han_documents.py")
    result = example.main(
        ["--documents", "256", "--epochs", "1", "--units", "8", "--out", str(tmp_path)]
    )
    assert 0.0 <= result["accuracy"] <= 1.0 and 0.0 <= result["hit_rate"] <= 1.0
    assert os.path.getsize(result["png"]) > 1000 and "<span" in open(result["html"]).read()
    assert os.path.isfile(os.path.join(result["export_dir"], "saved_model.pb"))


@pytest.mark.slow  # ~50 s: 36 man pages rendered, two HAN runs of one epoch
@debian_data.needs("man-db", "manpages-dev")
def test_han_length_benchmark_smoke(tmp_path):
    benchmark = load_script("benchmarks/han_length.py")
    results = benchmark.main(["--smoke", "--out", str(tmp_path)])
    assert [r["length"] for r in results] == [30, 100]
    for r in results:
        assert r["train"] + r["test"] == 36 and 0.0 <= r["tfidf"]["test_accuracy"] <= 1.0
        (han,) = r["han"]
        assert len(han["curve"]) == 1 and 0.0 <= han["test_accuracy"] <= 1.0
        assert han["S"] * han["W"] <= 4096
    # Truncation keeps every page and only shortens it.
    assert results[0]["mean_words"] <= 30 < results[1]["mean_words"] <= 100


def _cvt_smoke(out, *parts):
    """``benchmarks/cvt.py --smoke``'s results, run in a process of its own (its models'
    memory goes with it, not into the test worker's)."""
    command = [sys.executable, os.path.join(ROOT, "benchmarks", "cvt.py"), "--smoke"]
    command += ["--part", *parts, "--out", str(out)]
    subprocess.run(command, capture_output=True, text=True, timeout=600, check=True)
    with open(os.path.join(out, "cvt.json")) as f:
        return json.load(f)


@pytest.mark.slow  # ~1 min: eight tiny runs
def test_cvt_benchmark_smoke(tmp_path):
    results = _cvt_smoke(tmp_path, "sizes", "views")
    assert [(r["labelled"], r["method"]) for r in results["sizes"]] == [
        (8, "supervised"),
        (8, "CVT"),
    ]
    for r in results["sizes"]:
        assert len(r["accuracy"]) == 2 and all(0.0 <= a <= 1.0 for a in r["accuracy"])
    cvt = results["sizes"][1]["auxiliary_accuracy"][0]
    assert set(cvt) == {"forward", "backward", "future", "past"}
    assert results["sizes"][0]["auxiliary_accuracy"][0] == {}  # the labels alone: no views
    assert [r["views"] for r in results["views"]] == [
        ["forward", "backward", "future", "past"],
        ["backward", "future", "past"],
    ]
    assert os.path.getsize(tmp_path / "accuracy_vs_labelled.png") > 1000


@pytest.mark.slow  # ~1 min: four tiny runs
@debian_data.needs("fortunes", "wordnet-base", "liblingua-en-tagger-perl")
def test_cvt_benchmark_multi_task_smoke(tmp_path):
    results = _cvt_smoke(tmp_path, "tasks")
    assert set(results["tasks"]) == {"both, labels", "both, CVT"}
    for scores in results["tasks"].values():
        assert len(scores["pos"]) == len(scores["supersense"]) == 2
        assert all(0.0 <= a <= 1.0 for a in scores["pos"] + scores["supersense"])


@pytest.mark.slow  # moved from make test to keep it under 8 minutes (9:27 in a fresh-clone CI)
def test_word2vec_example_smoke(tmp_path):
    corpus = tmp_path / "corpus.txt"
    words = ["ship", "wave", "boat", "cow", "field", "barn", "song", "piano", "drum"]
    corpus.write_text(
        "\n\n".join(" ".join(words[(i % 3) * 3 : (i % 3) * 3 + 3] * 3) for i in range(400))
    )
    example = load_script("examples/word2vec.py")
    result = example.main(
        ["--data", str(corpus), "--min-count", "1", "--dim", "8", "--out", str(tmp_path / "w")]
    )
    assert result["known"] == [True, False] and len(result["neighbors"]) == 8
    assert os.path.getsize(result["png"]) > 1000
    assert os.path.isfile(os.path.join(result["export_dir"], "saved_model.pb"))


@pytest.mark.slow  # ~16 s, most of it writing the SavedModel of the generation loop
def test_generate_text_example_smoke(tmp_path):
    corpus = tmp_path / "corpus.txt"
    rng = np.random.default_rng(0)
    words = "the cat sat on a mat and ran to Été Привет 東京".split()
    corpus.write_text("\n\n".join(" ".join(rng.choice(words, 12)) for _ in range(300)))
    example = load_script("examples/generate_text.py")
    argv = ["--data", str(corpus), "--steps", "20", "--vocab-size", "60", "--dim", "16"]
    result = example.main([*argv, "--prompt", "the cat", "--out", str(tmp_path / "g")])
    assert result["reloaded"] == result["greedy"] and result["greedy"].startswith("the cat")
    assert result["figures"]["perplexity"] > 1.0


@pytest.mark.slow  # ~30 s: pretraining and two fine-tuning runs
def test_pretrain_and_finetune_example_smoke(tmp_path):
    from tests.cli.test_cli import _fortunes_dir, _sentences_corpus

    corpus = _sentences_corpus(tmp_path / "corpus.txt")
    fortunes = _fortunes_dir(tmp_path / "fortunes")
    example = load_script("examples/pretrain_and_finetune.py")
    argv = ["--data", corpus, "--fortunes", fortunes, "--steps", "10", "--epochs", "1"]
    result = example.main([*argv, "--vocab-size", "120", "--dim", "16", "--out", str(tmp_path)])
    assert set(result["finetuning"]) == {"pretrained", "random"}
    assert 0.0 < result["pretraining"]["most_frequent_token_accuracy"] <= 1.0


@pytest.mark.slow  # ~40 s: a biLM and two classifiers
def test_elmo_features_example_smoke(tmp_path):
    from tests.cli.test_cli import _fortunes_dir, _sentences_corpus

    corpus = _sentences_corpus(tmp_path / "corpus.txt")
    fortunes = _fortunes_dir(tmp_path / "fortunes")
    example = load_script("examples/elmo_features.py")
    argv = ["--data", corpus, "--fortunes", fortunes, "--steps", "5", "--epochs", "1"]
    result = example.main([*argv, "--vocab-size", "50", "--out", str(tmp_path / "elmo")])
    assert set(result["accuracy"]) == {"all", "top"}
    assert abs(sum(result["mixing_weights"]) - 1) < 1e-5 and len(result["mixing_weights"]) == 3
    assert os.path.getsize(tmp_path / "elmo" / "scalar_mix.png") > 1000
