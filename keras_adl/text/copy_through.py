"""Copy-through: the spans a translator keeps unchanged are copied exactly, not translated.

Format placeholders (``%s``, ``%(name)s``, ``{0}``, ``$HOME``), command-line options
(``--verbose``, ``-v``), function names (``iconv()``), numbers like ``0x1F`` or ``1.0.2`` and
addresses (``https://…``, ``bug@example.org``) pass through a translation unchanged, but a
subword model has to spell them piece by piece and sometimes misspells them (``%(name)s`` →
``%(nom)s``). Copy-through replaces each such span of the source with a numbered slot, one
character of Unicode's private use area (the first span ``\\ue000``, the second distinct span
``\\ue001``, …; equal spans share a slot, as a target writes ``%s`` whatever their count),
the model translates the slotted text, and each slot in its output is replaced by the span
it numbers. A slot's span is copied byte for byte, and the model only has to decide where it
goes. In the training targets, a span equal to one of the source's spans becomes that span's
slot; one the translator changed stays text.

This is the placeholder protection of production translation systems: exact by construction
for the spans it covers, where a learned copy mechanism (pointer-generator networks, See et al.
2017) learns to copy any word and copies nothing exactly by guarantee.

Classes of spans (`CLASSES`): ``format`` is always protected (a translation that changes a
placeholder breaks the program). The others are protected when the training pairs keep them
unchanged often enough (`choose_classes`, `MIN_COPY_RATE`), because on some data a class is
translated (``--output=FILE`` → ``--output=DATEI``: only the option's name is a span).

Everything runs in-graph (tensorflow-text's RE2 splitting), inside ``tf.data`` and inside an
exported serving function alike.
"""

import collections
import re
import unicodedata

import tensorflow as tf
import tensorflow_text as tf_text

from keras_adl.text.normalization import MAX_SLOTS, SLOT_BASE, SLOT_CHARACTERS

__all__ = ["copied_spans"]


# RE2 patterns (no look-behind: an option's left boundary is checked on the text before it).
CLASSES = {
    # printf (``%s``, ``%-10.2lf``, ``%1$s``, ``%%``; no space flag: "100% sure" is text),
    # Python's ``%(name)s``, ``{0}`` / ``{name}`` / ``{0:.2f}``, shell and Perl ``$VAR``.
    "format": (
        r"%(?:\([A-Za-z0-9_]{1,30}\))?[-+#0']*(?:[0-9]+\$)?(?:[0-9]+|\*)?(?:\.(?:[0-9]+|\*))?"
        r"(?:hh|h|ll|l|L|q|j|z|t)?[diouxXeEfFgGaAcspnmCS%]"
        r"|\{[A-Za-z0-9_]{0,30}(?:[.:!][^{}\s]{0,20})?\}"
        r"|\$\{[A-Za-z_][A-Za-z0-9_]*\}|\$[A-Za-z_][A-Za-z0-9_]*"
    ),
    # The option's name only (its ``=VALUE`` is often translated), after a space, a bracket,
    # a quote or the start.
    "option": r"--?[A-Za-z0-9][A-Za-z0-9_-]*",
    "call": r"[A-Za-z_][A-Za-z0-9_.]*\(\)",
    "number": r"\b0[xX][0-9A-Fa-f]+\b|\b[0-9]+(?:\.[0-9]+)+\b",
    "address": (
        r"(?:https?|ftp)://[^\s<>\"]*[^\s<>\".,;:!?)]"
        r"|[A-Za-z0-9._+-]+@[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)+"
    ),
}
ALWAYS = ("format",)
# Script-aware copying: a word in Latin letters (an identifier, a product or option name) of a
# source whose target language writes another script. Which of them are spans depends on the
# training pairs (`foreign_words`), not on the pattern alone.
FOREIGN = r"[A-Za-z][A-Za-z0-9_]*"
_FOREIGN_WORD = re.compile(FOREIGN)
# Codes of the foreign-word table: a word the training targets keep, one they translate; a word
# the training sources never had is not in the table (0) and is copied too.
KEPT, TRANSLATED = 1, 2
# The targets are written in another script when fewer than this share of their letters are Latin.
MAX_LATIN_SHARE = 0.5
# A class is protected when at least this share of its spans in the training sources appears
# unchanged in their targets, over at least MIN_SPANS spans.
MIN_COPY_RATE = 0.95
MIN_SPANS = 20
# Slots per text (MAX_SLOTS, from keras_adl.text.normalization): the first MAX_SLOTS distinct
# spans are slotted, any further ones stay text.
SLOTS = tuple(chr(SLOT_BASE + k) for k in range(MAX_SLOTS))
SLOT_PATTERN = SLOT_CHARACTERS
# RE2's \s is ASCII only: the no-break spaces of French typography are \pZ.
_OPTION_BOUNDARY = r"(?s).*[\s\pZ(\[{\"'`=,;|“‘«]"


