"""``tf.keras.applications`` without TensorFlow: Keras 2's published weight counts, the argument
checks and their errors, ``weights`` from a file, ``preprocess_input``, and the cost model's
pricing of an application model (``tests/keras/test_applications_vs_tf.py`` compares the
architectures and outputs with TF itself)."""

from __future__ import annotations

import numpy as np
import pytest

import simdist as tf
from simdist import sim
from simdist.cost import layer_costs

A = tf.keras.applications


@pytest.fixture(autouse=True)
def _fresh_names():
    tf.keras.backend.clear_session()


# Keras 2's documented totals (keras.io/api/applications); with global average pooling the
# count does not depend on the image size, so 32x32 builds give them cheaply.
@pytest.mark.parametrize(
    "builder, total",
    [
        (A.ResNet50, 25_636_712),
        (A.ResNet101, 44_707_176),
        (A.ResNet50V2, 25_613_800),
        (A.ResNet101V2, 44_675_560),
        (A.ResNet152V2, 60_380_648),
        (A.ResNet152, 60_419_944),
    ],
)
def test_resnet_weight_counts_are_keras_published_ones(builder, total):
    model = builder(weights=None, input_shape=(32, 32, 3))
    assert model.count_params() == total


def test_mobilenet_v2_and_vgg16_default_sizes():
    mobilenet = A.MobileNetV2(weights=None)
    assert mobilenet.name == "mobilenetv2_1.00_224"
    assert mobilenet.count_params() == 3_538_984
    assert len(mobilenet.layers) == 156
    trainable = sum(int(np.prod(w.shape)) for w in mobilenet.trainable_weights)
    assert trainable == 3_504_872
    # VGG16's convolutions at 224x224 without the 102M-weight classifier (32x32: the same)
    assert A.VGG16(include_top=False, weights=None, input_shape=(32, 32, 3)).count_params() == (
        14_714_688
    )


def test_resnet50_layers_and_shapes():
    model = A.ResNet50(weights=None, input_shape=(64, 64, 3), classes=10)
    names = [layer.name for layer in model.layers]
    assert names[:8] == [
        "input_1", "conv1_pad", "conv1_conv", "conv1_bn", "conv1_relu", "pool1_pad",
        "pool1_pool", "conv2_block1_1_conv",
    ]  # fmt: skip
    assert names[-3:] == ["conv5_block3_out", "avg_pool", "predictions"]
    assert len(names) == 177
    assert model.output_shape == (None, 10)
    assert model.get_layer("conv5_block3_out").output.shape.as_list() == [None, 2, 2, 2048]
    assert model.get_layer("conv5_block3_add").input_shape == [(None, 2, 2, 2048)] * 2
    assert model.layers[0].output_shape == [(None, 64, 64, 3)]
    assert model.get_layer("conv2_block1_1_bn").epsilon == pytest.approx(1.001e-5)


def test_pooling_and_input_tensor():
    features = A.ResNet50V2(include_top=False, weights=None, pooling="max")
    assert features.input_shape == (None, None, None, 3)
    assert features.output_shape == (None, 2048)
    assert features.layers[-1].name == "max_pool"
    images = tf.keras.Input((40, 40, 3), name="images")
    vgg = A.VGG19(include_top=False, weights=None, input_tensor=images)
    assert vgg.inputs[0] is images and vgg.output_shape == (None, 1, 1, 512)
    out = vgg(np.zeros((1, 40, 40, 3), "float32"))
    assert out.shape == (1, 1, 1, 512)


def test_mobilenet_v2_alpha_widths():
    model = A.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, weights=None, classes=10)
    assert model.name == "mobilenetv2_0.35_32"
    assert model.get_layer("Conv1").filters == 16  # _make_divisible(32 * 0.35, 8)
    assert model.get_layer("block_16_project").filters == 112
    assert model.get_layer("Conv_1").filters == 1280  # alpha < 1 does not narrow the last
    wide = A.MobileNetV2(input_shape=(32, 32, 3), alpha=1.4, include_top=False, weights=None)
    assert wide.get_layer("Conv_1").filters == 1792
    assert wide.get_layer("Conv1_relu").max_value == 6.0


def test_imagenet_weights_say_what_to_do_instead():
    with pytest.raises(ConnectionError, match="weights=None"):
        A.MobileNetV2(input_shape=(32, 32, 3), include_top=False)
    with pytest.raises(ConnectionError, match="save_weights"):
        A.ResNet50()


@pytest.mark.parametrize(
    "call, message",
    [
        (lambda: A.ResNet50(weights="no/such/file.h5"), "The `weights` argument should be"),
        (lambda: A.VGG16(classes=10), "`classes` should be 1000"),
        (lambda: A.ResNet50(weights=None, input_shape=(31, 64, 3)), "at least 32x32"),
        (lambda: A.ResNet50(weights=None, input_shape=(64, 64)), "three integers"),
        (lambda: A.VGG16(weights=None, input_shape=(None, None, 3)), "static `input_shape`"),
        (lambda: A.ResNet50(input_shape=(64, 64, 3)), "`input_shape` should be"),
        (lambda: A.ResNet50(include_top=False, input_shape=(64, 64, 1)), "3 channels"),
        (lambda: A.ResNet50(weights=None, foo=1), "Unknown argument"),
        (lambda: A.MobileNetV2(alpha=0.6, include_top=False), "alpha must be one of"),
        (lambda: A.ResNet50V2(classifier_activation="relu"), "Only `None` and `softmax`"),
        (
            lambda: A.MobileNetV2(input_shape=(32, 32, 3),
                                  input_tensor=tf.keras.Input((32, 40, 3)), weights=None),
            "must equal input_shape",
        ),
    ],
)
def test_bad_arguments_raise_keras_errors(call, message):
    with pytest.raises(ValueError, match=message):
        call()


