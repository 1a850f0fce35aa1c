"""``.po`` catalogs read as entries and written back byte for byte
(`keras_adl.data.po_catalogs`), and format directives compared as ``msgfmt`` compares them."""

import pytest

from keras_adl.data.po_catalogs import (
    fill_catalog,
    format_placeholders,
    placeholders_match,
    plural_count,
    read_catalog,
)
from tests.data import po_samples


@pytest.mark.parametrize("newline", ["\n", "\r\n"])
def test_a_catalog_written_back_unfilled_is_byte_for_byte_the_same(tmp_path, newline):
    path = po_samples.write(tmp_path / "in.po", newline=newline)
    entries, layout = read_catalog(path)
    fill_catalog(entries, layout, str(tmp_path / "out.po"), {})
    assert (tmp_path / "out.po").read_bytes() == (tmp_path / "in.po").read_bytes()


def test_a_byte_order_mark_is_read_and_left_out_when_written(tmp_path):
    path = po_samples.write(tmp_path / "in.po", bom=True)
    entries, layout = read_catalog(path)
    assert layout["bom"] and entries[0].is_header
    fill_catalog(entries, layout, str(tmp_path / "out.po"), {})
    assert (tmp_path / "out.po").read_bytes() == (tmp_path / "in.po").read_bytes()[3:]


def test_the_entries_are_parsed_with_their_flags_forms_and_kinds(tmp_path):
    entries, _ = read_catalog(po_samples.write(tmp_path / "in.po"))
    assert [e.msgid for e in entries if e.untranslated] == po_samples.UNTRANSLATED
    by_id = {e.msgid: e for e in entries}
    assert by_id["%d file"].msgid_plural == "%d files"
    assert by_id["%d file"].msgstr == {0: "", 1: "", 2: ""}
    assert by_id["%d file"].flags == {"c-format"}
    assert by_id["_Save"].msgctxt == "menu"
    assert by_id["Close"].flags == {"fuzzy"} and not by_id["Close"].untranslated
    assert by_id["Old message"].obsolete and not by_id["Old message"].untranslated
    assert by_id["Open file"].first_line == 17 and by_id["Open file"].lines[0] == ""
    assert plural_count(entries) == 3
    entries, _ = read_catalog(po_samples.write(tmp_path / "no.po", plural_forms=False))
    assert plural_count(entries) is None


def test_bad_catalogs_name_the_file_and_line(tmp_path):
    path = tmp_path / "bad.po"
    path.write_bytes(b'msgid "a"\nmsgstr "b"\n\nmsgid "\xff"\n')
    with pytest.raises(ValueError, match=r"bad\.po:4: not valid UTF-8"):
        read_catalog(str(path))
    path.write_text('msgid "a"\nmsgstring "b"\n')
    with pytest.raises(ValueError, match=r"bad\.po:2: unknown \.po keyword 'msgstring'"):
        read_catalog(str(path))
    path.write_text('msgid "a\nmsgstr "b"\n')
    with pytest.raises(ValueError, match=r"bad\.po:1: expected a quoted string"):
        read_catalog(str(path))


def test_placeholders_are_the_directives_msgfmt_compares():
    text = "%1$s, %-5.2f, %lu, 100%% {0} {name!r:>4} {} $HOME ${USER} %(count)d"
    assert format_placeholders(text) == [
        "%1$s", "%-5.2f", "%lu", "{0}", "{name!r:>4}", "{}", "$HOME", "${USER}", "%(count)d",
    ]  # fmt: skip
    assert placeholders_match("%s of %d", "%s из %d")
    assert not placeholders_match("%s of %d", "%d из %s")  # unnumbered: the order matters
    assert placeholders_match("%1$s of %2$d", "%2$d из %1$s")
    assert placeholders_match("%(a)s %(b)s", "%(b)s %(a)s")
    assert placeholders_match("{0} of {1}", "{1} из {0}")
    assert not placeholders_match("{} of {}", "{}")
    assert not placeholders_match("Cannot open %s", "Не удалось открыть")
    assert not placeholders_match("Saved", "Сохранено %s")
    assert placeholders_match("100% sure", "100% sure")  # msgfmt reads "% s" too


def test_blank_lines_inside_an_entry_and_tabs_after_keywords_keep_the_layout(tmp_path):
    path = tmp_path / "odd.po"
    text = (
        "# Title\n\n"  # a blank line between the top comments and the header
        'msgid ""\nmsgstr "Content-Type: text/plain; charset=UTF-8\\n"\n'
        'msgid\t"Open"\nmsgstr\t""\n'  # tabs, and no blank line before it
    )
    path.write_text(text, encoding="utf-8")
    entries, layout = read_catalog(str(path))
    assert [e.msgid for e in entries] == ["", "Open"] and entries[1].untranslated
    fill_catalog(entries, layout, str(tmp_path / "out.po"), {})
    assert (tmp_path / "out.po").read_text(encoding="utf-8") == text
