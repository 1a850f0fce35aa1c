"""The vision family's serving: the image files ``keras-adl predict`` reads, and every image
export answering every batch (`tests.serving_fuzz`)."""

import numpy as np
import pytest

from keras_adl.recipes import RecipeError
from keras_adl.recipes.vision.serving import read_images


def test_predict_images_of_the_wrong_kind_are_refused_in_one_line(tmp_path):
    def write(name, array):
        path = str(tmp_path / name)
        np.save(path, array)
        return path

    good = write("good.npy", np.full((8, 8), 255, "uint8"))
    np.testing.assert_allclose(read_images([good], [8, 8, 1]), 1.0)
    unit = write("unit.npy", np.full((8, 8, 1), 0.5, "float64"))
    np.testing.assert_allclose(read_images([unit], [8, 8, 1]), 0.5)
    nan = np.zeros((8, 8), "float32")
    nan[3, 3] = np.nan
    cases = [
        (write("nan.npy", nan), "holds NaN or infinite values"),
        (write("big.npy", np.full((8, 8), 300.0)), "values from 300 to 300; expected"),
        (write("negative.npy", np.full((8, 8), -1.0)), "expected intensities in"),
        (write("text.npy", np.array([["a"] * 8] * 8)), "holds <U1 values; expected a numeric"),
        (write("rgb.npy", np.zeros((8, 8, 3), "uint8")), "has shape [8, 8, 3]; this model reads"),
        (write("size.npy", np.zeros((9, 8), "uint8")), "has shape [9, 8, 1]; this model reads"),
    ]
    (tmp_path / "not.npy").write_bytes(b"not an array")
    cases.append((str(tmp_path / "not.npy"), "is not a NumPy array file"))
    for path, message in cases:
        with pytest.raises(RecipeError) as caught:
            read_images([good, path], [8, 8, 1])
        assert message in str(caught.value) and path in str(caught.value), str(caught.value)
        assert "\n" not in str(caught.value)


@pytest.mark.parametrize("kind", ["ram", "convnet", "dram", "captioning"])
def test_an_image_export_answers_every_batch(tmp_path, kind):
    import tensorflow as tf

    from keras_adl.models import (
        deep_recurrent_attention_model,
        recurrent_attention_model,
        show_attend_tell,
        whole_image_convnet,
    )
    from keras_adl.recipes.vision import serving
    from keras_adl.training.export import export_serving_fn
    from tests import serving_fuzz

    glimpses = dict(patch_size=4, num_scales=1, glimpse_units=4, location_units=4,
                    glimpse_output_units=8, units=8)  # fmt: skip
    flag = {"invalid_values": (tf.bool, ())}
    if kind == "ram":
        model = recurrent_attention_model((16, 16, 1), 4, num_glimpses=2, **glimpses)
        serve = serving.make_ram_serving_fn(model)
        shapes = {"classes": (tf.int32, ()), "probabilities": (tf.float32, (4,)),
                  "locations": (tf.float32, (2, 2))}  # fmt: skip
    elif kind == "convnet":
        model = whole_image_convnet((16, 16, 1), 4)
        serve = serving.make_classifier_serving_fn(model)
        shapes = {"classes": (tf.int32, ()), "probabilities": (tf.float32, (4,))}
    elif kind == "dram":
        model = deep_recurrent_attention_model(
            (16, 16, 1), 13, num_symbols=2, glimpses_per_symbol=1, context_filters=(4, 4, 4),
            **glimpses,
        )  # fmt: skip
        serve = serving.make_dram_serving_fn(model)
        shapes = {"caption": (tf.string, ()), "tokens": (tf.int32, (2,)),
                  "probabilities": (tf.float32, (2, 13)), "locations": (tf.float32, (2, 2))}  # fmt: skip
    else:
        model = show_attend_tell(13, image_shape=(16, 16, 1), embedding_dim=4, units=8,
                                 encoder_filters=(4,))  # fmt: skip
        serve = serving.make_captioning_serving_fn(model, max_length=3)
        shapes = {"caption": (tf.string, ()), "tokens": (tf.int32, (3,)),
                  "attention": (tf.float32, (3, None)), "log_likelihood": (tf.float32, ())}  # fmt: skip
    export_dir = str(tmp_path / kind)
    export_serving_fn(model, export_dir, serve)
    serving_fuzz.check_arrays_answered(export_dir, (16, 16, 1), {**shapes, **flag})
    # Another image size or channel count is refused: by the spec in memory, and by a check
    # with one clear message in the reloaded signature (which does not check shapes).
    signature = tf.saved_model.load(export_dir).signatures["serving_default"]
    for wrong in ((2, 16, 17, 1), (2, 16, 16, 3), (0, 15, 16, 1)):
        with pytest.raises(TypeError, match="Can not cast TensorSpec"):
            serve(tf.zeros(wrong))
        with pytest.raises(tf.errors.InvalidArgumentError, match=r"must be \[batch, 16, 16, 1\]"):
            signature(images=tf.zeros(wrong))


def test_predict_answers_each_image_file_and_names_the_bad_ones(tmp_path, capsys):
    import tensorflow as tf

    from keras_adl.models import whole_image_convnet
    from keras_adl.recipes.vision import serving
    from keras_adl.training.export import export_serving_fn

    model = whole_image_convnet((16, 16, 1), 4)
    export_dir = str(tmp_path / "export")
    export_serving_fn(model, export_dir, serving.make_classifier_serving_fn(model))
    good, small, nan = (str(tmp_path / f"{n}.npy") for n in ("good", "small", "nan"))
    np.save(good, np.full((16, 16), 0.5, "float32"))
    np.save(small, np.zeros((8, 8), "float32"))
    np.save(nan, np.full((16, 16), np.nan, "float32"))
    paths = [good, str(tmp_path / "missing.png"), small, nan, good]
    with pytest.raises(RecipeError, match=r"3 of 5 input\(s\) got no answer \(input 2, 3, 4: "):
        serving.print_classes(paths, serving.serve(export_dir, paths, (16, 16, 1)))
    rows = [line.split("\t") for line in capsys.readouterr().out.splitlines()]
    assert [r[0] for r in rows] == paths
    expected = int(tf.argmax(model(np.full((1, 16, 16, 1), 0.5, "float32"))[0]))
    assert rows[0][1] == rows[4][1] == str(expected) and rows[0][2].startswith("p=")
    assert rows[1][1] == f"(image file {paths[1]!r} not found)"
    assert rows[2][1].startswith(f"({small!r} has shape [8, 8, 1]; this model reads 16×16")
    assert rows[3][1].startswith(f"({nan!r} holds NaN or infinite values")
    # None readable: every line says why, and nothing is served.
    with pytest.raises(RecipeError, match=r"1 of 1 input"):
        serving.print_classes([small], serving.serve(export_dir, [small], (16, 16, 1)))
