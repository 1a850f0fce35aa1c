"""The visual-attention tasks of ``keras-adl``: RAM on translated / cluttered digits and
Show-Attend-Tell on digit strips (training, evaluation, export and prediction)."""

import json
import os

RAM_MODELS = ("ram", "ram_random")
VISION_TASKS = {
    "translated_digits": RAM_MODELS,
    "cluttered_digits": RAM_MODELS,
    "digit_strips": ("show_attend_tell",),
}
TASK_FILE = "keras_adl_task.json"
CAPTION_LENGTH = 3  # digits per strip; the caption adds END


def load_digits(data_dir):
    """``((train_x, train_y), (test_x, test_y))``: sklearn's digits at 16×16, or the
    MNIST / Fashion-MNIST IDX files in ``data_dir`` (28×28)."""
    from keras_adl.tasks import digits

    if data_dir:
        return (digits.load_idx_dataset(data_dir, "train"),
                digits.load_idx_dataset(data_dir, "test"))
    images, labels = digits.load_sklearn_digits(16)
    return digits.split_dataset(images, labels, 0.2, seed=0)


def ram_settings(task, digit_size):
    """Canvas, clutter and glimpse settings of a RAM task for digits of ``digit_size`` pixels.

    Translated: a canvas twice the digit's size (32 for sklearn's digits; 60 for 28-pixel
    digits, as the paper's 60×60 translated MNIST), 4 glimpses of one 8×8 patch. Cluttered: the
    paper's 60×60 canvas with 4 pieces of 8×8 clutter for 28-pixel digits (48×48 for 16-pixel
    ones), 8 glimpses of 2 scales of a 12×12 (8×8) patch (the paper has 3 scales; here 3
    scales let random glimpses see as much as learned ones, see benchmarks/RESULTS.md).
    """
    if task == "translated_digits":
        canvas = 60 if digit_size > 16 else 2 * digit_size
        return dict(canvas_size=canvas, num_clutter=0, num_glimpses=4, patch_size=8,
                    num_scales=1)
    canvas = 60 if digit_size > 16 else 3 * digit_size
    return dict(canvas_size=canvas, num_clutter=4, num_glimpses=8,
                patch_size=12 if digit_size > 16 else 8, num_scales=2)


def train(task, model_name, epochs, batch_size, samples, strategy, jit, out, callbacks, run,
          data_dir):
    """Trains on a vision task; writes ``model.keras``, ``run.json`` and a picture."""
    import keras

    from keras_adl.training.distribute import build_in_scope
    from keras_adl.training.recipes import compile_for_training

    (train_x, train_y), test = load_digits(data_dir)
    train_x, train_y = train_x[:samples], train_y[:samples]
    batch_size = min(batch_size, len(train_x))
    digit_size = int(train_x.shape[1])
    run.update(data=data_dir or "sklearn_digits", digit_size=digit_size)
    os.makedirs(out, exist_ok=True)
    if task == "digit_strips":
        from keras_adl.models.captioning import show_attend_tell
        from keras_adl.tasks.digits import DigitStrips

        image_shape = (digit_size, CAPTION_LENGTH * digit_size, 1)

        def build():
            # Three poolings: a 2×6 grid of regions on sklearn's 16×48 strips (3×10 on 28×84).
            # With many more regions than caption steps, λ = 1 pulls attention towards uniform
            # (see benchmarks/RESULTS.md). The sizes and rate of benchmarks/captioning.py.
            model = show_attend_tell(13, image_shape=image_shape, embedding_dim=16, units=32,
                                     encoder_filters=(8, 16, 32))
            loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True, ignore_class=0)
            return compile_for_training(model, loss, 1e-2, jit)

        dataset = DigitStrips(train_x, train_y, batch_size, num_digits=CAPTION_LENGTH, seed=0)
    else:
        from keras_adl.models.ram import recurrent_attention_model
        from keras_adl.tasks.digits import TranslatedDigits

        settings = ram_settings(task, digit_size)
        canvas = settings.pop("canvas_size")
        clutter = settings.pop("num_clutter")
        image_shape = (canvas, canvas, 1)
        run["settings"] = dict(settings, canvas_size=canvas, num_clutter=clutter)

        def build():
            # The sizes of benchmarks/ram_digits.py.
            model = recurrent_attention_model(
                image_shape, 10, policy="random" if model_name == "ram_random" else "learned",
                glimpse_units=64, location_units=64, glimpse_output_units=128, units=128,
                seed=0, **settings)
            model.compile(optimizer=keras.optimizers.Adam(1e-3), jit_compile=jit)
            return model

        dataset = TranslatedDigits(train_x, train_y, batch_size, canvas_size=canvas,
                                   num_clutter=clutter, seed=0)
    run["image_shape"] = list(image_shape)
    model = build_in_scope(strategy, build)
    backup = keras.callbacks.BackupAndRestore(os.path.join(out, "backup"))
    history = model.fit(dataset, epochs=epochs, verbose=1, callbacks=[backup, *callbacks])
    model.save(os.path.join(out, "model.keras"))
    if task == "digit_strips":
        metrics = evaluate_captioning(model, test, out)
    else:
        metrics = evaluate_ram(model, task, model_name, test, run["settings"], out)
    return model, history, metrics


