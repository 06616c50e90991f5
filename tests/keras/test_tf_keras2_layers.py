"""Differential tests against TF 2.21 + tf_keras of the Keras 2 layers added for users'
programs (activation layers first), with the same weights: outputs, gradients, output shapes,
parameter counts, config round trips; and TF's configs and weights loaded in simdist.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.keras import tf_differential as tf_oracle
from tests.keras.keras2_cases import case_source

pytestmark = [
    pytest.mark.slow,
    pytest.mark.tensorflow,
    pytest.mark.skipif(not tf_oracle.tf_available(), reason="needs the tensorflow extra"),
]

X = "inputs[0]"
_BOOL_MASK = "np.random.default_rng(5).random((2, 3, 5)) > 0.4"
# name: (layer expression, input shapes, call expression, mask literals)
CASES = {
    "leaky_relu": ("L.LeakyReLU()", [(2, 3, 4)], f"layer({X})", []),
    "leaky_relu_alpha": ("L.LeakyReLU(alpha=0.05)", [(2, 5)], f"layer({X})", []),
    "elu": ("L.ELU()", [(2, 3, 4)], f"layer({X})", []),
    "elu_alpha": ("L.ELU(alpha=0.4)", [(2, 3, 4)], f"layer({X})", []),
    "thresholded_relu": ("L.ThresholdedReLU(theta=0.3)", [(2, 6)], f"layer({X})", []),
    "softmax": ("L.Softmax()", [(2, 3, 5)], f"layer({X})", []),
    "softmax_axis1": ("L.Softmax(axis=1)", [(2, 3, 5)], f"layer({X})", []),
    "softmax_axes": ("L.Softmax(axis=[1, 2])", [(2, 3, 5)], f"layer({X})", []),
    "softmax_mask": ("L.Softmax()", [(2, 3, 5)], f"layer({X}, mask=masks[0])", [_BOOL_MASK]),
    "softmax_robust": (
        "L.Softmax(robust_masking=True)",
        [(2, 3, 5)],
        f"layer({X}, mask=masks[0])",
        [_BOOL_MASK],
    ),
    "prelu": ("L.PReLU(alpha_initializer='random_uniform')", [(2, 3, 4)], f"layer({X})", []),
    "prelu_shared": (
        "L.PReLU(alpha_initializer=tf.keras.initializers.Constant(0.2), shared_axes=[1, 2])",
        [(2, 3, 4, 2)],
        f"layer({X})",
        [],
    ),
    "relu_all_options": (
        "L.ReLU(max_value=1.5, negative_slope=0.1, threshold=0.2)",
        [(2, 7)],
        f"layer({X})",
        [],
    ),
}
# Image layers. The random ones run with bounds that pin their draw (factor (a, a)), so the
# transform is known and TF's output and gradient can be compared; at inference
# (training=False) each is the identity.
IMG = [(2, 5, 6, 2)]
TRAIN, INFER = f"layer({X}, training=True)", f"layer({X}, training=False)"
IMAGE_CASES = {
    "resizing_bilinear": ("L.Resizing(3, 4)", IMG, f"layer({X})", []),
    "resizing_up_nearest": ("L.Resizing(7, 9, interpolation='nearest')", IMG, f"layer({X})", []),
    "resizing_crop_aspect": ("L.Resizing(4, 2, crop_to_aspect_ratio=True)", IMG, f"layer({X})", []),
    "resizing_unbatched": ("L.Resizing(3, 3)", [(5, 6, 2)], f"layer({X})", []),
    "center_crop": ("L.CenterCrop(3, 3)", IMG, f"layer({X})", []),
    "center_crop_upsize": ("L.CenterCrop(6, 4)", IMG, f"layer({X})", []),
    "random_crop_infer": ("L.RandomCrop(3, 4)", IMG, INFER, []),
    "random_crop_whole": ("L.RandomCrop(5, 6)", IMG, TRAIN, []),
    "random_crop_small": ("L.RandomCrop(6, 7)", IMG, TRAIN, []),
    "random_flip_infer": ("L.RandomFlip()", IMG, INFER, []),
    "random_rotation_infer": ("L.RandomRotation(0.3)", IMG, INFER, []),
    "random_zoom_infer": ("L.RandomZoom(0.3)", IMG, INFER, []),
    "random_translation_infer": ("L.RandomTranslation(0.2, 0.2)", IMG, INFER, []),
    "random_contrast_infer": ("L.RandomContrast(0.5)", IMG, INFER, []),
    "random_brightness_infer": ("L.RandomBrightness(0.5)", IMG, INFER, []),
    "random_brightness_fixed": (
        "L.RandomBrightness((0.1, 0.1), value_range=(-1.0, 1.5))",
        IMG,
        TRAIN,
        [],
    ),
    "random_translation_fixed": (
        "L.RandomTranslation((0.2, 0.2), (-0.34, -0.34), fill_mode='constant', fill_value=0.5)",
        IMG,
        TRAIN,
        [],
    ),
    "random_zoom_fixed_unbatched": (
        "L.RandomZoom((0.4, 0.4), (-0.3, -0.3), fill_mode='nearest')",
        [(5, 6, 2)],
        TRAIN,
        [],
    ),
}
for _fill in ("reflect", "wrap", "constant", "nearest"):
    for _interp in ("bilinear", "nearest"):
        IMAGE_CASES[f"random_rotation_{_fill}_{_interp}"] = (
            f"L.RandomRotation((0.07, 0.07), fill_mode={_fill!r}, interpolation={_interp!r})",
            IMG,
            TRAIN,
            [],
        )
        IMAGE_CASES[f"random_zoom_{_fill}_{_interp}"] = (
            f"L.RandomZoom((0.35, 0.35), fill_mode={_fill!r}, interpolation={_interp!r})",
            IMG,
            TRAIN,
            [],
        )
CASES.update(IMAGE_CASES)
PAIR = "layer([inputs[0], inputs[1]])"
OTHER_CASES = {
    "dot_axes_2_2": ("L.Dot(axes=(2, 2))", [(2, 3, 4), (2, 5, 4)], PAIR, []),
    "dot_axes_1_2": ("L.Dot(axes=(1, 2))", [(2, 3, 4), (2, 5, 3)], PAIR, []),
    "dot_normalize_2d": ("L.Dot(axes=1, normalize=True)", [(2, 4), (2, 4)], PAIR, []),
    "dot_negative": ("L.Dot(axes=-1)", [(2, 3, 4), (2, 4)], PAIR, []),
    "einsum_dense_2d": (
        "L.EinsumDense('ab,bc->ac', 4, bias_axes='c')",
        [(2, 3)],
        f"layer({X})",
        [],
    ),
    "einsum_dense_3d": (
        "L.EinsumDense('abc,cd->abd', (3, 5), bias_axes='d', activation='relu')",
        [(2, 3, 4)],
        f"layer({X})",
        [],
    ),
    "einsum_dense_left_elided": (
        "L.EinsumDense('...b,bc->...c', 5)",
        [(2, 3, 4)],
        f"layer({X})",
        [],
    ),
    "einsum_dense_right_elided": (
        "L.EinsumDense('ab...,bc->ac...', 5, bias_axes='c')",
        [(2, 3, 4)],
        f"layer({X})",
        [],
    ),
    "einsum_dense_heads": (
        "L.EinsumDense('abc,cde->abde', (3, 2, 4), bias_axes='de')",
        [(2, 3, 4)],
        f"layer({X})",
        [],
    ),
    "group_norm": ("L.GroupNormalization(2)", [(2, 3, 4)], f"layer({X})", []),
    "group_norm_4d": ("L.GroupNormalization(2, epsilon=0.01)", [(2, 3, 3, 4)], f"layer({X})", []),
    "group_norm_per_channel_axis1": (
        "L.GroupNormalization(-1, axis=1, center=False, gamma_initializer='random_uniform')",
        [(2, 4, 3)],
        f"layer({X})",
        [],
    ),
    "unit_norm": ("L.UnitNormalization()", [(2, 3, 4)], f"layer({X})", []),
    "unit_norm_axes": ("L.UnitNormalization(axis=[1, 2])", [(2, 3, 4)], f"layer({X})", []),
    "gaussian_noise_infer": ("L.GaussianNoise(0.5)", [(2, 5)], f"layer({X})", []),
    "gaussian_dropout_infer": (
        "L.GaussianDropout(0.3)",
        [(2, 5)],
        f"layer({X}, training=False)",
        [],
    ),
    "alpha_dropout_infer": ("L.AlphaDropout(0.3)", [(2, 5)], f"layer({X})", []),
    "alpha_dropout_rate0": ("L.AlphaDropout(0.0)", [(2, 5)], f"layer({X}, training=True)", []),
    "spatial_dropout1d_infer": ("L.SpatialDropout1D(0.3)", [(2, 3, 4)], f"layer({X})", []),
    "spatial_dropout2d_infer": ("L.SpatialDropout2D(0.3)", [(2, 3, 3, 4)], f"layer({X})", []),
    "upsampling1d": ("L.UpSampling1D(3)", [(2, 3, 4)], f"layer({X})", []),
    "zero_padding1d": ("L.ZeroPadding1D((1, 2))", [(2, 3, 4)], f"layer({X})", []),
    "upsampling2d_bilinear": (
        "L.UpSampling2D((2, 3), interpolation='bilinear')",
        [(2, 3, 2, 2)],
        f"layer({X})",
        [],
    ),
    "gap3d": ("L.GlobalAveragePooling3D()", [(2, 2, 3, 2, 3)], f"layer({X})", []),
    "gmp3d_keepdims": ("L.GlobalMaxPooling3D(keepdims=True)", [(2, 2, 3, 2, 3)], f"layer({X})", []),
    "stacked_cells": (
        "L.RNN([L.SimpleRNNCell(3), L.LSTMCell(2), L.GRUCell(2)], return_sequences=True)",
        [(2, 4, 3)],
        f"layer({X})",
        [],
    ),
    "stacked_cells_state": (
        "L.RNN(L.StackedRNNCells([L.GRUCell(2), L.LSTMCell(3)]), return_state=True)",
        [(2, 4, 3)],
        f"layer({X})",
        [],
    ),
}
VOL = [(2, 4, 5, 4, 2)]
OTHER_CASES.update(
    {
        "conv3d": ("L.Conv3D(3, (2, 3, 2))", VOL, f"layer({X})", []),
        "conv3d_same_strided_relu": (
            "L.Conv3D(2, 3, strides=(2, 1, 2), padding='same', activation='relu')",
            VOL,
            f"layer({X})",
            [],
        ),
        "conv3d_dilated_no_bias": (
            "L.Conv3D(2, 2, dilation_rate=(1, 2, 1), use_bias=False)",
            VOL,
            f"layer({X})",
            [],
        ),
        "max_pooling3d": ("L.MaxPooling3D()", VOL, f"layer({X})", []),
        "max_pooling3d_same": (
            "L.MaxPooling3D(3, strides=2, padding='same')",
            VOL,
            f"layer({X})",
            [],
        ),
        "avg_pooling3d": ("L.AveragePooling3D((2, 1, 2), strides=1)", VOL, f"layer({X})", []),
        "avg_pooling3d_same": (
            "L.AveragePooling3D(3, strides=(1, 2, 2), padding='same')",
            VOL,
            f"layer({X})",
            [],
        ),
    }
)
CASES.update(OTHER_CASES)
# TF's RNN.compute_output_shape of a stacked cell, given a list shape, loses the time axis
_NAMES_DIFFER = {"stacked_cells", "stacked_cells_state"}


@pytest.fixture(scope="module")
def compared():
    sources = {name: case_source(name, *spec) for name, spec in CASES.items()}
    ours = {name: tf_oracle.run_simdist(src) for name, src in sources.items()}
    theirs, failures = tf_oracle.run_tf({n: (s, ours[n], 1) for n, s in sources.items()})
    return ours, theirs, failures


@pytest.mark.parametrize("name", sorted(CASES))
def test_layer_matches_tf(compared, name):
    ours, theirs, failures = compared
    assert name not in failures, failures.get(name)
    skip = ("weights", "shape") if name in _NAMES_DIFFER else ("weights",)
    tolerance = 1e-4 if name.startswith("stacked") else 1e-5
    tf_oracle.assert_match(
        name, ours[name], theirs[name], rtol=tolerance, atol=tolerance, skip=skip
    )


# The other direction: layers configured by tf_keras, rebuilt in simdist from TF's
# get_config() (a saved Keras 2 model's layer entries) and given TF's weights.
_FROM_TF = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        import json
        L = tf.keras.layers
        made = [eval(expr, {"L": L, "tf": tf}) for expr in EXPRS]
        out = {}
        for i, (layer, shape) in enumerate(zip(made, SHAPES)):
            x = np.random.default_rng(i).standard_normal(shape).astype("float32")
            result = layer(x)
            config = json.dumps(
                {"class_name": type(layer).__name__, "config": layer.get_config()},
                default=lambda v: dict(v) if hasattr(v, "keys") else list(v),
            )
            out[f"config{i}"] = np.frombuffer(config.encode(), np.uint8)
            out[f"weights{i}"] = [w.numpy() for w in layer.weights] or [np.zeros(0)]
            out[f"x{i}"] = x
            out[f"out{i}"] = result.numpy()
        return out
    """
)
FROM_TF = [
    ("L.LeakyReLU(0.2)", (2, 4)),
    ("L.ELU(0.7)", (2, 4)),
    ("L.ThresholdedReLU(0.5)", (2, 4)),
    ("L.Softmax(axis=(1, 2))", (2, 3, 4)),
    ("L.PReLU(alpha_initializer='ones', shared_axes=2)", (2, 3, 4)),
    ("L.Resizing(3, 5, interpolation='nearest', crop_to_aspect_ratio=True)", (2, 6, 4, 1)),
    ("L.CenterCrop(2, 3)", (2, 6, 4, 1)),
    ("L.Discretization(bin_boundaries=[-0.5, 0.0, 0.7])", (2, 4)),
    ("L.Discretization(bin_boundaries=[0.0], output_mode='one_hot')", (3, 1)),
    ("L.EinsumDense('abc,cd->abd', (3, 5), bias_axes='d', activation='tanh')", (2, 3, 4)),
    ("L.GroupNormalization(2, axis=1, gamma_initializer='random_normal')", (2, 4, 3)),
    ("L.UnitNormalization(axis=(1, 2))", (2, 3, 4)),
    ("L.RNN([L.SimpleRNNCell(3), L.LSTMCell(2)], return_sequences=True)", (2, 4, 3)),
    ("L.Conv3D(2, (1, 2, 3), padding='same', strides=2)", (2, 3, 4, 5, 2)),
    ("L.AveragePooling3D(2, padding='same')", (2, 3, 4, 5, 2)),
    ("L.MaxPool3D((1, 2, 2))", (2, 3, 4, 5, 2)),
]
# configs only (random layers): each rebuilt in simdist gives back TF's get_config()
CONFIG_ONLY = [
    "L.RandomCrop(3, 4, seed=3)",
    "L.RandomFlip('horizontal', seed=1)",
    "L.RandomRotation((-0.2, 0.3), fill_mode='wrap', interpolation='nearest', fill_value=1.0)",
    "L.RandomZoom(0.2, (-0.1, 0.3), fill_mode='constant', seed=4)",
    "L.RandomTranslation(0.1, (-0.2, 0.1), fill_mode='nearest')",
    "L.RandomContrast((0.2, 0.4), seed=2)",
    "L.RandomBrightness(0.3, value_range=(0.0, 1.0))",
    "L.GaussianNoise(0.2, seed=1)",
    "L.GaussianDropout(0.3)",
    "L.AlphaDropout(0.2, seed=3)",
    "L.SpatialDropout1D(0.2)",
    "L.SpatialDropout2D(0.3, data_format='channels_first')",
    "L.Dot((1, 2), normalize=True)",
    "L.UpSampling1D(3)",
    "L.ZeroPadding1D((1, 2))",
    "L.UpSampling2D(2, interpolation='bilinear')",
    "L.GlobalMaxPooling3D(keepdims=True)",
    "L.ZeroPadding2D(((1, 0), (2, 1)))",
]


