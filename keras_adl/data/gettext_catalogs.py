"""Parallel text from gettext translation catalogs: English messages and their translations.

Free software ships its user-interface messages translated into many languages, as compiled
``.mo`` catalogs under ``/usr/share/locale/<lang>/LC_MESSAGES/`` and as ``.po`` source files in
every project's ``po/`` folder. `load_gettext_pairs` turns them into (English, translation)
pairs for the ``pairs`` task: ``keras-adl train pairs --data gettext:fr``.

What is done to the messages (each step is the same for the source and the target):

- **Kept**: every translated message. Header entries, untranslated (empty) and fuzzy ``.po``
  entries and obsolete ``#~`` entries are skipped.
- **Context** (``msgctxt``, stored in ``.mo`` files as ``context\\x04message``): dropped; the
  message alone is the source.
- **Plurals**: the singular message and the first plural form of the translation.
- **Whitespace**: newlines, tabs and runs of ASCII spaces become one space; both ends are
  trimmed. No-break spaces (French typography) are kept for the tokenizers to handle.
- **Markup**: the HTML/Pango tags of user interfaces (``<b>``, ``</span>``, ``<a href=…>``,
  ``<br/>`` …, the tags in `MARKUP_TAGS`) are removed and entities decoded (``&amp;`` is
  ``&``); other angle-bracket words, such as the ``<file>`` of a usage line, are text and
  kept.
- **Accelerators**: the mnemonic marker of a menu label (``_Open``, ``&Save``, ``Op_en``) is
  removed when the source and the translation each hold exactly one marker of the same kind
  before a letter (``file_name`` in both sides is removed too, harmlessly); otherwise kept.
- **Placeholders** (``%s``, ``%1$d``, ``%(name)s``, ``{0}``, ``{name}``): kept as they are.
  A translation must carry them, and the tokenizers split them into punctuation and letters
  the model learns to copy.
- **Duplicates**: one pair per English message, the first found (catalogs in name order); a
  message translated differently by two programs keeps the first translation, so a held-out
  source never appears in training with another target.
- **Catalogs**: by default every catalog except the ISO code lists (``iso_*``: names of
  countries, languages, currencies and scripts, not sentences); pass ``domains`` to choose.
"""

import fnmatch
import gettext
import glob
import html
import os
import re
import struct
import warnings

from keras_adl.data.po_catalogs import unquote as _po_string

__all__ = ["load_gettext_pairs", "read_po", "read_mo"]


LOCALE_DIR = "/usr/share/locale"
EXCLUDED_DOMAINS = ("iso_*",)
MARKUP_TAGS = (
    "a", "b", "big", "br", "code", "em", "i", "markup", "p", "s", "small", "span", "strong",
    "sub", "sup", "tt", "u",
)  # fmt: skip
_TAG = re.compile(r"</?(?:" + "|".join(MARKUP_TAGS) + r")(?:\s[^<>]*)?\s*/?>", re.IGNORECASE)
_SPACES = re.compile(r"[ \t\r\n\f\v]+")  # ASCII only: a no-break space is kept
_LANGUAGE = re.compile(r"[A-Za-z]{2,3}(_[A-Za-z]{2})?(@\w+)?")
_ACCELERATORS = {marker: re.compile(re.escape(marker) + r"(?=\w)") for marker in "_&~"}


def clean_message(text):
    """Removes markup tags and collapses whitespace (accelerators are handled per pair by
    `clean_pair`).

    Args:
        text: a message.

    Returns:
        The cleaned str.

    Example:

    >>> clean_message("<b>Save</b> the file\\n  %s?")
    'Save the file %s?'
    """
    return _SPACES.sub(" ", html.unescape(_TAG.sub("", text))).strip(" ")


def clean_pair(source, target):
    """``(source, target)`` cleaned as the module describes, or ``None`` if either side is
    left empty.

    Args:
        source: the English message.
        target: its translation.

    Returns:
        A pair of str, or ``None``.

    Example:

    >>> clean_pair("_Open <b>%s</b>", "_Ouvrir <b>%s</b>")
    ('Open %s', 'Ouvrir %s')
    >>> clean_pair("a_b", "c")  # one marker on one side only: kept
    ('a_b', 'c')
    """
    source, target = clean_message(source), clean_message(target)
    for pattern in _ACCELERATORS.values():
        if len(pattern.findall(source)) == 1 and len(pattern.findall(target)) == 1:
            source, target = pattern.sub("", source), pattern.sub("", target)
    if not source or not target:
        return None
    return source, target


