"""Two silver word-level taggings of real English sentences, for multi-task tagging (issue 50).

Sentences of Debian's fortune cookies, each token tagged for two tasks. The labels are
**silver**: tools wrote them, no person checked them, they hold the tools' mistakes. They serve
to compare a tagger of one task with one of both (sharing its encoder), not to measure English.

- ``pos``: the Penn-style tags of the HMM tagger ``Lingua::EN::Tagger`` 0.31 (Debian's
  ``liblingua-en-tagger-perl``), upper-cased: ``DET``, ``NN``, ``PPC`` (comma), ``PP`` (final
  stop) ... Its tokens are both tasks' tokens: "didn't" is "did" "n't" ("DIDN'T" stays whole),
  punctuation comes off words, ``"`` becomes two backquotes or apostrophes, ``--`` ``-``.
- ``supersense``: the WordNet 3.0 lexicographer file (`WORDNET_LEXNAMES`: ``noun.person`` ...)
  of the most frequent sense, or ``O``, from WordNet alone, independently of the tagger: a
  small morphy (exception lists, then each part of speech's detachment rules) gives lemmas; the
  sense with the highest SemCor count (``cntlist.rev``) wins, else the first synset of the first
  part of speech (noun, verb, adj, adv) with the lemma. A function of the lower-cased word alone.

Choices:

- ``O``: tokens without a single-word WordNet entry (punctuation, numbers, "the", "n't") and
  closed-class words (articles, pronouns, prepositions, conjunctions, modals, "ca" and "wo" of
  "can't" and "won't"): WordNet has open-class words only, its entries for those are homographs
  ("a" the blood group, "I" iodine, "he" helium, "us" the United States, "may" the month).
- The tagger's input: Unicode white space (a no-break space would stay inside a token) becomes
  one ASCII space, curly quotes ASCII ones (it splits off only those), and ``&``, ``<``, ``>``
  are escaped: it reads its input as HTML, so ``x<y and a>b`` would lose ``<y and a>`` and
  ``&amp;`` would become ``&``. Its output is not escaped. It decodes UTF-8 itself, so Perl
  reads bytes (decoded by Perl first, text would be decoded twice) and writes UTF-8: accented,
  Cyrillic and CJK letters survive, a CJK run without spaces as one token.
- Sentences (`fortune_sentences`): lines joined but attributions (``--``) and lines with fewer
  letters than other characters (ASCII art, code); split after ``.``, ``!`` or ``?`` (and
  closing quotes or brackets), white space and no lower-case letter, except after a title
  ("Mr.") or an initial. Every fortune file but `EXCLUDED_FORTUNES`; sentences of at most 30
  words and 4 to 30 tagger tokens, deduplicated, sorted, shuffled with the seed.
- `english_tag_arrays` keeps the case (evidence for ``pos``: ``NNP``, sentence starts).

Measured on Debian's ``fortunes`` 1:1.99.1-7.3 (2 cores): 27,872 candidate sentences give
26,091 of 4-30 tokens, 356,909 tokens (mean 13.7, median 13, 10%-90% 6-23). 43 of the tagger's
44 tags occur (not ``PDT``), ``NN`` most (15%); 54% of the tokens are of a word given several
tags, and each word's most frequent tag is right for 95.1% of the tokens. All 45 supersenses
and ``O`` occur; 52.6% of the tokens are ``O`` (40.2% without the closed-class rule), then
``adj.all`` 7.7%, ``adv.all`` 4.7%, ``verb.stative`` 4.5%, ``noun.person`` 2.8%. The
vocabulary holds 30,636 words (13,609 seen twice or more; lower-cased 25,217 and 12,064); with
``min_count=2`` 4.8% of the tokens are ``<unk>`` (lower-cased 3.7%). `pos_tag` takes 0.27 s
per 1,000 sentences (one process), WordNet's tables 0.2 s once, `supersense_tags` 0.05 s per
1,000 sentences: ``english_tag_sentences()`` 8 s, ``english_tag_sentences(200)`` 0.4 s. Pure
Python and numpy plus one ``perl`` process per `pos_tag` call; importing runs nothing.
"""

