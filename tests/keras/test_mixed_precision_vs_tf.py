"""Mixed precision on simdist and on real TF 2.21 + tf_keras (``TF_USE_LEGACY_KERAS=1``).

The programs, run on both sides from the same initial weights:

* the policies' dtypes: the global policy, an Input's (float32), a Functional model's,
  Embedding / LSTM / LayerNormalization outputs under ``mixed_float16``, a layer config's
  serialized policy, and the errors of bad policies;

* a custom loop (the guide's ``get_scaled_loss`` / ``get_unscaled_gradients``) whose first
  scale (2**24) overflows float16, so the dynamic scale halves and skips steps until the
  gradients fit, then grows every 3 finite steps;
* the same under MirroredStrategy (2 replicas) with replica 1's loss made non-finite on
  one step: both replicas must skip that step;
* ``model.compile`` / ``model.fit`` under MirroredStrategy with the global policy
  ``mixed_float16`` (compile wraps the optimizer in a LossScaleOptimizer);
* Conv2D, BatchNormalization, pooling, Dense under ``mixed_float16``: every layer's output
  dtype, the weights' dtypes, outputs, gradients and BatchNormalization's moving statistics.

The loss scales, the good-step counters, ``iterations`` and the dtypes must be identical;
losses and weights agree within float16 rounding: ``rtol=atol=2e-3`` (float16's machine
epsilon is 9.8e-4; NumPy and TF's CPU kernels round float16 products and sums differently),
``conv_bn``'s gradients within ``rtol=1e-2, atol=5e-3``.
"""

from __future__ import annotations

import textwrap

import numpy as np
import pytest

from tests.keras import tf_differential as tf_oracle

pytestmark = [
    pytest.mark.tensorflow,
    pytest.mark.skipif(not tf_oracle.tf_available(), reason="needs the tensorflow extra"),
]

RTOL = ATOL = 2e-3
# conv_bn's gradients are sums of ~100 float16 products (largest difference seen: 2e-3)
TOLERANCE = {"conv_bn": (1e-2, 5e-3)}
EXACT = ("scale", "counter", "iterations", "dtypes", "skipped", "optimizer")
NOT_COMPARED = ("peak",)  # the largest scaled gradient per step: checked for margin below

# simdist draws the weights from a fixed seed and TF starts from them: with weights drawn
# afresh each run, some runs put a step's float16 gradients within rounding of float16's
# largest value (65504), where NumPy's and TF's kernels may disagree on the overflow.
_MODEL = textwrap.dedent(
    """
    if weights is None:
        tf.keras.utils.set_random_seed(1)
    model = tf.keras.Sequential([
        tf.keras.layers.Dense(6, activation="relu"),
        tf.keras.layers.Dense(3),
        tf.keras.layers.Activation("softmax", dtype="float32"),
    ])
    model(x[:1])
    if weights is not None:
        model.set_weights(weights)
    start = model.get_weights()
    """
)


def _program(source: str) -> str:
    """``source`` with the model block put at ``# MODEL``, at that line's indentation."""
    source = textwrap.dedent(source)
    line = next(x for x in source.splitlines() if x.strip() == "# MODEL")
    indent = line[: len(line) - len(line.lstrip())]
    return source.replace(line + "\n", textwrap.indent(_MODEL.lstrip("\n"), indent))


CUSTOM_LOOP = _program(
    """
    def case(tf, np, weights, devices):
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        try:
            rng = np.random.default_rng(0)
            x = rng.standard_normal((16, 5)).astype("float32")
            y = rng.integers(0, 3, 16)
            # MODEL
            opt = tf.keras.mixed_precision.LossScaleOptimizer(
                tf.keras.optimizers.SGD(0.5), initial_scale=2.0 ** 24, dynamic_growth_steps=3)
            loss_fn = tf.keras.losses.SparseCategoricalCrossentropy()
            losses, scales, counters, iters, after, peaks = [], [], [], [], [], []
            for step in range(14):
                with tf.GradientTape() as tape:
                    pred = model(x)
                    loss = loss_fn(y, pred)
                    scaled = opt.get_scaled_loss(loss)
                scaled_grads = tape.gradient(scaled, model.trainable_variables)
                peaks.append(max(float(np.max(np.abs(g.numpy()))) for g in scaled_grads))
                grads = opt.get_unscaled_gradients(scaled_grads)
                opt.apply_gradients(zip(grads, model.trainable_variables))
                losses.append(loss.numpy())
                scales.append(opt.loss_scale.numpy())
                counters.append(opt.dynamic_counter.numpy())
                iters.append(opt.iterations.numpy())
                after.extend(model.get_weights())
            layer = model.layers[0]
            return {"weights": start, "loss": losses, "scale": scales, "counter": counters,
                    "iterations": iters, "after": after, "peak": peaks,
                    "dtypes": [pred.dtype.name, layer(x).dtype.name, layer.compute_dtype,
                               layer.dtype, layer.kernel.dtype.name,
                               layer.dtype_policy.name, opt.initial_scale,
                               opt.dynamic_growth_steps]}
        finally:
            tf.keras.mixed_precision.set_global_policy("float32")
    """
)

