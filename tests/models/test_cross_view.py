import os

import keras
import numpy as np
import pytest

from keras_adl.data.cross_view import cross_view_batches
from keras_adl.models import CrossViewTagger, cross_view_tagger
from keras_adl.ops.cross_view import VIEW_NAMES
from tests.harness import np_

SMALL = dict(word_dim=8, units=8, hidden_units=8, dropout=0.0)
VOCABULARY, CLASSES, LENGTH = 30, 5, 6


def _words(num, seed):
    """``[num, LENGTH]`` word ids, right-padded, lengths 2..LENGTH."""
    rng = np.random.default_rng(seed)
    words = rng.integers(1, VOCABULARY, (num, LENGTH)).astype("int32")
    lengths = rng.integers(2, LENGTH + 1, num)
    words[np.arange(LENGTH)[None, :] >= lengths[:, None]] = 0
    return words


def _tags(words):
    """A toy tagging that needs context: 1 + the word's parity + 2 · the next word's."""
    following = np.concatenate([words[:, 1:], np.zeros_like(words[:, :1])], axis=1)
    return np.where(words > 0, 1 + words % 2 + 2 * (following % 2), 0).astype("int32")


def _model(tasks=None, **kwargs):
    keras.utils.set_random_seed(0)
    return cross_view_tagger(VOCABULARY, tasks or {"dates": CLASSES}, **dict(SMALL, **kwargs))


def _batch(labelled, num=8, seed=0, tasks=("dates",)):
    words = _words(num, seed)
    y = {task: _tags(words) if labelled else np.zeros_like(words) for task in tasks}
    y["labelled"] = np.full(num, float(labelled), "float32")
    return {"words": words}, y


def _weights_by_layer(model):
    return {
        layer.name: [np_(w).copy() for w in layer.weights]
        for layer in model.layers
        if layer.weights
    }


def _changed_layers(model, x, y):
    """Names of the layers whose weights one SGD step on ``(x, y)`` changes."""
    model.compile(optimizer=keras.optimizers.SGD(0.5))
    before = _weights_by_layer(model)
    model.train_on_batch(x, y)
    after = _weights_by_layer(model)
    return {
        name
        for name in before
        if any(not np.array_equal(a, b) for a, b in zip(before[name], after[name]))
    }


@pytest.mark.portable
def test_outputs_are_the_primary_and_one_auxiliary_per_view():
    model = _model({"dates": 7, "pos": 3}, views=("future", "past"))
    assert isinstance(model, CrossViewTagger)
    assert sorted(model.output) == [
        "dates",
        "dates/future",
        "dates/past",
        "pos",
        "pos/future",
        "pos/past",
    ]
    outputs = model({"words": _words(4, 0)})
    assert tuple(outputs["pos/past"].shape) == (4, LENGTH, 3)
    assert (model.task_names, model.views["pos"]) == (["dates", "pos"], ["pos/future", "pos/past"])
    # The primary reads the top BiLSTM, the auxiliaries the first one's restricted views.
    assert model.get_layer("dates_primary").input is model.get_layer("bilstm_2").output
    views_input = keras.tree.flatten(model.get_layer("restricted_views").input)[0]
    assert views_input is model.get_layer("bilstm_1").output


@pytest.mark.portable
def test_unlabelled_batches_train_the_auxiliaries_and_encoder_never_the_primary():
    model = _model()
    changed = _changed_layers(model, *_batch(labelled=False))
    assert "dates_primary" not in changed
    # The top layer feeds only the primary, so nothing reaches it either.
    assert "bilstm_2" not in changed
    assert {"word_embedding", "bilstm_1"} <= changed
    assert {f"dates_{view}" for view in VIEW_NAMES} <= changed


@pytest.mark.portable
def test_labelled_batches_train_the_primary_and_encoder_never_the_auxiliaries():
    model = _model()
    changed = _changed_layers(model, *_batch(labelled=True))
    assert {"dates_primary", "bilstm_2", "bilstm_1", "word_embedding"} <= changed
    assert not changed & {f"dates_{view}" for view in VIEW_NAMES}


