"""The one place the pretraining family's models are built and compiled: the masked-LM
pretrainer (BERT), the causal LM (GPT) and the classifiers fine-tuned from them, each under a
warm-up + cosine schedule."""

import os

import keras

from keras_adl.models import bert, gpt
from keras_adl.recipes._compile import override
from keras_adl.recipes.pretraining.spec import FAMILY, MAX_PREDICTIONS, SEGMENTS, WARMUP_FRACTION
from keras_adl.training.rundir import MODEL_FILE


def warmup_cosine(learning_rate, total_steps, warmup_fraction=WARMUP_FRACTION):
    """A linear warm-up to ``learning_rate`` over the first ``warmup_fraction`` of the steps,
    then a cosine decay to 0 (Keras' ``CosineDecay``, serializable)."""
    total_steps = max(int(total_steps), 2)
    warmup = max(1, int(total_steps * warmup_fraction))
    return keras.optimizers.schedules.CosineDecay(
        0.0,
        decay_steps=max(total_steps - warmup, 1),
        warmup_target=learning_rate,
        warmup_steps=warmup,
    )


def build_model(
    task,
    model_name,
    vocab_size,
    num_classes=None,
    total_steps=1000,
    pretrained=None,
    jit_compile=True,
    segments=SEGMENTS,
    **overrides,
):
    """The compiled model of ``task`` and ``model_name`` from their preset (`spec`): a
    `bert_pretrainer`, a `gpt_lm`, a `bert_classifier` or a `gpt_classifier` (`BUILDERS`);
    the classifiers are built on ``pretrained`` when given (a BERT encoder, `encoder_of`, or a
    `gpt_lm`). The masked-LM pretrainer has the next-sentence head for ``segments="pairs"``
    (`keras_adl.recipes.pretraining.data.mlm_dataset`). ``overrides`` replace preset values
    (only existing ones); the schedule spans ``total_steps``."""
    settings = override(FAMILY.task(task).preset(model_name), overrides)
    rate = warmup_cosine(
        settings.pop("learning_rate"), total_steps, settings.pop("warmup_fraction")
    )
    optimizer = keras.optimizers.Adam(rate, global_clipnorm=1.0)
    build = BUILDERS[task, model_name]
    return build(settings, vocab_size, num_classes, pretrained, segments, optimizer, jit_compile)


def masked_lm(settings, vocab_size, num_classes, encoder, segments, optimizer, jit_compile):
    """A compiled `bert_pretrainer` on ``encoder`` (a new `bert_encoder` if ``None``)."""
    if encoder is None:
        encoder = bert.bert_encoder(vocab_size, **settings)
    model = bert.bert_pretrainer(
        encoder, max_predictions=MAX_PREDICTIONS, next_sentence=segments == "pairs"
    )
    return bert.compile_pretrainer(model, optimizer=optimizer, jit_compile=jit_compile)


def causal_lm(settings, vocab_size, num_classes, lm, segments, optimizer, jit_compile):
    """A compiled `gpt_lm` (``lm``, or a new one if ``None``)."""
    lm = lm if lm is not None else gpt.gpt_lm(vocab_size, **settings)
    return gpt.compile_lm(lm, optimizer=optimizer, jit_compile=jit_compile)


def bert_classifier(settings, vocab_size, num_classes, encoder, segments, optimizer, jit_compile):
    """A compiled `bert_classifier` pooling ``encoder``'s states (a new encoder if ``None``)."""
    pooling = settings.pop("pooling", "cls")
    if encoder is None:
        encoder = bert.bert_encoder(vocab_size, **settings)
    model = bert.bert_classifier(encoder, num_classes, dropout=settings["dropout"], pooling=pooling)
    model.compile(
        optimizer=optimizer,
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=["accuracy"],
        jit_compile=jit_compile,
    )
    return model


def gpt_classifier(settings, vocab_size, num_classes, lm, segments, optimizer, jit_compile):
    """A compiled `gpt_classifier` on ``lm`` (a new `gpt_lm` if ``None``), with the auxiliary
    LM output when ``lm_loss_weight`` > 0."""
    lm_loss_weight = settings.pop("lm_loss_weight", 0.0)
    lm = lm if lm is not None else gpt.gpt_lm(vocab_size, **settings)
    model = gpt.gpt_classifier(
        lm, num_classes, dropout=settings["dropout"], lm_loss=lm_loss_weight > 0
    )
    return gpt.compile_classifier(
        model, lm_loss_weight, optimizer=optimizer, jit_compile=jit_compile
    )


# The builder of each (task, model).
BUILDERS = {
    ("pretrain_mlm", "bert"): masked_lm,
    ("pretrain_lm", "gpt"): causal_lm,
    ("finetune", "bert"): bert_classifier,
    ("finetune", "gpt"): gpt_classifier,
}


def _whole(model):
    return model


# The part of a pretraining run's model that fine-tuning starts from: the BERT encoder of the
# masked-LM pretrainer, the whole causal LM.
PRETRAINED_PARTS = {"bert": bert.encoder_of, "gpt": _whole}


def load_pretrained(init, model_name):
    """The pretrained part of an ``--init`` run's model (`PRETRAINED_PARTS`)."""
    # Weights only: fine-tuning compiles its own optimizer, so the run's is not restored.
    source = keras.saving.load_model(os.path.join(init, MODEL_FILE), compile=False)
    return PRETRAINED_PARTS[model_name](source)
