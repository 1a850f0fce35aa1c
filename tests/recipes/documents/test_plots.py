"""`plot_document_attention`: the Hierarchical Attention Network's document picture."""

import math
import pathlib
import re

import numpy as np
import pytest
import tensorflow as tf

from keras_adl.recipes.documents.plots import plot_document_attention

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"

# 3 sentences × 4 word positions; the last sentence is padding only.
WORDS = [
    ["the", "pizza", "was", "<b>&"],
    ["service", "slow", "", ""],
    ["", "", "", ""],
]
WORD_ATTENTION = np.array(
    [
        [0.1, 0.6, 0.1, 0.2],
        [0.25, 0.75, 0.0, 0.0],
        [0.0, 0.0, 0.0, 0.0],
    ],
    "float32",
)
SENTENCE_ATTENTION = np.array([0.64, 0.36, 0.0], "float32")
REAL_WORDS = ["the", "pizza", "was", "<b>&", "service", "slow"]

SPAN = re.compile(
    r'<span class="w" style="background-color: rgba\(\d+, \d+, \d+, ([0-9.]+)\);'
    r'[^"]*" title="([^"]*)">([^<]*)</span>'
)


def _spans(page):
    """``{displayed word: alpha}`` of the word spans of a page."""
    return {word: float(alpha) for alpha, _, word in SPAN.findall(page)}


def _html(tmp_path, **kwargs):
    path = plot_document_attention(
        WORDS, WORD_ATTENTION, SENTENCE_ATTENTION, str(tmp_path / "doc.html"), **kwargs
    )
    return pathlib.Path(path).read_text(encoding="utf-8")


def test_html_draws_each_real_word_once_escaped_and_no_padding(tmp_path):
    path = str(tmp_path / "doc.html")
    assert (
        plot_document_attention(
            WORDS, WORD_ATTENTION, SENTENCE_ATTENTION, path, title="predicted: <food> (0.93)"
        )
        == path
    )
    page = pathlib.Path(path).read_text(encoding="utf-8")
    assert page.count('class="w"') == len(REAL_WORDS)  # padding words are not drawn
    assert page.count('class="sentence"') == 2  # nor the padding sentence
    assert page.count('class="sw"') == 2
    assert [word for _, _, word in SPAN.findall(page)] == [
        "the",
        "pizza",
        "was",
        "&lt;b&gt;&amp;",
        "service",
        "slow",
    ]
    for word in ("the", "pizza", "service", "slow"):
        assert len(re.findall(rf">{word}<", page)) == 1
    assert "<b>" not in page and "&lt;b&gt;&amp;" in page
    assert "&lt;food&gt;" in page and "<food>" not in page  # the title is escaped too
    assert "<script" not in page and "http" not in page  # self-contained
    titles = [title for _, title, _ in SPAN.findall(page)]
    assert titles[1] == "word weight 0.6000"  # hover shows the weight
    assert ">0.64</span>" in page and ">0.36</span>" in page  # sentence weights, 2 decimals
    assert ">0.00</span>" not in page


def test_html_most_attended_word_is_fully_coloured(tmp_path):
    for scale in (True, False):
        alphas = _spans(_html(tmp_path, scale_words_by_sentence=scale))
        strongest = max(alphas, key=alphas.get)
        assert alphas[strongest] == 1.0
        # "slow" has the largest raw weight; "pizza" the largest sqrt(p_s)·p_w.
        assert strongest == ("pizza" if scale else "slow")


def test_html_intensity_follows_the_formula(tmp_path):
    # Scaled: intensity ∝ sqrt(p_s) · p_w. pizza: 0.8 · 0.6 = 0.48 (the strongest);
    # slow: 0.6 · 0.75 = 0.45; service: 0.6 · 0.25 = 0.15.
    scaled = _spans(_html(tmp_path, scale_words_by_sentence=True))
    assert scaled["pizza"] == 1.0
    assert scaled["slow"] == pytest.approx(0.45 / 0.48, abs=1e-3)
    assert scaled["service"] == pytest.approx(0.15 / 0.48, abs=1e-3)
    assert scaled["the"] == pytest.approx(0.08 / 0.48, abs=1e-3)
    # Raw: intensity ∝ p_w, normalised by the document's strongest word (slow, 0.75).
    raw = _spans(_html(tmp_path, scale_words_by_sentence=False))
    assert raw["slow"] == 1.0
    assert raw["pizza"] == pytest.approx(0.6 / 0.75, abs=1e-3)
    assert raw["service"] == pytest.approx(0.25 / 0.75, abs=1e-3)
    # The ratio of two words in sentences of different weight changes by sqrt(0.64 / 0.36).
    ratio_scaled = scaled["pizza"] / scaled["slow"]
    ratio_raw = raw["pizza"] / raw["slow"]
    assert ratio_scaled / ratio_raw == pytest.approx(math.sqrt(0.64 / 0.36), rel=1e-2)