def from_tf_check(from_tf):
    """Run the TF side of ``from_tf`` and check each layer rebuilt in simdist."""
    import json

    import simdist

    source = _FROM_TF.replace("EXPRS", repr([e for e, _ in from_tf])).replace(
        "SHAPES", repr([s for _, s in from_tf])
    )
    theirs, failures = tf_oracle.run_tf({"from_tf": (source, {}, 1)})
    assert not failures, failures
    result = theirs["from_tf"]
    for i in range(len(from_tf)):
        entry = json.loads(bytes(result[f"config{i}"][0]).decode())
        layer = getattr(simdist.keras.layers, entry["class_name"]).from_config(entry["config"])
        x = result[f"x{i}"][0]
        layer(x)
        layer.set_weights([w for w in result[f"weights{i}"] if w.size])
        np.testing.assert_allclose(
            np.asarray(layer(x)),
            result[f"out{i}"][0],
            rtol=1e-5,
            atol=1e-6,
            err_msg=from_tf[i][0],
        )


def test_tf_keras_configs_and_weights_load_in_simdist():
    from_tf_check(FROM_TF)


_CONFIGS = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        import json
        L = tf.keras.layers
        out = {}
        for i, expr in enumerate(EXPRS):
            layer = eval(expr, {"L": L})
            config = json.dumps({"class_name": type(layer).__name__, "config": layer.get_config()})
            out[f"config{i}"] = np.frombuffer(config.encode(), np.uint8)
        return out
    """
)


def test_tf_keras_configs_of_random_layers_round_trip_in_simdist():
    import json

    import simdist

    source = _CONFIGS.replace("EXPRS", repr(CONFIG_ONLY))
    theirs, failures = tf_oracle.run_tf({"configs": (source, {}, 1)})
    assert not failures, failures
    for i, expr in enumerate(CONFIG_ONLY):
        entry = json.loads(bytes(theirs["configs"][f"config{i}"][0]).decode())
        layer = getattr(simdist.keras.layers, entry["class_name"]).from_config(entry["config"])
        ours = json.loads(json.dumps(layer.get_config()))
        assert ours == entry["config"], expr


# The random layers' draws: simdist's numbers are its own, so each side augments many copies
# of one image and the per-pixel means and variances of the outputs are compared.
_DRAWS = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        L = tf.keras.layers
        image = np.random.default_rng(0).random((1, 5, 6, 1)).astype("float32") * 200 + 20
        out = {}
        for i, (expr, per_call) in enumerate(EXPRS):
            layer = eval(expr, {"L": L})
            if per_call:  # one draw per call (RandomContrast): many calls of one image
                draws = np.concatenate([layer(image, training=True).numpy() for _ in range(400)])
            else:
                draws = layer(np.repeat(image, 1200, axis=0), training=True).numpy()
            out[f"mean{i}"], out[f"var{i}"] = draws.mean(axis=0), draws.var(axis=0)
            out[f"n{i}"] = np.array(len(draws))
        return out
    """
)
DRAWS = [
    ("L.RandomFlip(seed=1)", False),
    ("L.RandomRotation(0.15, seed=2)", False),
    ("L.RandomRotation((-0.1, 0.2), fill_mode='constant', interpolation='nearest')", False),
    ("L.RandomZoom((-0.3, 0.4), seed=3)", False),
    ("L.RandomZoom(0.2, (0.1, 0.5), fill_mode='wrap')", False),
    ("L.RandomTranslation((-0.3, 0.1), 0.4, fill_mode='nearest')", False),
    ("L.RandomBrightness((-0.1, 0.3))", False),
    ("L.RandomCrop(3, 4)", True),  # one offset per call
    ("L.RandomContrast((0.5, 0.3))", True),
]


