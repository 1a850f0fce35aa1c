"""The tagging family's data: labelled, unlabelled and held-out date sequences, their stream of
labelled and unlabelled batches, and the vocabulary a run keeps."""

import collections
import os

import numpy as np
import tensorflow as tf

from keras_adl.conventions import NUM_SPECIAL_TOKENS, SPECIAL_TOKENS
from keras_adl.data.cross_view import cross_view_batches
from keras_adl.data.date_fields import (
    DATE_FIELD_TAGS,
    DATE_FIELD_VOCABULARY,
    date_field_arrays,
)
from keras_adl.recipes.tagging import spec
from keras_adl.text.characters import character_ids
from keras_adl.training.rundir import RecipeError, read_run_file, write_json

# What `TaggingTask.data` hands to the other hooks: arrays of word ids and tag ids (the
# unlabelled set without tags), the vocabulary (ids from NUM_SPECIAL_TOKENS) and the tags.
TaggingData = collections.namedtuple(
    "TaggingData", "task labelled unlabelled test vocabulary tag_names views characters"
)


def check_views(value):
    """The ``--views`` value (comma-separated names) as a tuple in `spec.VIEWS` order.

    Raises:
        RecipeError: an unknown or repeated name.
    """
    names = [name.strip() for name in str(value).split(",") if name.strip()]
    unknown = sorted(set(names) - set(spec.VIEWS))
    if unknown or len(set(names)) != len(names) or not names:
        raise RecipeError(
            f"--views must be distinct names from {','.join(spec.VIEWS)}, comma-separated; "
            f"received {value!r}"
        )
    return tuple(view for view in spec.VIEWS if view in names)


def date_fields(labelled, unlabelled, seed=0, test=spec.TEST_SEQUENCES):
    """``(labelled (words, tags), unlabelled words, test (words, tags))`` int32 arrays of
    `keras_adl.data.date_field_arrays` over `DATE_FIELD_VOCABULARY`: the labelled and
    unlabelled sequences drawn with ``seed`` added to their seeds, the held-out ones fixed."""
    words, tags, _ = date_field_arrays(labelled, seed=spec.LABELLED_SEED + seed)
    unlabelled_words, _, _ = date_field_arrays(unlabelled, seed=spec.UNLABELLED_SEED + seed)
    test_words, test_tags, _ = date_field_arrays(test, seed=spec.TEST_SEED)
    return (words, tags), unlabelled_words, (test_words, test_tags)


def development_sequences():
    """``(words, tags)`` of `spec.DEVELOPMENT_SEQUENCES` labelled sequences drawn with their own
    seed, apart from every run's labelled, unlabelled and held-out sequences (``tune``'s)."""
    words, tags, _ = date_field_arrays(spec.DEVELOPMENT_SEQUENCES, seed=spec.DEVELOPMENT_SEED)
    return words, tags


def character_table(vocabulary, max_characters=spec.MAX_CHARACTERS):
    """int32 ``[NUM_SPECIAL_TOKENS + len(vocabulary), max_characters]``: row ``i`` the
    character ids (`keras_adl.text.characters.character_ids`) of word id ``i``; the padding
    row is zeros, the other special tokens are spelled as written (``<unk>``)."""
    words = ["", *SPECIAL_TOKENS[1:NUM_SPECIAL_TOKENS], *vocabulary]
    return character_ids(tf.constant(words), max_characters).numpy()


def model_inputs(words, table=None):
    """The model's input dict for word ids ``[N, T]``: ``words``, and ``characters`` looked up
    in ``table`` (`character_table`) for a model with a character CNN."""
    inputs = {"words": np.asarray(words, "int32")}
    if table is not None:
        inputs["characters"] = table[inputs["words"]]
    return inputs


def steps_per_epoch(unlabelled, labelled_steps=spec.LABELLED_STEPS_PER_EPOCH):
    """The steps of an epoch: ``labelled_steps`` labelled batches, each followed by an
    unlabelled one when there is ``unlabelled`` data (`keras_adl.data.cross_view_batches`)."""
    return labelled_steps * (2 if unlabelled is not None else 1)


def training_dataset(tagging_data, batch_size, seed=0):
    """The endless ``tf.data`` stream of `keras_adl.data.cross_view_batches`: a labelled batch,
    then (with unlabelled data) an unlabelled one, each marked in ``y["labelled"]``."""
    table = character_table(tagging_data.vocabulary) if tagging_data.characters else None
    labelled = {tagging_data.task: tagging_data.labelled}
    return stream_dataset(labelled, tagging_data.unlabelled, batch_size, table, seed)


def stream_dataset(labelled, unlabelled, batch_size, table=None, seed=0):
    """`cross_view_batches` as a ``tf.data.Dataset`` of word ids (and characters from
    ``table``): ``labelled`` ``{task: (words [N, T], tags [N, T])}``, each task's labelled
    batch in turn, each followed by one of ``unlabelled`` words ``[M, T]`` (``None``: none)."""
    inputs = {task: (model_inputs(w, table), t) for task, (w, t) in labelled.items()}
    if unlabelled is not None:
        unlabelled = model_inputs(unlabelled, table)
    example = next(iter(inputs.values()))[0]
    length = next(iter(labelled.values()))[1].shape[1]
    signature = (
        {k: tf.TensorSpec((batch_size, *v.shape[1:]), tf.int32) for k, v in example.items()},
        {
            **{task: tf.TensorSpec((batch_size, length), tf.int32) for task in labelled},
            "labelled": tf.TensorSpec((batch_size,), tf.float32),
        },
    )
    return tf.data.Dataset.from_generator(
        lambda: cross_view_batches(inputs, unlabelled, batch_size, seed=seed),
        output_signature=signature,
    )


def write_vocabulary(vocabulary, tag_names, out):
    """Writes the words and tags a run's model reads and predicts (`spec.VOCABULARY_FILE`)."""
    write_json(
        os.path.join(out, spec.VOCABULARY_FILE),
        {"words": list(vocabulary), "tags": list(tag_names)},
    )


def read_vocabulary(run_dir):
    """``(words, tags)`` written by `write_vocabulary`."""
    saved = read_run_file(run_dir, spec.VOCABULARY_FILE)
    return tuple(saved["words"]), tuple(saved["tags"])


def date_field_data(task, options, samples, seed, characters):
    """The `TaggingData` of the ``date_fields`` task for the command line's options."""
    labelled, unlabelled, test = date_fields(options["labelled"], samples, seed)
    return TaggingData(
        task=task,
        labelled=labelled,
        unlabelled=unlabelled if options["unlabelled"] == "on" else None,
        test=test,
        vocabulary=DATE_FIELD_VOCABULARY,
        tag_names=DATE_FIELD_TAGS,
        views=check_views(options["views"]) if options["unlabelled"] == "on" else (),
        characters=characters,
    )