def _check_classes(classes):
    classes = tuple(classes)
    unknown = [c for c in classes if c not in CLASSES]
    if unknown:
        raise ValueError(
            f"copy-through `classes` must be among {tuple(CLASSES)}; received {unknown}."
        )
    return classes


class CopyThrough:
    """Slots the spans of `CLASSES` named by ``classes`` in sources and targets, and puts
    them back into outputs (in-graph).

    Args:
        classes: names of `CLASSES` (in any order; an empty tuple slots nothing).
        foreign: optional script-aware copying, `foreign_words`' dict: a Latin word
            (`FOREIGN`) is a span too when it is ``kept`` or was not ``seen``.

    Example:

    >>> copy = CopyThrough(["format", "option"])
    >>> slotted, spans = copy.protect(tf.constant(["Cannot open %s: use --force"]))
    >>> slotted.numpy()[0].decode() == "Cannot open \\ue000: use \\ue001"
    True
    >>> copy.protect_targets(tf.constant(["%s : --force"]), spans).numpy()[0].decode()
    '\\ue000 : \\ue001'
    >>> copy.restore(tf.constant(["Ouverture de \\ue000 impossible : \\ue001"]), spans).numpy()[0]
    b'Ouverture de %s impossible : --force'
    """

    def __init__(self, classes, foreign=None):
        self.classes = tuple(c for c in CLASSES if c in _check_classes(classes))
        self.foreign = None
        patterns = [CLASSES[c] for c in self.classes]
        if foreign is not None:
            self.foreign = {"kept": list(foreign["kept"]), "seen": list(foreign["seen"])}
            codes = dict.fromkeys(self.foreign["kept"], KEPT)
            translated = [w for w in self.foreign["seen"] if w not in codes]
            codes.update(dict.fromkeys(translated, TRANSLATED))
            for word in translated:  # "ENABLE" is read as "enable", translated in training
                codes.setdefault(word.lower(), TRANSLATED)
            words, codes = list(codes), list(codes.values())
            self.table = tf.lookup.StaticHashTable(
                tf.lookup.KeyValueTensorInitializer(
                    tf.constant(words, tf.string), tf.constant(codes, tf.int64)
                ),
                default_value=0,
            )
            patterns.append(FOREIGN)
        self._pattern = "|".join(f"(?:{p})" for p in patterns)
        self._option = "option" in self.classes

    @property
    def active(self):
        """Whether anything is slotted (a class, or foreign words)."""
        return bool(self.classes or self.foreign)

    @property
    def tables(self):
        """The foreign-word table, to track when exporting (none without foreign words)."""
        return [self.table] if self.foreign is not None else []

    def _spans(self, strings):
        """``(pieces, is_span)``: ``strings`` ``[B]`` cut into spans and the text between
        them (ragged ``[B, (pieces)]``), and whether each piece is a span."""
        pieces = tf_text.regex_split(strings, self._pattern, self._pattern)
        flat = pieces.flat_values
        is_span = tf.strings.regex_full_match(flat, self._pattern)
        if self.foreign is not None:  # a Latin word is a span if kept in training, or unseen
            classes = "|".join(f"(?:{CLASSES[c]})" for c in self.classes)
            of_class = (
                tf.strings.regex_full_match(flat, classes) if classes else tf.zeros_like(is_span)
            )
            word = tf.strings.regex_full_match(flat, FOREIGN) & tf.logical_not(of_class)
            # Unseen as written but translated in lower case ("File" of "file"): translated.
            code, lower = self.table.lookup(flat), self.table.lookup(tf.strings.lower(flat))
            copied = tf.equal(code, KEPT) | (tf.equal(code, 0) & tf.not_equal(lower, TRANSLATED))
            is_span = tf.where(word, copied, is_span)
        if self._option:
            # An option needs a boundary on its left ("re-read" holds no option).
            option = tf.strings.regex_full_match(flat, CLASSES["option"])
            others = "|".join(f"(?:{CLASSES[c]})" for c in self.classes if c != "option")
            other = tf.strings.regex_full_match(flat, others) if others else tf.zeros_like(option)
            previous = tf.concat([[""], flat[:-1]], 0)
            first = tf.equal(
                tf.range(tf.size(flat, tf.int64), dtype=tf.int64),
                tf.gather(pieces.row_splits, pieces.value_rowids()),
            )
            bounded = first | tf.strings.regex_full_match(previous, _OPTION_BOUNDARY)
            is_span = is_span & (other | ~option | bounded)
        return pieces, pieces.with_flat_values(is_span)

    def protect(self, strings):
        """Sources ``[B]`` with their spans slotted: ``(slotted [B], spans [B, (n)])``, the
        distinct spans in order of first occurrence, slot ``k`` the ``k``-th (ragged strings,
        at most `MAX_SLOTS` a row; further distinct spans stay text). Characters of the slots'
        range already in the text become U+FFFD."""
        strings = tf.strings.regex_replace(strings, SLOT_PATTERN, "\ufffd")
        if not self.active:
            empty = tf.RaggedTensor.from_row_lengths(
                tf.zeros([0], tf.string), tf.zeros(tf.shape(strings)[:1], tf.int64)
            )
            return strings, empty
        pieces, is_span = self._spans(strings)
        # Equal spans share one slot (the target writes "%s" whatever the source's count):
        # a span's slot is the number of distinct spans of its row before its first occurrence.
        found = tf.ragged.boolean_mask(pieces, is_span)  # [B, (n)]
        flat = found.flat_values
        rows = tf.strings.as_string(found.value_rowids())
        _, first_key = tf.unique(tf.strings.join([rows, flat], separator="\x01"))
        position = tf.range(tf.size(flat, tf.int64), dtype=tf.int64)
        first = tf.math.unsorted_segment_min(position, first_key, tf.size(flat))
        first = tf.gather(first, first_key)  # where each span's text first occurs in its row
        new = tf.equal(first, position)
        ordinal = tf.math.cumsum(found.with_flat_values(tf.cast(new, tf.int64)), axis=1) - 1
        slot_of = tf.gather(ordinal.flat_values, first)
        slotted = slot_of < MAX_SLOTS
        slot = tf.gather(tf.constant(SLOTS), tf.clip_by_value(slot_of, 0, MAX_SLOTS - 1))
        span_positions = tf.where(is_span.flat_values)[:, 0]
        replaced = tf.tensor_scatter_nd_update(
            pieces.flat_values,
            tf.boolean_mask(span_positions, slotted)[:, None],
            tf.boolean_mask(slot, slotted),
        )
        joined = tf.strings.reduce_join(pieces.with_flat_values(replaced), axis=1)
        spans = tf.ragged.boolean_mask(found, found.with_flat_values(new & slotted))
        return joined, spans

    def protect_targets(self, strings, spans):
        """Targets ``[B]`` with each span equal to one of its source's ``spans`` (from
        `protect`) replaced by that span's slot (the first equal one)."""
        strings = tf.strings.regex_replace(strings, SLOT_PATTERN, "\ufffd")
        if not self.active:
            return strings
        pieces, is_span = self._spans(strings)
        flat = pieces.flat_values
        rows = pieces.value_rowids()
        table = spans.to_tensor(default_value="", shape=[None, MAX_SLOTS])
        present = tf.sequence_mask(spans.row_lengths(), MAX_SLOTS)
        equal = tf.equal(flat[:, None], tf.gather(table, rows)) & tf.gather(present, rows)
        found = is_span.flat_values & tf.reduce_any(equal, axis=1)
        slot = tf.gather(tf.constant(SLOTS), tf.argmax(tf.cast(equal, tf.int32), axis=1))
        text = tf.where(found, slot, flat)
        return tf.strings.reduce_join(pieces.with_flat_values(text), axis=1)

    def restore(self, outputs, spans):
        """Outputs ``[B]`` with each slot replaced by the span it numbers in its source's
        ``spans``; a slot the source does not have is dropped."""
        pieces = tf_text.regex_split(outputs, SLOT_PATTERN, SLOT_PATTERN)
        flat = pieces.flat_values
        rows = pieces.value_rowids()
        is_slot = tf.strings.regex_full_match(flat, SLOT_PATTERN)
        code = tf.strings.unicode_decode(flat, "UTF-8").to_tensor(default_value=0)[:, :1]
        index = tf.cast(tf.reshape(code, [-1]) - SLOT_BASE, tf.int64)
        index = tf.where(is_slot, index, 0)
        valid = is_slot & (index < tf.gather(spans.row_lengths(), rows))
        position = tf.gather(spans.row_splits, rows) + index
        values = tf.concat([spans.flat_values, [""]], 0)
        fill = tf.gather(values, tf.where(valid, position, tf.size(spans.flat_values, tf.int64)))
        text = tf.where(is_slot, fill, flat)
        if self._option:
            # An option has a boundary on its left: one written against a word ("apt--fix",
            # "-i--input") gets its space back.
            previous = tf.concat([[""], text], 0)[:-1]
            first = tf.equal(
                tf.range(tf.size(flat, tf.int64), dtype=tf.int64),
                tf.gather(pieces.row_splits, rows),
            )
            glued = (
                is_slot
                & tf.logical_not(first)
                & tf.strings.regex_full_match(text, CLASSES["option"])
                & tf.strings.regex_full_match(previous, r"(?s).*[\pL\pN_]")
            )
            text = tf.where(glued, tf.strings.join([" ", text]), text)
        return tf.strings.reduce_join(pieces.with_flat_values(text), axis=1)

    def repair(self, queries, sources, targets):
        """Translations ``targets`` ``[B]`` of stored ``sources`` ``[B]``, retrieved for
        ``queries`` ``[B]`` by a translation memory, with the spans they share with their
        source replaced by the query's spans of the same slot (fuzzy-match repair): the match
        ``Use --all with %d`` → ``Utilisez --all avec %d`` answers ``Use --force with %s``
        with ``Utilisez --force avec %s``. A target whose source has not as many distinct
        spans as its query is returned as it is."""
        if not self.active:
            return targets
        _, wanted = self.protect(queries)
        _, stored = self.protect(sources)
        repaired = self.restore(self.protect_targets(targets, stored), wanted)
        return tf.where(tf.equal(wanted.row_lengths(), stored.row_lengths()), repaired, targets)

    def holds(self, queries, translations):
        """Whether each translation ``[B]`` holds every distinct span of its query ``[B]``
        (bool ``[B]``; true for a query without spans): a translation memory's repaired match
        that does not is missing a placeholder, option or name of the input."""
        _, spans = self.protect(queries)
        slotted = self.protect_targets(translations, spans)
        present = tf.stack(
            [tf.strings.regex_full_match(slotted, f"(?s).*{slot}.*") for slot in SLOTS], axis=1
        )
        wanted = tf.sequence_mask(spans.row_lengths(), MAX_SLOTS)
        return tf.reduce_all(present | tf.logical_not(wanted), axis=1)

    def slot_pairs(self, sources, targets, batch_size=4096):
        """Pairs (lists of str) slotted as `protect` and `protect_targets` slot them, in
        batches: ``(sources, targets)``, lists of str (copies when nothing is protected)."""
        if not self.active:
            return list(sources), list(targets)
        slotted_sources, slotted_targets = [], []
        for start in range(0, len(sources), batch_size):
            batch = tf.constant(list(sources[start : start + batch_size]), tf.string)
            slotted, spans = self.protect(batch)
            ends = tf.constant(list(targets[start : start + batch_size]), tf.string)
            slotted_sources += [text.decode() for text in slotted.numpy()]
            slotted_targets += [text.decode() for text in self.protect_targets(ends, spans).numpy()]
        return slotted_sources, slotted_targets

    def get_config(self):
        return {"classes": list(self.classes), "foreign": self.foreign}