import collections
import os
import re
import subprocess

import numpy as np

from keras_adl.conventions import NUM_SPECIAL_TOKENS, PAD, SPECIAL_TOKENS, UNK
from keras_adl.data._checks import check_int, check_path, check_seed
from keras_adl.data.fortunes import find_fortunes, read_other_fortunes
from keras_adl.data.text_corpora import WORDNET_DIR

__all__ = [
    "ENGLISH_TAG_TASKS",
    "EXCLUDED_FORTUNES",
    "SENTENCE_TOKENS",
    "WORDNET_LEXNAMES",
    "english_tag_arrays",
    "english_tag_sentences",
    "fortune_sentences",
    "pos_tag",
    "supersense_tags",
]

ENGLISH_TAG_TASKS = ("pos", "supersense")
SENTENCE_TOKENS = (4, 30)  # tagger tokens per kept sentence, inclusive
EXCLUDED_FORTUNES = ("ascii-art", "translate-me")  # pictures; Latin and French
_INSTALL = "install Debian's liblingua-en-tagger-perl (`make data`)"

# WordNet's ``lexnames`` file (lexnames(5WN)): lexicographer file ``i`` is ``WORDNET_LEXNAMES[i]``.
WORDNET_LEXNAMES = tuple(
    "adj.all adj.pert adv.all noun.Tops noun.act noun.animal noun.artifact noun.attribute "
    "noun.body noun.cognition noun.communication noun.event noun.feeling noun.food noun.group "
    "noun.location noun.motive noun.object noun.person noun.phenomenon noun.plant "
    "noun.possession noun.process noun.quantity noun.relation noun.shape noun.state "
    "noun.substance noun.time verb.body verb.change verb.cognition verb.communication "
    "verb.competition verb.consumption verb.contact verb.creation verb.emotion verb.motion "
    "verb.perception verb.possession verb.social verb.stative verb.weather adj.ppl".split()
)

# `pos_tag`'s Perl: a line of UTF-8 bytes (the tagger decodes them) in, a tagged line out.
_TAGGER_PROGRAM = (
    "use strict; use warnings; use Lingua::EN::Tagger; binmode STDOUT, ':encoding(UTF-8)';"
    "my $tagger = Lingua::EN::Tagger->new; while (my $line = <STDIN>) { chomp $line;"
    " my $tagged = $tagger->add_tags($line); print defined $tagged ? $tagged : '', \"\\n\" }"
)
_TAGGED_TOKEN = re.compile(r"<([a-z]+)>(.*)</\1>", re.S)
_QUOTES = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201c": '"', "\u201d": '"'})
_ESCAPES = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def _tagger_input(text):
    """``text`` as one line for the tagger: white space folded, quotes ASCII, HTML escaped."""
    return " ".join(text.split()).translate(_QUOTES).translate(_ESCAPES)


def _parse_tagged(line):
    """``(tokens, tags)`` of one line of the tagger's output."""
    tokens, tags = [], []
    for item in line.split(" ") if line else ():
        match = _TAGGED_TOKEN.fullmatch(item)
        if match is None:
            raise ChildProcessError(f"pos_tag: unexpected tagger output {item!r} in {line!r}.")
        tags.append(match[1].upper())
        tokens.append(match[2])
    return tokens, tags