@pytest.mark.portable
def test_the_losses_equal_their_formulas():
    model = _model(views=("forward", "future"))
    # Larger weights: predictions far from uniform, so the KL is far from 0.
    model.set_weights([3.0 * w for w in model.get_weights()])
    x, y = _batch(labelled=True)
    outputs = {k: np_(v).astype("float64") for k, v in model(x, training=False).items()}
    real = x["words"] > 0

    def log_softmax(z):
        z = z - z.max(-1, keepdims=True)
        return z - np.log(np.exp(z).sum(-1, keepdims=True))

    log_p = log_softmax(outputs["dates"])
    tags = y["dates"]
    entropy = -np.take_along_axis(log_p, tags[..., None], -1)[..., 0]
    supervised = entropy[real].mean()
    p = np.exp(log_p)
    kl = sum(
        (p * (np.log(p + 1e-7) - log_softmax(outputs[f"dates/{v}"]))).sum(-1)[real].mean()
        for v in ("forward", "future")
    )
    y_pred = model(x, training=False)
    got = float(np_(model.compute_loss(x, y, y_pred, training=True)))
    np.testing.assert_allclose(got, supervised, rtol=1e-4)
    _, unlabelled = _batch(labelled=False)
    got = float(np_(model.compute_loss(x, unlabelled, y_pred, training=True)))
    np.testing.assert_allclose(got, kl, rtol=1e-4)
    # Evaluation is the supervised loss whatever the marker; tags alone mean "labelled".
    got = float(np_(model.compute_loss(x, unlabelled, y_pred, training=False)))
    assert got == 0.0  # no token of an unlabelled batch has a label
    got = float(np_(model.compute_loss(x, tags, y_pred, training=True)))
    np.testing.assert_allclose(got, supervised, rtol=1e-4)


@pytest.mark.portable
def test_a_task_without_labels_in_a_batch_adds_no_loss():
    model = _model({"dates": CLASSES, "pos": CLASSES}, views=())
    x, y = _batch(labelled=True, tasks=("dates", "pos"))
    y_pred = model(x, training=False)
    both = float(np_(model.compute_loss(x, y, y_pred)))
    y["pos"] = np.zeros_like(y["pos"])
    dates_only = float(np_(model.compute_loss(x, y, y_pred)))
    y["dates"], y["pos"] = y["pos"], _tags(x["words"])
    pos_only = float(np_(model.compute_loss(x, y, y_pred)))
    np.testing.assert_allclose(both, dates_only + pos_only, rtol=1e-5)


@pytest.mark.portable
def test_without_views_unlabelled_batches_change_nothing():
    model = _model(views=())
    assert sorted(model.output) == ["dates"]
    assert _changed_layers(model, *_batch(labelled=False)) == set()


@pytest.mark.portable
@pytest.mark.slow  # 35 s; the fast suite fits CVT under mixed precision
def test_fit_on_the_alternating_stream_learns_and_round_trips(tmp_path):
    words = _words(64, 1)
    stream = cross_view_batches(
        {"dates": ({"words": words}, _tags(words))}, {"words": _words(256, 2)}, batch_size=16
    )
    model = _model(dropout=0.1)
    model.compile(optimizer=keras.optimizers.Adam(1e-2), jit_compile=True)
    history = model.fit(stream, steps_per_epoch=40, epochs=3, shuffle=False, verbose=0)
    assert {"loss", "accuracy", "cross_view"} <= set(history.history)
    assert all(np.isfinite(history.history["loss"]))
    held_out = _words(64, 3)
    scores = model.evaluate({"words": held_out}, _tags(held_out), return_dict=True, verbose=0)
    assert set(scores) == {"loss", "accuracy"}
    assert scores["accuracy"] > 0.5  # chance is 0.25
    path = os.path.join(tmp_path, "tagger.keras")
    model.save(path)
    loaded = keras.saving.load_model(path)
    assert isinstance(loaded, CrossViewTagger)
    before, after = (
        model.predict({"words": held_out}, verbose=0),
        loaded.predict({"words": held_out}, verbose=0),
    )
    assert sorted(before) == sorted(after)
    for key in before:
        np.testing.assert_allclose(np_(after[key]), np_(before[key]), rtol=1e-5, atol=1e-6)
    loaded.compile(optimizer="adam")
    loaded.fit(stream, steps_per_epoch=2, shuffle=False, verbose=0)  # the reloaded model trains


