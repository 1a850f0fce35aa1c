"""Reading a ``.po`` catalog as its entries, and writing it back with translations filled in,
every other byte kept: what `keras-adl translate` does to a translator's catalog.

`read_catalog` keeps each entry's lines as written (comments, references, flags, contexts,
obsolete ``#~`` entries, the header, CRLF line ends; a byte-order mark is read and noted);
`fill_catalog` writes the catalog back with the untranslated entries' ``msgstr`` filled in and
marked ``#, fuzzy`` (a translator reviews them; ``msgfmt`` leaves fuzzy entries out of the
compiled catalog until then), every other line unchanged, the byte-order mark left out (GNU
``msgfmt`` refuses a catalog that starts with one).

`format_placeholders` and `placeholders_match` say whether a translation carries the same
format directives as its message (``%s``, ``%1$d``, ``%(name)s``, ``{0}``, ``$HOME``), so a
filled entry passes ``msgfmt --check-format``; `plural_count` reads ``nplurals`` from the
header's ``Plural-Forms``.
"""

import collections
import re

__all__ = [
    "PoEntry",
    "fill_catalog",
    "catalog_charset",
    "format_placeholders",
    "placeholders_match",
    "plural_count",
    "read_catalog",
]

_KEYWORD = re.compile(r"(msgctxt|msgid|msgid_plural|msgstr(?:\[(\d+)\])?)\s+(\".*)$")
_ESCAPES = {"n": "\n", "t": "\t", "r": "\r", "f": "\f", "v": "\v", "a": "\a", "b": "\b"}
_WRITE_ESCAPES = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\t": "\\t", "\r": "\\r"}
_WRITE_ESCAPES.update({"\f": "\\f", "\v": "\\v", "\a": "\\a", "\b": "\\b"})
# The directives of C, Python (%-style and braces), and shell-style variables: the forms
# `msgfmt --check-format` compares, and those translators are told never to translate.
PLACEHOLDER = re.compile(
    r"%%"  # a literal percent sign: not a directive
    r"|%(?:\d+\$)?(?:\([^()]*\))?[-+ #0']*(?:\d+|\*(?:\d+\$)?)?(?:\.(?:\d+|\*(?:\d+\$)?))?"
    r"(?:hh|ll|[hlLqjzt]|I64|I32)?[diouxXeEfFgGaAcCsSpnm]"
    r"|\{[A-Za-z_0-9.\[\]]*(?:![rsa])?(?::[^{}]*)?\}"
    r"|\$\{?[A-Za-z_][A-Za-z_0-9]*\}?"
)
_NUMBERED = re.compile(r"%\d+\$|%\(|\{[A-Za-z_0-9]")
_PLURAL_FORMS = re.compile(r"nplurals\s*=\s*(\d+)")


class PoEntry:
    """One entry of a ``.po`` file: ``lines`` as written (without line ends; blank lines
    before it included), the parsed ``msgctxt``, ``msgid``, ``msgid_plural`` (``None`` when
    absent), ``msgstr`` (a dict from form index to text: ``{0: text}`` for a message without
    plural), ``flags`` (a set: ``fuzzy``, ``c-format``…), ``obsolete`` (a ``#~`` entry) and
    ``first_line`` (the number of its first line that is not blank, from 1)."""

    def __init__(self, first_line):
        self.lines, self.first_line = [], first_line
        self.msgctxt = self.msgid_plural = None
        self.msgid, self.msgstr, self.flags, self.obsolete = "", {}, set(), False

    @property
    def is_header(self):
        return self.msgid == "" and self.msgctxt is None and not self.obsolete

    @property
    def untranslated(self):
        """A live message (not the header, not obsolete) with every ``msgstr`` empty."""
        live = not self.is_header and not self.obsolete
        return live and not any(self.msgstr.values())


def unquote(text, path, number):
    """The text of a quoted ``.po`` string (``"…"``, C escapes and octal or hex codes read),
    or a `ValueError` naming ``path`` and line ``number``."""
    text = text.strip()
    if len(text) < 2 or text[0] != '"' or text[-1] != '"':
        raise ValueError(f"{path}:{number}: expected a quoted string, found {text[:40]!r}")

    def unescape(match):
        escape = match.group(1)
        if escape[0] in "01234567":
            return chr(int(escape, 8))
        if escape[0] == "x":
            return chr(int(escape[1:], 16))
        return _ESCAPES.get(escape, escape)

    return re.sub(r"\\([0-7]{1,3}|x[0-9a-fA-F]{1,2}|.)", unescape, text[1:-1])


