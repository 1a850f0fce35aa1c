"""Copy-through: spans a translation keeps unchanged are slotted, then copied back exactly;
for a target in another script than Latin, the Latin words it keeps too."""

import json

import pytest
import tensorflow as tf

from keras_adl.recipes.sequences.serving import make_text_pair_serving_fn
from keras_adl.text import CopyThrough, TextPairTokenizer
from keras_adl.text.copy_through import (
    CLASSES,
    MAX_SLOTS,
    SLOTS,
    choose_classes,
    copied_spans,
    foreign_words,
    span_counts,
)
from keras_adl.text.tokenizer import WordVectorPairTokenizer

ALL = CopyThrough(CLASSES)
NBSP = "\u00a0"


def _strings(tensor):
    return [t.decode() for t in tensor.numpy()]


def _spans(copy, text):
    return [s.decode() for s in copy.protect(tf.constant([text]))[1].to_list()[0]]


@pytest.mark.parametrize(
    "text, spans",
    [
        ("Cannot open %s: %d", ["%s", "%d"]),
        ("%(name)s, %-10.2lf, %1$s and %%", ["%(name)s", "%-10.2lf", "%1$s", "%%"]),
        ("{0} of {name} at {0:.2f}", ["{0}", "{name}", "{0:.2f}"]),
        ("set $HOME or ${XDG_DATA_HOME}", ["$HOME", "${XDG_DATA_HOME}"]),
        ("Unknown option --verbose; try -v (or -x)", ["--verbose", "-v", "-x"]),
        ("re-read the e-mail, x86-64", []),  # a hyphen inside a word opens no option
        (f"«{NBSP}--verbose{NBSP}» and failed: %m", ["--verbose", "%m"]),  # RE2's \s is ASCII
        ("100% sure, 50 % done", []),  # no space flag: a percent sign in prose stays text
        ("iconv() failed at 0x1F in 1.2.3", ["iconv()", "0x1F", "1.2.3"]),
        (
            "see https://example.org/a?b=1. or bug@example.org",
            ["https://example.org/a?b=1", "bug@example.org"],
        ),
    ],
)
def test_spans_of_each_class(text, spans):
    assert _spans(ALL, text) == spans


def test_protect_then_restore_gives_the_text_back_in_every_script():
    texts = [
        f"Fichier{NBSP}: %s introuvable{NBSP}!",
        "ÉCHEC de --force sur %(chemin)s",
        "Не удалось открыть %s: %s",
        "无法打开文件 %s。使用 --help",
        "",
        " ".join(f"%{width}d" for width in range(MAX_SLOTS + 3)),  # past the last slot: text
        "%s and %d, then %s again",  # equal spans share a slot
    ]
    slotted, spans = ALL.protect(tf.constant(texts))
    assert _strings(ALL.restore(slotted, spans)) == texts
    assert spans.row_lengths().numpy().tolist() == [1, 2, 1, 2, 0, MAX_SLOTS, 2]
    assert _strings(slotted)[2] == f"Не удалось открыть {SLOTS[0]}: {SLOTS[0]}"
    assert _strings(slotted)[6] == f"{SLOTS[0]} and {SLOTS[1]}, then {SLOTS[0]} again"
    assert _strings(slotted)[5].endswith(f"{SLOTS[-1]} %16d %17d %18d")


def test_slot_characters_in_the_input_cannot_pose_as_slots():
    slotted, spans = ALL.protect(tf.constant([f"{SLOTS[3]} and %s"]))
    assert _strings(slotted) == [f"\ufffd and {SLOTS[0]}"]
    assert _strings(ALL.restore(tf.constant([f"{SLOTS[0]} {SLOTS[3]}"]), spans)) == ["%s "]


def test_targets_slot_only_the_spans_their_source_has():
    copy = CopyThrough(["format", "option"])
    sources = tf.constant(["Write %s to --output=FILE", "%d files"])
    targets = tf.constant(["Schreibe %s nach --output=DATEI (%u)", "%d Dateien, %d"])
    _, spans = copy.protect(sources)
    slotted = _strings(copy.protect_targets(targets, spans))
    # The option's name is a span, its translated value text; %u is not in the source.
    assert slotted == [
        f"Schreibe {SLOTS[0]} nach {SLOTS[1]}=DATEI (%u)",
        f"{SLOTS[0]} Dateien, {SLOTS[0]}",
    ]
    assert _strings(copy.restore(tf.constant(slotted), spans)) == _strings(targets)


def test_a_slot_the_source_lacks_is_dropped_and_no_classes_slot_nothing():
    _, spans = ALL.protect(tf.constant(["%s", "plain"]))
    out = ALL.restore(tf.constant([f"a {SLOTS[0]} {SLOTS[1]}", f"b {SLOTS[0]}"]), spans)
    assert _strings(out) == ["a %s ", "b "]
    none = CopyThrough([])
    slotted, spans = none.protect(tf.constant(["%s --force"]))
    assert _strings(slotted) == ["%s --force"] and spans.to_list() == [[]]