@pytest.mark.portable
def test_character_inputs_and_padding_change_nothing_at_real_tokens():
    model = _model(num_characters=20, character_filters=((2, 4),))
    words = _words(3, 4)
    rng = np.random.default_rng(0)
    characters = np.where(words[..., None] > 0, rng.integers(1, 20, (3, LENGTH, 5)), 0)
    outputs = model({"words": words, "characters": characters.astype("int32")})
    wider = np.pad(words, [[0, 0], [0, 3]])
    wider_characters = np.pad(characters, [[0, 0], [0, 3], [0, 2]]).astype("int32")
    padded = model({"words": wider, "characters": wider_characters})
    real = words > 0
    for key in outputs:
        np.testing.assert_allclose(
            np_(padded[key])[:, :LENGTH][real], np_(outputs[key])[real], rtol=1e-5, atol=1e-6
        )


@pytest.mark.portable
def test_bad_arguments_and_targets_say_what_was_expected():
    with pytest.raises(ValueError, match="`tasks` must be"):
        cross_view_tagger(10, {})
    with pytest.raises(ValueError, match="task names must be Python identifiers"):
        cross_view_tagger(10, {"a/b": 3})
    with pytest.raises(ValueError, match="task names must be Python identifiers"):
        cross_view_tagger(10, {"labelled": 3})
    with pytest.raises(ValueError, match="`views` must be distinct names"):
        cross_view_tagger(10, 3, views=("forward", "sideways"))
    with pytest.raises(ValueError, match="`dropout`"):
        cross_view_tagger(10, 3, dropout=1.5)
    model = _model({"dates": CLASSES, "pos": CLASSES})
    x, y = _batch(labelled=True)
    with pytest.raises(ValueError, match="must be a dict of tags per task"):
        model.compute_loss(x, y["dates"], model(x))
    with pytest.raises(ValueError, match=r"keys \['chunks'\] that are not tasks"):
        model.compute_loss(x, dict(y, chunks=y["dates"]), model(x))
    with pytest.raises(ValueError, match="needs targets `y`"):
        model.compute_loss(x, None, model(x))
    with pytest.raises(ValueError, match="`sample_weight` is not supported"):
        model.compute_loss(x, y, model(x), sample_weight=np.ones(8))


@pytest.mark.portable
def test_mixed_precision_trains_with_finite_float32_losses():
    keras.mixed_precision.set_global_policy("mixed_float16")
    try:
        model = _model(num_characters=20, character_filters=((2, 4),))
        words = _words(32, 5)
        characters = np.where(words[..., None] > 0, 7, 0).astype("int32")
        x = {"words": words, "characters": np.repeat(characters, 3, axis=-1)}
        outputs = model(x)
        assert keras.backend.standardize_dtype(outputs["dates/past"].dtype) == "float16"
        model.compile(optimizer=keras.optimizers.Adam(1e-2))
        for labelled in (True, False, True, False):
            y = _batch(labelled, num=32, seed=5)[1]
            logs = model.train_on_batch(x, y, return_dict=True)
            assert np.isfinite(logs["loss"]) and np.isfinite(logs["cross_view"])
        loss = model.compute_loss(x, y, model(x))
        assert keras.backend.standardize_dtype(loss.dtype) == "float32"
    finally:
        keras.mixed_precision.set_global_policy("float32")


# -- the stream ----------------------------------------------------------------------------------