def pos_tag(sentences):
    """Part-of-speech tags of English sentences by ``Lingua::EN::Tagger``, in one process.

    Args:
        sentences: a list (or tuple) of str, each tagged on its own (the tagger's state is
            reset between sentences). Unicode spaces and curly quotes are read as ASCII ones.

    Returns:
        A list of ``(tokens, tags)`` pairs aligned with ``sentences``: the tagger's tokens
        and their upper-cased Penn-style tags (``DET``, ``NN``, ``VBD``, ``PP`` ...); both
        empty for an empty or white-space sentence.

    Raises:
        TypeError: ``sentences`` is not a list or tuple of str.
        FileNotFoundError: ``perl`` or ``Lingua::EN::Tagger`` is missing (``make data``).
        ChildProcessError: the tagger failed or wrote something unexpected.

    Example:

    >>> tokens, tags = pos_tag(["Don't panic!"])[0]
    >>> tokens, tags
    (['Do', "n't", 'panic', '!'], ['NNP', 'RB', 'VB', 'PP'])
    """
    if not isinstance(sentences, (list, tuple)) or not all(isinstance(s, str) for s in sentences):
        raise TypeError(f"pos_tag: `sentences` must be a list of str; received {sentences!r:.80}.")
    if not sentences:
        return []
    text = "".join(_tagger_input(s) + "\n" for s in sentences).encode("utf-8")
    try:
        done = subprocess.run(["perl", "-e", _TAGGER_PROGRAM], input=text, capture_output=True)
    except FileNotFoundError:
        raise FileNotFoundError(f"pos_tag: `perl` not found; {_INSTALL}.") from None
    error = done.stderr.decode("utf-8", "replace").strip()
    if done.returncode != 0 and "Lingua/EN/Tagger.pm" in error:
        raise FileNotFoundError(f"pos_tag: Perl module Lingua::EN::Tagger not found; {_INSTALL}.")
    lines = done.stdout.decode("utf-8").split("\n")
    if done.returncode != 0 or len(lines) != len(sentences) + 1:
        raise ChildProcessError(
            f"pos_tag: the tagger failed (exit {done.returncode}, {len(lines) - 1} lines for "
            f"{len(sentences)} sentences): {error[-300:]}"
        )
    return [_parse_tagged(line) for line in lines[:-1]]


# Closed-class words and the tagger's halves of "can't", "won't", "shan't": always ``O``.
_CLOSED_CLASS = frozenset(
    "a an the i me my mine he him his she her hers it its we us our ours they them their theirs "
    "you your yours who whom whose which what that this these those myself yourself himself "
    "herself itself ourselves themselves about above across after against along among around "
    "at before behind below beneath beside besides between beyond by down during except for "
    "from in inside into of off on onto out outside over since through throughout "
    "till to toward towards under underneath until up upon via with within without and or but "
    "nor if because although though while whether than as unless whereas can could may might "
    "must shall should will would ought ca wo sha".split()
)
_POS = ("n", "v", "a", "r")  # noun, verb, adj, adv: WordNet's order and file suffixes
_FILES = {"n": "noun", "v": "verb", "a": "adj", "r": "adv"}
_SS_TYPES = {"1": "n", "2": "v", "3": "a", "4": "r", "5": "a"}  # 5: adjective satellite
# WordNet's detachment rules (morphy(7WN)), ``suffix:ending``, per part of speech.
_RULES = {
    "n": "s: ses:s xes:x zes:z ches:ch shes:sh men:man ies:y",
    "v": "s: ies:y es:e es: ed:e ed: ing:e ing:",
    "a": "er: est: er:e est:e",
    "r": "",
}
_RULES = {pos: [tuple(rule.split(":")) for rule in rules.split()] for pos, rules in _RULES.items()}
_TABLES = {}  # directory -> (exceptions, senses), built once


def _wordnet_file(directory, name, mode="r"):
    """The contents of a WordNet file: its lines (``mode="r"``) or its bytes (``"rb"``)."""
    path = os.path.join(directory, name)
    if not os.path.isfile(path):
        raise FileNotFoundError(
            f"supersense_tags: WordNet file {path!r} not found; install Debian's wordnet-base "
            f"(`make data`) or pass directory=."
        )
    with open(path, "rb") as f:
        data = f.read()
    return data if mode == "rb" else data.decode("utf-8", "replace").splitlines()


