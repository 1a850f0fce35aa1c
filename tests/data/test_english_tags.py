import gzip
import re
import subprocess

import numpy as np
import pytest

from keras_adl.conventions import NUM_SPECIAL_TOKENS, PAD, UNK
from keras_adl.data import english_tags
from keras_adl.data.english_tags import (
    ENGLISH_TAG_TASKS,
    SENTENCE_TOKENS,
    WORDNET_LEXNAMES,
    english_tag_arrays,
    english_tag_sentences,
    fortune_sentences,
    pos_tag,
    supersense_tags,
)
from keras_adl.data.text_corpora import WORDNET_DIR
from tests import debian_data

needs_tagger = debian_data.needs("liblingua-en-tagger-perl")
needs_wordnet = debian_data.needs("wordnet-base")
ALL = ("fortunes", "wordnet-base", "liblingua-en-tagger-perl")
needs_all = debian_data.needs(*ALL)


@needs_tagger
def test_pos_tag_hand_checked_sentences_in_one_process(monkeypatch):
    calls = []
    run = subprocess.run
    monkeypatch.setattr(subprocess, "run", lambda *a, **k: calls.append(a) or run(*a, **k))
    tagged = pos_tag(
        [
            "The old man saw the boats .",
            "Zoë and Émile didn't go.",
            "",  # empty and white-space sentences keep their places
            " \t ",
            "x<y and a>b &amp; R&D",  # HTML characters are text, not markup
        ]
    )
    assert len(calls) == 1
    assert tagged == [
        (
            ["The", "old", "man", "saw", "the", "boats", "."],
            ["DET", "JJ", "NN", "VBD", "DET", "NNS", "PP"],
        ),
        (
            ["Zoë", "and", "Émile", "did", "n't", "go", "."],
            ["NNP", "CC", "NNP", "VBD", "RB", "VB", "PP"],
        ),
        ([], []),
        ([], []),
        (["x<y", "and", "a>b", "&amp", ";", "R&D"], ["NN", "CC", "NN", "NNP", "PPS", "NNP"]),
    ]


@needs_tagger
def test_pos_tag_unicode_survives_in_order():
    french = "« L\u2019\u00c9cole\u00a0» dit\u00a0: Привет мир, 東京 ! Fine."
    sentences = [french, "", "He said:\u00a0non\u00a0!", "ПРИВЕТ. 東京は大きい。"] * 3
    tagged = pos_tag(sentences)
    assert len(tagged) == len(sentences)
    tokens, tags = tagged[0]
    assert tokens == [
        "«",
        "L'École",
        "»",
        "dit",
        ":",
        "Привет",
        "мир",
        ",",
        "東京",
        "!",
        "Fine",
        ".",
    ]
    assert len(tags) == len(tokens) and all(re.fullmatch("[A-Z]+", t) for t in tags)
    assert tagged[2][0] == ["He", "said", ":", "non", "!"]  # no-break spaces split words
    assert tagged[3][0] == ["ПРИВЕТ", ".", "東京は大きい。"]
    assert tagged[4:] == tagged[:4] * 2 and tagged[1] == ([], [])


def test_pos_tag_errors(monkeypatch, tmp_path):
    with pytest.raises(TypeError, match="`sentences` must be a list of str"):
        pos_tag("The old man.")
    with pytest.raises(TypeError, match="`sentences`"):
        pos_tag(["fine", 3])
    assert pos_tag([]) == []
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(FileNotFoundError, match="liblingua-en-tagger-perl .`make data`"):
        pos_tag(["No perl here."])


def test_pos_tag_missing_module_names_the_package(monkeypatch):
    # Perl's own words when the module is not installed; no perl or tagger is needed here.
    def perl_without_the_module(argv, **kwargs):
        stderr = b"Can't locate Lingua/EN/Tagger.pm in @INC (you may need to install it)"
        return subprocess.CompletedProcess(argv, 2, stdout=b"", stderr=stderr)

    monkeypatch.setattr(english_tags.subprocess, "run", perl_without_the_module)
    with pytest.raises(FileNotFoundError, match="Lingua::EN::Tagger not found; install Debian's"):
        pos_tag(["Gone."])


