"""``tf.keras.mixed_precision``: policies, layers under ``mixed_float16``, loss scaling.

The dynamic loss scale's schedule is checked against a small model of Keras 2's rule written
here (``_ReferenceScale``), on random runs of finite and non-finite steps; under
MirroredStrategy every replica must skip exactly the steps whose summed gradients are not
finite.
"""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf
from simdist.keras.mixed_precision import loss_scale

mp = tf.keras.mixed_precision


@pytest.fixture(autouse=True)
def _float32_afterwards():
    yield
    mp.set_global_policy(None)


# --- policies ---------------------------------------------------------------------------------
def test_policy_dtypes():
    mixed = mp.Policy("mixed_float16")
    assert (mixed.name, mixed.compute_dtype, mixed.variable_dtype) == (
        "mixed_float16",
        "float16",
        "float32",
    )
    assert (mp.Policy("float64").compute_dtype, mp.Policy("float64").variable_dtype) == (
        "float64",
        "float64",
    )
    assert repr(mixed) == '<Policy "mixed_float16">'
    assert mp.Policy.from_config(mixed.get_config()) == mixed


@pytest.mark.parametrize(
    "name, error, words",
    [
        (tf.float16, TypeError, "not a DType"),
        (3, TypeError, "must be a string"),
        ("foo", ValueError, "Cannot convert value foo"),
        ("mixed_bfloat16", ValueError, "NumPy has no bfloat16"),
        ("bfloat16", ValueError, "NumPy has no bfloat16"),
        ("float16_with_float32_vars", ValueError, "'_float32_vars' have been removed"),
    ],
)
def test_bad_policy_names(name, error, words):
    with pytest.raises(error, match=words):
        mp.Policy(name)


def test_global_policy_is_read_at_construction():
    assert mp.global_policy().name == "float32"
    before = tf.keras.layers.Dense(2)
    mp.set_global_policy("mixed_float16")
    assert mp.global_policy() == mp.Policy("mixed_float16")
    after = tf.keras.layers.Dense(2)
    explicit = tf.keras.layers.Dense(2, dtype="float32")
    assert before.dtype_policy.name == "float32"
    assert (after.compute_dtype, after.variable_dtype, after.dtype) == (
        "float16",
        "float32",
        "float32",
    )
    assert explicit.compute_dtype == "float32"
    mp.set_global_policy(None)
    assert mp.global_policy().name == "float32"
    with pytest.raises(ValueError, match="floating-point policies"):
        mp.set_global_policy("int32")


class _Probe(tf.keras.layers.Layer):
    """Records the dtype its weight reads as, inside its call."""

    def build(self, input_shape):
        self.w = self.add_weight("w", shape=(int(input_shape[-1]),), initializer="ones")
        self.raw = self.add_weight("raw", shape=(), initializer="ones", experimental_autocast=False)

    def call(self, x):
        self.seen = (
            tf.convert_to_tensor(self.w).dtype.name,
            tf.convert_to_tensor(self.raw).dtype.name,
        )
        return x * self.w


def test_weights_read_as_compute_dtype_only_inside_the_call():
    probe = _Probe(dtype="mixed_float16")
    out = probe(np.ones((2, 3), np.float32))
    assert out.dtype == tf.float16
    assert probe.seen == ("float16", "float32")  # experimental_autocast=False: not cast
    assert probe.w.dtype == tf.float32
    assert tf.convert_to_tensor(probe.w).dtype == tf.float32  # outside the call


def test_a_float32_layer_inside_a_mixed_model_reads_float32():
    inner = _Probe(dtype="float32")
    outer_probe = _Probe(dtype="mixed_float16")

    class Outer(tf.keras.layers.Layer):
        def __init__(self):
            super().__init__(dtype="mixed_float16")
            self.a, self.b = outer_probe, inner

        def call(self, x):
            return self.b(self.a(x))

    out = Outer()(np.ones((1, 2), np.float32))
    assert outer_probe.seen[0] == "float16" and inner.seen[0] == "float32"
    assert out.dtype == tf.float32  # the float32 layer cast its float16 input back