def _wordnet_tables(directory):
    """``(exceptions, senses)`` of a WordNet directory: ``{pos: {form: [lemma, ...]}}`` and
    ``{(lemma, pos): (count, lexicographer file number)}`` for each single-word entry, with the
    highest ``cntlist.rev`` count of its senses (0: its first synset's file)."""
    exceptions = {pos: {} for pos in _POS}
    senses = {}
    for pos in _POS:
        for line in _wordnet_file(directory, _FILES[pos] + ".exc"):
            form, *lemmas = line.split()
            exceptions[pos].setdefault(form, []).extend(lemmas)
        data = _wordnet_file(directory, "data." + _FILES[pos], "rb")
        for line in _wordnet_file(directory, "index." + _FILES[pos]):
            fields = line.split()
            if line.startswith(" ") or "_" in fields[0]:
                continue  # the licence, or a multi-word entry
            first = fields[-int(fields[2])]  # the offset of the first (most frequent) synset
            offset = int(first)
            if data[offset : offset + 9] != first.encode() + b" ":
                raise ValueError(
                    f"supersense_tags: {directory}: data.{_FILES[pos]} is not WordNet's."
                )
            senses[fields[0], pos] = (0, int(data[offset + 9 : offset + 11]))
    for line in _wordnet_file(directory, "cntlist.rev"):
        key, _, count = line.split()
        lemma, _, rest = key.partition("%")
        ss_type, lex_filenum = rest.split(":")[:2]
        entry = (lemma, _SS_TYPES[ss_type])
        if entry in senses and int(count) > senses[entry][0]:
            senses[entry] = (int(count), int(lex_filenum))
    return exceptions, senses


def _supersense(word, exceptions, senses):
    """The supersense of one lower-cased token (``O`` when WordNet has no lemma for it)."""
    if word in _CLOSED_CLASS:
        return "O"
    candidates = []
    for pos in _POS:
        forms = [*exceptions[pos].get(word, ()), word]
        forms += [word[: -len(s)] + e for s, e in _RULES[pos] if word.endswith(s) and word != s]
        candidates += [senses[f, pos] for f in dict.fromkeys(forms) if (f, pos) in senses]
    if not candidates:
        return "O"
    best = max(candidates, key=lambda sense: sense[0])  # the first of ties; all 0: the first
    return WORDNET_LEXNAMES[best[1]]


def supersense_tags(tokens, directory=WORDNET_DIR):
    """WordNet supersenses (lexicographer files) of the most frequent senses of tokens.

    Each token is lower-cased and looked up on its own (see the module docstring): its
    lemmas by a small morphy, then the sense with the highest SemCor count (``cntlist.rev``),
    else the first synset of the first part of speech that has the lemma. The tables are read
    once per directory (0.2 s).

    Args:
        tokens: a list of str (e.g. the tokens of `pos_tag`).
        directory: a WordNet 3.0 dictionary directory (``index.*``, ``data.*``, ``*.exc``,
            ``cntlist.rev``); Debian's ``wordnet-base`` installs it in ``/usr/share/wordnet``.

    Returns:
        A list of str aligned with ``tokens``: names from `WORDNET_LEXNAMES`, or ``O``.

    Raises:
        TypeError: ``tokens`` is not a list or tuple of str, or ``directory`` not a path.
        FileNotFoundError: a WordNet file is missing (``make data`` installs them).

    Example:

    >>> supersense_tags(["The", "cat", "sat", "on", "the", "mat", "."])
    ['O', 'noun.animal', 'verb.contact', 'O', 'O', 'noun.artifact', 'O']
    """
    if not isinstance(tokens, (list, tuple)) or not all(isinstance(t, str) for t in tokens):
        raise TypeError(
            f"supersense_tags: `tokens` must be a list of str; received {tokens!r:.80}."
        )
    directory = check_path("directory", directory, where="supersense_tags: ")
    if directory not in _TABLES:
        _TABLES[directory] = _wordnet_tables(directory)
    exceptions, senses = _TABLES[directory]
    return [_supersense(token.lower(), exceptions, senses) for token in tokens]


