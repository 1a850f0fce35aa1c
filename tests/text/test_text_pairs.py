import numpy as np
import pytest
import tensorflow as tf

from keras_adl.conventions import END, PAD, START, UNK
from keras_adl.data.text_pairs import load_text_pairs
from keras_adl.text import TextPairTokenizer


def _write(tmp_path, content, name="pairs.tsv", mode="w"):
    path = tmp_path / name
    path.write_bytes(content) if mode == "wb" else path.write_text(content)
    return str(path)


def test_loader_reads_pairs_and_skips_blank_lines(tmp_path):
    path = _write(tmp_path, "I am here\tje suis ici\n\n  \nthank you\tmerci\r\n")
    assert load_text_pairs(path) == (["I am here", "thank you"], ["je suis ici", "merci"])


@pytest.mark.parametrize(
    "content, message",
    [
        (b"hello\n", r"pairs.tsv:1: expected 'source<TAB>target', found 0 tab"),
        (b"a\tb\tc\n", r"pairs.tsv:1: expected 'source<TAB>target', found 2 tab"),
        (b"ok\tfine\n\tempty\n", r"pairs.tsv:2: the source side is empty"),
        (b"ok\tfine\nbad\t\xff\xfe\n", r"pairs.tsv:2: not valid UTF-8"),
        (b"\n\n", r"no source<TAB>target pairs found"),
    ],
)
def test_loader_errors_name_file_and_line(tmp_path, content, message):
    path = _write(tmp_path, content, mode="wb")
    with pytest.raises(ValueError, match=message):
        load_text_pairs(path)


def test_missing_file(tmp_path):
    with pytest.raises(FileNotFoundError, match="not found"):
        load_text_pairs(str(tmp_path / "nope.tsv"))


def test_vocabulary_from_data_and_fixed_shape_batches():
    sources = ["the cat sat", "the dog sat", "a cat ran"]
    targets = ["le chat", "le chien", "un chat"]
    tok = TextPairTokenizer.build(sources, targets, level="word", min_count=2)
    assert tok.source_vocabulary == ["cat", "sat", "the"]  # count ≥ 2, most frequent first
    assert tok.target_vocabulary == ["chat", "le"]
    batches = list(
        tok.dataset(
            sources * 4, targets * 4, batch_size=5, source_length=6, target_length=4, shuffle=False
        )
    )
    assert len(batches) == 2  # 12 pairs, partial batch dropped: shapes never change
    for inputs, target in batches:
        assert inputs["source"].shape == (5, 6) and inputs["decoder_input"].shape == (5, 4)
        assert target.shape == (5, 4)
    inputs, target = batches[0]
    np.testing.assert_array_equal(inputs["source"][0], [6, 4, 5, 0, 0, 0])
    np.testing.assert_array_equal(inputs["source"][2], [UNK, 4, UNK, 0, 0, 0])
    np.testing.assert_array_equal(inputs["decoder_input"][0], [START, 5, 4, PAD])
    np.testing.assert_array_equal(target[0], [5, 4, END, PAD])
    assert tok.decode_target(target[:3]).numpy().tolist() == [b"le chat", b"le", b"chat"]


def test_char_level_and_truncation():
    tok = TextPairTokenizer.build(["héllo"], ["hi"], level="char")
    assert "é" in tok.source_vocabulary
    ids = tok.encode_source(tf.constant(["héllo wörld"]), 4).numpy()
    assert ids.shape == (1, 4) and UNK not in ids[0]
    with pytest.raises(
        ValueError, match=r"`level` must be one of \('subword', 'word', 'char'\); received 'byte'"
    ):
        TextPairTokenizer([], [], level="byte")


def test_split_pairs_is_seeded_keeps_order_and_holds_out_the_fraction():
    from keras_adl.data.text_pairs import split_pairs

    sources = [f"s{i} é" for i in range(40)]
    targets = [f"t{i} \u00e9" for i in range(40)]
    (train_s, train_t), (held_s, held_t) = split_pairs(sources, targets, 0.1, seed=3)
    assert len(held_s) == 4 and len(train_s) == 36
    assert sorted(train_s + held_s) == sorted(sources)
    assert all(s[1:] == t[1:] for s, t in zip(train_s + held_s, train_t + held_t))  # pairs kept
    assert train_s == [s for s in sources if s in train_s]  # the file's order
    assert split_pairs(sources, targets, 0.1, seed=3)[1] == (held_s, held_t)
    assert split_pairs(sources, targets, 0.1, seed=4)[1] != (held_s, held_t)
    assert len(split_pairs(sources[:3], targets[:3], 0.01)[1][0]) == 1  # at least one held out
    assert len(split_pairs(sources[:2], targets[:2], 0.99)[0][0]) == 1  # at least one kept


@pytest.mark.parametrize(
    "args, message",
    [
        ((["a", "b"], ["a"], 0.5), "one length; received 2 and 1"),
        ((["a", "b"], ["a", "b"], 1.0), r"`fraction` must be in \(0, 1\); received 1.0"),
        ((["a"], ["a"], 0.5), "at least 2 pairs; received 1"),
    ],
)
def test_split_pairs_errors(args, message):
    from keras_adl.data.text_pairs import split_pairs

    with pytest.raises(ValueError, match=message):
        split_pairs(*args)