def test_mixed_dense_gradients_are_float32():
    mp.set_global_policy("mixed_float16")
    model = tf.keras.Sequential(
        [tf.keras.layers.Dense(4), tf.keras.layers.Activation("linear", dtype="float32")]
    )
    x = np.random.default_rng(0).standard_normal((3, 2)).astype(np.float32)
    with tf.GradientTape() as tape:
        y = model(x)
        loss = tf.reduce_sum(y)
    assert model.layers[0](x).dtype == tf.float16 and y.dtype == tf.float32
    grads = tape.gradient(loss, model.trainable_variables)
    assert [g.dtype for g in grads] == [tf.float32, tf.float32]
    kernel = model.layers[0].kernel.numpy()
    column_sums = x.astype(np.float16).astype(np.float64).sum(0)[:, None]
    expected = column_sums * np.ones_like(kernel)  # d(sum(x @ k)) / dk, rounded in float16
    np.testing.assert_allclose(grads[0].numpy(), expected, rtol=2e-3)


def test_layer_config_serializes_the_policy():
    layer = tf.keras.layers.Dense(2, dtype="mixed_float16")
    config = layer.get_config()
    assert config["dtype"] == {
        "module": "keras.mixed_precision",
        "class_name": "Policy",
        "config": {"name": "mixed_float16"},
        "registered_name": None,
    }
    assert tf.keras.layers.Dense.from_config(config).compute_dtype == "float16"
    assert tf.keras.layers.Dense(2).get_config()["dtype"] == "float32"


# --- the loss scale ---------------------------------------------------------------------------
def test_defaults_and_scaling():
    opt = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(0.1))
    assert (opt.dynamic, opt.initial_scale, opt.dynamic_growth_steps) == (True, 32768.0, 2000)
    assert float(opt.loss_scale.numpy()) == 32768.0 and opt.loss_scale.dtype == tf.float32
    assert int(opt.dynamic_counter.numpy()) == 0
    assert float(opt.get_scaled_loss(tf.constant(0.5)).numpy()) == 16384.0
    assert float(opt.get_scaled_loss(lambda: tf.constant(2.0))().numpy()) == 65536.0
    grads = opt.get_unscaled_gradients([tf.constant([32768.0, 3.0]), None])
    np.testing.assert_array_equal(grads[0].numpy(), [1.0, 3.0 / 32768.0])
    assert grads[1] is None
    assert opt.learning_rate is opt.inner_optimizer.learning_rate


def test_constructor_errors():
    sgd = tf.keras.optimizers.SGD()
    with pytest.raises(TypeError, match="must be a bool"):
        mp.LossScaleOptimizer(sgd, "dynamic")
    # (as TF, the inner optimizer counts as wrapped once these checks are reached)
    with pytest.raises(ValueError, match='"initial_scale" must be specified'):
        mp.LossScaleOptimizer(tf.keras.optimizers.SGD(), dynamic=False)
    with pytest.raises(ValueError, match="must be None if"):
        mp.LossScaleOptimizer(
            tf.keras.optimizers.SGD(), dynamic=False, initial_scale=8, dynamic_growth_steps=2
        )
    with pytest.raises(TypeError, match="must be an instance of Optimizer"):
        mp.LossScaleOptimizer("sgd")
    wrapped = mp.LossScaleOptimizer(sgd)
    with pytest.raises(TypeError, match="cannot wrap another"):
        mp.LossScaleOptimizer(wrapped)
    with pytest.raises(ValueError, match="already wrapped"):
        mp.LossScaleOptimizer(sgd)


def test_static_scale_applies_every_step():
    var = tf.Variable([1.0])
    opt = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), dynamic=False, initial_scale=4)
    assert opt.dynamic_counter is None and opt.dynamic_growth_steps is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        opt.apply_gradients([(tf.constant([np.inf]), var)])
    assert np.isneginf(var.numpy()[0]) and float(opt.loss_scale.numpy()) == 4.0


def test_unscaled_apply_warns():
    opt = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0))
    with pytest.warns(UserWarning, match="get_scaled_loss"):
        opt.apply_gradients([(tf.constant([1.0]), tf.Variable([1.0]))])


class _ReferenceScale:
    """Keras 2's dynamic loss scale, on Python floats (float32 overflow kept explicit)."""

    def __init__(self, scale, growth_steps):
        self.scale, self.counter, self.growth_steps = scale, 0, growth_steps

    def step(self, finite: bool) -> bool:
        if not finite:
            self.scale, self.counter = max(self.scale / 2, 1.0), 0
            return False
        if self.counter + 1 >= self.growth_steps:
            if self.scale * 2 <= float(np.finfo(np.float32).max):
                self.scale *= 2
            self.counter = 0
        else:
            self.counter += 1
        return True