def evaluate_ram(model, task, model_name, test, settings, out):
    """Held-out error on a fixed placement of the test digits, where the glimpses land, and a
    picture of one glimpse path."""
    import numpy as np

    from keras_adl.plotting import plot_glimpse_path
    from keras_adl.tasks.digits import glimpses_on_digit, translate_digits

    test_x, test_y = test
    canvases, labels, offsets = translate_digits(
        test_x, test_y, settings["canvas_size"], num_clutter=settings["num_clutter"], rng=123)
    out_dict = model.predict(canvases, verbose=0)
    predictions = out_dict["probabilities"].argmax(-1)
    error = float(np.mean(predictions != labels))
    on_digit = glimpses_on_digit(out_dict["locations"], offsets, test_x.shape[1],
                                 settings["canvas_size"])
    plot_glimpse_path(canvases[0], out_dict["locations"][0], settings["patch_size"],
                      settings["num_scales"], os.path.join(out, "glimpses.png"),
                      title=f"{model_name} on {task}: predicted {predictions[0]}, "
                            f"true {labels[0]}")
    return {"held_out_error": error, "held_out_glimpses_on_digit": on_digit}


def caption_grid_shape(model):
    """``(h, w)`` of a `show_attend_tell` image model's annotation grid."""
    import keras

    encoder = model.get_layer("encoder")
    pools = [layer for layer in encoder.layers if isinstance(layer, keras.layers.MaxPooling2D)]
    shape = pools[-1].output.shape if pools else encoder.input.shape
    return int(shape[1]), int(shape[2])


def evaluate_captioning(model, test, out):
    """Held-out exact match, token accuracy and attention alignment on fresh strips of the
    test digits, and a picture of one caption's attention."""
    import keras
    import numpy as np

    from keras_adl.models.captioning import caption_attention, caption_greedy_decode
    from keras_adl.plotting import plot_caption_attention
    from keras_adl.tasks.digits import (DIGIT_OFFSET, alignment_hit_rate, caption_arrays,
                                        digit_strips, exact_match)

    test_x, test_y = test
    strips, captions, spans = digit_strips(test_x, test_y, 500, num_digits=CAPTION_LENGTH,
                                           rng=123)
    decoder_input, targets = caption_arrays(captions)
    tokens, attention, _ = caption_greedy_decode(model, strips, CAPTION_LENGTH + 1)
    tokens = keras.ops.convert_to_numpy(tokens)
    teacher = keras.ops.convert_to_numpy(
        caption_attention(model, {"image": strips, "decoder_input": decoder_input}))
    grid = caption_grid_shape(model)
    metrics = {
        "held_out_exact_match": float(exact_match(tokens, targets)),
        "held_out_token_accuracy": float(np.mean(tokens[:, :CAPTION_LENGTH]
                                                 == targets[:, :CAPTION_LENGTH])),
        # The grid covers the pixels its poolings saw: 80 of an 84-pixel strip, say.
        "held_out_alignment_hit_rate": float(alignment_hit_rate(
            teacher, spans, captions, grid[1], grid[1] * (strips.shape[2] // grid[1]))),
    }
    words = [str(t - DIGIT_OFFSET) if t >= DIGIT_OFFSET else "</s>" for t in tokens[0]]
    plot_caption_attention(strips[0], keras.ops.convert_to_numpy(attention)[0], words, grid,
                           os.path.join(out, "attention.png"),
                           title="show_attend_tell: attention per output digit")
    return metrics


def export(run, model, export_dir, beam_width):
    """SavedModel with an image-batch signature ``images [None, H, W, C]`` float32."""
    from keras_adl.training import export as exporting

    if run["task"] == "digit_strips":
        exporting.export_captioning(model, export_dir, CAPTION_LENGTH + 1,
                                    beam_width=beam_width)
    else:
        exporting.export_serving_fn(model, export_dir, exporting.make_ram_serving_fn(model))
    with open(os.path.join(export_dir, TASK_FILE), "w") as f:
        json.dump({"task": run["task"], "model": run["model"],
                   "image_shape": run["image_shape"]}, f)


def read_images(paths, image_shape):
    """Grayscale images ``[B, H, W, 1]`` in [0, 1] from PNG files or ``.npy`` arrays."""
    import numpy as np

    from keras_adl.cli import CLIError

    images = []
    for path in paths:
        if not os.path.isfile(path):
            raise CLIError(f"image file {path!r} not found")
        if path.endswith(".npy"):
            image = np.load(path).astype("float32")
            image = image / 255.0 if image.max() > 1.0 else image
        else:
            import tensorflow as tf

            try:
                decoded = tf.io.decode_image(tf.io.read_file(path), channels=1,
                                             expand_animations=False)
            except tf.errors.InvalidArgumentError:
                raise CLIError(f"{path!r} is not a PNG, JPEG, GIF or BMP image") from None
            image = decoded.numpy().astype("float32") / 255.0
        if image.ndim == 2:
            image = image[..., None]
        if list(image.shape) != list(image_shape):
            raise CLIError(f"{path!r} has shape {list(image.shape)}; this model reads "
                           f"{image_shape[0]}×{image_shape[1]} grayscale images")
        images.append(image)
    return np.stack(images)


def predict(export_dir, paths, task_info):
    """Prints the class and glimpse path (RAM) or the caption (captioning) of each image."""
    import tensorflow as tf

    images = read_images(paths, task_info["image_shape"])
    loaded = tf.saved_model.load(export_dir)
    outputs = loaded.signatures["serving_default"](images=tf.constant(images))
    if task_info["task"] == "digit_strips":
        for path, caption in zip(paths, outputs["caption"].numpy()):
            print(f"{path}\t{caption.decode()}")
        return
    for path, label, probabilities, locations in zip(
        paths, outputs["classes"].numpy(), outputs["probabilities"].numpy(),
        outputs["locations"].numpy()
    ):
        path_text = " ".join(f"({y:+.2f},{x:+.2f})" for y, x in locations)
        print(f"{path}\t{label}\tp={probabilities[label]:.3f}\tglimpses {path_text}")
