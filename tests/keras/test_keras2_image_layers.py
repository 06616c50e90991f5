"""The image preprocessing and augmentation layers without TF: inference is the identity,
the random draws follow Keras 2's distributions, each replica of a strategy draws its own,
save/load round trips, bad arguments, compute descriptions, the transform's fill modes."""

from __future__ import annotations

import json

import numpy as np
import pytest

import simdist as tf
from simdist.core.compute_description import describe_compute
from simdist.core.ops.transform_ops import image_projective_transform
from simdist.keras import backend

L = tf.keras.layers
RANDOM = [
    lambda: L.RandomFlip(seed=1),
    lambda: L.RandomRotation(0.2, seed=2),
    lambda: L.RandomZoom(0.3, seed=3),
    lambda: L.RandomTranslation(0.2, 0.3, seed=4),
    lambda: L.RandomContrast(0.4, seed=5),
    lambda: L.RandomBrightness(0.2, seed=6),
    lambda: L.RandomCrop(3, 4, seed=7),
]
RANDOM_IDS = ["flip", "rotation", "zoom", "translation", "contrast", "brightness", "crop"]


@pytest.fixture(autouse=True)
def fresh_session():
    backend.clear_session()
    tf.random.set_seed(0)  # the statistical checks draw the same numbers in any test order


def _images(n=4, h=5, w=6, c=2, seed=0):
    return (np.random.default_rng(seed).random((n, h, w, c)) * 255).astype("float32")


@pytest.mark.parametrize("make", RANDOM[:-1], ids=RANDOM_IDS[:-1])
def test_random_layers_act_in_training_only(make):
    layer, x = make(), _images()
    # a direct call trains (Keras 2's default training=True): the images change
    assert not np.array_equal(layer(x).numpy(), x)
    np.testing.assert_array_equal(layer(x, training=False).numpy(), x)
    model = tf.keras.Sequential([tf.keras.Input(x.shape[1:]), make()])
    np.testing.assert_array_equal(model.predict(x, verbose=0), x)  # predict: inference


def test_random_crop_at_inference_resizes_as_keras():
    x = _images(h=6, w=8)
    # smart_resize to 3x4: the aspect ratios agree, so a bilinear resize of the whole image
    np.testing.assert_allclose(
        L.RandomCrop(3, 4)(x, training=False).numpy(), L.Resizing(3, 4)(x).numpy(), rtol=1e-6
    )
    crop = L.RandomCrop(3, 4, seed=0)(x).numpy()
    windows = [x[:, i : i + 3, j : j + 4] for i in range(4) for j in range(5)]
    assert any(np.array_equal(crop, w) for w in windows)


def test_flip_probability_is_one_half_per_image_and_axis():
    tf.random.set_seed(0)
    n = 4000
    x = np.arange(2 * 3, dtype="float32").reshape(1, 2, 3, 1).repeat(n, axis=0)
    corner = L.RandomFlip("horizontal_and_vertical", seed=3)(x).numpy()[:, 0, 0, 0]
    # the top-left value says which flips happened: 0 none, 2 left-right, 3 up-down, 5 both
    assert set(np.unique(corner)) == {0.0, 2.0, 3.0, 5.0}
    flipped_h, flipped_v = np.isin(corner, [2.0, 5.0]), np.isin(corner, [3.0, 5.0])
    tolerance = 4 * np.sqrt(0.25 / n)  # four standard deviations
    assert abs(flipped_h.mean() - 0.5) < tolerance
    assert abs(flipped_v.mean() - 0.5) < tolerance
    assert abs((flipped_h & flipped_v).mean() - 0.25) < tolerance  # independent


def test_brightness_deltas_are_uniform_in_the_factor_times_the_range():
    x = np.full((4000, 1, 1, 1), 0.5, "float32")
    out = L.RandomBrightness((-0.2, 0.3), value_range=(0.0, 1.0), seed=1)(x).numpy().ravel()
    delta = out - 0.5
    assert delta.min() >= -0.2 - 1e-6 and delta.max() <= 0.3 + 1e-6
    assert abs(delta.mean() - 0.05) < 0.01  # uniform on [-0.2, 0.3]
    assert abs(delta.std() - 0.5 / np.sqrt(12)) < 0.01
    clipped = L.RandomBrightness(1.0, seed=2)(np.full((400, 1, 1, 1), 250.0, "float32"))
    assert float(np.max(clipped)) == 255.0 and float(np.min(clipped)) >= 0.0