def _lexnames_from_manual():
    debian_data.require("wordnet-base")
    with gzip.open(debian_data.LEXNAMES_MANUAL, "rt") as f:
        return [m[2] for m in re.finditer(r"^(\d\d)\t(\S+)\s", f.read(), re.M)]


def test_lexnames_are_wordnets():
    assert len(WORDNET_LEXNAMES) == 45
    assert WORDNET_LEXNAMES[3] == "noun.Tops" and WORDNET_LEXNAMES[18] == "noun.person"
    assert WORDNET_LEXNAMES[29] == "verb.body" and WORDNET_LEXNAMES[44] == "adj.ppl"
    assert list(WORDNET_LEXNAMES) == _lexnames_from_manual()


@needs_wordnet
def test_supersenses_of_known_words():
    words = ["man", "men", "boats", "saw", "running", "run", "ran", "is", "quickly", "happier"]
    assert supersense_tags(words) == [
        "noun.person",
        "noun.person",  # men -> man (noun.exc)
        "noun.artifact",  # boats -> boat (s ->)
        "verb.perception",  # saw -> see%2:39:00:: (613 in cntlist.rev) beats saw's senses
        "verb.motion",  # running -> run%2:38:00:: (verb.exc)
        "verb.motion",
        "verb.motion",
        "verb.stative",  # is -> be
        "adv.all",
        "adj.all",  # happier -> happy (ier -> y is no rule; adj.exc)
    ]
    assert supersense_tags(["Man", "MEN"]) == ["noun.person"] * 2  # case is folded
    # No single-word entry, or a closed-class word: O.
    assert set(supersense_tags(["the", ",", "n't", "3.5", "xyzzyq", "new_york"])) == {"O"}
    assert set(supersense_tags(["a", "I", "he", "us", "may", "can", "of", "ca"])) == {"O"}
    # Every supersense of a noun (verb, adj, adv) entry is a noun (verb, adj, adv) file.
    _, senses = english_tags._TABLES[WORDNET_DIR]
    prefixes = {"n": "noun.", "v": "verb.", "a": "adj.", "r": "adv."}
    assert all(WORDNET_LEXNAMES[lex].startswith(prefixes[p]) for (_, p), (_, lex) in senses.items())


def _fake_wordnet(directory):
    """A WordNet directory of three words: the rules of `supersense_tags` in miniature."""
    synsets = {"noun": [(5, "fox"), (18, "fox"), (5, "owl"), (5, "goose")], "verb": [(38, "fox")]}
    synsets["verb"] += [(32, "owl")]
    for pos in ("noun", "verb", "adj", "adv"):
        data, offsets = "  1 This header is the licence.\n", {}
        for lex, word in synsets.get(pos, []):
            offsets.setdefault(word, []).append(f"{len(data):08d}")
            data += f"{len(data):08d} {lex:02d} {pos[0]} 01 {word} 0 000 | a gloss\n"
        index = "  1 This header is the licence.\n"
        for word, offs in sorted(offsets.items()):
            index += f"{word} {pos[0]} {len(offs)} 0 {len(offs)} 0 {' '.join(offs)}  \n"
        if pos == "noun":  # a multi-word entry
            index += f"big_cat n 1 0 1 0 {offsets['owl'][0]}  \n"
        (directory / f"data.{pos}").write_text(data)
        (directory / f"index.{pos}").write_text(index)
        (directory / f"{pos}.exc").write_text("geese goose\n" if pos == "noun" else "")
    (directory / "cntlist.rev").write_text("fox%1:18:00:: 2 3\nfox%2:38:00:: 1 5\n")


def test_supersense_rules_on_a_small_wordnet(tmp_path):
    _fake_wordnet(tmp_path)
    tags = supersense_tags(["fox", "Foxes", "owl", "geese", "big_cat", "the"], tmp_path)
    assert tags == [
        "verb.motion",  # the highest count among the noun and verb senses
        "verb.motion",  # foxes -> fox (noun xes -> x, verb es -> )
        "noun.animal",  # no count: the first synset of the first part of speech (noun)
        "noun.animal",  # geese -> goose (noun.exc)
        "O",  # multi-word entries are left out
        "O",
    ]


