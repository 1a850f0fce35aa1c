"""`keras_adl.data.gettext_catalogs`: .po and .mo catalogs to cleaned, deduplicated pairs."""

import struct

import pytest

from keras_adl.data.gettext_catalogs import (
    catalog_files,
    clean_pair,
    load_gettext_pairs,
    read_mo,
    read_po,
)

NBSP = "\u00a0"

PO = f"""# A translator's comment
msgid ""
msgstr ""
"Content-Type: text/plain; charset=UTF-8\\n"

#: src/main.c:10
msgid "File %s not found!"
msgstr "Fichier %s introuvable{NBSP}!"

msgctxt "menu"
msgid "_Open"
msgstr "_Ouvrir"

#, fuzzy, c-format
msgid "Close"
msgstr "Fermer"

msgid ""
"A message on "
"two lines\\n"
msgstr ""
"Un message sur "
"deux lignes\\n"

msgid "One file"
msgid_plural "%d files"
msgstr[0] "Un fichier"
msgstr[1] "%d fichiers"

msgid "Untranslated"
msgstr ""

msgid "Say \\"hi\\"\\tnow"
msgstr "Dites «{NBSP}salut{NBSP}» maintenant"

#~ msgid "Obsolete"
#~ msgstr "Obsolète"
"""


def write_mo(path, entries):
    """A GNU .mo file of ``{key: translation}`` (keys may hold a context ``ctx\\x04msg`` or a
    plural ``msg\\x00plural``, translations plural forms joined by ``\\x00``)."""
    keys = sorted(entries)
    ids = [k.encode() for k in keys]
    strs = [entries[k].encode() for k in keys]
    count = len(keys)
    header = 7 * 4
    originals, translations = header, header + 8 * count
    data_start = header + 16 * count
    table, blob = [], b""
    for items in (ids, strs):
        offsets = []
        for item in items:
            offsets.append((len(item), data_start + len(blob)))
            blob += item + b"\0"
        table.append(offsets)
    out = struct.pack("<7I", 0x950412DE, 0, count, originals, translations, 0, 0)
    for offsets in table:
        for length, offset in offsets:
            out += struct.pack("<2I", length, offset)
    path.write_bytes(out + blob)
    return str(path)


def test_read_po_skips_header_fuzzy_untranslated_and_obsolete_and_drops_context(tmp_path):
    path = tmp_path / "demo.po"
    path.write_text(PO, encoding="utf-8")
    assert read_po(str(path)) == [
        ("File %s not found!", f"Fichier %s introuvable{NBSP}!"),
        ("_Open", "_Ouvrir"),
        ("A message on two lines\n", "Un message sur deux lignes\n"),
        ("One file", "Un fichier"),
        ('Say "hi"\tnow', f"Dites «{NBSP}salut{NBSP}» maintenant"),
    ]


@pytest.mark.parametrize(
    "content, message",
    [
        (b'msgid "a"\nmsgstr "b"\nmsgfoo "c"\n', r"demo.po:3: unknown .po keyword 'msgfoo'"),
        (b'"stray"\n', r"demo.po:1: a string outside any msgid/msgstr"),
        (b'msgid "a"\nmsgstr b\n', r"demo.po:2: expected a quoted string"),
        (b'msgid "a"\nmsgstr "\xff"\n', r"demo.po:2: not valid UTF-8"),
    ],
)
def test_read_po_names_the_file_and_line_of_bad_input(tmp_path, content, message):
    path = tmp_path / "demo.po"
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message):
        read_po(str(path))


def test_read_mo_drops_context_takes_the_first_plural_form_and_skips_the_header(tmp_path):
    path = write_mo(
        tmp_path / "demo.mo",
        {
            "": "Content-Type: text/plain; charset=UTF-8\n",
            "menu\x04_Open": "_Ouvrir",
            "One file\x00%d files": "Un fichier\x00%d fichiers",
            "Quit": "Quitter",
        },
    )
    assert sorted(read_mo(path)) == [
        ("One file", "Un fichier"),
        ("Quit", "Quitter"),
        ("_Open", "_Ouvrir"),
    ]


def test_clean_pair_removes_markup_and_paired_accelerators_and_keeps_placeholders():
    assert clean_pair("<b>Save</b> _As…", "<b>Enregistrer</b> _sous…") == (
        "Save As…",
        "Enregistrer sous…",
    )
    assert clean_pair("&Quit", "&Quitter") == ("Quit", "Quitter")
    assert clean_pair("Usage: cp <file> %1$s {0}", "Usage : cp <fichier> %1$s {0}") == (
        "Usage: cp <file> %1$s {0}",
        "Usage : cp <fichier> %1$s {0}",
    )
    assert clean_pair("a_b c_d", "e_f") == ("a_b c_d", "e_f")  # not one marker each: kept
    assert clean_pair("Line\n  two\t!", f"Ligne deux{NBSP}!") == (
        "Line two !",
        f"Ligne deux{NBSP}!",
    )
    assert clean_pair("<br/>", "x") is None  # nothing left on one side