def test_contrast_factor_is_one_per_call_within_its_bounds():
    x = _images(n=3)
    layer = L.RandomContrast((0.3, 0.2), seed=4)
    factors = []
    for _ in range(300):
        out = layer(x).numpy()
        mean = x.mean(axis=(1, 2), keepdims=True)
        # where nothing was clipped, out - mean = factor * (x - mean), one factor per call
        inside = (out > 0) & (out < 255) & (np.abs(x - mean) > 1)
        ratio = ((out - mean) / (x - mean))[inside]
        np.testing.assert_allclose(ratio, ratio[0], rtol=1e-4)
        factors.append(ratio[0])
    factors = np.array(factors)
    assert factors.min() >= 0.7 - 1e-5 and factors.max() <= 1.2 + 1e-5
    assert abs(factors.mean() - 0.95) < 0.03


def test_rotation_angles_cover_the_factor_range():
    # one bright pixel off centre: where it lands gives each image's angle
    x = np.zeros((600, 9, 9, 1), "float32")
    x[:, 4, 8, 0] = 1.0
    out = L.RandomRotation((-0.125, 0.25), interpolation="nearest", fill_mode="constant",
                           seed=5)(x).numpy()[..., 0]  # fmt: skip
    seen = out.reshape(600, -1).max(axis=1) == 1.0  # (nearest may drop the pixel)
    assert seen.mean() > 0.9
    ys, xs = np.unravel_index(out.reshape(600, -1)[seen].argmax(axis=1), (9, 9))
    # a positive angle turns counter-clockwise on screen: rows grow downwards
    angles = np.arctan2(4.0 - ys, xs - 4.0) / (2 * np.pi)
    assert angles.min() >= -0.125 - 0.03 and angles.max() <= 0.25 + 0.03
    assert abs(angles.mean() - 0.0625) < 0.02


@pytest.mark.parametrize("make", RANDOM, ids=RANDOM_IDS)
def test_each_replica_draws_its_own_and_runs_are_reproducible(make):
    x = _images(n=8, seed=1)

    def run():
        backend.clear_session()
        tf.random.set_seed(11)
        strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
        with strategy.scope():
            layer = make()
        same = strategy.experimental_distribute_values_from_function(
            lambda ctx: tf.constant(x)  # both replicas get the same images
        )
        out = strategy.run(lambda images: layer(images, training=True), args=(same,))
        return [np.asarray(v) for v in strategy.experimental_local_results(out)]

    first, again = run(), run()
    assert not np.array_equal(first[0], first[1])  # per-replica streams
    for a, b in zip(first, again, strict=True):
        np.testing.assert_array_equal(a, b)


def test_fit_with_augmentation_under_mirrored_strategy():
    x, y = _images(n=16, seed=2) / 255.0, np.arange(16, dtype="float32")[:, None] / 16
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        model = tf.keras.Sequential([
            tf.keras.Input((5, 6, 2)), L.RandomFlip(seed=1), L.RandomRotation(0.1, seed=2),
            L.RandomZoom(0.1, seed=3), L.RandomContrast(0.2, seed=4), L.Resizing(4, 4),
            L.Flatten(), L.Dense(1),
        ])  # fmt: skip
        model.compile("sgd", "mse")
    history = model.fit(x, y, batch_size=8, epochs=2, verbose=0)
    assert all(np.isfinite(history.history["loss"]))
    before = model.predict(x, verbose=0)
    np.testing.assert_array_equal(model.predict(x, verbose=0), before)  # inference: no draws


LAYERS = [
    (lambda: L.Resizing(3, 4, interpolation="nearest", crop_to_aspect_ratio=True), (5, 6, 2)),
    (lambda: L.CenterCrop(3, 3), (5, 6, 2)),
    (lambda: L.RandomCrop(3, 4, seed=1), (5, 6, 2)),
    (lambda: L.RandomFlip("vertical", seed=2), (5, 6, 2)),
    (lambda: L.RandomRotation((-0.1, 0.2), fill_mode="wrap", fill_value=1.0), (5, 6, 2)),
    (lambda: L.RandomZoom(0.2, (-0.1, 0.3), fill_mode="constant"), (5, 6, 2)),
    (lambda: L.RandomTranslation(0.1, 0.2, interpolation="nearest"), (5, 6, 2)),
    (lambda: L.RandomContrast((0.1, 0.3)), (5, 6, 2)),
    (lambda: L.RandomBrightness(0.3, value_range=(0.0, 1.0)), (5, 6, 2)),
]
IDS = [str(i) for i in range(len(LAYERS))]


