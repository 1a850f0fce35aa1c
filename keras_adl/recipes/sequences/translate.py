"""``keras-adl translate EXPORT catalog.po -o out.po``: a translator's catalog filled in by a
``pairs`` export, every untranslated entry translated and marked ``#, fuzzy`` for review,
everything else kept as written (`keras_adl.data.po_catalogs`).

What is sent to the model is what it was trained on (`keras_adl.data.gettext_catalogs`), line
by line (a usage text keeps its lines): each line without the markup tags around it, whitespace collapsed, a lone accelerator marker
(``_Open``) taken out. What comes back is put in the message's frame: the same leading and
trailing whitespace and tags, the accelerator before the translation's first letter.
A translation that does not carry the message's format directives (`placeholders_match`) is
not written: the English is copied instead, with a translator comment saying why, so the
catalog passes ``msgfmt --check-format`` by construction.
"""

import re

from keras_adl.data.gettext_catalogs import MARKUP_TAGS, clean_message
from keras_adl.data.po_catalogs import (
    PLACEHOLDER,
    catalog_charset,
    fill_catalog,
    format_placeholders,
    placeholders_match,
    plural_count,
    read_catalog,
)
from keras_adl.training.rundir import RecipeError

_TAGS = r"</?(?:" + "|".join(MARKUP_TAGS) + r")(?:\s[^<>]*)?\s*/?>"
_FRAME = re.compile(r"^((?:\s|" + _TAGS + r")*)(.*?)((?:\s|" + _TAGS + r")*)$", re.S | re.I)
_INNER_TAG = re.compile(_TAGS, re.I)
# A marker that opens a word: the "_" of "file_name" or the "&" of "AT&T" is text.
_ACCELERATOR = re.compile(r"(?<!\w)[_&~](?=\w)")
_LETTER = re.compile(r"[^\W\d_]")
COPIED_NOTE = (
    "keras-adl: the English is copied: the translation's directives were not the message's ({})"
)
MARKUP_NOTE = "keras-adl: the markup inside the message was not carried over"


def message_frame(message):
    """``(prefix, text, suffix, marker)``: what `translate_catalog` sends to the model of
    ``message`` (``text``: whitespace collapsed, a lone accelerator taken out, markup inside
    dropped, and then the markup around it too) and the frame the translation is put back in.

    Args:
        message: an entry's ``msgid`` or ``msgid_plural``.

    Returns:
        A tuple of four str (``marker``: the accelerator character, or ``""``).

    Example:

    >>> message_frame("<b>_Open %s</b>\\n")
    ('<b>', 'Open %s', '</b>\\n', '_')
    """
    prefix, text, suffix = _FRAME.match(message).groups()
    if _INNER_TAG.search(text):  # markup inside is dropped: so are its edges, to stay balanced
        prefix, suffix = _INNER_TAG.sub("", prefix), _INNER_TAG.sub("", suffix)
    text = clean_message(text)
    markers = _ACCELERATOR.findall(text)
    marker = markers[0] if len(markers) == 1 else ""
    if marker:
        text = _ACCELERATOR.sub("", text, count=1)
    return prefix, text, suffix, marker


def framed(frame, translation):
    """``translation`` put in ``frame`` (`message_frame`): prefix, the accelerator before its
    first letter, suffix."""
    prefix, _, suffix, marker = frame
    translation = translation.strip()
    if marker:  # before the first letter outside a directive (not "%_s", not "{_name}")
        inside = {i for p in PLACEHOLDER.finditer(translation) for i in range(*p.span())}
        letters = [m.start() for m in _LETTER.finditer(translation) if m.start() not in inside]
        if letters:
            translation = translation[: letters[0]] + marker + translation[letters[0] :]
    return prefix + translation + suffix


def _messages(entry):
    return [entry.msgid] + ([entry.msgid_plural] if entry.msgid_plural is not None else [])


def _plural_forms_needed(entries, path):
    if not any(e.untranslated and e.msgid_plural is not None for e in entries):
        return 1
    count = plural_count(entries)
    if count is None:
        raise RecipeError(
            f"{path}: the catalog has plural messages to translate but its header has no "
            "'Plural-Forms: nplurals=N; plural=…' field; add the one of its language (the "
            "gettext manual lists them) and run again"
        )
    return count


