"""``keras-adl translate``: a translator's ``.po`` catalog with its untranslated entries filled
by a model and marked fuzzy, everything else as it was, accepted by ``msgfmt -c``."""

import os
import subprocess

import pytest

from keras_adl.cli import main
from keras_adl.data.po_catalogs import read_catalog
from keras_adl.recipes.sequences.translate import (
    COPIED_NOTE,
    MARKUP_NOTE,
    framed,
    message_frame,
    translate_catalog,
)
from keras_adl.training.rundir import RecipeError, write_task_file
from tests import debian_data
from tests.data import po_samples


def _good(texts):
    return [po_samples.GOOD.get(t, "") for t in texts]


def _msgfmt(path):
    """``msgfmt -c`` on the catalog, fuzzy entries included (they are what was filled)."""
    debian_data.require("gettext")
    done = subprocess.run(
        ["msgfmt", "--check", "--use-fuzzy", "-o", os.devnull, str(path)],
        capture_output=True,
        text=True,
    )
    return done.returncode, done.stderr


@pytest.mark.parametrize("layout", ["lf", "crlf", "bom"])
def test_every_untranslated_entry_is_filled_and_marked_fuzzy_the_rest_kept(tmp_path, layout):
    newline = "\r\n" if layout == "crlf" else "\n"
    path = po_samples.write(tmp_path / "ru.po", newline=newline, bom=layout == "bom")
    counts = translate_catalog(path, str(tmp_path / "out.po"), _good)
    assert counts == {
        "translated": 6,
        "copied": 0,
        "kept": 2,
        "forms": 3,
        "byte_order_mark_dropped": layout == "bom",
    }
    before, _ = read_catalog(path)
    after, written = read_catalog(str(tmp_path / "out.po"))
    assert written["newline"] == newline and not written["bom"]
    assert len(before) == len(after)
    for old, new in zip(before, after):
        if not old.untranslated:  # the header, translations, fuzzy and obsolete: as written
            assert new.lines == old.lines
            continue
        assert "fuzzy" in new.flags and new.flags - {"fuzzy"} == old.flags
        assert (new.msgctxt, new.msgid, new.msgid_plural) == (
            old.msgctxt,
            old.msgid,
            old.msgid_plural,
        )
        assert [line for line in new.lines if line.startswith("#.")] == [
            line for line in old.lines if line.startswith("#.")
        ]
    filled = {e.msgid: e.msgstr for e in after}
    assert filled["Cannot open %s: %s"] == {0: "Не удалось открыть %s: %s"}
    assert filled["%d file"] == {0: "%d файл", 1: "%d файлов", 2: "%d файлов"}
    assert filled["_Save"] == {0: "_Сохранить"}  # the accelerator before the first letter
    usage = "Использование: %s [ПАРАМЕТР]...\nКопировать файл.\n"  # line by line
    assert filled["Usage: %s [OPTION]...\nCopy the file.\n"] == {0: usage}
    assert filled["<b>%(name)s</b> was saved"] == {0: "%(name)s сохранён"}
    assert filled["{0} of {1} done"] == {0: "{1} из {0} готово"}
    notes = {e.msgid: [l for l in e.lines if l.startswith("# keras-adl")] for e in after}
    assert notes["<b>%(name)s</b> was saved"] == [f"# {MARKUP_NOTE}"]
    assert _msgfmt(tmp_path / "out.po") == (0, "")


def test_a_translation_that_loses_a_directive_is_replaced_by_the_english(tmp_path):
    def careless(texts):  # drops or reorders directives, answers nothing for one
        wrong = {"Cannot open %s: %s": "Не удалось открыть файл", "{0} of {1} done": ""}
        wrong["%d files"] = "%s файлов"
        return [wrong.get(t, po_samples.GOOD.get(t, "")) for t in texts]

    path = po_samples.write(tmp_path / "ru.po")
    counts = translate_catalog(path, str(tmp_path / "out.po"), careless)
    assert counts["translated"] == 4 and counts["copied"] == 2
    after = {e.msgid: e for e in read_catalog(str(tmp_path / "out.po"))[0]}
    assert after["Cannot open %s: %s"].msgstr == {0: "Cannot open %s: %s"}
    assert f"# {COPIED_NOTE.format('%s %s')}" in after["Cannot open %s: %s"].lines
    assert after["{0} of {1} done"].msgstr == {0: "{0} of {1} done"}  # no translation
    assert after["%d file"].msgstr == {0: "%d файл", 1: "%d files", 2: "%d files"}
    assert _msgfmt(tmp_path / "out.po") == (0, "")
    # msgfmt itself refuses what was avoided: the careless translation written as it came
    bad = (tmp_path / "out.po").read_text().replace('msgstr "Cannot open %s: %s"', 'msgstr "x"')
    (tmp_path / "bad.po").write_text(bad)
    assert _msgfmt(tmp_path / "bad.po")[0] != 0