MIRRORED_SKIP = _program(
    """
    def case(tf, np, weights, devices):
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        try:
            strategy = tf.distribute.MirroredStrategy(devices)
            rng = np.random.default_rng(1)
            x = rng.standard_normal((8, 5)).astype("float32")
            y = rng.integers(0, 3, 8)
            with strategy.scope():
                # MODEL
                opt = tf.keras.mixed_precision.LossScaleOptimizer(
                    tf.keras.optimizers.SGD(0.5), initial_scale=256.0,
                    dynamic_growth_steps=2)
            loss_fn = tf.keras.losses.SparseCategoricalCrossentropy(
                reduction=tf.keras.losses.Reduction.NONE)
            dataset = tf.data.Dataset.from_tensor_slices((x, y)).batch(8).repeat(6)
            batches = iter(strategy.experimental_distribute_dataset(dataset))

            def step(xb, yb, blow_up):
                ctx = tf.distribute.get_replica_context()
                with tf.GradientTape() as tape:
                    pred = model(xb)
                    loss = tf.nn.compute_average_loss(loss_fn(yb, pred), global_batch_size=8)
                    # on a blow-up step, replica 1's loss (and so its gradients) is infinite
                    on_replica_1 = tf.cast(ctx.replica_id_in_sync_group, tf.float32)
                    loss = loss * (1.0 + blow_up * on_replica_1 * 1e38 * 10.0)
                    scaled = opt.get_scaled_loss(loss)
                grads = opt.get_unscaled_gradients(
                    tape.gradient(scaled, model.trainable_variables))
                opt.apply_gradients(zip(grads, model.trainable_variables))
                return loss

            scales, counters, iters, after = [], [], [], []
            for i in range(6):
                xb, yb = next(batches)
                strategy.run(step, args=(xb, yb, tf.constant(1.0 if i == 2 else 0.0)))
                scales.append(opt.loss_scale.numpy())
                counters.append(opt.dynamic_counter.numpy())
                iters.append(opt.iterations.numpy())
                for w in model.trainable_variables:
                    after.extend(v.numpy() for v in strategy.experimental_local_results(w))
            return {"weights": start, "scale": scales, "counter": counters,
                    "iterations": iters, "after": after}
        finally:
            tf.keras.mixed_precision.set_global_policy("float32")
    """
)

FIT = _program(
    """
    def case(tf, np, weights, devices):
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        try:
            strategy = tf.distribute.MirroredStrategy(devices)
            rng = np.random.default_rng(2)
            x = rng.standard_normal((32, 5)).astype("float32")
            y = rng.integers(0, 3, 32)
            with strategy.scope():
                # MODEL
                model.compile(optimizer=tf.keras.optimizers.SGD(0.3),
                              loss="sparse_categorical_crossentropy")
            history = model.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0)
            opt = model.optimizer
            return {"weights": start, "loss": history.history["loss"],
                    "after": model.get_weights(),
                    "scale": [opt.loss_scale.numpy()],
                    "counter": [opt.dynamic_counter.numpy()],
                    "iterations": [opt.iterations.numpy()],
                    "optimizer": [
                        isinstance(opt, tf.keras.mixed_precision.LossScaleOptimizer),
                        type(opt.inner_optimizer).__name__,
                        model.dtype_policy.name,
                    ]}
        finally:
            tf.keras.mixed_precision.set_global_policy("float32")
    """
)