_BOUNDARY = re.compile(r"[.!?][\"')\]]*(\s+)(?=[^\sa-z])")
_NO_BOUNDARY_AFTER = re.compile(r"(?:mr|mrs|ms|dr|st|prof|jr|sr|vs|[a-z])\.", re.I)
_CONTROL = re.compile(r"[\x00-\x08\x0e-\x1f\x7f]")  # e.g. the bells of a few fortunes


def fortune_sentences(fortune):
    """The sentences of one fortune cookie, each on one line.

    Lines starting with ``--`` (attributions) and lines with fewer letters than other
    non-space characters are dropped, the rest joined; the text is split after ``.``, ``!``
    or ``?`` (and closing quotes or brackets) followed by white space and a character that is
    not a lower-case letter, except after a title (``Mr.``, ``Dr.`` ...) or an initial.

    Args:
        fortune: a str.

    Returns:
        A list of str, white space folded to single spaces.

    Example:

    >>> fortune_sentences("Mr. Smith said \\"no!\\" Then he left.  It rained.\\n  -- Anon")
    ['Mr. Smith said "no!"', 'Then he left.', 'It rained.']
    >>> fortune_sentences("e.g. this stays. 4 < 5?\\n  +--+--+\\nOK.")
    ['e.g. this stays.', '4 < 5?', 'OK.']
    """
    if not isinstance(fortune, str):
        raise TypeError(
            f"fortune_sentences: `fortune` must be a str; received {type(fortune).__name__}."
        )
    lines = []
    for line in fortune.splitlines():
        line = " ".join(_CONTROL.sub("", line).split())
        letters = sum(c.isalpha() for c in line)
        if line and not line.startswith("--") and 2 * letters >= len(line.replace(" ", "")):
            lines.append(line)
    text = " ".join(lines)
    sentences, start = [], 0
    for match in _BOUNDARY.finditer(text):
        words = text[start : match.start(1)].split()
        if words and not _NO_BOUNDARY_AFTER.fullmatch(words[-1]):
            sentences.append(" ".join(words))
            start = match.end(1)
    return [*sentences, text[start:]] if text[start:] else sentences


def _candidate_sentences(directory):
    """Every fortune sentence of at most ``SENTENCE_TOKENS[1]`` words, deduplicated, sorted."""
    if directory is None:
        directory = find_fortunes()
        if directory is None:
            raise FileNotFoundError(
                "english_tag_sentences: no fortune directory found; install Debian's fortunes "
                "(`make data`) or pass directory=."
            )
    texts = read_other_fortunes(directory, topics=EXCLUDED_FORTUNES)
    sentences = {s for text in texts for s in fortune_sentences(text)}
    return sorted(s for s in sentences if len(s.split()) <= SENTENCE_TOKENS[1])


def english_tag_sentences(num=None, seed=0, directory=None, wordnet_directory=WORDNET_DIR):
    """Fortune sentences with their silver ``pos`` and ``supersense`` tags, shuffled.

    The candidates (`fortune_sentences` of every fortune file but `EXCLUDED_FORTUNES`, at most
    30 words, deduplicated and sorted) are shuffled with ``seed`` and tagged in that order; those
    of 4 to 30 tagger tokens (`SENTENCE_TOKENS`) are kept. A smaller ``num`` gives a prefix.

    Args:
        num: how many sentences, a positive integer; ``None`` for all (8 s).
        seed: non-negative integer seed of the order.
        directory: the fortune directory; ``None`` uses `find_fortunes`.
        wordnet_directory: the WordNet directory of `supersense_tags`.

    Returns:
        A list of dicts ``{"text", "tokens", "pos", "supersense"}``: the sentence and three
        aligned lists of str (`pos_tag`'s tokens and tags, `supersense_tags`).

    Raises:
        ValueError: ``num`` or ``seed`` is invalid, or ``num`` is more than the sentences.
        FileNotFoundError: fortunes, WordNet, ``perl`` or the tagger are missing (``make data``).

    Example:

    >>> sentence = english_tag_sentences(2)[0]
    >>> sorted(sentence)
    ['pos', 'supersense', 'text', 'tokens']
    >>> len(sentence["tokens"]) == len(sentence["pos"]) == len(sentence["supersense"]) >= 4
    True
    """
    where = "english_tag_sentences: "
    if num is not None:
        num = check_int("num", num, 1, where=where)
    rng = np.random.default_rng(check_seed(seed, where=where))
    candidates = _candidate_sentences(directory)
    order = rng.permutation(len(candidates))
    low, high = SENTENCE_TOKENS
    kept, position = [], 0
    while (num is None or len(kept) < num) and position < len(order):
        size = len(order) if num is None else max(64, 2 * (num - len(kept)))  # most are kept
        batch = [candidates[i] for i in order[position : position + size]]
        position += size
        for text, (tokens, tags) in zip(batch, pos_tag(batch)):
            if low <= len(tokens) <= high:
                kept.append({"text": text, "tokens": tokens, "pos": tags})
    if num is not None and len(kept) < num:
        raise ValueError(f"{where}`num` must be at most {len(kept)} (all); received {num}.")
    kept = kept[:num]
    for sentence in kept:
        sentence["supersense"] = supersense_tags(sentence["tokens"], wordnet_directory)
    return kept