_SCALES = st.one_of(
    st.sampled_from([1.0, 2.0**15, 2.0**127, 3.0]),
    st.integers(0, 40).map(lambda e: 2.0**e),
)


@given(
    scale=_SCALES,
    growth=st.integers(1, 4),
    steps=st.lists(st.sampled_from(["finite", "inf", "nan"]), min_size=1, max_size=12),
)
def test_schedule_matches_the_reference(scale, growth, steps):
    var = tf.Variable([0.0, 0.0])
    opt = mp.LossScaleOptimizer(
        tf.keras.optimizers.SGD(1.0), initial_scale=scale, dynamic_growth_steps=growth
    )
    opt._loss_has_been_scaled = opt._gradients_have_been_unscaled = True
    model = _ReferenceScale(scale, growth)
    expected_var = 0.0
    for i, kind in enumerate(steps):
        bad = {"finite": 1.0, "inf": np.inf, "nan": np.nan}[kind]
        opt.apply_gradients([(tf.constant([1.0, bad]), var)])
        if model.step(kind == "finite"):
            expected_var -= 1.0
        assert float(opt.loss_scale.numpy()) == np.float32(model.scale)
        assert int(opt.dynamic_counter.numpy()) == model.counter
        assert int(opt.iterations.numpy()) == i + 1  # skipped steps count too, as TF
        assert var.numpy()[0] == expected_var  # a skipped step leaves the variable


def test_next_state_rule_directly():
    assert loss_scale.next_state(2.0**15, 1999, True, 2000) == (2.0**16, 0)
    assert loss_scale.next_state(2.0**15, 1998, True, 2000) == (2.0**15, 1999)
    assert loss_scale.next_state(1.0, 5, False, 2000) == (1.0, 0)
    assert loss_scale.next_state(2.0**127, 0, True, 1) == (2.0**127, 0)  # 2**128 is inf


# --- under a strategy: every replica decides the same ------------------------------------------
def _mirrored_step(strategy, blown, aggregate=True):
    """One apply_gradients where the replicas in ``blown`` have an infinite gradient."""
    with strategy.scope():
        var = tf.Variable([1.0, 2.0])
        opt = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(0.5), initial_scale=8.0)
    opt._loss_has_been_scaled = opt._gradients_have_been_unscaled = True

    def step():
        rid = int(tf.distribute.get_replica_context().replica_id_in_sync_group.numpy())
        grad = tf.constant([np.inf if rid in blown else 1.0, 1.0])
        opt.apply_gradients([(grad, var)], skip_gradients_aggregation=not aggregate)

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        strategy.run(step)
    return [v.numpy() for v in strategy.experimental_local_results(var)], opt


@given(blown=st.sets(st.integers(0, 3)))
def test_every_replica_skips_when_any_sum_is_not_finite(blown):
    strategy = tf.distribute.MirroredStrategy([f"GPU:{i}" for i in range(4)])
    copies, opt = _mirrored_step(strategy, blown)
    expected = [1.0, 2.0] if blown else [1.0 - 0.5 * 4, 2.0 - 0.5 * 4]
    for copy in copies:
        np.testing.assert_array_equal(copy, expected)
    assert float(opt.loss_scale.numpy()) == (4.0 if blown else 8.0)
    assert int(opt.iterations.numpy()) == 1


def test_without_aggregation_replica_0_decides_as_in_tf():
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    copies, opt = _mirrored_step(strategy, {1}, aggregate=False)
    np.testing.assert_array_equal(copies[0], [0.5, 1.5])  # replica 0 was finite: applied
    assert np.isneginf(copies[1][0])  # replica 1's own infinite gradient went in
    assert float(opt.loss_scale.numpy()) == 8.0
    copies, opt = _mirrored_step(strategy, {0}, aggregate=False)
    np.testing.assert_array_equal(copies[1], [1.0, 2.0])  # replica 0 not finite: all skip
    assert float(opt.loss_scale.numpy()) == 4.0


