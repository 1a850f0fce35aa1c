"""Cross-view training (Clark et al. 2018): a BiLSTM tagger whose loss alternates a supervised
loss on labelled batches with the auxiliaries' agreement with the primary on unlabelled ones."""

from collections.abc import Mapping, Sequence

import keras
from keras import ops

from keras_adl.layers.character_cnn import CharacterCNN
from keras_adl.layers.prediction_module import PredictionModule
from keras_adl.layers.restricted_views import RestrictedViews
from keras_adl.ops.cross_view import VIEW_NAMES, cross_view_kl
from keras_adl.utils import check_positive_int, check_rate, replica_position, replica_sum

_WHERE = "cross_view_tagger: "
#: The key of the batch marker in the targets ``y`` (1 for a labelled batch, 0 unlabelled).
LABELLED = "labelled"
#: Joins a task's name and a view's in the output keys: ``"dates/future"``.
SEPARATOR = "/"


def _per_replica(loss):
    """``loss`` divided by the replica count of a ``tf.distribute`` strategy (1 elsewhere),
    because replicas' gradients are summed."""
    _, replicas = replica_position()
    return loss if replicas == 1 else loss / replicas


def _global_mean(local_sum, local_count):
    """This replica's share of a mean over the global batch: ``local_sum / global count``
    (the replicas' shares add up to the mean; 0 when no token counts anywhere)."""
    return local_sum / ops.maximum(replica_sum(local_count), 1.0)


