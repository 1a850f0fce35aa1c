"""SavedModel export shared by every family: `export_serving_fn` writes a model with a serving
function as its ``serving_default`` signature, atomically.

The serving functions themselves belong to the families' recipes: raw strings to decoded
strings (`keras_adl.recipes.sequences.serving.make_seq2seq_serving_fn`, `make_pointer_serving_fn`,
`make_text_pair_serving_fn`), image batches to classes or captions
(`keras_adl.recipes.vision.serving.make_ram_serving_fn`, `make_classifier_serving_fn`,
`make_captioning_serving_fn`), raw documents
to classes and attention (`keras_adl.recipes.documents.serving.make_han_serving_fn`).
"""

import os
import shutil
import tempfile

import keras

from keras_adl.training.divergence import check_finite

__all__ = ["export_serving_fn"]


def export_serving_fn(model, export_dir, serving_fn, resources=(), endpoints=None):
    """Writes ``model`` with ``serving_fn`` as its ``serving_default`` SavedModel signature.

    The directory is written next to ``export_dir`` under a temporary name and renamed at the
    end, so a failed export leaves nothing behind.

    Args:
        model: the model to export.
        export_dir: the SavedModel's directory (it must not exist).
        serving_fn: a ``tf.function`` with an input signature.
        resources: extra TensorFlow resources the function uses (e.g. a tokenizer's lookup
            tables) to track in the SavedModel.
        endpoints: optional ``{name: tf.function}``, more signatures of the SavedModel (read
            as ``signatures[name]``), e.g. a GPT export's ``sample``.

    Returns:
        ``export_dir``.

    Raises:
        FileExistsError: ``export_dir`` already exists.
        ValueError: a weight of ``model`` is NaN or infinite (a diverged model is not shipped).

    Example:

    >>> import tensorflow as tf
    >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(2, kernel_initializer="ones")])
    >>> serve = tf.function(lambda x: {"scores": model(x)},
    ...                     input_signature=[tf.TensorSpec([None, 3], tf.float32)])
    >>> with tempfile.TemporaryDirectory() as directory:
    ...     path = export_serving_fn(model, os.path.join(directory, "export"), serve)
    ...     loaded = tf.saved_model.load(path).signatures["serving_default"]
    ...     print(loaded(x=tf.constant([[1.0, 2.0, 3.0]]))["scores"].numpy().tolist())
    ...     print(os.listdir(directory))  # the staging directory was renamed
    [[6.0, 6.0]]
    ['export']
    """
    if os.path.exists(export_dir):
        raise FileExistsError(f"export directory {export_dir!r} already exists; choose a new one.")
    check_finite(model, f"export to {export_dir}")
    parent = os.path.dirname(os.path.abspath(export_dir))
    os.makedirs(parent, exist_ok=True)
    archive = keras.export.ExportArchive()
    archive.track(model)
    for resource in resources:
        archive.track(resource)
    archive.add_endpoint("serve", serving_fn)
    for name, function in (endpoints or {}).items():
        archive.add_endpoint(name, function)
    staging = tempfile.mkdtemp(prefix=".export-", dir=parent)
    try:
        archive.write_out(staging, verbose=False)
        os.rename(staging, export_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return export_dir