def test_random_layers_draw_from_tf_keras_distributions():
    import simdist

    source = _DRAWS.replace("EXPRS", repr(DRAWS))
    ours = {k: [np.asarray(v)] for k, v in _run_draws(simdist, source).items()}
    theirs, failures = tf_oracle.run_tf({"draws": (source, {}, 1)})
    assert not failures, failures
    theirs = theirs["draws"]
    for i, (expr, _) in enumerate(DRAWS):
        n = float(ours[f"n{i}"][0])
        spread = np.sqrt((ours[f"var{i}"][0] + theirs[f"var{i}"][0]) / n)
        gap = np.abs(ours[f"mean{i}"][0] - theirs[f"mean{i}"][0])
        assert np.all(gap <= 5 * spread + 1e-3), f"{expr}: means differ by {gap.max()}"
        # the spread of the draws agrees too (a wrong range would show here)
        ratio = (ours[f"var{i}"][0] + 1.0) / (theirs[f"var{i}"][0] + 1.0)
        assert np.all((ratio > 0.6) & (ratio < 1.6)), f"{expr}: variances {ratio.min()}..."


def _run_draws(simdist, source):
    scope: dict = {}
    exec(source, scope)
    simdist.keras.backend.clear_session()
    return scope["case"](simdist, np, None, ["GPU:0"])


