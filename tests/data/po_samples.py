"""A ``.po`` catalog of every shape a translator's file has, for the catalog tests: a header
with ``Plural-Forms``, translated, untranslated, fuzzy and obsolete entries, contexts,
references and extracted comments, C, Python and brace formats, a plural of three forms, a
multi-line usage text, markup and an accelerator."""

HEADER = (
    "# Russian translation of demo.\n"
    "# Copyright (C) 2026 Demo\n"
    'msgid ""\n'
    'msgstr ""\n'
    '"Project-Id-Version: demo 1.0\\n"\n'
    '"Report-Msgid-Bugs-To: \\n"\n'
    '"POT-Creation-Date: 2026-01-01 00:00+0000\\n"\n'
    '"PO-Revision-Date: 2026-01-02 00:00+0000\\n"\n'
    '"Last-Translator: A <a@example.org>\\n"\n'
    '"Language-Team: Russian <ru@example.org>\\n"\n'
    '"Language: ru\\n"\n'
    '"MIME-Version: 1.0\\n"\n'
    '"Content-Type: text/plain; charset=UTF-8\\n"\n'
    '"Content-Transfer-Encoding: 8bit\\n"\n'
)
PLURAL_FORMS = (
    '"Plural-Forms: nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && '
    'n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);\\n"\n'
)
ENTRIES = """
#: src/main.c:10
msgid "Open file"
msgstr "Открыть файл"

#. TRANSLATORS: an error
#: src/main.c:12
#, c-format
msgid "Cannot open %s: %s"
msgstr ""

#: src/main.c:14
#, c-format
msgid "%d file"
msgid_plural "%d files"
msgstr[0] ""
msgstr[1] ""
msgstr[2] ""

msgctxt "menu"
msgid "_Save"
msgstr ""

#, c-format
msgid ""
"Usage: %s [OPTION]...\\n"
"Copy the file.\\n"
msgstr ""

#, fuzzy
msgid "Close"
msgstr "Закрыть?"

#, python-format
msgid "<b>%(name)s</b> was saved"
msgstr ""

#, python-brace-format
msgid "{0} of {1} done"
msgstr ""

#~ msgid "Old message"
#~ msgstr "Старое"
"""
# The untranslated messages in file order, and what a good translator answers (by line).
UNTRANSLATED = [
    "Cannot open %s: %s",
    "%d file",
    "_Save",
    "Usage: %s [OPTION]...\nCopy the file.\n",
    "<b>%(name)s</b> was saved",
    "{0} of {1} done",
]
GOOD = {
    "Cannot open %s: %s": "Не удалось открыть %s: %s",
    "%d file": "%d файл",
    "%d files": "%d файлов",
    "Save": "Сохранить",
    "Usage: %s [OPTION]...": "Использование: %s [ПАРАМЕТР]...",
    "Copy the file.": "Копировать файл.",
    "%(name)s was saved": "%(name)s сохранён",
    "{0} of {1} done": "{1} из {0} готово",
}


def catalog(plural_forms=True):
    """The catalog's text."""
    return HEADER + (PLURAL_FORMS if plural_forms else "") + ENTRIES


def write(path, plural_forms=True, newline="\n", bom=False):
    """Writes the catalog to ``path`` with these line ends, with or without a byte-order mark."""
    text = catalog(plural_forms).replace("\n", newline)
    with open(path, "wb") as f:
        f.write((b"\xef\xbb\xbf" if bom else b"") + text.encode("utf-8"))
    return str(path)
