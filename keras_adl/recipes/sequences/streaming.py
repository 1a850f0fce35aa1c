"""A user's text pairs streamed from disk (``keras-adl train pairs --data FILE`` of
``source<TAB>target`` lines, with ``--memory off``, or ``--memory auto`` on more than
`MEMORY_MAX_PAIRS` pairs): memory follows the tokenizer and the model, never the corpus.

A translation memory is made of every training pair and its export carries them all, so a run
with one (``--memory auto`` up to `MEMORY_MAX_PAIRS` pairs, ``--memory input``) reads the pairs
into memory; so do gettext catalogs, whose size is that of the installed catalogs. Without a
memory the pairs are read in two passes:

1. **Splits and a sample.** Each pair goes to a split by a keyed hash of its source
   (`split_bucket`), so the splits need no list and a source repeated in the file never
   straddles them: ``--validation-split`` of the pairs are held out (the first `HELD_OUT_KEPT`
   kept for the figures), unless ``--validation`` gives them. The first ``--samples`` others
   train; they are written to a temporary file, and the first `TOKENIZER_SAMPLE` of them are
   the sample the tokenizer is learned on.
2. **Fitting pairs.** With the tokenizer, the training pairs are slotted for copy-through and
   counted in tokens in batches, and those that fit ``--max-length`` are written to a second
   file: their number is the epoch's length.

Each epoch reads that file again, shuffled in a buffer of `SHUFFLE_PAIRS`.
"""

import os
import shutil
import tempfile
import weakref

import tensorflow as tf

from keras_adl.data.splits import hash_bucket
from keras_adl.data.text_pairs import iter_text_pairs
from keras_adl.training.rundir import RecipeError

__all__ = ["MEMORY_MAX_PAIRS", "StreamedPairs", "count_pairs", "split_bucket"]

# Above this many pairs `--memory auto` trains without a memory, streaming the pairs.
MEMORY_MAX_PAIRS = 200_000
# Held-out pairs kept in memory for the figures (the others are only left out of training).
HELD_OUT_KEPT = 5_000
# Training pairs the tokenizer is learned on.
TOKENIZER_SAMPLE = 200_000
# Pairs shuffled at a time.
SHUFFLE_PAIRS = 10_000
SPLIT_BUCKETS = 10_000
_SPLIT_KEY = b"keras-adl pairs split"
# Pairs slotted and counted at a time in the second pass.
_BATCH = 1024
# Between a pair's source and target in the files (the reader refuses NUL in text).
_SEPARATOR = b"\x00"


def split_bucket(source):
    """The split bucket of a pair, in ``[0, SPLIT_BUCKETS)``: a keyed hash (BLAKE2b) of its
    UTF-8 source, the same in every run.

    >>> split_bucket("Open file") == split_bucket("Open file")
    True
    """
    return hash_bucket(source, _SPLIT_KEY, SPLIT_BUCKETS)


def count_pairs(path, most):
    """The non-blank lines of ``path``, counted up to ``most + 1`` (a cheap pass that decodes
    nothing: whether a file holds more than ``most`` pairs)."""
    count = 0
    with open(path, "rb") as f:
        for line in f:
            count += bool(line.strip())
            if count > most:
                break
    return count


def _pair(record):
    """``(source, target)`` of a record of the files (a scalar, or ``[B]``: then ``[B]``
    each)."""
    parts = tf.strings.split(record, _SEPARATOR.decode())
    if record.shape.rank:
        parts = parts.to_tensor(shape=[None, 2])
        return parts[:, 0], parts[:, 1]
    return parts[0], parts[1]


