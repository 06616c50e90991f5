"""get / serialize / deserialize of optimizers, losses, metrics, regularizers, constraints,
initializers: Keras 2's identifiers, configs and errors; regularizers and constraints on
layers; optimizer options (weight decay, clipping precedence, EMA)."""

from __future__ import annotations

import numpy as np
import pytest

import simdist as tf
from simdist import keras


@pytest.mark.parametrize(
    "name,cls",
    [
        ("rmsprop", keras.optimizers.RMSprop),
        ("Adagrad", keras.optimizers.Adagrad),
        ("adamax", keras.optimizers.Adamax),
        ("Nadam", keras.optimizers.Nadam),
        ("adamw", keras.optimizers.AdamW),
        ("SGD", keras.optimizers.SGD),
        ("adadelta", keras.optimizers.Adadelta),
        ("Ftrl", keras.optimizers.Ftrl),
    ],
)
def test_optimizers_by_name_and_config_round_trip(name, cls):
    opt = keras.optimizers.get(name)
    assert type(opt) is cls
    clone = keras.optimizers.deserialize(keras.optimizers.serialize(opt))
    assert type(clone) is cls and clone.get_config() == opt.get_config()


def test_optimizer_identifier_errors():
    with pytest.raises(ValueError, match="Unknown optimizer: 'lion'. It is not yet in"):
        keras.optimizers.get("lion")
    with pytest.raises(ValueError, match="Could not interpret optimizer identifier: 3"):
        keras.optimizers.get(3)
    with pytest.raises(ValueError, match="ema_momentum"):
        keras.optimizers.Adam(use_ema=True, ema_momentum=-0.1)
    with pytest.raises(ValueError, match="weight_decay"):
        keras.optimizers.AdamW(weight_decay=None)


def test_schedules_serialize_inside_the_optimizer_config():
    schedule = keras.optimizers.schedules.CosineDecay(0.1, 10, alpha=0.1, warmup_target=0.2,
                                                      warmup_steps=5)  # fmt: skip
    opt = keras.optimizers.Nadam(learning_rate=schedule)
    clone = keras.optimizers.Nadam.from_config(opt.get_config())
    assert isinstance(clone.learning_rate, keras.optimizers.schedules.CosineDecay)
    assert clone.learning_rate.get_config() == schedule.get_config()
    with pytest.raises(ValueError, match="decay_steps must be positive"):
        keras.optimizers.schedules.PolynomialDecay(0.1, 0)


def test_weight_decay_skips_excluded_variables():
    w = tf.Variable(np.ones(2, np.float32), name="kernel")
    b = tf.Variable(np.ones(2, np.float32), name="bias")
    opt = keras.optimizers.SGD(learning_rate=0.5, weight_decay=0.1)
    opt.exclude_from_weight_decay(var_names=["bias"])
    zero = tf.constant(np.zeros(2, np.float32))
    opt.apply_gradients([(zero, w), (zero, b)])
    np.testing.assert_allclose(w.numpy(), 1 - 0.5 * 0.1)
    np.testing.assert_array_equal(b.numpy(), [1.0, 1.0])
    with pytest.raises(ValueError, match="before the optimizer is built"):
        opt.exclude_from_weight_decay(var_names=["kernel"])


def test_clipnorm_takes_precedence_over_clipvalue_as_in_keras():
    w = tf.Variable(np.zeros(2, np.float32))
    opt = keras.optimizers.SGD(learning_rate=1.0, clipnorm=1.0, clipvalue=0.1)
    opt.apply_gradients([(tf.constant(np.array([3.0, 4.0], np.float32)), w)])
    np.testing.assert_allclose(w.numpy(), [-0.6, -0.8], rtol=1e-6)  # norm-clipped only


def test_adagrad_starts_its_accumulator_at_the_initial_value():
    w = tf.Variable(np.zeros(3, np.float32))
    opt = keras.optimizers.Adagrad(initial_accumulator_value=0.3)
    opt.build([w])
    np.testing.assert_allclose(opt.get_slot(w, "accumulator").numpy(), 0.3)
    with pytest.raises(ValueError, match="initial_accumulator_value"):
        keras.optimizers.Adagrad(initial_accumulator_value=-1)


