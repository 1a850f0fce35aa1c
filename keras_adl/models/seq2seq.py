"""RNN encoder-decoder models with and without attention, and their decoding functions.

`attention_seq2seq` is the RNNsearch model of Bahdanau et al. (2014): a bidirectional RNN
encoder, and a decoder whose input at step ``s`` is ``[e(y_{s-1}); c_s]`` with ``c_s`` from
attention over all encoder states. `encoder_decoder` is the classic baseline without attention
(Cho et al. 2014): the decoder sees the same fixed summary ``c = [h→_T; h←_1]`` at every step.
Both return a teacher-forced training model with named layers; `greedy_decode` and
`beam_search` run inference from those layers as traceable functions (bounded TensorFlow
loops, no Python-side state), so they export to a SavedModel.
"""

import keras
from keras import ops

from keras_adl.conventions import PAD
from keras_adl.layers.attention_rnn_decoder import AttentionRNNDecoder
from keras_adl.models._decoding import beam_loop, greedy_loop, tile_beams
from keras_adl.type_aliases import Tensor
from keras_adl.utils import check_choice, check_positive_int


def _encoder_decoder(
    source_vocab_size, target_vocab_size, embedding_dim, units, attention, cell, name, use_attention
):
    where = f"{name}: "
    for arg, value in (
        ("source_vocab_size", source_vocab_size),
        ("target_vocab_size", target_vocab_size),
        ("embedding_dim", embedding_dim),
        ("units", units),
    ):
        check_positive_int(arg, value, where=where)
    check_choice("cell", cell, ("gru", "lstm"), where=where)
    check_choice("attention", attention, ("bahdanau", "luong"), where=where)
    rnn = keras.layers.GRU if cell == "gru" else keras.layers.LSTM

    source = keras.Input((None,), dtype="int32", name="source")
    decoder_input = keras.Input((None,), dtype="int32", name="decoder_input")
    embedded = keras.layers.Embedding(
        source_vocab_size, embedding_dim, mask_zero=True, name="source_embedding"
    )(source)
    encoder = keras.layers.Bidirectional(
        rnn(units, return_sequences=True, return_state=True), name="encoder"
    )
    encoded = encoder(embedded)
    states = encoded[1:]  # GRU: [h→, h←]; LSTM: [h→, c→, h←, c←]
    backward = states[len(states) // 2 :]
    # s_0 = tanh(W_s h←_1) (Bahdanau et al. 2014, A.2.2); for an LSTM also the cell state.
    initial_state = [
        keras.layers.Dense(units, activation="tanh", name=f"bridge_{i}")(s)
        for i, s in enumerate(backward)
    ]
    if use_attention:
        memory = encoded[0]  # all encoder states [B, T, 2U]
    else:
        # One memory slot holding [h→_T; h←_1]: attention over it is always 1, so the decoder
        # sees the same fixed context at every step.
        summary = keras.layers.Concatenate(name="summary")([states[0], backward[0]])
        memory = keras.layers.Reshape((1, 2 * units), name="fixed_context")(summary)
    target_embedded = keras.layers.Embedding(
        target_vocab_size, embedding_dim, mask_zero=True, name="target_embedding"
    )(decoder_input)
    outputs = AttentionRNNDecoder(units, attention=attention, cell=cell, name="decoder")(
        target_embedded, memory, initial_state=initial_state
    )
    logits = keras.layers.Dense(target_vocab_size, name="logits")(outputs)
    return keras.Model([source, decoder_input], logits, name=name)


def attention_seq2seq(
    source_vocab_size: int,
    target_vocab_size: int,
    embedding_dim: int = 64,
    units: int = 128,
    attention: str = "bahdanau",
    cell: str = "gru",
    name: str = "attention_seq2seq",
) -> keras.Model:
    """The RNN encoder-decoder with attention (Bahdanau et al. 2014), teacher-forced.

    Source and target ids use 0 for padding (masked throughout); decoding assumes ``<s>=1`` and
    ``</s>=2`` (`keras_adl.conventions`).

    Args:
        source_vocab_size: the source vocabulary size (including the specials).
        target_vocab_size: the target vocabulary size (including the specials).
        embedding_dim: size of both embeddings.
        units: size of each encoder direction and of the decoder state.
        attention: ``"bahdanau"`` or ``"luong"`` (``"general"`` score).
        cell: ``"gru"`` or ``"lstm"``.
        name: model name.

    Returns:
        A ``keras.Model`` mapping ``{"source": [B, T], "decoder_input": [B, S]}`` (the target
        shifted right behind ``<s>``) to logits ``[B, S, target_vocab_size]``. Its layers are
        named ``source_embedding``, ``encoder``, ``bridge_*``, ``target_embedding``,
        ``decoder`` and ``logits``; `greedy_decode` and `beam_search` use them.

    Example:

    >>> model = attention_seq2seq(40, 15, embedding_dim=8, units=16)
    >>> tuple(model.output.shape)
    (None, None, 15)

    References:
        Bahdanau, Cho, Bengio (2014). Neural Machine Translation by Jointly Learning to Align
        and Translate. arXiv:1409.0473.
    """
    return _encoder_decoder(
        source_vocab_size, target_vocab_size, embedding_dim, units, attention, cell, name, True
    )


def encoder_decoder(
    source_vocab_size: int,
    target_vocab_size: int,
    embedding_dim: int = 64,
    units: int = 128,
    cell: str = "gru",
    name: str = "encoder_decoder",
) -> keras.Model:
    """The RNN encoder-decoder without attention (Cho et al. 2014), the classic baseline.

    Identical to `attention_seq2seq` except that the memory is one slot holding the encoder
    summary ``[h→_T; h←_1]``, so the context is the same at every decoder step. It exists to
    show what attention buys on long inputs.

    Args:
        source_vocab_size: as in `attention_seq2seq`.
        target_vocab_size: as in `attention_seq2seq`.
        embedding_dim: as in `attention_seq2seq`.
        units: as in `attention_seq2seq`.
        cell: as in `attention_seq2seq`.
        name: as in `attention_seq2seq`.

    Returns:
        A ``keras.Model`` with the same inputs, outputs and layer names as `attention_seq2seq`.

    Example:

    >>> model = encoder_decoder(40, 15, embedding_dim=8, units=16)
    >>> tuple(model.output.shape)
    (None, None, 15)

    References:
        Cho et al. (2014). Learning Phrase Representations using RNN Encoder-Decoder for
        Statistical Machine Translation. arXiv:1406.1078.
    """
    return _encoder_decoder(
        source_vocab_size, target_vocab_size, embedding_dim, units, "bahdanau", cell, name, False
    )


def _encode(model, source):
    """Memory, memory mask and initial decoder states of ``model`` for ``source`` ids."""
    source_mask = ops.not_equal(source, PAD)
    embedded = model.get_layer("source_embedding")(source)
    encoded = model.get_layer("encoder")(embedded, mask=source_mask)
    states = encoded[1:]
    backward = states[len(states) // 2 :]
    initial = [model.get_layer(f"bridge_{i}")(s) for i, s in enumerate(backward)]
    try:
        model.get_layer("fixed_context")
    except ValueError:
        return encoded[0], source_mask, initial
    summary = ops.concatenate([states[0], backward[0]], axis=-1)
    return ops.expand_dims(summary, 1), None, initial


def greedy_decode(
    model: keras.Model, source: Tensor, max_length: int
) -> tuple[Tensor, Tensor, Tensor]:
    """Greedy decoding with a model from `attention_seq2seq` or `encoder_decoder`.

    A bounded loop over ``max_length`` steps (no Python-side state), so it traces into a
    ``tf.function`` / SavedModel and compiles with XLA. After ``</s>`` a sequence emits padding.

    Args:
        model: the training model (or one reloaded from ``.keras``).
        source: ``[B, T]`` int source ids, 0-padded.
        max_length: number of target steps to produce (including ``</s>``).

    Returns:
        ``(tokens [B, max_length] int32, attention [B, max_length, T], log_likelihood [B])``;
        the log-likelihood sums the chosen tokens' log-probabilities up to and including
        ``</s>``.

    Example:

    >>> model = attention_seq2seq(40, 15, embedding_dim=8, units=16)
    >>> tokens, attention, log_likelihood = greedy_decode(model, ops.ones((2, 7), "int32"), 5)
    >>> tuple(tokens.shape), tuple(attention.shape), tuple(log_likelihood.shape)
    ((2, 5), (2, 5, 7), (2,))
    """
    source = ops.convert_to_tensor(source, "int32")
    memory, memory_mask, states = _encode(model, source)
    decoder = model.get_layer("decoder")
    embedding = model.get_layer("target_embedding")
    project = model.get_layer("logits")
    keys = decoder.precompute_keys(memory)

    def step(t, token, states):
        output, weights, states = decoder.step(
            embedding(token), list(states), memory, keys, memory_mask
        )
        return project(output), weights, tuple(states)

    return greedy_loop(step, tuple(states), ops.shape(source)[0], max_length, ops.shape(memory)[1])


def beam_search(
    model: keras.Model,
    source: Tensor,
    max_length: int,
    beam_width: int = 4,
    length_penalty: float = 0.0,
) -> tuple[Tensor, Tensor, Tensor]:
    """Beam search with a model from `attention_seq2seq` or `encoder_decoder`.

    Keeps the ``beam_width`` best partial hypotheses by summed log-probability; a finished
    hypothesis (after ``</s>``) only extends with padding at no cost. The final choice divides
    each hypothesis' score by the GNMT length penalty ``((5 + |y|) / 6)^α`` with
    ``α = length_penalty`` (0 = plain log-likelihood). A bounded loop with no Python-side
    state: it traces into a ``tf.function`` / SavedModel. ``beam_width=1`` is greedy decoding.

    Args:
        model: the training model (or one reloaded from ``.keras``).
        source: ``[B, T]`` int source ids, 0-padded.
        max_length: number of target steps (including ``</s>``).
        beam_width: number of hypotheses kept per example.
        length_penalty: ``α`` of the length penalty.

    Returns:
        ``(tokens [B, max_length] int32, attention [B, max_length, T], log_likelihood [B])``
        of the best hypothesis; ``log_likelihood`` is its summed log-probability (without the
        penalty).

    Example:

    >>> model = attention_seq2seq(40, 15, embedding_dim=8, units=16)
    >>> tokens, attention, log_likelihood = beam_search(
    ...     model, ops.ones((2, 7), "int32"), max_length=5, beam_width=3)
    >>> tuple(tokens.shape), tuple(attention.shape), tuple(log_likelihood.shape)
    ((2, 5), (2, 5, 7), (2,))

    References:
        Wu et al. (2016). Google's Neural Machine Translation System, eq. 14. arXiv:1609.08144.
    """
    check_positive_int("beam_width", beam_width, where="beam_search: ")
    source = ops.convert_to_tensor(source, "int32")
    memory, memory_mask, states = _encode(model, source)
    decoder = model.get_layer("decoder")
    embedding = model.get_layer("target_embedding")
    project = model.get_layer("logits")
    # Row b·K + j is beam j of example b.
    memory, memory_mask = tile_beams(memory, beam_width), tile_beams(memory_mask, beam_width)
    states = tuple(tile_beams(s, beam_width) for s in states)
    keys = decoder.precompute_keys(memory)

    def step(t, token, states):
        output, weights, states = decoder.step(
            embedding(token), list(states), memory, keys, memory_mask
        )
        return project(output), weights, tuple(states)

    return beam_loop(
        step,
        states,
        ops.shape(source)[0],
        max_length,
        ops.shape(memory)[1],
        beam_width,
        project.units,
        length_penalty,
    )


def cove_encoder(
    model: keras.Model, with_word_vectors: bool = True, name: str = "cove"
) -> keras.Model:
    """CoVe (McCann et al. 2017): the encoder of a trained attention translation model as a
    contextual-embedding model.

    ``CoVe(w) = MT-LSTM(GloVe(w))``: the bidirectional encoder of `attention_seq2seq` (or
    `encoder_decoder`), read at every source position. With ``with_word_vectors`` the output is
    the CoVe paper's downstream input ``[GloVe(w); CoVe(w)]``, the word vectors being the
    model's source embedding: the recipe's ``cove`` task trains the translator with its source
    embedding initialised from word2vec vectors and frozen, as CoVe keeps GloVe fixed, so
    those are still the word vectors.

    Args:
        model: a trained model from `attention_seq2seq` or `encoder_decoder` (its
            ``source_embedding`` and ``encoder`` layers are shared, not copied).
        with_word_vectors: concatenate the source embedding in front of the encoder states.
        name: the model's name.

    Returns:
        A ``keras.Model`` mapping int ``source [B, T]`` (0 is padding) to ``[B, T, 2U]``
        encoder states, or ``[B, T, E + 2U]`` with ``with_word_vectors``, with the Keras mask
        ``source != 0``.

    Example:

    >>> translator = attention_seq2seq(40, 15, embedding_dim=8, units=16)
    >>> tuple(cove_encoder(translator).output.shape)
    (None, None, 40)

    References:
        McCann, Bradbury, Xiong, Socher (2017). Learned in Translation: Contextualized Word
        Vectors. NeurIPS.
    """
    for layer in ("source_embedding", "encoder"):
        if not any(each.name == layer for each in model.layers):
            raise ValueError(
                f"cove_encoder: `model` must come from `attention_seq2seq` or "
                f"`encoder_decoder` (a layer named {layer!r}); received {model.name!r}."
            )
    source = keras.Input((None,), dtype="int32", name="source")
    vectors = model.get_layer("source_embedding")(source)
    states = model.get_layer("encoder")(vectors)[0]
    if with_word_vectors:
        states = keras.layers.Concatenate(name="glove_cove")([vectors, states])
    return keras.Model(source, states, name=name)
