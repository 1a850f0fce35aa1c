import json

import numpy as np
import pytest
import tensorflow as tf

import keras_adl.text
from keras_adl.conventions import NUM_SPECIAL_TOKENS, PAD, UNK
from keras_adl.text import DocumentTokenizer

EXAMPLE = "Hello, world! It's 5 o'clock.\n\nNew para...  really?"


def _split(tok, documents):
    return [
        [[w.decode() for w in sentence] for sentence in doc]
        for doc in tok.split(tf.constant(documents)).to_list()
    ]


def test_exported_from_package():
    assert "DocumentTokenizer" in keras_adl.text.__all__
    assert keras_adl.text.DocumentTokenizer is DocumentTokenizer


def test_spec_example_splits_exactly():
    tok = DocumentTokenizer([])
    assert _split(tok, [EXAMPLE]) == [
        [["hello", "world"], ["it's", "5", "o'clock"], ["new", "para"], ["really"]]
    ]


def test_sentence_rules():
    tok = DocumentTokenizer([])
    docs = [
        "one line\ncontinues here. next",  # a single newline is whitespace
        "para one\n  \npara two",  # blank line (with spaces) ends a sentence
        "pi is 3.14 ok.Not split here",  # '.' not followed by whitespace
        "Wait?!  Yes!!!",  # punctuation runs
        'He said "Stop." (Really!) Then “Go?” ok',  # closing quotes and brackets
    ]
    assert _split(tok, docs) == [
        [["one", "line", "continues", "here"], ["next"]],
        [["para", "one"], ["para", "two"]],
        [["pi", "is", "3", "14", "ok", "not", "split", "here"]],
        [["wait"], ["yes"]],
        [["he", "said", "stop"], ["really"], ["then", "go"], ["ok"]],
    ]


def test_unicode_words_kept_and_lowercased_without_case_folding():
    tok = DocumentTokenizer([])
    assert _split(tok, ["Éclair à la CRÈME, Straße 中文 naïve_x."]) == [
        [["éclair", "à", "la", "crème", "straße", "中文", "naïve", "x"]]
    ]
    cased = DocumentTokenizer([], lowercase=False)
    assert _split(cased, ["Éclair Straße"]) == [[["Éclair", "Straße"]]]


def test_canonically_equivalent_spellings_are_one_word():
    # "E" + U+0301 (combining acute) is "É" in NFC; the ligature "ﬁ" is kept (no NFKC)
    decomposed = "E\u0301clair cre\u0300me Мои\u0306 ﬁn"
    tok = DocumentTokenizer(["éclair", "crème", "мой"])
    assert _split(tok, [decomposed]) == [[["éclair", "crème", "мой", "ﬁn"]]]
    composed = tok.encode(tf.constant(["Éclair crème мой"])).numpy()
    np.testing.assert_array_equal(
        tok.encode(tf.constant([decomposed])).numpy()[..., :3], composed[..., :3]
    )
    assert list(composed[0, 0, :3]) == [4, 5, 6]
    # a vocabulary given decomposed is composed too, and still matches either spelling
    nfd = DocumentTokenizer(["e\u0301clair"])
    assert nfd.vocabulary == ["éclair"]
    for text in ("Éclair", "E\u0301clair"):
        assert nfd.encode(tf.constant([text])).numpy()[0, 0, 0] == 4
    with pytest.raises(ValueError, match=r"must not repeat words \(in NFC\)"):
        DocumentTokenizer(["éclair", "e\u0301clair"])


def test_apostrophes_inside_words_only():
    tok = DocumentTokenizer([])
    assert _split(tok, ["Don't say 'quoted' words, students' o'clock '' rock ’n’ roll don’t"]) == [
        [["don't", "say", "quoted", "words", "students", "o'clock", "rock", "n", "roll", "don't"]]
    ]


def test_empty_and_punctuation_only_documents_have_no_sentences():
    tok = DocumentTokenizer(["a"], max_sentences=2, max_words=3)
    docs = ["", "...", "!! — ?", "   \n\n  "]
    assert _split(tok, docs) == [[], [], [], []]
    ids = tok.encode(tf.constant(docs)).numpy()
    assert ids.shape == (4, 2, 3) and not ids.any()
    assert (tok.tokens(tf.constant(docs)).numpy() == b"").all()