def test_an_option_written_against_a_word_gets_its_space_back():
    copy = CopyThrough(["format", "option"])
    sources = ["Run apt --fix-broken now", "-i --input=<file>", "Use --all with %s", "e-mail -x"]
    sources[3] += " --force"
    _, spans = copy.protect(tf.constant(sources))
    outputs = [
        f"Запустите apt{SLOTS[0]} сейчас",  # glued to a word: a space
        f"{SLOTS[0]}{SLOTS[1]}=<файл>",  # glued to the option before it: a space
        f"«{SLOTS[0]}» avec {SLOTS[1]}",  # after punctuation, and a placeholder: as written
        f"courriel-{SLOTS[0]} activé{SLOTS[1]}",
    ]
    assert _strings(copy.restore(tf.constant(outputs), spans)) == [
        "Запустите apt --fix-broken сейчас",
        "-i --input=<файл>",
        "«--all» avec %s",
        "courriel--x activé --force",  # after a hyphen: as written; after é: a space
    ]
    empty = copy.restore(tf.constant([], tf.string), copy.protect(tf.constant([], tf.string))[1])
    assert empty.shape == (0,)


def test_unknown_class_is_refused():
    with pytest.raises(ValueError, match="copy-through `classes` must be among .*'printf'"):
        CopyThrough(["printf"])


def test_classes_are_chosen_by_how_often_the_targets_keep_them():
    sources = [f"Use --opt{i} with %s and 0x{i:X}" for i in range(40)]
    kept = [f"Nutze --opt{i} mit %s und 0x{i:X}" for i in range(40)]
    assert span_counts(sources, kept, ["option", "number"]) == {
        "option": (40, 40),
        "number": (40, 40),
    }
    assert choose_classes(sources, kept) == ("format", "option", "number")
    # Options translated in 3 of 40 pairs (92.5% kept): below the 95% bar; format is always on.
    changed = [t.replace(f"--opt{i}", "--Option") if i < 3 else t for i, t in enumerate(kept)]
    assert choose_classes(sources, changed) == ("format", "number")
    assert choose_classes(sources[:5], kept[:5]) == ("format",)  # too few spans to judge


def test_copied_spans_counts_what_the_reference_keeps_and_the_prediction_reproduces():
    sources = ["Open %s with --force", "Read %d of %d", "No span"]
    references = ["Öffne %s mit --force", "%d von %d gelesen", "Kein"]
    predictions = ["Öffne %s mit --forced", "%d von %u gelesen", "Kein"]  # --force is not in it
    figures = copied_spans(sources, references, predictions)
    # Distinct spans of a pair count once: "%d" is in row 2's prediction.
    assert figures["format"] == {"spans": 2, "reproduced": 1.0}
    assert figures["option"] == {"spans": 1, "reproduced": 0.0}
    assert figures["call"] == {"spans": 0, "reproduced": None}
    assert figures["all"]["spans"] == 3 and figures["all"]["reproduced"] == pytest.approx(2 / 3)
    with pytest.raises(ValueError, match="one length"):
        copied_spans(sources, references, predictions[:2])


PAIRS = [
    ("Cannot open %s: %s", f"Impossible d'ouvrir %s{NBSP}: %s"),
    ("Unknown option --verbose", "Option --verbose inconnue"),
    ("File not found.", "Fichier introuvable."),
    ("Use -v for more", "Utilisez -v pour plus"),
] * 10


def _tokenizer(**kwargs):
    sources, targets = zip(*PAIRS)
    return TextPairTokenizer.build(
        list(sources), list(targets), vocab_size=200, cased_target=True, **kwargs
    )


def test_tokenizer_copies_spans_it_never_saw_exactly():
    tok = _tokenizer(copy_through=("format", "option"))
    assert set(SLOTS) <= set(tok.source_vocabulary) and set(SLOTS) <= set(tok.target_vocabulary)
    source = tf.constant(["Cannot open %(Datei_Name)s: --dry-run"])  # spans never seen
    target = tf.constant([f"Impossible d'ouvrir %(Datei_Name)s{NBSP}: --dry-run"])
    _, ids = tok.encode_target(target, 16, source)
    assert tok.encode_source(source, 16).numpy()[0, 2] == 4 + tok.source_vocabulary.index(SLOTS[0])
    assert _strings(tok.decode_target(ids, source)) == _strings(target)
    labels = [t.decode() for t in tok.source_tokens(source)[0].numpy()]
    assert labels == ["cannot", "open", "%(Datei_Name)s", ":", "--dry-run"]
    # Target lengths are counted as encode_target cuts them: slotted with their sources.
    assert tok.token_counts(target, "target", source).numpy()[0] == int((ids.numpy() > 0).sum()) - 1
    restored = TextPairTokenizer.from_config(json.loads(json.dumps(tok.to_config())))
    assert restored.copy.classes == ("format", "option")
    assert _strings(restored.decode_target(ids, source)) == _strings(target)