def test_plural_messages_need_the_headers_plural_forms(tmp_path):
    path = po_samples.write(tmp_path / "ru.po", plural_forms=False)
    with pytest.raises(
        RecipeError, match=r"ru\.po: the catalog has plural messages .*Plural-Forms"
    ):
        translate_catalog(path, str(tmp_path / "out.po"), _good)
    assert not os.path.exists(tmp_path / "out.po")


def test_a_message_is_sent_without_its_frame_and_put_back_in_it():
    assert message_frame("  <b>_Open %s</b>\n") == ("  <b>", "Open %s", "</b>\n", "_")
    assert message_frame("Save &As…") == ("", "Save As…", "", "&")
    assert message_frame("a_b and c_d") == ("", "a_b and c_d", "", "")  # two: kept
    assert message_frame("<i>Recent</i> files") == ("", "Recent files", "", "")  # balanced


def test_the_command_fills_a_catalog_with_an_export(tmp_path, capsys):
    import keras

    from keras_adl.models import attention_seq2seq, greedy_decode
    from keras_adl.recipes.sequences.serving import export_text_pairs
    from keras_adl.text import TextPairTokenizer

    sources, targets = ["open file", "cannot open %s"], ["открыть файл", "не открыть %s"]
    tokenizer = TextPairTokenizer.build(sources, targets, level="word")
    keras.utils.set_random_seed(0)
    model = attention_seq2seq(tokenizer.source_size, tokenizer.target_size, 8, 16)
    export = str(tmp_path / "export")
    export_text_pairs(model, export, tokenizer, 8, greedy_decode)
    write_task_file(export, task="pairs", model="attention_seq2seq", max_length=8)
    path = po_samples.write(tmp_path / "ru.po", newline="\r\n")
    out = str(tmp_path / "out.po")
    assert main(["translate", export, path, "-o", out]) == 0
    line = capsys.readouterr().out.strip()
    assert line.startswith(f"{out}: ") and "marked fuzzy" in line and "2 translations kept" in line
    assert _msgfmt(out) == (0, "")  # an untrained model: directives kept by construction
    assert all("fuzzy" in e.flags for e in read_catalog(out)[0] if e.msgid in po_samples.GOOD)
    # Refusals, one line each.
    write_task_file(export, task="dates")
    assert main(["translate", export, path, "-o", out]) == 1
    assert "translate needs a pairs export" in capsys.readouterr().err
    assert main(["translate", str(tmp_path), path, "-o", out]) == 1
    assert "not a directory written by `keras-adl export`" in capsys.readouterr().err
    write_task_file(export, task="pairs")
    assert main(["translate", export, str(tmp_path / "none.po"), "-o", out]) == 1
    assert "not found" in capsys.readouterr().err
    assert main(["translate", export, path, "-o", str(tmp_path / "out.mo")]) == 1
    assert "reads and writes .po files" in capsys.readouterr().err


def test_plural_forms_of_a_singular_without_the_number_translate_the_plural(tmp_path):
    text = po_samples.catalog().replace(
        'msgid "%d file"\nmsgid_plural "%d files"', 'msgid "One file"\nmsgid_plural "%d files"'
    )
    path = tmp_path / "ru.po"
    path.write_text(text, encoding="utf-8")
    translate_catalog(str(path), str(tmp_path / "out.po"), _good)
    after = {e.msgid: e.msgstr for e in read_catalog(str(tmp_path / "out.po"))[0]}
    # msgfmt reads form 0 as standing for 1, 21, 31…: it must carry %d too.
    assert after["One file"] == {0: "%d файлов", 1: "%d файлов", 2: "%d файлов"}
    assert _msgfmt(tmp_path / "out.po") == (0, "")


def test_accelerators_and_invalid_format_strings(tmp_path):
    assert message_frame("use file_name or AT&T") == ("", "use file_name or AT&T", "", "")
    path = po_samples.write(tmp_path / "ru.po")

    assert framed(message_frame("_Save %s"), "%s Сохранить") == "%s _Сохранить"  # not "%_s"

    def translations(texts):
        answers = {"Save": "%s Сохранить", "Cannot open %s: %s": "Открыть %s: %s на 100%"}
        return [answers.get(t, po_samples.GOOD.get(t, "")) for t in texts]

    translate_catalog(path, str(tmp_path / "out.po"), translations)
    after = {e.msgid: e.msgstr for e in read_catalog(str(tmp_path / "out.po"))[0]}
    assert after["_Save"] == {0: "_Save"}  # a directive the message has not: English
    assert after["Cannot open %s: %s"] == {0: "Cannot open %s: %s"}  # a lone "%": English
    assert _msgfmt(tmp_path / "out.po") == (0, "")


def test_a_catalog_in_another_charset_is_refused(tmp_path):
    text = po_samples.catalog().replace("charset=UTF-8", "charset=ISO-8859-1")
    path = tmp_path / "latin1.po"
    path.write_text(text, encoding="utf-8")
    with pytest.raises(RecipeError, match=r"charset=iso-8859-1; .*msgconv -t UTF-8"):
        translate_catalog(str(path), str(tmp_path / "out.po"), _good)