def test_wordless_middle_sentence_dropped():
    tok = DocumentTokenizer([])
    assert _split(tok, ["First one. — ... !! Second one.", "a. ?? b"]) == [
        [["first", "one"], ["second", "one"]],
        [["a"], ["b"]],
    ]


def test_encode_truncates_pads_and_maps_unknown_words():
    tok = DocumentTokenizer(["a", "b", "c"], max_sentences=2, max_words=3)
    ids = tok.encode(tf.constant(["a b c a b. c zz. a a a.", "b", "zz yy!"]))
    assert ids.dtype == tf.int32 and ids.shape == (3, 2, 3)
    np.testing.assert_array_equal(
        ids.numpy(),
        [
            [[4, 5, 6], [6, UNK, PAD]],  # 3rd sentence and words past 3 dropped
            [[5, PAD, PAD], [PAD, PAD, PAD]],
            [[UNK, UNK, PAD], [PAD, PAD, PAD]],
        ],
    )
    assert tok.vocabulary_size == 7  # the 4 special ids of keras_adl.conventions, then a, b, c


def test_tokens_align_with_encode():
    tok = DocumentTokenizer.build(["the cat sat on the mat. a dog!"], max_sentences=3, max_words=4)
    docs = tf.constant([EXAMPLE, "The dog sat on a big mat with the cat. The cat!", ""])
    ids = tok.encode(docs).numpy()
    tokens = tok.tokens(docs).numpy()
    assert tokens.shape == ids.shape == (3, 3, 4) and tok.tokens(docs).dtype == tf.string
    np.testing.assert_array_equal(ids != PAD, tokens != b"")
    lookup = {w: i + NUM_SPECIAL_TOKENS for i, w in enumerate(tok.vocabulary)}
    for token, i in zip(tokens[ids != PAD], ids[ids != PAD]):
        assert lookup.get(token.decode(), UNK) == i
    assert (ids != PAD).sum() > 10 and (ids == UNK).any() and (ids > UNK).any()


def test_build_orders_by_frequency_then_name_with_min_count_and_max_size():
    docs = ["B b a. c!", "a d. b", "Zed."]
    tok = DocumentTokenizer.build(docs, max_sentences=4, max_words=5)
    assert tok.vocabulary == ["b", "a", "c", "d", "zed"]  # b×3, a×2, then ties by name
    assert (tok.max_sentences, tok.max_words, tok.lowercase) == (4, 5, True)
    assert DocumentTokenizer.build(docs, min_count=2).vocabulary == ["b", "a"]
    assert DocumentTokenizer.build(docs, max_size=3).vocabulary == ["b", "a", "c"]
    assert DocumentTokenizer.build(docs, lowercase=False).vocabulary == [
        "a",
        "b",
        "B",
        "Zed",
        "c",
        "d",
    ]
    assert DocumentTokenizer.build([]).vocabulary == []


def test_config_round_trip_through_json():
    tok = DocumentTokenizer.build(
        ["Some words here. And more words!"], max_sentences=2, max_words=3, lowercase=False
    )
    restored = DocumentTokenizer.from_config(json.loads(json.dumps(tok.to_config())))
    assert restored.to_config() == tok.to_config()
    docs = tf.constant(["And words here. Some more! words", "x"])
    np.testing.assert_array_equal(restored.encode(docs).numpy(), tok.encode(docs).numpy())
    assert (tok.encode(docs).numpy() > UNK).any()