def span_counts(sources, targets, classes=tuple(CLASSES), batch_size=4096):
    """For each class: ``(spans, kept)``, the number of its distinct spans in each of
    ``sources`` (lists of str; options with their left boundary), summed, and how many of them
    appear unchanged in the ``targets`` of the same pairs (as `copied_spans` finds them)."""
    counts = {}
    for name in _check_classes(classes):
        copy = CopyThrough([name])
        spans, kept = 0, 0
        for start in range(0, len(sources), batch_size):
            _, found = copy.protect(tf.constant(sources[start : start + batch_size]))
            for row, target in zip(found.to_list(), targets[start : start + batch_size]):
                spans += len(row)
                kept += sum(_holds(target, span.decode(), name) for span in row)
        counts[name] = (spans, kept)
    return counts


def latin_share(texts, most=2000):
    """The share of the letters of ``texts`` (the first ``most``) that are Latin, or 1.0
    when they have no letter."""
    letters = latin = 0
    for text in texts[:most]:
        for char in text:
            if char.isalpha():
                letters += 1
                latin += "LATIN" in unicodedata.name(char, "")
    return latin / letters if letters else 1.0


def foreign_words(sources, targets):
    """Script-aware copying for these training pairs: ``None`` when the targets are written in
    Latin letters (`MAX_LATIN_SHARE`), else ``{"kept": [...], "seen": [...]}``: the Latin
    words (`FOREIGN`) of the sources, and those that the targets of their pairs hold unchanged,
    as whole words, at least `MIN_COPY_RATE` of the time. `CopyThrough` slots a source's Latin
    word that is kept, or that is not seen at all, in its case or in lower case (a name
    training never met), and leaves the others to be translated.

    Args:
        sources: a list of str.
        targets: a list of str of the same length.

    Returns:
        A dict, or ``None``.

    Example:

    >>> foreign_words(["Open Word", "Open zfhmin", "Close"],
    ...               ["Открыть Word", "Открыть zfhmin", "Закрыть"])
    {'kept': ['Word', 'zfhmin'], 'seen': ['Close', 'Open', 'Word', 'zfhmin']}
    """
    if latin_share(list(targets)) >= MAX_LATIN_SHARE:
        return None
    seen, kept = collections.Counter(), collections.Counter()
    for source, target in zip(sources, targets):
        held = set(_FOREIGN_WORD.findall(target))  # the target's whole Latin words
        for word in set(_FOREIGN_WORD.findall(source)):
            seen[word] += 1
            kept[word] += word in held
    return {
        "kept": sorted(w for w, n in seen.items() if kept[w] >= MIN_COPY_RATE * n),
        "seen": sorted(seen),
    }