def test_weights_from_a_file(tmp_path):
    tf.random.set_seed(4)
    model = A.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, weights=None, classes=3)
    path = str(tmp_path / "mobilenet.weights.h5")
    model.save_weights(path)
    tf.random.set_seed(5)
    again = A.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, weights=path, classes=3)
    for a, b in zip(model.get_weights(), again.get_weights(), strict=True):
        np.testing.assert_array_equal(a, b)


def test_preprocess_input_modes():
    x = np.array([[[[0.0, 127.5, 255.0]]]], dtype="float32")
    np.testing.assert_allclose(A.mobilenet_v2.preprocess_input(x.copy()), [[[[-1, 0, 1]]]])
    caffe = A.vgg16.preprocess_input(x.copy())
    np.testing.assert_allclose(caffe, [[[[255 - 103.939, 127.5 - 116.779, -123.68]]]], rtol=1e-6)
    tensor = A.resnet50.preprocess_input(tf.constant(x))
    np.testing.assert_allclose(tensor.numpy(), caffe, rtol=1e-6)
    torch = A.imagenet_utils.preprocess_input(x.copy(), mode="torch")
    np.testing.assert_allclose(torch[0, 0, 0, 0], -0.485 / 0.229, rtol=1e-6)
    with pytest.raises(ValueError, match="mode"):
        A.imagenet_utils.preprocess_input(x, mode="keras")
    with pytest.raises(ValueError, match="data_format"):
        A.imagenet_utils.preprocess_input(x, data_format="nhwc")


def test_preprocess_input_in_a_functional_model():
    inputs = tf.keras.Input((8, 8, 3))
    outputs = A.mobilenet_v2.preprocess_input(inputs)
    model = tf.keras.Model(inputs, outputs)
    x = np.full((1, 8, 8, 3), 255.0, "float32")
    np.testing.assert_allclose(model(x).numpy(), np.ones((1, 8, 8, 3)))


def test_decode_predictions_checks_the_shape_and_needs_the_class_index(tmp_path, monkeypatch):
    with pytest.raises(ValueError, match=r"\(samples, 1000\)"):
        A.imagenet_utils.decode_predictions(np.zeros((2, 10)))
    monkeypatch.setenv("HOME", str(tmp_path))
    monkeypatch.setattr(A.imagenet_utils, "_CLASS_INDEX", None)
    with pytest.raises(ConnectionError, match="imagenet_class_index.json"):
        A.resnet.decode_predictions(np.zeros((1, 1000)))


def test_missing_application_says_not_yet_in_simdist():
    with pytest.raises(AttributeError, match="tf.keras.applications.EfficientNetB0 is not yet"):
        A.EfficientNetB0  # noqa: B018


@pytest.mark.parametrize(
    "builder",
    [
        lambda: A.ResNet50(weights=None, input_shape=(32, 32, 3), classes=10),
        lambda: A.ResNet50V2(weights=None, input_shape=(32, 32, 3), classes=10),
        lambda: A.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, weights=None, classes=10),
        lambda: A.VGG16(weights=None, input_shape=(32, 32, 3), classes=10),
    ],
)
def test_cost_model_prices_every_layer(builder):
    model = builder()
    costs = layer_costs(model, (32, 32, 3), batch=4)
    assert all(cost.priced for cost in costs)
    kinds = {cost.kind for cost in costs}
    assert {"Conv2D", "Dense"} <= kinds
    assert sum(cost.param_count for cost in costs) == sum(
        int(np.prod(w.shape)) for w in model.trainable_weights
    )
    merges = [c for c in costs if c.kind == "Add"]
    assert all(c.forward and c.forward[0].flops > 0 for c in merges)


def test_concatenate_is_priced():
    a, b = tf.keras.Input((4, 4, 3)), tf.keras.Input((4, 4, 5))
    model = tf.keras.Model([a, b], tf.keras.layers.Concatenate()([a, b]))
    (cost,) = layer_costs(model, (4, 4, 3), batch=2)
    assert cost.priced and cost.output_shape == (4, 4, 8)
    assert cost.forward[0].flops == 0 and cost.forward[0].nbytes == 2 * (2 * 4 * 4 * 8) * 4


def test_profile_counts_every_layer_of_a_fit_under_mirrored_strategy():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        model = A.MobileNetV2(input_shape=(32, 32, 3), alpha=0.35, weights=None, classes=4)
        model.compile(optimizer="sgd", loss="sparse_categorical_crossentropy")
    x = np.random.default_rng(0).standard_normal((4, 32, 32, 3)).astype("float32")
    y = np.array([0, 1, 2, 3])
    with sim.profile(topology="dgx-a100") as prof:
        model.fit(x, y, batch_size=4, epochs=1, verbose=0)
    report = prof.report()
    assert not prof.uncounted and not report.uncounted
    assert len(report.steps) == 1 and report.total_compute_time > 0


def test_cost_step_prices_an_application_model_by_name(capsys):
    from simdist.cli import main

    argv = ["cost", "step", "--model", "applications.MobileNetV2", "--input-shape", "224,224,3",
            "--topology", "dgx-a100", "--batch-per-device", "32", "--devices", "1,8"]
    assert main(argv) == 0
    out = capsys.readouterr().out
    assert out.startswith("# applications.MobileNetV2 on dgx-a100")
    rows = [line.split() for line in out.splitlines() if line.strip().startswith(("1 ", "8 "))]
    assert [row[0] for row in rows] == ["1", "8"] and all(float(row[2]) > 0 for row in rows)
    assert "unpriced" not in out
