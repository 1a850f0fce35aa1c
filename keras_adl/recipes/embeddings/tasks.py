"""The embeddings family's task: `Word2VecTask`, word vectors from a corpus."""

import collections

from keras_adl.recipes._compile import override
from keras_adl.recipes._recipe import TaskRecipe
from keras_adl.recipes._tuning import search
from keras_adl.recipes.embeddings import data, spec
from keras_adl.recipes.embeddings.build import build_model, learning_rate_scale
from keras_adl.recipes.embeddings.evaluate import evaluate
from keras_adl.recipes.embeddings.serving import export_word_vectors, predict
from keras_adl.training.fit import fit
from keras_adl.training.rundir import write_task_file

# What `Word2VecTask.data` hands to the other hooks.
Word2VecData = collections.namedtuple("Word2VecData", "stream vocabulary settings steps")

# The command line's settings (``--dim``, …): given, they replace the preset's.
SETTING_OPTIONS = ("dim", "window", "negatives", "subsample", "optimizer")


class Word2VecTask(TaskRecipe):
    """word2vec (skip-gram or CBOW with negative sampling) on a text corpus; the model's
    vectors are scored on word analogies and similarities, and served with their neighbours."""

    def corpus(self, source, samples, min_count=spec.MIN_COUNT, encode=True):
        """``(stream, vocabulary, counted)`` of the corpus ``source`` (``--data``; ``None``:
        the installed GCIDE), its first ``samples`` documents, streamed from disk
        (`data.corpus`)."""
        return data.corpus(source, samples, min_count, encode)

    def settings(self, model_name, options=None):
        """``model_name``'s preset with the command line's ``--dim/--window/--negatives/
        --subsample`` and ``--optimizer`` (with that optimizer's learning rate)."""
        chosen = {k: (options or {}).get(k) for k in SETTING_OPTIONS}
        settings = override(self.spec.preset(model_name), {k: v for k, v in chosen.items() if v})
        if chosen.get("optimizer"):
            settings["learning_rate"] = spec.LEARNING_RATES[chosen["optimizer"]]
        return settings

    def build_model(self, model_name, vocab_size, jit_compile=True, **kwargs):
        """The compiled model ``keras-adl train word2vec --model MODEL`` trains
        (`keras_adl.recipes.embeddings.build.build_model`: ``batch_size``, ``total_steps`` and
        settings replacing the preset's)."""
        preset = self.spec.preset(model_name)
        return build_model(preset, vocab_size, spec.CBOW[model_name], jit_compile, **kwargs)

    def steps_per_epoch(self, model_name, vocabulary, settings, batch_size):
        """The steps of about one pass over the corpus (`data.steps_per_epoch`)."""
        return data.steps_per_epoch(vocabulary, settings, batch_size, spec.CBOW[model_name])

    def dataset(self, model_name, stream, vocabulary, settings, batch_size, seed=0):
        """The model's endless batches of the corpus ``stream`` (`data.dataset`)."""
        cbow = spec.CBOW[model_name]
        return data.dataset(stream, vocabulary, settings, batch_size, cbow, seed)

    def data(self, run):
        stream, vocabulary, counted = self.corpus(
            run.options.get("data"), run.samples, run.options["min_count"]
        )
        settings = self.settings(run.model, run.options)
        data.write_vocabulary(vocabulary, run.out)
        steps = self.steps_per_epoch(run.model, vocabulary, settings, run.batch_size)
        run.record.update(
            settings=settings,
            data=run.options.get("data") or "gcide",
            documents=counted.documents,
            corpus_words=counted.words,
            words=int(vocabulary.counts.sum()),
            vocabulary=len(vocabulary.words),
        )
        return Word2VecData(stream, vocabulary, settings, steps)

    def build(self, run, word2vec_data):
        return run.build(
            self.build_model,
            run.model,
            word2vec_data.vocabulary.size,
            batch_size=run.batch_size,
            total_steps=word2vec_data.steps * run.epochs,
            **word2vec_data.settings,
        )

    def fit(self, run, model, word2vec_data):
        stream, vocabulary, settings, steps = word2vec_data
        dataset = self.dataset(run.model, stream, vocabulary, settings, run.batch_size)
        # --learning-rate is SGD's per-example rate (word2vec.c's alpha), Adam's rate otherwise
        scale = learning_rate_scale(settings, run.batch_size)
        return fit(
            run, model, dataset, steps_per_epoch=steps, learning_rate_scale=scale, shuffle=False
        )

    def evaluate(self, run, model, word2vec_data):
        return evaluate(model, word2vec_data.vocabulary, run.out)

    def hypermodel(self, model_name, stream, vocabulary, epochs):
        """The `Word2VecHyperModel` searching ``model_name`` on the corpus ``stream``."""
        from keras_adl.recipes.embeddings.hypermodels import Word2VecHyperModel

        return Word2VecHyperModel(model_name, stream, vocabulary, epochs=epochs)

    def tune(self, model_name, trials, epochs, samples, out, options):
        """Random search over `Word2VecHyperModel` on the WordSim-353 Spearman correlation."""
        stream, vocabulary, _ = self.corpus(options.get("data"), samples, options["min_count"])
        return search(
            self.hypermodel(model_name, stream, vocabulary, epochs),
            ("wordsim353_spearman", "max"),
            trials,
            out,
            f"{self.name}_{model_name}",
            epochs=epochs,
        )

    def export(self, run_dir, record, model, export_dir, beam_width=1):
        """A SavedModel with the signature ``words [None]`` string (`export_word_vectors`)."""
        export_word_vectors(model, export_dir, data.read_vocabulary(run_dir).words)
        write_task_file(export_dir, task=record["task"], model=record["model"])

    def predict(self, export_dir, inputs, info):
        predict(export_dir, inputs)


RECIPES = {"word2vec": Word2VecTask(spec.WORD2VEC_TASK)}