def test_html_accepts_bytes_arrays_and_tensors(tmp_path):
    words = np.array([[w.encode("utf-8") for w in row] for row in WORDS], dtype=object)
    words[0, 0] = "café".encode()
    path = plot_document_attention(
        words,
        tf.constant(WORD_ATTENTION),
        tf.constant(SENTENCE_ATTENTION),
        str(tmp_path / "b.html"),
    )
    page = pathlib.Path(path).read_text(encoding="utf-8")
    assert ">café<" in page and "b&#x27;" not in page and "b'" not in page
    assert page.count('class="w"') == len(REAL_WORDS)


def _assert_png(path):
    data = pathlib.Path(path).read_bytes()
    assert data.startswith(PNG_SIGNATURE)
    assert len(data) > 2000


def test_png_is_written(tmp_path):
    path = str(tmp_path / "doc.png")
    assert (
        plot_document_attention(
            WORDS, WORD_ATTENTION, SENTENCE_ATTENTION, path, title="predicted: $sports$ (0.93)"
        )
        == path
    )
    _assert_png(path)


def test_png_from_a_numpy_bytes_array(tmp_path):
    words = np.array([[w.encode("utf-8") for w in row] for row in WORDS], dtype=object)
    path = plot_document_attention(
        words,
        WORD_ATTENTION,
        SENTENCE_ATTENTION,
        str(tmp_path / "bytes.png"),
        scale_words_by_sentence=False,
    )
    _assert_png(path)


def test_png_with_a_60_word_sentence(tmp_path):
    rng = np.random.default_rng(0)
    words = [[f"word{i}" for i in range(60)], ["short", "one"] + [""] * 58]
    word_attention = np.zeros((2, 60), "float32")
    word_attention[0] = rng.dirichlet(np.ones(60))
    word_attention[1, :2] = [0.3, 0.7]
    words[0][7] = "a" * 200  # longer than the default width: the figure widens
    path = plot_document_attention(words, word_attention, [0.9, 0.1], str(tmp_path / "long.png"))
    _assert_png(path)


def test_bad_extension_names_path_and_extensions(tmp_path):
    path = str(tmp_path / "doc.svg")
    with pytest.raises(ValueError, match=r"doc\.svg.*\.html.*\.png"):
        plot_document_attention(WORDS, WORD_ATTENTION, SENTENCE_ATTENTION, path)


@pytest.mark.parametrize(
    "words, word_attention, sentence_attention",
    [
        (WORDS, WORD_ATTENTION[:2], SENTENCE_ATTENTION),  # S of word_attention
        (WORDS, WORD_ATTENTION[:, :3], SENTENCE_ATTENTION),  # W of word_attention
        (WORDS, WORD_ATTENTION, SENTENCE_ATTENTION[:2]),  # S of sentence_attention
        (WORDS[:2], WORD_ATTENTION, SENTENCE_ATTENTION),  # S of words
        (WORDS, WORD_ATTENTION[None], SENTENCE_ATTENTION),  # rank
    ],
)
def test_shape_mismatch(tmp_path, words, word_attention, sentence_attention):
    with pytest.raises(
        ValueError,
        match=r"word_attention.*sentence_attention.*got word_attention"
        r" \(.*\) and sentence_attention \(.*\)",
    ):
        plot_document_attention(
            words, word_attention, sentence_attention, str(tmp_path / "doc.html")
        )
    assert not (tmp_path / "doc.html").exists()


def test_ragged_words_are_rejected(tmp_path):
    with pytest.raises(ValueError, match="rectangular"):
        plot_document_attention(
            [["a", "b"], ["c"]], np.ones((2, 2)), np.ones(2), str(tmp_path / "doc.html")
        )


@pytest.mark.parametrize("which", ["word_attention", "sentence_attention"])
def test_nan_weights(tmp_path, which):
    weights = {
        "word_attention": WORD_ATTENTION.copy(),
        "sentence_attention": SENTENCE_ATTENTION.copy(),
    }
    weights[which].flat[1] = np.nan
    with pytest.raises(ValueError, match=f"{which} contains NaN"):
        plot_document_attention(WORDS, path=str(tmp_path / "doc.png"), **weights)