def read_mo(path):
    """The ``(message, translation)`` pairs of a compiled ``.mo`` catalog, in catalog order
    (context dropped, plurals as singular → first form; header and empty translations
    skipped).

    Args:
        path: the ``.mo`` file.

    Returns:
        A list of ``(message, translation)`` pairs of str.

    Raises:
        ValueError: the file is not a valid ``.mo`` catalog (the message names it).
    """
    try:
        with open(path, "rb") as f:
            catalog = gettext.GNUTranslations(f)._catalog
    except (OSError, UnicodeDecodeError, ValueError, struct.error) as error:
        raise ValueError(f"{path}: not a readable gettext .mo catalog ({error})") from None
    pairs = []
    for key, translation in catalog.items():
        if isinstance(key, tuple):  # a plural form: (singular, index)
            if key[1] != 0:
                continue
            key = key[0]
        message = key.split("\x04", 1)[-1]
        if message and translation:
            pairs.append((message, translation))
    return pairs


def read_po(path):
    """The ``(message, translation)`` pairs of a ``.po`` file, in file order (fuzzy,
    obsolete, untranslated and header entries skipped; context dropped; plurals as singular →
    ``msgstr[0]``).

    Args:
        path: the ``.po`` file.

    Returns:
        A list of ``(message, translation)`` pairs of str.

    Raises:
        ValueError: a line is not valid UTF-8 or not ``.po`` syntax (the message names the
            file and line).

    Example:

    >>> import os, tempfile
    >>> lines = ['msgid ""', 'msgstr "Language: fr"', "",  # the header: skipped
    ...          'msgid "Open failed"', 'msgstr "Échec de l’ouverture"', "",
    ...          "#, fuzzy", 'msgid "Save"', 'msgstr "Sauver"', "",  # fuzzy: skipped
    ...          'msgid "%d file"', 'msgid_plural "%d files"',
    ...          'msgstr[0] "%d fichier"', 'msgstr[1] "%d fichiers"']
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     path = os.path.join(directory, "fr.po")
    ...     with open(path, "w", encoding="utf-8") as f:
    ...         _ = f.write("\\n".join(lines) + "\\n")
    ...     read_po(path)
    [('Open failed', 'Échec de l’ouverture'), ('%d file', '%d fichier')]
    """
    pairs = []
    entry, field, next_fuzzy = None, None, False

    def flush():
        if entry and entry["msgid"] and entry["msgstr"] and not entry["fuzzy"]:
            pairs.append((entry["msgid"], entry["msgstr"]))

    with open(path, "rb") as f:
        for number, raw in enumerate(f, 1):
            try:
                line = raw.decode("utf-8-sig" if number == 1 else "utf-8").strip()
            except UnicodeDecodeError as error:
                raise ValueError(f"{path}:{number}: not valid UTF-8 ({error.reason})") from None
            if not line or line.startswith("#"):
                if entry is not None and entry["done"]:
                    flush()
                    entry, field = None, None
                if not line or line.startswith("#~"):
                    next_fuzzy = False  # the flag belonged to an obsolete or a finished entry
                elif line.startswith("#,") and "fuzzy" in line:
                    next_fuzzy = True
                continue
            if line.startswith('"'):
                if field is None:
                    raise ValueError(f"{path}:{number}: a string outside any msgid/msgstr")
                entry[field] += _po_string(line, path, number)
                continue
            keyword, _, rest = line.partition(" ")
            if keyword in ("msgctxt", "msgid") and entry is not None and entry["done"]:
                flush()
                entry = None
            if entry is None:
                entry = {"msgid": "", "msgstr": "", "fuzzy": next_fuzzy, "done": False}
                next_fuzzy = False
            if keyword in ("msgstr", "msgstr[0]"):
                field, entry["done"] = "msgstr", True
            elif keyword in ("msgid", "msgctxt", "msgid_plural") or re.fullmatch(
                r"msgstr\[\d+\]", keyword
            ):
                field, entry["done"] = keyword, entry["done"] or keyword.startswith("msgstr")
            else:
                raise ValueError(f"{path}:{number}: unknown .po keyword {keyword!r}")
            entry[field] = _po_string(rest, path, number)
    flush()
    return pairs