def translate_catalog(path, out, translate, batch_size=256):
    """Fills the untranslated entries of the ``.po`` file ``path`` and writes ``out``.

    Args:
        path: the translator's ``.po`` file.
        out: the ``.po`` file to write (may be ``path``).
        translate: a function from a list of English texts to their translations (a list of
            str, ``""`` where there is none), e.g. `export_translator`.
        batch_size: the most texts given to ``translate`` at once.

    Returns:
        A dict of counts: ``translated`` (entries filled with the model's translation),
        ``copied`` (entries filled with the English: a translation that lost format
        directives, or an empty one), ``kept`` (entries that had a translation) and
        ``forms`` (``msgstr`` forms per plural entry); and ``byte_order_mark_dropped``
        (bool: ``out`` is written without the byte-order mark ``path`` had).

    Raises:
        RecipeError: the catalog has plural messages to fill and no ``Plural-Forms``, or
            its header declares a charset other than UTF-8.
        ValueError: the file is not a readable ``.po`` file (the message names the line).
    """
    entries, layout = read_catalog(path)
    charset = catalog_charset(entries)
    if charset not in (None, "utf-8", "utf8", "charset"):  # CHARSET: a template's placeholder
        raise RecipeError(
            f"{path}: the header declares charset={charset}; translations are written in "
            "UTF-8: convert it first with `msgconv -t UTF-8`"
        )
    forms = _plural_forms_needed(entries, path)
    wanted = [i for i, e in enumerate(entries) if e.untranslated]
    frames = {  # each line of each message, on its own
        index: [[message_frame(line) for line in m.split("\n")] for m in _messages(entries[index])]
        for index in wanted
    }
    texts = sorted({f[1] for i in wanted for lines in frames[i] for f in lines if f[1]})
    found = {}
    for start in range(0, len(texts), batch_size):
        chunk = texts[start : start + batch_size]
        found.update(zip(chunk, translate(chunk)))
    filled, counts = {}, {"translated": 0, "copied": 0, "kept": 0, "forms": forms}
    for index in wanted:
        messages = _messages(entries[index])
        forms_out, comments, copied = [], set(), True
        # Form 0 translates the singular, every other form the plural message; msgfmt checks a
        # form that may stand for several numbers against the plural message, so when the two
        # messages' directives differ ("One file" / "%d files") every form translates it.
        same = len(messages) == 1 or format_placeholders(messages[0]) == format_placeholders(
            messages[1]
        )
        for form in range(forms if len(messages) > 1 else 1):
            which = min(form, len(messages) - 1) if same else len(messages) - 1
            message, frame = messages[which], frames[index][which]
            lines = [framed(f, found.get(f[1], "")) if f[1] else f[0] + f[2] for f in frame]
            candidate = "\n".join(lines) if any(f[1] for f in frame) else ""
            if candidate.strip() and not placeholders_match(message, candidate):
                directives = " ".join(format_placeholders(message)) or "none"
                comments.add(COPIED_NOTE.format(directives))
                candidate = ""
            copied = copied and not candidate.strip()
            forms_out.append(candidate if candidate.strip() else message)
        if any(_INNER_TAG.search(_FRAME.match(m).group(2)) for m in messages):
            comments.add(MARKUP_NOTE)
        counts["copied" if copied else "translated"] += 1
        filled[index] = (forms_out, sorted(comments))
    counts["kept"] = sum(1 for e in entries if not (e.untranslated or e.is_header or e.obsolete))
    fill_catalog(entries, layout, out, filled)
    counts["byte_order_mark_dropped"] = layout["bom"]
    return counts


def export_translator(export_dir):
    """A ``translate`` function for `translate_catalog` from a ``pairs`` export: its
    ``serving_default`` on the texts, ``""`` for a text it answers empty."""
    import tensorflow as tf
    import tensorflow_text  # noqa: F401  (the export's tokenizer ops)

    serve = tf.saved_model.load(export_dir).signatures["serving_default"]

    def translate(texts):
        outputs = serve(inputs=tf.constant([t.encode("utf-8") for t in texts], tf.string))
        empty = outputs["empty"].numpy() if "empty" in outputs else [False] * len(texts)
        return [
            "" if blank else text.decode("utf-8", "replace")
            for text, blank in zip(outputs["output"].numpy(), empty)
        ]

    return translate