def choose_classes(sources, targets):
    """The classes to protect for these training pairs: `ALWAYS`, and each other class whose
    spans the targets keep unchanged at least `MIN_COPY_RATE` of the time over at least
    `MIN_SPANS` spans."""
    counts = span_counts(sources, targets, [c for c in CLASSES if c not in ALWAYS])
    chosen = [c for c, (n, kept) in counts.items() if n >= MIN_SPANS and kept >= MIN_COPY_RATE * n]
    return tuple(c for c in CLASSES if c in ALWAYS or c in chosen)


# A span is held by a text when no word character continues it on either side (``-o`` is not in
# ``--output``; ``1.2`` is not in ``1.2.3``); placeholders may touch letters (``%sbytes``).
_EDGES = {"option": (r"[\w-]", r"[\w-]"), "number": (r"[\w.]", r"\w|\.\w")}


def _holds(text, span, name):
    if name not in _EDGES:
        return span in text
    before, after = _EDGES[name]
    return re.search(f"(?<!{before}){re.escape(span)}(?!{after})", text) is not None


def copied_spans(sources, references, predictions, classes=tuple(CLASSES), foreign=True):
    """How many of the spans a reference keeps unchanged a prediction reproduces exactly.

    Args:
        sources: a list of str.
        references: a list of str of the same length.
        predictions: a list of str of the same length.
        classes: the `CLASSES` to count (all by default, protected or not).
        foreign: also count ``"foreign"``: the Latin words (`FOREIGN`) of a source that its
            reference, written mostly in another script (`MAX_LATIN_SHARE`), holds as whole
            words (identifiers and names inside Cyrillic, Greek or CJK text).

    Returns:
        A dict: for each class and for ``"all"``, ``{"spans": n, "reproduced": share}``: the
        distinct spans of each source found unchanged in its reference (``n``), and the share of
        them found unchanged in the predictions (``None`` when ``n`` is 0). A span counts as
        found when the text holds it and, for options and numbers, no word character continues
        it (``-o`` is not found in ``--output``). ``"all"`` sums the classes (``"foreign"``
        included; a Latin word inside another class's span, the ``force`` of ``--force``,
        counts in both).

    Example:

    >>> figures = copied_spans(
    ...     ["Use --verbose for %s.", "See https://example.org/x"],
    ...     ["Utilisez --verbose pour %s.", "Voir https://example.org/x"],
    ...     ["Utilisez --verbos pour %s.", "Voir https://example.org/x"],  # one option misspelt
    ...     classes=("format", "option", "address"))
    >>> figures["option"], figures["format"]
    ({'spans': 1, 'reproduced': 0.0}, {'spans': 1, 'reproduced': 1.0})
    >>> figures["all"]["spans"], round(figures["all"]["reproduced"], 3)
    (3, 0.667)
    """
    if not len(sources) == len(references) == len(predictions):
        raise ValueError(
            "copied_spans: `sources`, `references` and `predictions` must have one length; "
            f"received {len(sources)}, {len(references)} and {len(predictions)}."
        )
    figures, total, total_kept = {}, 0, 0
    for name in _check_classes(classes):
        _, spans = CopyThrough([name]).protect(tf.constant(list(sources), tf.string))
        n = kept = 0
        for row, reference, prediction in zip(spans.to_list(), references, predictions):
            for span in (s.decode() for s in row):
                if _holds(reference, span, name):
                    n += 1
                    kept += _holds(prediction, span, name)
        figures[name] = {"spans": n, "reproduced": kept / n if n else None}
        total, total_kept = total + n, total_kept + kept
    if foreign:
        n = kept = 0
        for source, reference, prediction in zip(sources, references, predictions):
            if latin_share([reference]) >= MAX_LATIN_SHARE:
                continue
            held = set(_FOREIGN_WORD.findall(reference))
            made = set(_FOREIGN_WORD.findall(prediction))
            words = set(_FOREIGN_WORD.findall(source)) & held
            n, kept = n + len(words), kept + len(words & made)
        figures["foreign"] = {"spans": n, "reproduced": kept / n if n else None}
        total, total_kept = total + n, total_kept + kept
    figures["all"] = {"spans": total, "reproduced": total_kept / total if total else None}
    return figures