def read_catalog(path):
    """The entries of a ``.po`` file and how it is written.

    Args:
        path: the ``.po`` file (UTF-8, with or without a byte-order mark, LF or CRLF).

    Returns:
        ``(entries, layout)``: a list of `PoEntry` in file order (lines that follow the last
        entry, such as trailing blank lines, are kept in ``layout["tail"]``) and ``layout``, a
        dict with ``bom`` (bool), ``newline`` (``"\\r\\n"`` or ``"\\n"``) and ``tail``.

    Raises:
        ValueError: the file is not UTF-8 or not ``.po`` syntax; the message names the file
            and line.

    Example:

    >>> import os, tempfile
    >>> path = os.path.join(tempfile.mkdtemp(), "fr.po")
    >>> with open(path, "w", encoding="utf-8") as f:
    ...     _ = f.write('msgid ""\\nmsgstr "Language: fr\\\\n"\\n\\n#, c-format\\n'
    ...                 'msgid "%d file"\\nmsgid_plural "%d files"\\nmsgstr[0] ""\\nmsgstr[1] ""\\n')
    >>> entries, layout = read_catalog(path)
    >>> [(e.msgid, e.msgid_plural, e.flags, e.untranslated) for e in entries]
    [('', None, set(), False), ('%d file', '%d files', {'c-format'}, True)]
    """
    with open(path, "rb") as f:
        data = f.read()
    bom = data.startswith(b"\xef\xbb\xbf")
    newline = "\r\n" if b"\r\n" in data else "\n"
    lines = data[3 if bom else 0 :].split(b"\n")
    if lines and lines[-1] == b"":
        lines.pop()
    entries, pending, entry, field = [], [], None, None
    for number, raw in enumerate(lines, 1):
        try:
            line = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError as error:
            declared = re.search(rb"charset=([-\w]+)", data[:4000])
            hint = ""
            if declared and declared.group(1).lower() not in (b"utf-8", b"utf8"):
                charset = declared.group(1).decode("ascii")
                hint = f"; the catalog declares {charset}: convert it with `msgconv -t UTF-8`"
            raise ValueError(f"{path}:{number}: not valid UTF-8 ({error.reason}){hint}") from None
        stripped = line.strip()
        obsolete = stripped.startswith("#~")
        body = stripped[2:].strip() if obsolete else stripped
        keyword = _KEYWORD.match(body)
        is_keyword = bool(keyword) or (obsolete and body.startswith('"'))
        starts_entry = (not stripped or stripped.startswith("#") and not is_keyword) or (
            keyword is not None and keyword.group(1) in ("msgctxt", "msgid")
        )
        if entry is not None and entry.msgstr and starts_entry:
            entries.append(entry)
            entry, field = None, None
        if not stripped:  # inside an entry not finished yet, it stays there
            (entry.lines if entry is not None else pending).append(line)
            continue
        if entry is None:
            entry = PoEntry(number)
            entry.lines, pending = pending, []
        entry.lines.append(line)
        if stripped.startswith("#") and not is_keyword:
            if stripped.startswith("#,"):
                entry.flags.update(f.strip() for f in stripped[2:].split(",") if f.strip())
            continue
        entry.obsolete = entry.obsolete or obsolete
        if body.startswith('"'):
            if field is None:
                raise ValueError(f"{path}:{number}: a string outside any msgid/msgstr")
            _append(entry, field, unquote(body, path, number))
            continue
        match = _KEYWORD.match(body)
        if match is None:
            raise ValueError(f"{path}:{number}: unknown .po keyword {body.split()[0]!r}")
        keyword, index, text = match.groups()
        field = ("msgstr", int(index or 0)) if keyword.startswith("msgstr") else keyword
        _append(entry, field, unquote(text, path, number), new=True)
    if entry is not None:
        entries.append(entry)
    return entries, {"bom": bom, "newline": newline, "tail": pending}


def _append(entry, field, text, new=False):
    if isinstance(field, tuple):
        entry.msgstr[field[1]] = ("" if new else entry.msgstr.get(field[1], "")) + text
    else:
        setattr(entry, field, ("" if new else getattr(entry, field) or "") + text)


def plural_count(entries):
    """``nplurals`` of the header's ``Plural-Forms`` field, or ``None`` if the catalog has no
    header or the header does not say."""
    for entry in entries:
        if entry.is_header:
            found = _PLURAL_FORMS.search(entry.msgstr.get(0, ""))
            return int(found.group(1)) if found else None
    return None


def catalog_charset(entries):
    """The ``charset`` the header's ``Content-Type`` declares, lower case (``None`` without a
    header or a declaration)."""
    for entry in entries:
        if entry.is_header:
            found = re.search(r"charset=([-\w]+)", entry.msgstr.get(0, ""))
            return found.group(1).lower() if found else None
    return None


def _strays(text):
    """``(percent, braces)``: the ``%`` and ``{``/``}`` of ``text`` that are neither in a
    directive nor doubled (``%%``, ``{{``): what makes msgfmt call a format string invalid."""
    rest = PLACEHOLDER.sub("", text.replace("{{", "").replace("}}", ""))
    return rest.count("%"), rest.count("{") + rest.count("}")


def format_placeholders(text):
    """The format directives in ``text``, in order (``%%`` left out).

    Args:
        text: a message or a translation.

    Returns:
        A list of str.

    Example:

    >>> format_placeholders("%d of %s: 100%% {name} in $HOME, %(count)d")
    ['%d', '%s', '{name}', '$HOME', '%(count)d']
    """
    return [m.group(0) for m in PLACEHOLDER.finditer(text) if m.group(0) != "%%"]