def test_load_dedupes_by_source_first_catalog_wins_and_skips_iso_lists(tmp_path):
    folder = tmp_path / "fr" / "LC_MESSAGES"
    folder.mkdir(parents=True)
    write_mo(folder / "b_app.mo", {"Open": "Ouvrir (b)", "Save": "Enregistrer"})
    write_mo(folder / "a_app.mo", {"Open": "Ouvrir", "<i>Quit</i>": "Quitter"})
    write_mo(folder / "iso_3166-1.mo", {"France": "France"})
    sources, targets = load_gettext_pairs("fr", locale_dir=str(tmp_path))
    assert dict(zip(sources, targets)) == {
        "Open": "Ouvrir",
        "Quit": "Quitter",
        "Save": "Enregistrer",
    }
    assert [p.rsplit("/", 1)[1] for p in catalog_files("fr", str(tmp_path))] == [
        "a_app.mo",
        "b_app.mo",
    ]
    only_iso = load_gettext_pairs("fr", locale_dir=str(tmp_path), domains=["iso_*"])
    assert only_iso == (["France"], ["France"])


def test_an_unreadable_catalog_among_several_is_skipped_with_a_warning(tmp_path):
    write_mo(tmp_path / "good.mo", {"Yes": "Oui"})
    header = "Content-Type: text/plain; charset=UTF-8\n"
    bad = write_mo(tmp_path / "bad.mo", {"": header, "No": "x"})
    with open(bad, "r+b") as f:  # the last translation, "x", made a Latin-1 byte: not UTF-8
        f.seek(-2, 2)
        f.write(b"\xe9\0")
    with pytest.warns(UserWarning, match="skipped a catalog: .*bad.mo"):
        assert load_gettext_pairs(str(tmp_path)) == (["Yes"], ["Oui"])
    with pytest.raises(ValueError, match="bad.mo: not a readable gettext .mo catalog"):
        load_gettext_pairs(bad)


@pytest.mark.parametrize(
    "source, message",
    [
        ("xx", r"no gettext catalog \(.mo or .po\) found in '.*xx/LC_MESSAGES'"),
        (
            "not a language!",
            r"must be a language code \(e.g. 'fr'\), a .mo/.po file or a directory",
        ),
    ],
)
def test_sources_that_name_no_catalog_are_refused(tmp_path, source, message):
    with pytest.raises(ValueError, match=message):
        load_gettext_pairs(source, locale_dir=str(tmp_path))


def test_a_file_that_is_no_catalog_is_refused(tmp_path):
    path = tmp_path / "pairs.tsv"
    path.write_text("a\tb\n")
    with pytest.raises(ValueError, match=r"neither a .mo nor a .po file"):
        load_gettext_pairs(str(path))


def test_po_escapes_byte_order_mark_and_fuzzy_flags_of_obsolete_entries(tmp_path):
    path = tmp_path / "edge.po"
    path.write_bytes(
        "\ufeff".encode()
        + b'msgid "A\\101 \\x42 tab\\ttab"\nmsgstr "ok\\f"\n\n'
        + b'#, fuzzy\n#~ msgid "Old"\n#~ msgstr "Vieux"\n\n'
        + b'#| msgid "Previous"\nmsgid "Live"\nmsgstr "Vivant"\n\n'
        + b'#, fuzzy\nmsgctxt "menu"\nmsgid "Fuzzy in context"\nmsgstr "Flou"\n'
    )
    assert read_po(str(path)) == [("AA B tab\ttab", "ok\f"), ("Live", "Vivant")]


def test_entities_are_decoded_before_accelerators_are_looked_for():
    assert clean_pair("Save &amp; _Quit", "Enregistrer &amp; _quitter") == (
        "Save & Quit",
        "Enregistrer & quitter",
    )
    assert clean_pair(f"{NBSP}Edge{NBSP}", "Bord") == (f"{NBSP}Edge{NBSP}", "Bord")  # kept


def test_a_truncated_mo_file_is_named(tmp_path):
    path = tmp_path / "short.mo"
    path.write_bytes(struct.pack("<I", 0x950412DE) + b"\0\0")
    with pytest.raises(ValueError, match=r"short.mo: not a readable gettext .mo catalog"):
        read_mo(str(path))


def test_a_directory_of_several_languages_is_refused_not_mixed(tmp_path):
    for language, word in (("fr", "Ouvrir"), ("de", "Öffnen")):
        (tmp_path / f"{language}.po").write_text(
            f'msgid ""\nmsgstr "Language: {language}\\n"\n\nmsgid "Open"\nmsgstr "{word}"\n',
            encoding="utf-8",
        )
    with pytest.raises(ValueError, match=r"several languages \(de, fr\); pass one catalog"):
        load_gettext_pairs(str(tmp_path))
    assert load_gettext_pairs(str(tmp_path / "de.po")) == (["Open"], ["Öffnen"])