def test_supersense_errors(tmp_path):
    with pytest.raises(TypeError, match="`tokens` must be a list of str"):
        supersense_tags("man")
    with pytest.raises(TypeError, match="`directory` must be a path"):
        supersense_tags(["man"], directory=3)
    with pytest.raises(FileNotFoundError, match="wordnet-base .`make data`"):
        supersense_tags(["man"], directory=tmp_path)
    _fake_wordnet(tmp_path)
    (tmp_path / "index.verb").write_text("fox v 1 0 1 0 00000007  \n")  # not a synset's offset
    with pytest.raises(ValueError, match="data.verb is not WordNet's"):
        supersense_tags(["fox"], directory=tmp_path)


def test_fortune_sentences():
    fortune = (
        'Mr. Smith said "no!" Then he left, e.g. at 5 p.m. to see J. R. R. Tolkien.\n'
        "   +----+----+   \n"  # a picture line, dropped
        "It rained?  It poured!\tReally.\n"
        "\t\t-- An attribution, dropped.\n"
    )
    assert fortune_sentences(fortune) == [
        'Mr. Smith said "no!"',
        "Then he left, e.g. at 5 p.m. to see J. R. R. Tolkien.",
        "It rained?",
        "It poured!",
        "Really.",
    ]
    assert fortune_sentences("\x07\x07 Bells. Two  lines\nof one.") == [
        "Bells.",
        "Two lines of one.",
    ]
    assert fortune_sentences("") == [] and fortune_sentences("-- Anon") == []
    with pytest.raises(TypeError, match="`fortune` must be a str"):
        fortune_sentences(None)


@pytest.fixture(scope="module")
def sentences():
    debian_data.require(*ALL)
    return english_tag_sentences(80, seed=0)


def test_english_tag_sentences_are_seeded_aligned_and_tagged(sentences):
    assert len(sentences) == 80 and len({s["text"] for s in sentences}) == 80
    assert english_tag_sentences(30, seed=0) == sentences[:30]  # a smaller num is a prefix
    other = english_tag_sentences(30, seed=1)
    assert [s["text"] for s in other] != [s["text"] for s in sentences[:30]]
    low, high = SENTENCE_TOKENS
    for s in sentences:
        assert set(s) == {"text", "tokens", *ENGLISH_TAG_TASKS}
        assert low <= len(s["tokens"]) <= high
        assert len(s["pos"]) == len(s["supersense"]) == len(s["tokens"])
        assert s["supersense"] == supersense_tags(s["tokens"])
        assert "\n" not in s["text"] and s["text"] == " ".join(s["text"].split())
    assert [(s["tokens"], s["pos"]) for s in sentences[:10]] == pos_tag(
        [s["text"] for s in sentences[:10]]
    )
    supersenses = {tag for s in sentences for tag in s["supersense"]}
    assert "O" in supersenses and supersenses - {"O"} <= set(WORDNET_LEXNAMES)
    assert {"DET", "NN", "PP"} <= {tag for s in sentences for tag in s["pos"]}


@needs_all
def test_english_tag_sentences_files_and_errors(tmp_path):
    for name, text in [
        ("cats", "The cat sat on the mat. Cats sleep all day long.\n%\nShort.\n"),
        ("ascii-art", "This picture file is never read at all.\n"),
    ]:
        (tmp_path / name).write_text(text)
        (tmp_path / (name + ".dat")).write_bytes(b"")
    found = english_tag_sentences(directory=tmp_path)
    assert sorted(s["text"] for s in found) == [
        "Cats sleep all day long.",
        "The cat sat on the mat.",
    ]  # "Short." has 2 tokens
    with pytest.raises(ValueError, match=r"`num` must be at most 2 \(all\); received 3"):
        english_tag_sentences(3, directory=tmp_path)
    for kwargs, match in [({"num": 0}, "`num`"), ({"seed": -1}, "`seed`"), ({"num": 2.5}, "`num`")]:
        with pytest.raises(ValueError, match=match):
            english_tag_sentences(directory=tmp_path, **kwargs)