CONV_BN = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        tf.keras.mixed_precision.set_global_policy("mixed_float16")
        try:
            rng = np.random.default_rng(3)
            x = rng.standard_normal((4, 6, 6, 2)).astype("float32")
            model = tf.keras.Sequential([
                tf.keras.layers.Conv2D(3, 3, activation="relu"),
                tf.keras.layers.BatchNormalization(),
                tf.keras.layers.MaxPooling2D(),
                tf.keras.layers.Flatten(),
                tf.keras.layers.Dropout(0.0),
                tf.keras.layers.Dense(2),
                tf.keras.layers.Activation("softmax", dtype="float32"),
            ])
            model(x[:1])
            if weights is not None:
                model.set_weights(weights)
            start = model.get_weights()
            with tf.GradientTape() as tape:
                out = model(x, training=True)
                loss = tf.reduce_sum(out * np.arange(8, dtype="float32").reshape(4, 2))
            grads = tape.gradient(loss, model.trainable_variables)
            h, dts = x, []
            for layer in model.layers:  # each layer's output dtype
                h = layer(h, training=False)
                dts.append(h.dtype.name)
            return {"weights": start, "out": out, "grads": grads, "after": model.get_weights(),
                    "dtypes": dts + [w.dtype.name for w in model.weights]}
        finally:
            tf.keras.mixed_precision.set_global_policy("float32")
    """
)

POLICIES = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        mp = tf.keras.mixed_precision
        facts = [mp.global_policy().name]
        mp.set_global_policy("mixed_float16")
        try:
            inputs = tf.keras.Input((3,))
            dense = tf.keras.layers.Dense(2)
            model = tf.keras.Model(inputs, dense(inputs))
            embedding = tf.keras.layers.Embedding(10, 4)
            lstm = tf.keras.layers.LSTM(3)
            norm = tf.keras.layers.LayerNormalization()
            x = np.ones((2, 4, 3), "float32")
            facts += [
                inputs.dtype.name, model.layers[0].dtype_policy.name, model.dtype_policy.name,
                model.output.dtype.name, dense.kernel.dtype.name,
                embedding(np.array([[1, 2]])).dtype.name, embedding.embeddings.dtype.name,
                lstm(x).dtype.name, norm(x).dtype.name,
                tf.keras.layers.Dense(1, dtype="float64").compute_dtype,
                str(sorted(tf.keras.layers.Dense(1).get_config()["dtype"]["config"].items())),
                repr(mp.Policy("mixed_float16")), mp.Policy("float16").variable_dtype,
            ]
            for bad in ("foo", "int32"):
                try:
                    mp.set_global_policy(bad)
                except ValueError as error:
                    facts.append(type(error).__name__ + ": " + str(error)[:40])
        finally:
            mp.set_global_policy(None)
        facts.append(mp.global_policy().name)
        return {"dtypes": facts}
    """
)

CASES = {
    "policies": (POLICIES, 1),
    "custom_loop": (CUSTOM_LOOP, 1),
    "fit": (FIT, 2),
    "conv_bn": (CONV_BN, 1),
    "mirrored_skip": (MIRRORED_SKIP, 2),
}
# TF's collectives fail ("Collective ops is aborted") when a second MirroredStrategy program
# runs in the process of a first one: one TF process per group.
GROUPS = (("policies", "custom_loop", "fit", "conv_bn"), ("mirrored_skip",))


@pytest.mark.parametrize("group", GROUPS, ids="+".join)
def test_mixed_precision_matches_tensorflow(group):
    ours = {name: tf_oracle.run_simdist(CASES[name][0], CASES[name][1]) for name in group}
    theirs, failures = tf_oracle.run_tf(
        {name: (CASES[name][0], ours[name], CASES[name][1]) for name in group}
    )
    assert not failures, failures
    for name in group:
        exact = {k: v for k, v in ours[name].items() if k in EXACT}
        tf_oracle.assert_match(name, exact, theirs[name], rtol=0, atol=0)
        rounded = {k: v for k, v in ours[name].items() if k not in EXACT + NOT_COMPARED}
        rtol, atol = TOLERANCE.get(name, (RTOL, ATOL))
        tf_oracle.assert_match(name, rounded, theirs[name], rtol=rtol, atol=atol)


def test_the_overflowing_start_skips_steps():
    """The custom loop's scale halves (steps skipped) before it grows: the case tests both."""
    out = tf_oracle.run_simdist(CUSTOM_LOOP)
    scales = [float(s) for s in out["scale"]]
    assert scales[0] < 2.0**24 and any(b > a for a, b in zip(scales[:-1], scales[1:], strict=True))
    losses = [float(v) for v in out["loss"]]
    assert losses[0] == losses[1]  # the first step was skipped: the weights did not move
    assert np.asarray(out["iterations"]).ravel().tolist() == list(range(1, 15))
    # No finite step comes near float16's overflow, where rounding could decide a skip: the
    # largest scaled gradient stays under 3/4 of float16's largest value.
    peaks = np.asarray(out["peak"]).ravel()
    assert np.max(peaks[np.isfinite(peaks)]) < 0.75 * np.finfo(np.float16).max