@keras.saving.register_keras_serializable(package="keras_adl")
class CrossViewTagger(keras.Model):
    """A functional tagger trained by cross-view training; built by `cross_view_tagger`.

    Its outputs are a dict of logits ``[B, T, C_task]``: ``outputs[task]`` from the primary
    module of each task and ``outputs[f"{task}/{view}"]`` from its auxiliary modules. The
    targets ``y`` are a dict: ``y[task]`` the integer tags ``[B, T]`` (0 where a token has no
    label: padding, or a task this batch does not label) and ``y["labelled"]`` the batch's
    marker ``[B]``, 1 on a labelled batch and 0 on an unlabelled one. `compute_loss` is

        L = m · Σ_task CE_task  +  (1 − m) · Σ_task Σ_k KL(p_task ‖ p_task^k)

    with ``m`` the mean of the marker (every example of a batch carries the same marker, so
    ``m`` is 0 or 1), ``CE`` the cross-entropy of the primary module averaged over the tokens
    with a label, and the KL term `keras_adl.ops.cross_view_kl` over the real tokens, the
    primary's prediction held fixed (Clark et al. 2018, eqs. 1 and 2). A labelled batch
    trains the encoder and the primary modules; an unlabelled batch trains the auxiliary
    modules and, through them, the encoder, never the primary modules. Because the marker is
    data, not Python control flow, one compiled step serves both kinds of batch on every
    backend, and every replica of a ``tf.distribute`` step sees the same kind of batch as long
    as the global batch is of one kind (the stream of `keras_adl.data.cross_view_batches` is).
    Under a strategy the means are over the global batch's tokens (each replica divides its sum
    by the count summed over replicas), so a distributed step takes the one-device gradient.

    ``y`` may also be a tensor of tags (one task): a labelled batch. Evaluation's ``loss`` is
    the supervised term. `compute_metrics` reports each primary module's token accuracy over
    the labelled tokens (``accuracy``, or ``<task>_accuracy`` with several tasks) and, in
    training, the ``cross_view`` term. Compile with an optimizer only.

    Args:
        *args: the arguments of a functional ``keras.Model`` (inputs and outputs).
        **kwargs: the keyword arguments of a functional ``keras.Model``.

    Example:

    >>> model = cross_view_tagger(20, 4, word_dim=8, units=8, hidden_units=8, views=("forward",))
    >>> isinstance(model, CrossViewTagger), model.task_names, model.views
    (True, ['tags'], {'tags': ['tags/forward']})
    >>> x = {"words": ops.array([[3, 4, 5, 0]])}
    >>> y = {"tags": ops.array([[1, 2, 3, 0]]), "labelled": ops.array([1])}
    >>> tuple(model.compute_loss(x, y, model(x)).shape)
    ()
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        keys = list(self._outputs_struct) if isinstance(self._outputs_struct, dict) else []
        self.task_names = [key for key in keys if SEPARATOR not in key]
        self.views = {
            task: [key for key in keys if key.startswith(task + SEPARATOR)]
            for task in self.task_names
        }
        if not self.task_names:
            raise ValueError(
                "CrossViewTagger: the outputs must be a dict of logits keyed by task and "
                f"'task/view' (see cross_view_tagger); received {keys or self._outputs_struct!r}."
            )
        self.cross_view_tracker = keras.metrics.Mean(name="cross_view")
        self.accuracy_trackers = {
            task: keras.metrics.SparseCategoricalAccuracy(
                name="accuracy" if len(self.task_names) == 1 else f"{task}_accuracy"
            )
            for task in self.task_names
        }

    # -- targets -------------------------------------------------------------------------------

    def _targets(self, y, method):
        """``(tags by task, marker m)`` from ``y``: a dict, or the tags of a single task."""
        if y is None:
            raise ValueError(
                f"CrossViewTagger: `{method}` needs targets `y`: a dict of integer tags [B, T] "
                f"per task {self.task_names} and the batch marker {LABELLED!r} [B]; received "
                "none."
            )
        if not isinstance(y, Mapping):
            if len(self.task_names) != 1:
                raise ValueError(
                    f"CrossViewTagger: with several tasks {self.task_names}, `y` must be a "
                    f"dict of tags per task; received a {type(y).__name__}."
                )
            return {self.task_names[0]: y}, 1.0
        unknown = sorted(set(y) - set(self.task_names) - {LABELLED})
        if unknown:
            raise ValueError(
                f"CrossViewTagger: `y` has keys {unknown} that are not tasks of this model "
                f"({self.task_names}) nor {LABELLED!r}."
            )
        tags = {task: y[task] for task in self.task_names if task in y}
        marker = 1.0
        if LABELLED in y:
            marker = ops.mean(ops.cast(y[LABELLED], "float32"))
        return tags, marker

    @staticmethod
    def _token_mask(x):
        """``[B, T]`` real tokens: the word ids that are not padding."""
        words = x["words"] if isinstance(x, Mapping) else x
        return ops.not_equal(words, 0)

    def _labelled_weights(self, tags, x):
        """``[B, T]`` float32: 1 where a real token has a label (tag id > 0)."""
        labelled = ops.logical_and(ops.greater(tags, 0), self._token_mask(x))
        return ops.cast(labelled, "float32")

    # -- the two losses ------------------------------------------------------------------------

    def supervised_loss(self, x, tags, y_pred):
        """``Σ_task CE_task``: each primary module's cross-entropy averaged over the tokens
        that have a label (0 for a task with none in the batch); float32. Under a
        ``tf.distribute`` strategy, this replica's share of the global batch's mean."""
        total = 0.0
        for task, task_tags in tags.items():
            task_tags = ops.cast(task_tags, "int32")
            weights = self._labelled_weights(task_tags, x)
            entropy = keras.losses.sparse_categorical_crossentropy(
                task_tags, ops.cast(y_pred[task], "float32"), from_logits=True
            )
            total = total + _global_mean(ops.sum(entropy * weights), ops.sum(weights))
        return total

    def cross_view_loss(self, x, y_pred):
        """``Σ_task Σ_k KL(p_task ‖ p_task^k)`` over the real tokens, the primary fixed
        (`keras_adl.ops.cross_view_kl`); 0 for a model without auxiliaries. Under a
        ``tf.distribute`` strategy, this replica's share of the global batch's mean."""
        mask = self._token_mask(x)
        count = ops.sum(ops.cast(mask, "float32"))
        total = 0.0
        for task in self.task_names:
            if self.views[task]:
                primary = ops.softmax(ops.cast(y_pred[task], "float32"), axis=-1)
                auxiliaries = [y_pred[key] for key in self.views[task]]
                local_sum = cross_view_kl(primary, auxiliaries, mask) * count
                total = total + _global_mean(local_sum, count)
        return total

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        """The alternation's loss in training (plus any weight regularizers), the supervised
        loss in evaluation. Under a ``tf.distribute`` strategy this replica's share: the means'
        shares of the global batch, the regularizers divided by the replica count."""
        tags, marker = self._targets(y, "fit" if training else "evaluate")
        if sample_weight is not None:
            raise ValueError(
                "CrossViewTagger: `sample_weight` is not supported; give the tokens that should "
                "not count the tag 0 (no label) instead."
            )
        # Read by `compute_metrics`, which every backend's steps call after this in the same
        # (traced) step; its signature has no `training`.
        self._evaluating = not training
        supervised = self.supervised_loss(x, tags, y_pred)
        if not training:
            return supervised
        loss = marker * supervised + (1.0 - marker) * self.cross_view_loss(x, y_pred)
        for extra in self.losses:  # weight regularizers, `add_loss`: added on every replica
            loss = loss + _per_replica(ops.sum(ops.cast(extra, "float32")))
        return loss

    def compute_metrics(self, x, y, y_pred, sample_weight=None):
        """Each primary's token accuracy over labelled tokens; in training also the
        ``cross_view`` term (recomputed: JAX's gradient trace keeps its values)."""
        tags, _ = self._targets(y, "evaluate")
        for task, task_tags in tags.items():
            task_tags = ops.cast(task_tags, "int32")
            self.accuracy_trackers[task].update_state(
                task_tags, y_pred[task], self._labelled_weights(task_tags, x)
            )
        if not getattr(self, "_evaluating", False):
            # The mean over tokens, as the loss: this replica adds its local sum (its share
            # times the global count) and its local count of tokens.
            local = ops.sum(ops.cast(self._token_mask(x), "float32"))
            local_sum = self.cross_view_loss(x, y_pred) * ops.maximum(replica_sum(local), 1.0)
            self.cross_view_tracker.update_state(
                local_sum / ops.maximum(local, 1.0), sample_weight=local
            )
            return self.get_metrics_result()
        return {
            name: value for name, value in self.get_metrics_result().items() if name != "cross_view"
        }


def _check_tasks(tasks):
    """``tasks`` as ``{name: num_classes}``; an int is one task named ``"tags"``."""
    if isinstance(tasks, int) and not isinstance(tasks, bool):
        tasks = {"tags": tasks}
    if not isinstance(tasks, Mapping) or not tasks:
        raise ValueError(
            f"{_WHERE}`tasks` must be a number of classes or a non-empty dict "
            f"{{task name: number of classes}}; received {tasks!r}."
        )
    checked = {}
    for name, num_classes in tasks.items():
        if not isinstance(name, str) or not name.isidentifier() or name == LABELLED:
            raise ValueError(
                f"{_WHERE}task names must be Python identifiers other than {LABELLED!r}; "
                f"received {name!r}."
            )
        checked[name] = check_positive_int(f"tasks[{name!r}]", num_classes, where=_WHERE)
    return checked


def _check_views(views):
    """``views`` as a tuple of names from `VIEW_NAMES`, without repeats (may be empty)."""
    if isinstance(views, str):
        views = (views,)
    views = tuple(views)
    unknown = [view for view in views if view not in VIEW_NAMES]
    if unknown or len(set(views)) != len(views):
        raise ValueError(
            f"{_WHERE}`views` must be distinct names from {VIEW_NAMES}; received {views!r}."
        )
    return views


def _encoder_inputs(vocabulary_size, word_dim, num_characters, character_filters, dropout):
    """``(inputs dict, token vectors [B, T, E])``: word embeddings, with a character CNN's
    token vectors concatenated when ``num_characters`` is set."""
    words = keras.Input(shape=(None,), dtype="int32", name="words")
    inputs = {"words": words}
    vectors = keras.layers.Embedding(
        vocabulary_size, word_dim, mask_zero=True, name="word_embedding"
    )(words)
    if num_characters:
        characters = keras.Input(shape=(None, None), dtype="int32", name="characters")
        inputs["characters"] = characters
        character_vectors = CharacterCNN(
            num_characters=num_characters,
            character_dim=16,
            filters=character_filters,
            num_highway=1,
            output_dim=word_dim,
            name="character_cnn",
        )(characters)
        vectors = keras.layers.Concatenate(name="token_vectors")([vectors, character_vectors])
    return inputs, keras.layers.Dropout(dropout, name="token_dropout")(vectors)


def _prediction_modules(first, second, tasks, views, hidden_units, dropout):
    """The output dict: per task, the primary module on the top layer ``second`` and one
    auxiliary module per view of the first layer ``first``."""
    restricted = RestrictedViews(name="restricted_views")(first) if views else {}
    outputs = {}
    for task, num_classes in tasks.items():
        outputs[task] = PredictionModule(
            num_classes, hidden_units, dropout=dropout, name=f"{task}_primary"
        )(second)
        for view in views:
            outputs[task + SEPARATOR + view] = PredictionModule(
                num_classes, hidden_units, dropout=dropout, name=f"{task}_{view}"
            )(restricted[view])
    return outputs


def cross_view_tagger(
    vocabulary_size: int,
    tasks: int | Mapping[str, int],
    word_dim: int = 64,
    units: int = 64,
    hidden_units: int = 64,
    views: Sequence[str] = VIEW_NAMES,
    dropout: float = 0.3,
    num_characters: int | None = None,
    character_filters: Sequence[Sequence[int]] = ((2, 32), (3, 32)),
    name: str = "cross_view_tagger",
) -> CrossViewTagger:
    """A sequence tagger trained by cross-view training (CVT; Clark et al. 2018, section 3.1).

    The shared encoder embeds each word (``Embedding(mask_zero=True)``; with
    ``num_characters``, concatenated with a `keras_adl.layers.CharacterCNN` of its characters),
    then runs a 2-layer bidirectional LSTM of ``units`` per direction. For each task:

    - the **primary** `keras_adl.layers.PredictionModule` reads the top layer
      ``[h→²_t; h←²_t]`` (the whole sentence);
    - one **auxiliary** `PredictionModule` per name in ``views`` reads a restricted view of
      the *first* layer (`keras_adl.layers.RestrictedViews`): ``forward`` ``h→¹_t``,
      ``backward`` ``h←¹_t``, ``future`` ``h→¹_{t−1}``, ``past`` ``h←¹_{t+1}``.

    Training (`CrossViewTagger.compute_loss`) alternates labelled batches (each primary's
    cross-entropy on its task's tags) and unlabelled batches (each auxiliary's KL divergence
    from its task's primary, the primary held fixed), told apart by the marker
    ``y["labelled"]`` of each batch; `keras_adl.data.cross_view_batches` makes such a stream.
    With ``views=()`` the same network trains on the labelled batches alone (the supervised
    baseline); its unlabelled batches then change nothing.

    Args:
        vocabulary_size: word ids ``0 … vocabulary_size − 1``, 0 the padding.
        tasks: ``{task name: number of classes}`` (tag 0 of every task means "no label"); an
            int is one task named ``"tags"``.
        word_dim: the size of a word embedding (and of a character CNN's token vector).
        units: the LSTM state size of each direction of each layer.
        hidden_units: the hidden layer of every prediction module.
        views: the auxiliary modules of each task, names from
            `keras_adl.ops.cross_view.VIEW_NAMES`.
        dropout: on the token vectors, between the LSTM layers, and in the modules.
        num_characters: the size of the character table (e.g.
            `keras_adl.text.characters.NUM_CHARACTERS`); ``None`` for words only.
        character_filters: the character CNN's ``(width, count)`` filters.
        name: the model's name.

    Returns:
        A `CrossViewTagger` from ``{"words": int [B, T]}`` (and ``"characters": int
        [B, T, C]`` with ``num_characters``) to a dict of logits: ``outputs[task]`` and
        ``outputs[f"{task}/{view}"]``, each ``[B, T, classes]``. Compile it with an optimizer.

    Example:

    >>> model = cross_view_tagger(50, {"dates": 7}, word_dim=8, units=8, hidden_units=8)
    >>> sorted(model.output)
    ['dates', 'dates/backward', 'dates/forward', 'dates/future', 'dates/past']
    >>> tuple(model.output["dates/past"].shape)
    (None, None, 7)

    References:
        Clark, Luong, Manning, Le (2018). Semi-Supervised Sequence Modeling with Cross-View
        Training. EMNLP. arXiv:1809.08370.
    """
    vocabulary_size = check_positive_int("vocabulary_size", vocabulary_size, where=_WHERE)
    tasks = _check_tasks(tasks)
    views = _check_views(views)
    dropout = check_rate("dropout", dropout, where=_WHERE)
    if num_characters is not None:
        num_characters = check_positive_int("num_characters", num_characters, where=_WHERE)
    inputs, vectors = _encoder_inputs(
        vocabulary_size, word_dim, num_characters, character_filters, dropout
    )
    first = keras.layers.Bidirectional(
        keras.layers.LSTM(units, return_sequences=True), name="bilstm_1"
    )(vectors)
    second = keras.layers.Bidirectional(
        keras.layers.LSTM(units, return_sequences=True), name="bilstm_2"
    )(keras.layers.Dropout(dropout, name="bilstm_dropout")(first))
    outputs = _prediction_modules(first, second, tasks, views, hidden_units, dropout)
    return CrossViewTagger(inputs, outputs, name=name)