def _check_sentences(sentences, where):
    """``sentences`` as a list of dicts of aligned non-empty ``tokens`` and task tags."""
    if not isinstance(sentences, (list, tuple)) or not sentences:
        raise ValueError(
            f"{where}`sentences` must be a non-empty list of dicts (english_tag_sentences); "
            f"received {sentences!r:.80}."
        )
    keys = ("tokens", *ENGLISH_TAG_TASKS)
    for i, s in enumerate(sentences):
        ok = isinstance(s, dict) and all(isinstance(s.get(k), (list, tuple)) for k in keys)
        if not ok or not s["tokens"] or len({len(s[k]) for k in keys}) != 1:
            raise ValueError(
                f"{where}`sentences[{i}]` must be a dict of aligned non-empty lists 'tokens', "
                f"'pos' and 'supersense'; received {s!r:.120}."
            )
    return list(sentences)


def _check_names(name, names, where, first=None):
    """``names`` as a tuple of distinct str (starting with ``first`` when given)."""
    ok = isinstance(names, (list, tuple)) and all(isinstance(n, str) for n in names)
    if not ok or len(set(names)) != len(names) or (first and tuple(names[:1]) != (first,)):
        start = f"start with {first!r}, " if first else ""
        raise ValueError(
            f"{where}`{name}` must be a sequence of distinct str ({start}none twice); "
            f"received {names!r:.120}."
        )
    return tuple(names)


def _check_tag_names(tag_names, sentences, where):
    """``tag_names`` checked, or built from ``sentences`` (``"<pad>"``, then sorted tags)."""
    pad = SPECIAL_TOKENS[PAD]
    if tag_names is None:
        return {t: (pad, *sorted({g for s in sentences for g in s[t]})) for t in ENGLISH_TAG_TASKS}
    if not isinstance(tag_names, dict) or set(tag_names) != set(ENGLISH_TAG_TASKS):
        raise ValueError(
            f"{where}`tag_names` must be a dict with the keys {ENGLISH_TAG_TASKS} (or None); "
            f"received {tag_names!r:.120}."
        )
    return {t: _check_names(f"tag_names[{t!r}]", tag_names[t], where, pad) for t in tag_names}


def _tag_ids(sentences, task, names, max_tokens, where):
    """int32 ``[N, max_tokens]`` ids of one task's tags in ``names`` (0: padding)."""
    index = {name: j for j, name in enumerate(names) if j != PAD}
    ids = np.full((len(sentences), max_tokens), PAD, "int32")
    for row, sentence in enumerate(sentences):
        unknown = [tag for tag in sentence[task] if tag not in index]
        if unknown:
            raise ValueError(
                f"{where}`sentences[{row}]` has the {task} tag {unknown[0]!r}, which is not in "
                f"`tag_names[{task!r}]` (or is its padding name)."
            )
        ids[row, : len(sentence[task])] = [index[tag] for tag in sentence[task]]
    return ids