@pytest.mark.slow  # moved from make test to keep it under 8 minutes (9:27 in a fresh-clone CI)
def test_dataset_static_shapes_deterministic_shuffle_and_full_epoch():
    docs = [f"doc {i}. word w{i}!" for i in range(10)]
    labels = list(range(10))
    tok = DocumentTokenizer.build(docs, max_sentences=3, max_words=4)
    dataset = tok.dataset(docs, labels, batch_size=4, seed=1)
    assert dataset.element_spec[0].shape == (4, 3, 4)
    assert dataset.element_spec[1].shape == (4,)
    assert dataset.element_spec[0].dtype == tf.int32 and dataset.element_spec[1].dtype == tf.int32
    batches = list(dataset)
    assert len(batches) == 2 and all(x.shape == (4, 3, 4) for x, _ in batches)

    def order(seed, **kwargs):
        return [y.numpy().tolist() for _, y in tok.dataset(docs, labels, 4, seed=seed, **kwargs)]

    assert order(1) == order(1)
    assert order(1) != order(2)
    epochs = [
        y.numpy().tolist()
        for y in tok.dataset(docs, labels, 3, seed=5, drop_remainder=False)
        .repeat(2)
        .map(lambda x, y: y)
    ]
    flat = [y for batch in epochs for y in batch]
    assert sorted(flat[:10]) == labels and sorted(flat[10:]) == labels
    assert flat[:10] != flat[10:]  # reshuffled each epoch
    # Ids match encode(); labels follow their documents.
    for x, y in tok.dataset(docs, labels, 5, shuffle=False):
        np.testing.assert_array_equal(x.numpy(), tok.encode(tf.constant(docs[:5])).numpy())
        assert y.numpy().tolist() == [0, 1, 2, 3, 4]
        break


def test_encode_in_tf_function_and_saved_model(tmp_path):
    tok = DocumentTokenizer.build([EXAMPLE, "More text. Yet more!"], max_sentences=3, max_words=3)
    docs = tf.constant([EXAMPLE, "more para. unknown", ""])
    expected = tok.encode(docs).numpy()

    module = tf.Module()
    module.tables = tok.tables
    module.encode = tf.function(tok.encode, input_signature=[tf.TensorSpec([None], tf.string)])
    concrete = module.encode.get_concrete_function()
    assert concrete.structured_outputs.shape.as_list() == [None, 3, 3]
    np.testing.assert_array_equal(module.encode(docs).numpy(), expected)

    tf.saved_model.save(module, str(tmp_path / "tok"))
    del module
    loaded = tf.saved_model.load(str(tmp_path / "tok"))
    np.testing.assert_array_equal(loaded.encode(docs).numpy(), expected)
    assert (expected > UNK).any()


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"max_sentences": 0}, ValueError, r"`max_sentences` must be >= 1; received 0"),
        ({"max_words": "3"}, TypeError, r"`max_words` must be an int; received '3'"),
        ({"max_words": True}, TypeError, r"`max_words` must be an int"),
        ({"vocabulary": "abc"}, TypeError, r"`vocabulary` must be a list of str; received str"),
        ({"vocabulary": ["a", 3]}, TypeError, r"`vocabulary` must contain only str; received 3"),
        ({"vocabulary": ["a", "a"]}, ValueError, r"`vocabulary` must not repeat words"),
        ({"lowercase": "yes"}, TypeError, r"`lowercase` must be a bool"),
    ],
)
def test_bad_constructor_arguments(kwargs, error, message):
    kwargs = {"vocabulary": ["a"], **kwargs}
    with pytest.raises(error, match=message):
        DocumentTokenizer(**kwargs)


def test_bad_build_encode_and_dataset_arguments():
    with pytest.raises(ValueError, match=r"`min_count` must be >= 1; received 0"):
        DocumentTokenizer.build(["a"], min_count=0)
    with pytest.raises(TypeError, match=r"`documents` must be a list of str"):
        DocumentTokenizer.build("a b c")
    tok = DocumentTokenizer(["a"])
    with pytest.raises(TypeError, match=r"`documents` must be a dense tf.string tensor.*int32"):
        tok.encode(tf.constant([1, 2]))
    with pytest.raises(ValueError, match=r"`documents` must have shape \[batch\].*\(1, 2\)"):
        tok.encode(tf.constant([["a", "b"]]))
    with pytest.raises(TypeError, match=r"`documents` must be a dense tf.string tensor"):
        tok.tokens(tf.ragged.constant([["a"], []]))
    with pytest.raises(
        ValueError,
        match=r"`labels` must have one label per document \(2\); "
        r"received 1",
    ):
        tok.dataset(["a", "b"], [0], batch_size=1)
    with pytest.raises(TypeError, match=r"`labels` must be a 1-D sequence of ints"):
        tok.dataset(["a", "b"], [0.5, 1.0], batch_size=1)
    with pytest.raises(ValueError, match=r"`batch_size` must be >= 1; received 0"):
        tok.dataset(["a", "b"], [0, 1], batch_size=0)