def test_tokenizer_without_copy_through_is_unchanged_and_old_configs_load():
    plain, auto = _tokenizer(), _tokenizer(copy_through="auto")
    assert plain.copy.classes == () and auto.copy.classes == ("format", "option")
    config = plain.to_config()
    del config["copy_through"]  # a run written before copy-through
    assert TextPairTokenizer.from_config(config).copy.classes == ()
    with pytest.raises(ValueError, match="`copy_through` needs the subword level"):
        TextPairTokenizer(["a"], ["b"], level="word", copy_through=["format"])
    cove = WordVectorPairTokenizer(["the"], ["le"])  # CoVe's words: saved and reloaded as is
    assert WordVectorPairTokenizer.from_config(cove.to_config()).copy.classes == ()


def test_serving_function_puts_the_source_spans_back():
    tok = _tokenizer(copy_through="auto")
    sources = tf.constant(["Cannot open %s: %s", "Use -v for more"])
    references = [f"Impossible d'ouvrir %s{NBSP}: %s", "Utilisez -v pour plus"]
    _, teacher = tok.encode_target(tf.constant(references), 12, sources)

    def decode(model, ids, max_length):  # a perfect "model": the reference's ids
        return teacher, tf.zeros([2, max_length, 12]), tf.zeros([2])

    serve = make_text_pair_serving_fn(None, tok, 12, 12, decode=decode)
    assert _strings(serve(sources)["output"]) == references


def test_dataset_slots_once_and_gives_the_ids_of_encode():
    tok = _tokenizer(copy_through="auto")
    sources, targets = [s for s, _ in PAIRS[:4]], [t for _, t in PAIRS[:4]]
    (inputs, labels), *_ = tok.dataset(sources, targets, 4, 10, 10, shuffle=False)
    decoder_input, target = tok.encode_target(tf.constant(targets), 10, tf.constant(sources))
    assert (inputs["source"].numpy() == tok.encode_source(tf.constant(sources), 10).numpy()).all()
    assert (inputs["decoder_input"].numpy() == decoder_input.numpy()).all()
    assert (labels.numpy() == target.numpy()).all()
    slotted_sources, slotted_targets = tok.slot_pairs(sources, targets)
    assert slotted_sources[0] == f"Cannot open {SLOTS[0]}: {SLOTS[0]}"
    assert slotted_targets[0] == f"Impossible d'ouvrir {SLOTS[0]}{NBSP}: {SLOTS[0]}"


def test_a_folded_target_writes_the_spans_back_normalised():
    sources, targets = zip(*PAIRS)
    tok = TextPairTokenizer.build(
        list(sources), list(targets), vocab_size=200, copy_through=("format", "option")
    )
    source = tf.constant(["Cannot open %(Name)s: --dry-run"])
    _, ids = tok.encode_target(
        tf.constant(["Impossible d'ouvrir %(Name)s : --dry-run"]), 16, source
    )
    decoded = _strings(tok.decode_target(ids, source))
    assert decoded == _strings(
        tok.normalize_target(tf.constant(["Impossible d'ouvrir %(Name)s : --dry-run"]))
    )
    assert decoded == ["impossible d ' ouvrir % ( name ) s : - - dry - run"]


RUSSIAN = [
    ("Open Word 2007 document", "Открыть документ Word 2007"),
    ("Enable zfhmin and q", "Включить zfhmin и q"),
    ("Close the file", "Закрыть файл"),
    ("Open the file", "Открыть файл"),
    ("The file is ALTER TABLE", "Файл — ALTER TABLE"),
] * 10


def test_foreign_words_are_those_a_target_in_another_script_keeps():
    sources, targets = zip(*RUSSIAN)
    found = foreign_words(list(sources), list(targets))
    assert found["kept"] == ["ALTER", "TABLE", "Word", "q", "zfhmin"]
    assert {"Close", "Open", "file", "the"} <= set(found["seen"]) - set(found["kept"])
    assert foreign_words(["Open file"], ["Ouvrir le fichier"]) is None  # Latin: the classes do
    greek = foreign_words(["Open GIMP"], ["Άνοιγμα GIMP"])
    japanese = foreign_words(["Open GIMP now"], ["GIMP を今すぐ開く"])
    assert greek["kept"] == ["GIMP"] and japanese["kept"] == ["GIMP"]