def english_tag_arrays(
    sentences, max_tokens=None, vocabulary=None, tag_names=None, min_count=1, lowercase=False
):
    """Sentences of `english_tag_sentences` as arrays: token ids and each task's tag ids.

    Token ``vocabulary[i]`` has id ``i + NUM_SPECIAL_TOKENS``, a token outside it `UNK`; tag
    ``tag_names[task][j]`` has id ``j``, and ``tag_names[task][0]`` is ``"<pad>"``. All arrays
    are padded at the end with `PAD` (0), so ``token_ids != PAD`` masks every task.

    Args:
        sentences: a list of dicts with aligned lists ``tokens``, ``pos`` and ``supersense``.
        max_tokens: the length ``T`` of the arrays, at least the longest sentence; ``None``
            for the longest sentence.
        vocabulary: distinct token strings, or ``None`` to build it from ``sentences``: the
            tokens seen at least ``min_count`` times, most frequent first (ties by name).
        tag_names: ``{"pos": names, "supersense": names}``, each starting with ``"<pad>"``,
            or ``None`` to build them: ``"<pad>"`` then the tags seen, sorted. A tag outside
            given names raises a ``ValueError`` (the ``pos`` task has no ``O`` to fall to).
        min_count: a positive integer, used when ``vocabulary`` is ``None``.
        lowercase: look tokens up lower-cased (and build a lower-cased vocabulary).

    Returns:
        ``(token_ids, tag_ids, vocabulary, tag_names)``: int32 ``[N, T]``, a dict of int32
        ``[N, T]`` per task, a tuple of str, a dict of tuples of str per task.

    Raises:
        ValueError: an invalid argument, a sentence longer than ``max_tokens``, or a tag not
            in the given ``tag_names``.

    Example:

    >>> sentences = [
    ...     {"tokens": ["Dogs", "bark", "."], "pos": ["NNS", "VBP", "PP"],
    ...      "supersense": ["noun.animal", "verb.communication", "O"]},
    ...     {"tokens": ["Dogs", "."], "pos": ["NNS", "PP"], "supersense": ["noun.animal", "O"]},
    ... ]
    >>> token_ids, tag_ids, vocabulary, tag_names = english_tag_arrays(sentences)
    >>> token_ids.tolist(), vocabulary
    ([[5, 6, 4], [5, 4, 0]], ('.', 'Dogs', 'bark'))
    >>> tag_ids["supersense"].tolist(), tag_names["supersense"]
    ([[2, 3, 1], [2, 1, 0]], ('<pad>', 'O', 'noun.animal', 'verb.communication'))
    """
    where = "english_tag_arrays: "
    sentences = _check_sentences(sentences, where)
    longest = max(len(s["tokens"]) for s in sentences)
    if max_tokens is None:
        max_tokens = longest
    if check_int("max_tokens", max_tokens, 1, where=where) < longest:
        raise ValueError(
            f"{where}`max_tokens` must be at least the longest sentence, {longest} tokens; "
            f"received {max_tokens}."
        )
    min_count = check_int("min_count", min_count, 1, where=where)
    if vocabulary is None:
        counts = collections.Counter(
            t.lower() if lowercase else t for s in sentences for t in s["tokens"]
        )
        ranked = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
        vocabulary = [token for token, count in ranked if count >= min_count]
    vocabulary = _check_names("vocabulary", vocabulary, where)
    tag_names = _check_tag_names(tag_names, sentences, where)
    token_index = {token: i + NUM_SPECIAL_TOKENS for i, token in enumerate(vocabulary)}
    token_ids = np.full((len(sentences), max_tokens), PAD, "int32")
    for row, sentence in enumerate(sentences):
        tokens = [t.lower() if lowercase else t for t in sentence["tokens"]]
        token_ids[row, : len(tokens)] = [token_index.get(t, UNK) for t in tokens]
    tag_ids = {t: _tag_ids(sentences, t, tag_names[t], max_tokens, where) for t in tag_names}
    return token_ids, tag_ids, vocabulary, tag_names