class StreamedPairs:
    """Text pairs on disk, split and sampled in one pass (the module's step 1).

    Args:
        data: ``--data``: a ``source<TAB>target`` file.
        samples: train on at most this many pairs (the first of the training split).
        validation_split: the share of the pairs held out (hashed).
        validation: held-out pairs given instead, ``(sources, targets)``, or ``None``.

    Attributes:
        pairs: the pairs read.
        train_pairs: those that train (before the ``--max-length`` filter).
        held_out: ``(sources, targets)`` of the held-out pairs kept.
        sample: ``(sources, targets)`` the tokenizer is learned on.
        fitting: the training pairs that fit ``--max-length`` (after `fit`).

    Raises:
        RecipeError: the file cannot be read (file and line named) or holds too few pairs.
    """

    def __init__(self, data, samples, validation_split, validation=None):
        self.data = data
        self.directory = tempfile.mkdtemp(prefix="keras-adl-pairs-")
        weakref.finalize(self, shutil.rmtree, self.directory, ignore_errors=True)
        held_bucket = 0 if validation is not None else round(validation_split * SPLIT_BUCKETS)
        held, sample, first = [], [], None
        pairs = train = 0
        writer = tf.io.TFRecordWriter(self._path("read"))
        try:
            for source, target in iter_text_pairs(data):
                pairs += 1
                if split_bucket(source) < held_bucket:
                    if len(held) < HELD_OUT_KEPT:
                        held.append((source, target))
                    continue
                if train >= samples:
                    if held_bucket == 0 or len(held) >= HELD_OUT_KEPT:
                        break  # nothing more to train on or to hold out
                    continue
                train += 1
                if first is None and held_bucket:  # kept back: the held-out pair of a file
                    first = (source, target)  # the hash holds none of
                    continue
                self._write(writer, source, target, sample)
            if first is not None and held:
                self._write(writer, *first, sample)
            elif first is not None and train >= 2:
                held.append(first)
                train -= 1
            elif first is not None:
                self._write(writer, *first, sample)
        except (OSError, ValueError) as error:
            raise RecipeError(str(error)) from None
        finally:
            writer.close()
        if validation is not None:
            held = list(zip(*validation))
        if not train or not held:
            raise RecipeError(
                f"{data}: the file gives {train} pairs to train on and {len(held)} to hold out; "
                "give more pairs"
            )
        self.pairs, self.train_pairs, self.fitting = pairs, train, None
        self.held_out = ([s for s, _ in held], [t for _, t in held])
        self.sample = ([s for s, _ in sample], [t for _, t in sample])

    def _path(self, name):
        return os.path.join(self.directory, f"{name}.tfrecord")

    @staticmethod
    def _write(writer, source, target, sample):
        writer.write(source.encode("utf-8") + _SEPARATOR + target.encode("utf-8"))
        if len(sample) < TOKENIZER_SAMPLE:
            sample.append((source, target))

    def fit(self, tokenizer, max_length):
        """Step 2: the training pairs slotted for copy-through, those whose source has at most
        ``max_length`` tokens and whose target with its ``</s>`` too written to the file the
        epochs read (`data.fitting_pairs`' rule).

        Returns:
            The number of fitting pairs (also ``fitting``).
        """

        def fitting(record):
            sources, targets = tokenizer.slot_batch(*_pair(record))  # slotted once
            source_counts = tokenizer.token_counts(sources, "source", slot=False)
            target_counts = tokenizer.token_counts(targets, "target", slot=False)
            keep = (source_counts <= max_length) & (target_counts + 1 <= max_length)
            sources, targets = tf.boolean_mask(sources, keep), tf.boolean_mask(targets, keep)
            return tf.strings.join([sources, targets], separator=_SEPARATOR.decode())

        records = tf.data.TFRecordDataset(self._path("read")).batch(_BATCH)
        self.fitting = 0
        with tf.io.TFRecordWriter(self._path("fit")) as writer:
            for batch in records.map(fitting).prefetch(2).as_numpy_iterator():
                for record in batch.tolist():
                    writer.write(record)
                self.fitting += len(batch)
        os.remove(self._path("read"))
        return self.fitting

    def dataset(self, tokenizer, batch_size, max_length, seed=0):
        """One pass over the fitting pairs as the model's batches
        (`TextPairTokenizer.slotted_batches`), shuffled in a buffer of `SHUFFLE_PAIRS`, anew
        each pass.

        Returns:
            ``(dataset, steps)``: the dataset and its batches per pass.
        """
        batch_size = min(batch_size, self.fitting)
        pairs = tf.data.TFRecordDataset(self._path("fit"), buffer_size=1 << 18).map(_pair)
        pairs = pairs.shuffle(SHUFFLE_PAIRS, seed=seed, reshuffle_each_iteration=True)
        batches = tokenizer.slotted_batches(pairs, batch_size, max_length, max_length)
        return batches, self.fitting // batch_size