def catalog_files(source, locale_dir=LOCALE_DIR, domains=None):
    """The catalogs `load_gettext_pairs` reads for ``source``, in name order.

    Args:
        source: a language code (``"fr"``, ``"pt_BR"``: the ``.mo`` files of
            ``<locale_dir>/<lang>/LC_MESSAGES/``), a ``.mo`` or ``.po`` file, or a directory
            searched recursively for both, holding one language (`catalog_language`: a
            project's ``po/`` folder of ``de.po``, ``fr.po``… is refused, not mixed).
        locale_dir: where language codes are looked up.
        domains: glob patterns of catalog names (file names without the extension) to read;
            by default all but `EXCLUDED_DOMAINS`.

    Returns:
        A sorted list of the catalogs' paths.

    Raises:
        ValueError: ``source`` names no catalog (the message says where it looked), or
            catalogs of several languages.
    """
    if os.path.isfile(source):
        if not source.endswith((".mo", ".po")):
            raise ValueError(f"gettext source {source!r} is neither a .mo nor a .po file")
        return [source]
    if os.path.isdir(source):
        found = glob.glob(os.path.join(source, "**", "*.mo"), recursive=True)
        found += glob.glob(os.path.join(source, "**", "*.po"), recursive=True)
        where = f"under {source!r}"
    elif _LANGUAGE.fullmatch(source):
        folder = os.path.join(locale_dir, source, "LC_MESSAGES")
        found = glob.glob(os.path.join(folder, "*.mo"))
        where = f"in {folder!r}"
    else:
        raise ValueError(
            f"gettext source must be a language code (e.g. 'fr'), a .mo/.po file or a "
            f"directory; received {source!r}"
        )

    def wanted(path):
        name = os.path.splitext(os.path.basename(path))[0]
        if domains is not None:
            return any(fnmatch.fnmatch(name, pattern) for pattern in domains)
        return not any(fnmatch.fnmatch(name, pattern) for pattern in EXCLUDED_DOMAINS)

    found = sorted(path for path in found if wanted(path))
    if not found:
        raise ValueError(f"no gettext catalog (.mo or .po) found {where}")
    languages = sorted({language for language in map(catalog_language, found) if language})
    if len(languages) > 1:
        raise ValueError(
            f"the catalogs {where} are in several languages ({', '.join(languages)}); pass one "
            "catalog, or a directory holding one language"
        )
    return found


def catalog_language(path):
    """The language of a catalog: its header's ``Language:`` field, else the folder above
    ``LC_MESSAGES`` (``…/fr/LC_MESSAGES/app.mo``); ``None`` if neither says."""
    language = None
    try:
        if path.endswith(".mo"):
            with open(path, "rb") as f:
                language = gettext.GNUTranslations(f).info().get("language")
        else:
            with open(path, encoding="utf-8-sig", errors="replace") as f:
                for _, line in zip(range(60), f):
                    match = re.search(r'"Language:\s*([^\\"]*)', line)
                    if match:
                        language = match.group(1)
                        break
    except (OSError, UnicodeDecodeError, ValueError, struct.error):
        pass  # unreadable: reported when it is read
    if language and language.strip():
        return language.strip()
    parts = os.path.normpath(path).split(os.sep)
    for index in range(len(parts) - 2, 0, -1):  # the folder nearest the file
        if parts[index] == "LC_MESSAGES":
            return parts[index - 1]
    return None


def load_gettext_pairs(source, locale_dir=LOCALE_DIR, domains=None):
    """English → translation pairs from gettext catalogs, cleaned and deduplicated as the
    module describes.

    Args:
        source: as in `catalog_files` (``"fr"`` reads the French ``.mo`` catalogs installed
            on the machine).
        locale_dir: as in `catalog_files`.
        domains: as in `catalog_files`.

    Returns:
        Two lists of strings: English sources and their translations.

    Raises:
        ValueError: no catalog, an unreadable catalog named alone, or no translated message
            (the message names the source). Of several catalogs, an unreadable one (e.g. a
            ``.mo`` file whose header declares the wrong charset) is skipped with a warning.

    Example:

    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> with open(os.path.join(folder, "demo.po"), "w", encoding="utf-8") as f:
    ...     _ = f.write(
    ...         'msgid ""\\nmsgstr "Content-Type: text/plain; charset=UTF-8\\\\n"\\n\\n'
    ...         'msgctxt "menu"\\nmsgid "_Open"\\nmsgstr "_Ouvrir"\\n\\n'
    ...         '#, fuzzy\\nmsgid "Close"\\nmsgstr "Fermer"\\n\\n'
    ...         'msgid "File %s not found!"\\nmsgstr "Fichier %s introuvable\\u00a0!"\\n'
    ...     )
    >>> load_gettext_pairs(folder)
    (['Open', 'File %s not found!'], ['Ouvrir', 'Fichier %s introuvable\\xa0!'])
    """
    sources, targets, seen = [], [], set()
    paths = catalog_files(source, locale_dir, domains)
    for path in paths:
        try:
            pairs = (read_po if path.endswith(".po") else read_mo)(path)
        except ValueError as error:
            if len(paths) == 1:
                raise
            warnings.warn(f"skipped a catalog: {error}", stacklevel=2)
            continue
        for message, translation in pairs:
            pair = clean_pair(message, translation)
            if pair is None or pair[0] in seen:
                continue
            seen.add(pair[0])
            sources.append(pair[0])
            targets.append(pair[1])
    if not sources:
        raise ValueError(f"no translated message found in gettext source {source!r}")
    return sources, targets