def test_stream_alternates_tasks_and_unlabelled_batches_with_fixed_shapes():
    a, b = _words(5, 0), _words(7, 1)
    stream = cross_view_batches(
        {"dates": ({"words": a}, _tags(a)), "pos": ({"words": b}, _tags(b))},
        {"words": _words(3, 2)},
        batch_size=4,
        unlabelled_per_labelled=2,
        seed=0,
    )
    kinds = []
    for _ in range(12):
        x, y = next(stream)
        assert x["words"].shape == y["dates"].shape == y["pos"].shape == (4, LENGTH)
        assert y["labelled"].shape == (4,) and len(set(y["labelled"])) == 1
        labelled_tasks = [t for t in ("dates", "pos") if y[t].any()]
        kinds.append(labelled_tasks[0] if y["labelled"][0] else "-")
        if y["labelled"][0]:
            assert len(labelled_tasks) == 1  # the other task's tags are zeros
            np.testing.assert_array_equal(y[labelled_tasks[0]], _tags(x["words"]))
    assert kinds == ["dates", "-", "-", "pos", "-", "-"] * 2


def test_stream_draws_reshuffled_passes_and_is_seeded():
    words = np.arange(1, 6, dtype="int32")[:, None]  # 5 one-token sequences
    first = [
        next(s)[0]["words"][:, 0]
        for s in [cross_view_batches({"t": ({"words": words}, words)}, batch_size=5, seed=3)]
        for _ in range(3)
    ]
    for batch in first:
        assert sorted(batch) == [1, 2, 3, 4, 5]  # each pass sees every sequence once
    again = cross_view_batches({"t": ({"words": words}, words)}, batch_size=5, seed=3)
    assert all(np.array_equal(next(again)[0]["words"][:, 0], b) for b in first)
    small = cross_view_batches({"t": ({"words": words}, words)}, batch_size=12, seed=0)
    counts = np.bincount(next(small)[0]["words"][:, 0], minlength=6)[1:]
    assert counts.min() >= 2  # a set smaller than the batch is repeated within it


def test_stream_bad_arguments():
    words = _words(4, 0)
    with pytest.raises(ValueError, match="`labelled` must be a non-empty dict"):
        next(cross_view_batches({}))
    with pytest.raises(ValueError, match=r"`labelled\['t'\]`'s tags must be integers"):
        next(cross_view_batches({"t": ({"words": words}, words[:2])}))
    with pytest.raises(ValueError, match="must have the labelled inputs' keys"):
        next(cross_view_batches({"t": ({"words": words}, words)}, {"tokens": words}))
    with pytest.raises(ValueError, match="`batch_size`"):
        next(cross_view_batches({"t": ({"words": words}, words)}, batch_size=0))


@pytest.mark.tf_only
@pytest.mark.slow  # ~15 s; MirroredStrategy fit is tested in tests/training too
def test_mirrored_fit_on_the_alternating_stream_matches_one_device():
    import tensorflow as tf

    from tests.mirrored import assert_mirrored_fit_matches_one_device

    words = _words(48, 1)
    batches = cross_view_batches(
        {"dates": ({"words": words}, _tags(words))}, {"words": _words(96, 2)}, batch_size=16
    )
    x, y = zip(*[next(batches) for _ in range(8)])  # 4 labelled, 4 unlabelled, in turn
    stacked = (
        {"words": np.concatenate([b["words"] for b in x])},
        {k: np.concatenate([b[k] for b in y]) for k in y[0]},
    )
    data = tf.data.Dataset.from_tensor_slices(stacked).batch(16)

    def build():
        model = _model(dropout=0.0)
        model.compile(optimizer=keras.optimizers.Adam(1e-2), jit_compile=False)
        return model

    # The means are over the global batch's tokens, however the replicas split it.
    assert_mirrored_fit_matches_one_device(
        build,
        lambda m: m.fit(data, epochs=2, shuffle=False, verbose=0),
        metrics=("loss", "cross_view", "accuracy"),
        weights_rtol=1e-3,
    )