_DISCRETIZATION = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        L = tf.keras.layers
        rng = np.random.default_rng(4)
        data = rng.standard_normal((300, 2)).astype("float32") * 3
        x = np.concatenate([rng.standard_normal((4, 2)) * 3, [[0.5, -1.0]]]).astype("float32")
        out = {}
        given = L.Discretization(bin_boundaries=[-1.0, 0.0, 0.5, 2.0])
        out["given"] = given(x).numpy()
        out["given_on_boundary"] = given(np.array([[-1.0, 0.5, 2.0, 7]], "float32")).numpy()
        out["given_ints"] = given(np.array([[-3, 0, 1, 2]])).numpy()
        for mode in ("one_hot", "multi_hot", "count"):
            layer = L.Discretization(bin_boundaries=[0.0, 1.0], output_mode=mode)
            out[mode] = layer(np.array([[-0.5], [0.2], [3.0]] if mode == "one_hot"
                                       else [[-0.5, 0.2, 3.0, 0.7]], "float32")).numpy()
        for name, kwargs, source in [
            ("adapt_array", dict(num_bins=5), data),
            ("adapt_eps", dict(num_bins=4, epsilon=0.1), data),
            ("adapt_batch", dict(num_bins=6), data),
            ("adapt_small", dict(num_bins=8), data[:5]),
            ("adapt_dataset", dict(num_bins=3, epsilon=0.05),
             tf.data.Dataset.from_tensor_slices(data).batch(50)),
        ]:
            layer = L.Discretization(**kwargs)
            layer.adapt(source, batch_size=64 if name == "adapt_batch" else None)
            out[name + "_bins"] = np.array(layer.bin_boundaries, "float32")
            out[name] = layer(x).numpy()
        return out
    """
)


def test_discretization_matches_tf_with_given_and_adapted_bins():
    ours = tf_oracle.run_simdist(_DISCRETIZATION)
    theirs, failures = tf_oracle.run_tf({"disc": (_DISCRETIZATION, ours, 1)})
    assert not failures, failures
    tf_oracle.assert_match("disc", ours, theirs["disc"], rtol=1e-6, atol=1e-6)
    assert ours["given"][0].dtype == theirs["disc"]["given"][0].dtype == np.int64


_NOISE_DRAWS = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        L = tf.keras.layers
        x = np.random.default_rng(0).uniform(0.5, 2.0, (1, 6)).astype("float32")
        many = np.repeat(x, 3000, axis=0)
        out = {}
        for i, expr in enumerate(EXPRS):
            draws = eval(expr, {"L": L})(many, training=True).numpy()
            out[f"mean{i}"], out[f"var{i}"] = draws.mean(axis=0), draws.var(axis=0)
        return out
    """
)
NOISE_DRAWS = [
    "L.GaussianNoise(0.4)",
    "L.GaussianDropout(0.3)",
    "L.AlphaDropout(0.25)",
    "L.Dropout(0.4)",
]