def test_english_tag_arrays_shapes_padding_and_ids(sentences):
    token_ids, tag_ids, vocabulary, tag_names = english_tag_arrays(sentences)
    longest = max(len(s["tokens"]) for s in sentences)
    assert token_ids.shape == (80, longest) and token_ids.dtype == np.int32
    assert set(tag_ids) == set(ENGLISH_TAG_TASKS) == set(tag_names)
    mask = token_ids != PAD
    assert mask.sum(1).tolist() == [len(s["tokens"]) for s in sentences]
    for task in ENGLISH_TAG_TASKS:
        ids = tag_ids[task]
        assert ids.shape == token_ids.shape and ids.dtype == np.int32
        assert np.array_equal(ids != PAD, mask)  # tag id 0 only at padding
        assert tag_names[task][0] == "<pad>" and list(tag_names[task][1:]) == sorted(
            {tag for s in sentences for tag in s[task]}
        )
        assert [tag_names[task][j] for j in ids[5][mask[5]]] == sentences[5][task]
    assert [vocabulary[i - NUM_SPECIAL_TOKENS] for i in token_ids[5][mask[5]]] == sentences[5][
        "tokens"
    ]
    assert (token_ids[mask] >= NUM_SPECIAL_TOKENS).all()  # every token is in its vocabulary

    # A vocabulary and tag names from other sentences: unseen tokens are UNK; longer arrays.
    token_ids, tag_ids, _, names = english_tag_arrays(
        sentences[40:], max_tokens=40, vocabulary=vocabulary[:50], tag_names=tag_names
    )
    assert token_ids.shape == (40, 40) and names == tag_names
    kept = token_ids[token_ids != PAD]
    assert (kept == UNK).any() and (kept < NUM_SPECIAL_TOKENS + 50).all()
    assert ((kept >= NUM_SPECIAL_TOKENS) | (kept == UNK)).all()


def test_english_tag_arrays_vocabulary_options():
    sentences = [
        {
            "tokens": ["The", "dog", "."],
            "pos": ["DET", "NN", "PP"],
            "supersense": ["O", "noun.animal", "O"],
        },
        {"tokens": ["the", "dog"], "pos": ["DET", "NN"], "supersense": ["O", "noun.animal"]},
    ]
    _, _, vocabulary, _ = english_tag_arrays(sentences)
    assert vocabulary == ("dog", ".", "The", "the")  # by count, then by name
    token_ids, _, vocabulary, _ = english_tag_arrays(sentences, min_count=2, lowercase=True)
    assert vocabulary == ("dog", "the")
    assert token_ids.tolist() == [[5, 4, UNK], [5, 4, PAD]]


def test_english_tag_arrays_errors():
    good = {"tokens": ["Dogs", "."], "pos": ["NNS", "PP"], "supersense": ["noun.animal", "O"]}
    names = {"pos": ("<pad>", "NNS", "PP"), "supersense": ("<pad>", "O")}
    cases = [
        (dict(sentences=[]), "`sentences` must be a non-empty list"),
        (dict(sentences=good), "`sentences` must be a non-empty list"),
        (dict(sentences=[{**good, "pos": ["NNS"]}]), r"`sentences\[0\]` must be a dict of aligned"),
        (dict(sentences=[{**good, "tokens": []}]), r"`sentences\[0\]`"),
        (dict(sentences=[{"tokens": ["x"]}]), r"`sentences\[0\]`"),
        (dict(sentences=[good], max_tokens=1), "`max_tokens` must be at least the longest"),
        (dict(sentences=[good], max_tokens=0), "`max_tokens` must be an integer >= 1"),
        (dict(sentences=[good], min_count=0), "`min_count`"),
        (dict(sentences=[good], vocabulary="Dogs"), "`vocabulary` must be a sequence"),
        (dict(sentences=[good], vocabulary=["a", "a"]), "`vocabulary`"),
        (dict(sentences=[good], tag_names={"pos": names["pos"]}), "`tag_names` must be a dict"),
        (dict(sentences=[good], tag_names={**names, "pos": ("NNS", "PP")}), "start with '<pad>'"),
        (dict(sentences=[good], tag_names=names), "supersense tag 'noun.animal', which is not"),
        (dict(sentences=[{**good, "pos": ["<pad>", "PP"]}], tag_names=names), "pos tag '<pad>'"),
    ]
    for kwargs, match in cases:
        with pytest.raises(ValueError, match=match):
            english_tag_arrays(**kwargs)
