"""The recipe registry: every family's tasks, their defaults, options and lazy HyperModels."""

import subprocess
import sys

import keras_tuner
import pytest

from keras_adl import recipes
from keras_adl.recipes._spec import Option, Task


def test_every_family_registers_tasks_with_unique_names():
    families = recipes.families()
    assert [f.name for f in families] == list(recipes.FAMILIES)
    names = [task.name for recipe in families for task in recipe.tasks]
    assert len(names) == len(set(names)) == len(recipes.all_tasks())
    # Every task of earlier versions is still there (a family may add tasks in its folder).
    assert set(names) >= {
        "dates",
        "pairs",
        "sort",
        "copy",
        "repeat_copy",
        "associative_recall",
        "priority_sort",
        "translated_digits",
        "cluttered_digits",
        "cluttered_digits_100",
        "digit_strips",
        "digit_strips_glimpses",
        "needle",
        "fortunes",
        "documents",
        "word2vec",
        "pretrain_mlm",
        "pretrain_lm",
        "finetune",
        "pretrain_bilm",
        "cove",
        "fortunes_features",
    }
    for recipe in families:
        assert recipe.description
        for task in recipe.tasks:
            assert task.models and task.description
            assert (
                min(task.epochs, task.batch_size, task.samples, task.tune_epochs, task.tune_samples)
                > 0
            )
            for model in task.models:  # every (task, model) has settings
                assert "learning_rate" in task.preset(model)


def test_find_names_the_choices_in_its_errors():
    recipe, task, model = recipes.find("copy")
    assert recipe.name == "memory" and task.name == "copy" and model == "ntm"
    assert recipes.find("copy", "dnc")[2] == "dnc"
    with pytest.raises(ValueError, match=r"unknown task 'poems'; choose one of \['associative"):
        recipes.find("poems")
    with pytest.raises(
        ValueError,
        match=r"unknown model 'gru' for task 'copy'; choose one of "
        r"\['ntm', 'dnc', 'lstm'\]",
    ):
        recipes.find("copy", "gru")


def test_task_defaults_include_its_options():
    task = Task(
        "t",
        ("m",),
        "d",
        epochs=2,
        batch_size=8,
        samples=10,
        options=(Option("--max-length", "h", int, default=5), Option("--data", "h")),
    )
    assert task.defaults() == {"epochs": 2, "batch_size": 8, "samples": 10, "max_length": 5}
    assert Option("--max-length", "h").dest == "max_length"


def test_build_model_rejects_unknown_overrides():
    with pytest.raises(ValueError, match=r"unknown setting\(s\) \['memory_sise'\]"):
        recipes.recipe_for("copy").build_model("ntm", memory_sise=16)


def test_hypermodels_are_top_level_classes_of_their_family():
    import importlib

    for family, name in (
        ("embeddings", "Word2VecHyperModel"),
        ("sequences", "Seq2SeqHyperModel"),
        ("memory", "MemorySequenceHyperModel"),
        ("vision", "RecurrentAttentionHyperModel"),
        ("documents", "HierarchicalAttentionHyperModel"),
        ("pretraining", "PretrainingHyperModel"),
    ):
        module = importlib.import_module(f"keras_adl.recipes.{family}.hypermodels")
        cls = getattr(module, name)
        assert issubclass(cls, keras_tuner.HyperModel)
        assert cls.__module__ == module.__name__ and cls.__qualname__ == name


def test_importing_the_recipes_loads_no_tensorflow():
    code = (
        "import sys; sys.orig_argv = [sys.executable, '-m', 'keras_adl']; import keras_adl.recipes as r; r.all_tasks(); "
        "print(sorted(m for m in ('tensorflow', 'keras', 'keras_tuner') if m in sys.modules))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120
    )
    assert result.stdout.strip() == "[]", result.stderr[-2000:]


def test_a_distributed_run_builds_its_model_without_xla():
    # XLA fails under MirroredStrategy on logical CPUs: `Run.build` turns it off there, for
    # every recipe's `build_model`, and keeps it on for one device.
    from keras_adl.recipes.sequences.tasks import RECIPES as SEQUENCES
    from keras_adl.training.run import Run
    from tests.mirrored import two_cpus

    mirrored = two_cpus()
    for strategy, jit in ((mirrored, False), ("default", True)):
        run = Run(
            task="sort",
            model="pointer_network",
            epochs=1,
            batch_size=8,
            samples=8,
            out="unused",
            strategy=strategy,
        )
        model = run.build(SEQUENCES["sort"].build_model, "pointer_network")
        assert model.jit_compile is jit


def test_option_checks_name_the_option_and_the_value(tmp_path):
    from keras_adl.recipes import RecipeError

    split = Option("--validation-split", "h", float)
    assert split.check(0.05, "pairs") == 0.05 and split.check(None, "pairs") is None
    with pytest.raises(
        RecipeError,
        match=r"--validation-split must be a fraction in \(0, 1\); "
        "received 1.5",
    ):
        split.check(1.5, "pairs")
    with pytest.raises(RecipeError, match="--max-length must be a positive integer; received 0"):
        Option("--max-length", "h", int).check(0, "pairs")
    with pytest.raises(RecipeError, match="is a directory; task 'pairs' reads a file"):
        Option("--data", "h", "file").check(str(tmp_path), "pairs")