@pytest.mark.parametrize("make, shape", LAYERS, ids=IDS)
def test_save_and_load_model_round_trip(tmp_path, make, shape):
    model = tf.keras.Sequential([tf.keras.Input(shape), make()])
    x = _images(n=2, h=shape[0], w=shape[1], c=shape[2])
    expected = model.predict(x, verbose=0)
    model.save(tmp_path / "m")
    loaded = tf.keras.models.load_model(tmp_path / "m")
    normal = json.loads(json.dumps(model.layers[-1].get_config()))
    assert json.loads(json.dumps(loaded.layers[-1].get_config())) == normal
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), expected)
    assert loaded.count_params() == 0


@pytest.mark.parametrize("make, shape", LAYERS, ids=IDS)
def test_compute_description_matches_the_layer(make, shape):
    layer = make()
    out = layer(np.zeros((2, *shape), "float32"), training=True)
    description = describe_compute(layer, shape, batch=8, bytes_per_element=4)
    assert description is not None and description.params == ()
    assert description.output_shape == tuple(out.shape[1:])
    assert all(k.nbytes > 0 for k in (*description.forward, *description.input_grads))


def test_the_experimental_preprocessing_names_are_the_same_classes():
    old = tf.keras.layers.experimental.preprocessing
    for name in ("Resizing", "CenterCrop", "RandomCrop", "RandomFlip", "RandomRotation",
                 "RandomZoom", "RandomTranslation", "RandomContrast", "Rescaling"):  # fmt: skip
        assert getattr(old, name) is getattr(L, name)


@pytest.mark.parametrize(
    "make, error, words",
    [
        (lambda: L.RandomFlip("diagonal"), ValueError, "unknown mode"),
        (lambda: L.RandomRotation(0.1, fill_mode="mirror"), NotImplementedError, "fill_mode"),
        (lambda: L.RandomZoom(0.1, interpolation="bicubic"), NotImplementedError, "interpol"),
        (lambda: L.RandomRotation((0.3, 0.1)), ValueError, "factor"),
        (lambda: L.RandomZoom(1.5), ValueError, r"\[-1, 1\]"),
        (lambda: L.RandomZoom(0.1, width_factor=(-1.5, 0.0)), ValueError, "larger than -1"),
        (lambda: L.RandomTranslation((0.3, 0.1), 0.1), ValueError, "upper bound"),
        (lambda: L.RandomTranslation(0.1, 1.2), ValueError, r"\[-1, 1\]"),
        (lambda: L.RandomContrast(-0.1), ValueError, "negative"),
        (lambda: L.RandomContrast((1.5, 0.1)), ValueError, "greater than 1"),
        (lambda: L.RandomBrightness(1.5), ValueError, "range"),
        (lambda: L.RandomBrightness(0.1, value_range=(0, 1, 2)), ValueError, "value_range"),
        (lambda: L.Resizing(3, 3, interpolation="bicubic"), NotImplementedError, "simdist"),
        (lambda: L.Resizing(3, 3, interpolation="cubic"), NotImplementedError, "recognized"),
        (lambda: L.Resizing(0, 3), ValueError, "height"),
        (lambda: L.RandomCrop(3, 3, rng_type="philox"), ValueError, "rng_type"),
    ],
)
def test_bad_arguments_raise_as_keras(make, error, words):
    with pytest.raises(error, match=words):
        make()


def test_brightness_refuses_images_of_another_rank():
    with pytest.raises(ValueError, match="rank 3 or 4"):
        L.RandomBrightness(0.1)(np.zeros((2, 3), "float32"))


def test_fill_modes_of_a_shift_by_two_columns():
    row = np.arange(1, 5, dtype="float32").reshape(1, 1, 4, 1)  # a b c d = 1 2 3 4
    shift = [[1, 0, -2, 0, 1, 0, 0, 0]]  # output column x reads input column x - 2
    expected = {
        "reflect": [2, 1, 1, 2],  # b a | a b
        "wrap": [3, 4, 1, 2],
        "nearest": [1, 1, 1, 2],
        "constant": [9, 9, 1, 2],
    }
    for mode, values in expected.items():
        out = image_projective_transform(row, shift, None, mode, "nearest", 9.0)
        np.testing.assert_array_equal(out.numpy().ravel(), values, err_msg=mode)