def placeholders_match(message, translation):
    """Whether ``translation`` carries the directives of ``message``: the same ones in the
    same order (a translation may number C directives to reorder them: ``%2$d de %1$s``), or
    in any order where every directive is numbered or named (``%1$s``, ``%(name)s``, ``{0}``,
    ``$HOME``), as ``msgfmt --check-format`` allows.

    Args:
        message: the English message.
        translation: its translation.

    Returns:
        bool.

    Example:

    >>> placeholders_match("%1$s of %2$d", "%2$d de %1$s"), placeholders_match("%s %d", "%d %s")
    (True, False)
    >>> placeholders_match("%s of %d", "%2$d de %1$s")  # a translation may number them
    True
    >>> placeholders_match("%d done", "%d fait à 100%")  # a lone "%": invalid for msgfmt
    False
    """
    stray_message, stray_translation = _strays(message), _strays(translation)
    if any(t > m for m, t in zip(stray_message, stray_translation)):
        return False  # a lone "%" or "{" the message has not: not a valid format string
    want, got = format_placeholders(message), format_placeholders(translation)
    if _in_position_order(want) == _in_position_order(got):
        return True
    named = all(_NUMBERED.match(p) or p.startswith("$") for p in want + got)
    return named and collections.Counter(want) == collections.Counter(got)


def _in_position_order(directives):
    """C directives all numbered (``%2$s %1$d``) in argument order without their numbers
    (``%d %s``), as the unnumbered ones of a message they translate; others unchanged."""
    numbered = [re.match(r"%(\d+)\$", d) for d in directives]
    if not directives or not all(numbered):
        return directives
    order = sorted(range(len(directives)), key=lambda i: int(numbered[i].group(1)))
    return ["%" + directives[i][numbered[i].end() :] for i in order]


def _quoted(text):
    escaped = "".join(
        _WRITE_ESCAPES.get(c, c) if c >= " " or c in _WRITE_ESCAPES else "" for c in text
    )
    return f'"{escaped}"'


def _msgstr_lines(keyword, text):
    if "\n" not in text.rstrip("\n"):
        return [f"{keyword} {_quoted(text)}"]
    parts = re.findall(r"[^\n]*\n|[^\n]+$", text)  # gettext's layout: a line per \n
    return [f'{keyword} ""'] + [_quoted(part) for part in parts]


def _filled_lines(entry, forms, comments):
    """The lines of an untranslated ``entry`` with ``forms`` (its ``msgstr`` texts, one per
    form) written in and ``fuzzy`` added to its flags; ``comments``: translator comments
    to add first."""
    start = next(i for i, line in enumerate(entry.lines) if line.strip())
    head, body = entry.lines[:start], entry.lines[start:]  # the blank lines before it, the rest
    count = next(
        i for i, line in enumerate(body) if line.strip() and not line.strip().startswith("#")
    )
    notes, keywords = body[:count], body[count:]
    flags = [i for i, line in enumerate(notes) if line.strip().startswith("#,")]
    if flags:  # gettext writes fuzzy first
        old = [f.strip() for f in notes[flags[0]].strip()[2:].split(",") if f.strip()]
        notes[flags[0]] = "#, " + ", ".join(["fuzzy"] + [f for f in old if f != "fuzzy"])
    else:  # before the previous-message (#|) comments, where gettext puts flags
        at = next((i for i, line in enumerate(notes) if line.strip().startswith("#|")), count)
        notes.insert(at, "#, fuzzy")
    cut = next(i for i, line in enumerate(keywords) if line.strip().startswith("msgstr"))
    lines = head + [f"# {c}" for c in comments] + notes + keywords[:cut]
    if entry.msgid_plural is None:
        return lines + _msgstr_lines("msgstr", forms[0])
    for index, text in enumerate(forms):
        lines += _msgstr_lines(f"msgstr[{index}]", text)
    return lines


def fill_catalog(entries, layout, path, translations):
    """Writes the catalog ``entries`` (`read_catalog`) to ``path``, the untranslated entries
    filled in: every other line as read, with the line ends read (CRLF kept), and without a
    byte-order mark (GNU ``msgfmt`` refuses one).

    Args:
        entries: the `PoEntry` list of `read_catalog`.
        layout: the layout of `read_catalog`.
        path: the ``.po`` file to write.
        translations: a dict from an entry's index in ``entries`` to ``(forms, comments)``:
            its ``msgstr`` texts (one per plural form, or one) and translator comments to add
            (each a line of text, ``[]`` for none). Entries not in it are written as read.
    """
    lines = []
    for index, entry in enumerate(entries):
        if index in translations:
            lines += _filled_lines(entry, *translations[index])
        else:
            lines += entry.lines
    lines += layout["tail"]
    text = "".join(line + layout["newline"] for line in lines)
    with open(path, "wb") as f:
        f.write(text.encode("utf-8"))