def test_noise_layers_draw_from_tf_keras_distributions():
    import simdist

    source = _NOISE_DRAWS.replace("EXPRS", repr(NOISE_DRAWS))
    ours = _run_draws(simdist, source)
    theirs, failures = tf_oracle.run_tf({"noise": (source, {}, 1)})
    assert not failures, failures
    theirs = theirs["noise"]
    for i, expr in enumerate(NOISE_DRAWS):
        spread = np.sqrt((ours[f"var{i}"] + theirs[f"var{i}"][0]) / 3000)
        gap = np.abs(ours[f"mean{i}"] - theirs[f"mean{i}"][0])
        assert np.all(gap <= 5 * spread + 1e-4), f"{expr}: means differ by {gap.max()}"
        ratio = ours[f"var{i}"] / theirs[f"var{i}"][0]
        assert np.all((ratio > 0.85) & (ratio < 1.18)), f"{expr}: variance ratios {ratio}"


# A model of the new weighted layers trained with fit, on one replica and on MirroredStrategy
# with 2 (no random layer: their draws are simdist's own).
_FIT = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        L = tf.keras.layers
        rng = np.random.default_rng(0)
        seq = rng.standard_normal((16, 4, 3)).astype("float32")
        vol = rng.standard_normal((16, 3, 4, 4, 2)).astype("float32")
        y = np.stack([seq.mean(axis=(1, 2)), vol.mean(axis=(1, 2, 3, 4))], 1).astype("float32")
        if len(devices) > 1:
            strategy = tf.distribute.MirroredStrategy(
                devices, cross_device_ops=tf.distribute.ReductionToOneDevice())
        else:
            strategy = tf.distribute.get_strategy()
        with strategy.scope():
            s_in = tf.keras.Input((4, 3), name="seq")
            v_in = tf.keras.Input((3, 4, 4, 2), name="vol")
            e = L.EinsumDense("abc,cd->abd", (4, 6), bias_axes="d", name="ed")(s_in)
            e = L.PReLU(alpha_initializer=tf.keras.initializers.Constant(0.2), name="pr")(e)
            r = L.RNN([L.SimpleRNNCell(3), L.GRUCell(4)], return_sequences=True, name="rnn")(e)
            r = L.GroupNormalization(2, name="gn")(r)
            att = L.Softmax(axis=-1)(L.Dot(axes=(2, 2), name="dot")([r, r]))
            s = L.Dot(axes=(2, 1), name="mix")([att, r])
            s = L.UnitNormalization()(L.Flatten()(s))
            z = L.Conv3D(3, 2, padding="same", activation="tanh", name="c3")(v_in)
            z = L.MaxPooling3D((1, 2, 2))(z)
            z = L.ELU(0.7)(L.LeakyReLU(0.1)(L.AveragePooling3D((3, 1, 1))(z)))
            z = L.GlobalAveragePooling3D()(z)
            out = L.Dense(2, name="out")(L.Concatenate()([s, z]))
            model = tf.keras.Model([s_in, v_in], out)
            if weights is not None:
                model.set_weights(weights)
            start = model.get_weights()
            model.compile(optimizer=tf.keras.optimizers.SGD(learning_rate=0.05), loss="mse",
                          run_eagerly=True)
        history = model.fit([seq, vol], y, batch_size=8, epochs=2, shuffle=False, verbose=0)
        pred = model.predict([seq[:4], vol[:4]], verbose=0)
        return {"weights": start, "loss": history.history["loss"], "final": model.get_weights(),
                "pred": pred, "params": np.array(model.count_params())}
    """
)


def test_fit_of_a_model_of_the_new_layers_matches_tf():
    cases = {f"fit{n}": (_FIT, n) for n in (1, 2)}
    ours = {name: tf_oracle.run_simdist(src, n) for name, (src, n) in cases.items()}
    theirs, failures = tf_oracle.run_tf(
        {name: (src, ours[name], n) for name, (src, n) in cases.items()}
    )
    assert not failures, failures
    for name in cases:
        tf_oracle.assert_match(name, ours[name], theirs[name], rtol=1e-4, atol=1e-5)