def test_loss_identifiers():
    assert keras.losses.get("huber") is keras.losses.huber
    assert keras.losses.get("kld") is keras.losses.kl_divergence
    assert isinstance(keras.losses.get("CosineSimilarity"), keras.losses.CosineSimilarity)
    assert keras.losses.get(None) is None
    huber = keras.losses.get({"class_name": "Huber", "config": {"delta": 2.0}})
    assert huber.get_config()["delta"] == 2.0 and huber.get_config()["fn"] == "huber"
    with pytest.raises(ValueError, match="Unknown loss function: 'Foo'"):
        keras.losses.get({"class_name": "Foo", "config": {}})
    with pytest.raises(ValueError, match="Could not interpret loss function identifier: 3"):
        keras.losses.get(3)


def test_metric_identifiers():
    assert isinstance(keras.metrics.get("AUC"), keras.metrics.AUC)
    assert keras.metrics.get("acc") is keras.metrics.accuracy
    assert keras.metrics.get("top_k_categorical_accuracy") is (
        keras.metrics.top_k_categorical_accuracy
    )
    with pytest.raises(ValueError, match="Unknown metric function: 'auc'"):
        keras.metrics.get("auc")  # Keras 2 returns the string; simdist says what is wrong
    with pytest.raises(ValueError, match="Could not interpret metric identifier: None"):
        keras.metrics.get(None)


def test_accuracy_for_follows_keras_shape_rule():
    binary = keras.metrics.accuracy_for(np.zeros((4, 1)), np.zeros((4, 1)))
    sparse = keras.metrics.accuracy_for(np.zeros((4,)), np.zeros((4, 3)))
    sparse_column = keras.metrics.accuracy_for(np.zeros((4, 1)), np.zeros((4, 3)))
    categorical = keras.metrics.accuracy_for(np.zeros((4, 3)), np.zeros((4, 3)))
    assert binary is keras.metrics.binary_accuracy
    assert sparse is sparse_column is keras.metrics.sparse_categorical_accuracy
    assert categorical is keras.metrics.categorical_accuracy


def test_auc_and_threshold_errors():
    with pytest.raises(ValueError, match="num_thresholds"):
        keras.metrics.AUC(num_thresholds=1)
    with pytest.raises(ValueError, match="Invalid AUC curve"):
        keras.metrics.AUC(curve="DET")
    with pytest.raises(ValueError, match="label_weights"):
        keras.metrics.AUC(multi_label=True, label_weights=[-1.0])
    with pytest.raises(ValueError, match=r"Threshold values must be in \[0, 1\]"):
        keras.metrics.Precision(thresholds=[1.5])


def test_regularizers_and_constraints_by_name():
    assert isinstance(keras.regularizers.get("l2"), keras.regularizers.L2)
    assert keras.regularizers.get("l1_l2").get_config() == pytest.approx({"l1": 0.01, "l2": 0.01})
    assert keras.regularizers.l2(0.1).get_config() == {"l2": float(np.float32(0.1))}
    with pytest.raises(ValueError, match="Unknown regularizer: 'foo'"):
        keras.regularizers.get("foo")
    with pytest.raises(ValueError, match="not a valid regularization penalty"):
        keras.regularizers.L1(float("nan"))
    assert isinstance(keras.constraints.get("non_neg"), keras.constraints.NonNeg)
    max_norm = keras.constraints.get({"class_name": "MaxNorm", "config": {"max_value": 3}})
    assert max_norm.max_value == 3
    with pytest.raises(ValueError, match="Could not interpret constraint function identifier"):
        keras.constraints.get(3)
    assert isinstance(keras.initializers.get("he_normal"), keras.initializers.HeNormal)


def test_constraint_values():
    w = np.array([[3.0, -4.0], [4.0, 3.0]], np.float32)  # column norms 5, 5
    np.testing.assert_allclose(keras.constraints.NonNeg()(w).numpy(), [[3, 0], [4, 3]])
    np.testing.assert_allclose(keras.constraints.MaxNorm(1.0)(w).numpy(), w / 5, rtol=1e-6)
    np.testing.assert_allclose(keras.constraints.UnitNorm()(w).numpy(), w / 5, rtol=1e-6)
    half = keras.constraints.MinMaxNorm(0.0, 1.0, rate=0.5)(w).numpy()
    np.testing.assert_allclose(half, w * 3 / 5, rtol=1e-6)  # norm 5 -> 0.5 * 1 + 0.5 * 5