def test_latin_names_are_copied_into_a_cyrillic_target_exactly():
    sources, targets = zip(*RUSSIAN)
    tok = TextPairTokenizer.build(
        list(sources), list(targets), vocab_size=200, cased_target=True, copy_through="auto"
    )
    assert tok.copy.foreign is not None and len(tok.tables) == 1
    # Kept in training (Word) or never seen (PowerPoint, zqinx_2, and in this small corpus "in"
    # and "with"): slotted; seen and translated (Open, the, file): read as text.
    source = tf.constant(["Open the PowerPoint file in Word with zqinx_2"])
    spans = [s.decode() for s in tok.copy.protect(source)[1].to_list()[0]]
    assert spans == ["PowerPoint", "in", "Word", "with", "zqinx_2"]
    capital = tok.copy.protect(tf.constant(["File ENABLE"]))[1].to_list()[0]
    assert capital == []  # "file" and "enable" are translated in training, whatever the case
    target = tf.constant(["Открыть файл PowerPoint и Word и zqinx_2"])  # pieces it knows
    _, ids = tok.encode_target(target, 16, source)
    assert _strings(tok.decode_target(ids, source)) == _strings(target)
    restored = TextPairTokenizer.from_config(json.loads(json.dumps(tok.to_config())))
    assert restored.copy.foreign == tok.copy.foreign
    assert _strings(restored.decode_target(ids, source)) == _strings(target)
    with pytest.raises(ValueError, match="no copy-through"):
        WordVectorPairTokenizer(["the"], ["le"], foreign={"kept": [], "seen": []})


def test_copied_spans_counts_latin_words_kept_inside_another_script():
    sources = ["Open Word 2007", "Enable zfhmin", "Open the file"]
    references = ["Открыть Word 2007", "Включить zfhmin", "Open the file"]  # the last: Latin
    predictions = ["Открыть Word 2007", "Включить zfhmi", "Открыть файл"]
    figures = copied_spans(sources, references, predictions)
    assert figures["foreign"] == {"spans": 2, "reproduced": 0.5}
    assert copied_spans(sources, references, predictions, foreign=False).keys() == set(CLASSES) | {
        "all"
    }


def test_a_memory_match_gets_the_spans_of_the_query():
    copy = CopyThrough(["format", "option"])
    queries = ["Use --force with %s", "Cannot open %s: %s", "Hello", "Open %s"]
    sources = ["Use --all with %d", "Cannot open %d: %s", "Hello", "Open %s and %d"]
    targets = ["Utilisez --all avec %d", "Impossible d'ouvrir %d : %s", "Bonjour", "Ouvrir %s, %d"]
    repaired = copy.repair(tf.constant(queries), tf.constant(sources), tf.constant(targets))
    assert _strings(repaired) == [
        "Utilisez --force avec %s",
        "Impossible d'ouvrir %d : %s",  # one distinct span against two: left as it is
        "Bonjour",
        "Ouvrir %s, %d",
    ]
    sources, targets = zip(*RUSSIAN)
    tok = TextPairTokenizer.build(
        list(sources), list(targets), vocab_size=200, cased_target=True, copy_through="auto"
    )
    out = tok.copy.repair(
        tf.constant(["Enable zqinx and q"]),
        tf.constant(["Enable zfhmin and q"]),
        tf.constant(["Включить zfhmin и q"]),
    )
    assert _strings(out) == ["Включить zqinx и q"]  # a Latin name in a Cyrillic target
    none = CopyThrough([]).repair(tf.constant(["a"]), tf.constant(["b"]), tf.constant(["c"]))
    assert _strings(none) == ["c"]  # nothing slotted: nothing repaired


def test_a_translation_holds_the_spans_of_its_query_or_not():
    copy = CopyThrough(["format", "option"])
    queries = ["Use --force with %s", "Open %s and %d", "Hello", "Copy %s", "%s"]
    translations = ["Utilisez --force avec %s", "Ouvrir %s", "Bonjour", "Copier %d", "%s\n%s"]
    holds = copy.holds(tf.constant(queries), tf.constant(translations)).numpy()
    assert holds.tolist() == [True, False, True, False, True]  # %d missing; %d is not %s
    inactive = CopyThrough([]).holds(tf.constant(["%s"]), tf.constant(["x"])).numpy()
    assert inactive.tolist() == [True]  # nothing slotted: nothing missing
    sources, targets = zip(*RUSSIAN)
    tok = TextPairTokenizer.build(
        list(sources), list(targets), vocab_size=200, cased_target=True, copy_through="auto"
    )
    names = tok.copy.holds(
        tf.constant(["Enable zqinx and q", "Enable zqinx and q"]),
        tf.constant(["Включить zqinx и q", "Включить zfhmin и q"]),
    )
    assert names.numpy().tolist() == [True, False]  # a Latin name of the input, lost