# --- compile, fit, checkpoints ---------------------------------------------------------------
def test_compile_wraps_under_mixed_float16_only():
    model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(2,))])
    model.compile("sgd", "mse")
    assert type(model.optimizer).__name__ == "SGD"
    mp.set_global_policy("mixed_float16")
    model = tf.keras.Sequential(
        [
            tf.keras.layers.Dense(1, input_shape=(2,)),
            tf.keras.layers.Activation("linear", dtype="float32"),
        ]
    )
    model.compile(tf.keras.optimizers.SGD(0.05), "mse")
    assert isinstance(model.optimizer, mp.LossScaleOptimizer)
    rng = np.random.default_rng(0)
    x = rng.standard_normal((64, 2)).astype(np.float32)
    y = x @ np.array([[1.0], [-2.0]], np.float32)
    history = model.fit(x, y, batch_size=16, epochs=4, verbose=0)
    assert history.history["loss"][-1] < history.history["loss"][0]
    assert int(model.optimizer.iterations.numpy()) == 16
    # the first steps' scaled mse gradients overflow float16: skipped, the scale halved
    skipped = int(np.log2(32768.0 / float(model.optimizer.loss_scale.numpy())))
    assert skipped >= 1 and int(model.optimizer.dynamic_counter.numpy()) <= 16 - skipped
    config = tf.keras.optimizers.serialize(model.optimizer)
    again = tf.keras.optimizers.deserialize(config)
    assert isinstance(again, mp.LossScaleOptimizer) and again.initial_scale == 32768.0


def test_checkpoint_keeps_the_loss_scale(tmp_path):
    var = tf.Variable([1.0])
    opt = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), initial_scale=64.0)
    opt._loss_has_been_scaled = opt._gradients_have_been_unscaled = True
    opt.apply_gradients([(tf.constant([np.inf]), var)])
    path = tf.train.Checkpoint(optimizer=opt, var=var).save(str(tmp_path / "ckpt"))
    fresh = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(1.0), initial_scale=64.0)
    tf.train.Checkpoint(optimizer=fresh, var=tf.Variable([0.0])).restore(path)
    assert float(fresh.loss_scale.numpy()) == 32.0 and int(fresh.iterations.numpy()) == 1


def test_a_saved_mixed_model_loads_with_its_loss_scale(tmp_path):
    mp.set_global_policy("mixed_float16")
    inputs = tf.keras.Input((3,))
    hidden = tf.keras.layers.Dense(4, activation="relu")(inputs)
    outputs = tf.keras.layers.Activation("linear", dtype="float32")(
        tf.keras.layers.Dense(1)(hidden)
    )
    model = tf.keras.Model(inputs, outputs)
    model.compile(tf.keras.optimizers.Adam(0.01), "mse")
    x = np.random.default_rng(0).random((16, 3)).astype(np.float32)
    opt = model.optimizer
    opt._loss_scale.current_loss_scale.assign(512.0)  # a state a fresh optimizer lacks
    model.fit(x, x.sum(1, keepdims=True), epochs=1, verbose=0)
    model.save(str(tmp_path / "mixed"))
    mp.set_global_policy(None)
    loaded = tf.keras.models.load_model(str(tmp_path / "mixed"))
    assert isinstance(loaded.optimizer, mp.LossScaleOptimizer)
    assert type(loaded.optimizer.inner_optimizer).__name__ == "Adam"
    assert loaded.layers[1].compute_dtype == "float16"  # the policy is in the layer config
    assert float(loaded.optimizer.loss_scale.numpy()) == float(opt.loss_scale.numpy())
    assert int(loaded.optimizer.iterations.numpy()) == 1
    np.testing.assert_array_equal(loaded.predict(x, verbose=0), model.predict(x, verbose=0))


@pytest.mark.parametrize("form", ["callable", "tensor"])
def test_minimize_scales_and_unscales(form):
    var = tf.Variable([2.0])
    opt = mp.LossScaleOptimizer(tf.keras.optimizers.SGD(0.5), initial_scale=2.0**20)
    if form == "callable":
        opt.minimize(lambda: tf.reduce_sum(var * var), [var])
    else:
        with tf.GradientTape() as tape:
            loss = tf.reduce_sum(var * var)
        opt.minimize(loss, [var], tape=tape)
    np.testing.assert_array_equal(var.numpy(), [2.0 - 0.5 * 4.0])  # the unscaled gradient
    assert float(opt.loss_scale.numpy()) == 2.0**20 and int(opt.dynamic_counter.numpy()) == 1