def test_dense_regularizers_feed_model_losses_and_config():
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(
                2,
                input_shape=(3,),
                kernel_regularizer="l2",
                bias_regularizer=tf.keras.regularizers.l1(0.5),
                activity_regularizer=tf.keras.regularizers.L1L2(l2=0.25),
                kernel_constraint="non_neg",
            )
        ]
    )
    kernel = np.arange(6, dtype=np.float32).reshape(3, 2)
    model.set_weights([kernel, np.array([1.0, -2.0], np.float32)])
    assert len(model.losses) == 2  # the activity loss appears with the first call
    x = np.ones((4, 3), np.float32)
    out = model(x).numpy()
    losses = [float(v) for v in model.losses]
    np.testing.assert_allclose(
        losses,
        [0.01 * np.sum(kernel**2), 0.5 * 3.0, 0.25 * np.sum(out**2) / 4],
        rtol=1e-5,
    )
    config = model.layers[0].get_config()
    assert config["kernel_regularizer"]["class_name"] == "L2"
    assert config["kernel_constraint"]["class_name"] == "NonNeg"
    conv = tf.keras.layers.Conv2D(2, 3, kernel_regularizer="l1", activity_regularizer="l2")
    conv(np.ones((1, 5, 5, 1), np.float32))
    assert len(conv.losses) == 2
    # Conv1D shares Conv2D's base: its activity regularizer counts too (it was ignored)
    conv1d = tf.keras.layers.Conv1D(2, 3, activity_regularizer="l2")
    out = conv1d(np.ones((2, 5, 1), np.float32)).numpy()
    (penalty,) = conv1d.losses
    np.testing.assert_allclose(penalty.numpy(), 0.01 * np.sum(out**2) / 2, rtol=1e-5)
    assert conv1d.kernel_size == (3,) and conv1d.get_config()["kernel_size"] == (3,)


def test_a_regularized_loss_has_a_gradient():
    layer = tf.keras.layers.Dense(
        1, use_bias=False, kernel_regularizer=tf.keras.regularizers.l2(0.5)
    )
    layer.build((None, 2))
    layer.set_weights([np.array([[1.0], [-2.0]], np.float32)])
    with tf.GradientTape() as tape:
        penalty = tf.add_n(layer.losses)
    (grad,) = tape.gradient(penalty, layer.trainable_weights)
    np.testing.assert_allclose(grad.numpy(), [[1.0], [-2.0]])  # d(0.5 w^2)/dw = w


@pytest.mark.parametrize(
    "make",
    [
        lambda: keras.optimizers.RMSprop(momentum=0.5, centered=True),
        lambda: keras.optimizers.Adagrad(),
        lambda: keras.optimizers.Adamax(),
        lambda: keras.optimizers.Nadam(),
        lambda: keras.optimizers.AdamW(),
        lambda: keras.optimizers.SGD(momentum=0.9),
        lambda: keras.optimizers.Adadelta(),
        lambda: keras.optimizers.Ftrl(),
    ],
)
def test_every_slot_is_mirrored_like_its_variable(make):
    from simdist.distribute.distributed_variables import MirroredVariable

    strategy = tf.distribute.MirroredStrategy(["/gpu:0", "/gpu:1"])
    with strategy.scope():
        w = tf.Variable(np.ones((2, 2), np.float32))
        opt = make()
    grads = strategy.experimental_distribute_values_from_function(
        lambda ctx: tf.constant(np.full((2, 2), ctx.replica_id_in_sync_group + 1.0, np.float32))
    )
    strategy.run(lambda g: opt.apply_gradients([(g, w)]), args=(grads,))
    for name in opt.get_slot_names():
        slot = opt.get_slot(w, name)
        assert isinstance(slot, MirroredVariable), name
        first, second = (np.asarray(v.numpy()) for v in slot.values)
        np.testing.assert_array_equal(first, second)
    assert int(opt.iterations.numpy()) == 1


def test_orthogonal_and_identity_initializers_by_name():
    q = tf.keras.initializers.get("orthogonal")((4, 3)).numpy()
    np.testing.assert_allclose(q.T @ q, np.eye(3), atol=1e-6)
    wide = tf.keras.initializers.Orthogonal(gain=2.0, seed=3)((2, 5)).numpy()
    np.testing.assert_allclose(wide @ wide.T, 4 * np.eye(2), atol=1e-5)
    np.testing.assert_array_equal(wide, tf.keras.initializers.Orthogonal(2.0, seed=3)((2, 5)))
    np.testing.assert_array_equal(tf.keras.initializers.get("identity")((2, 3)), np.eye(2, 3))
    with pytest.raises(ValueError, match="at least two-dimensional"):
        tf.keras.initializers.Orthogonal()((3,))
    with pytest.raises(ValueError, match="only be used for 2D"):
        tf.keras.initializers.Identity()((2, 2, 2))
