"""Differential tests of models against real TF 2.21 + tf_keras: Functional and subclassed
models trained with ``fit`` under the default strategy and MirroredStrategy with 2 and 4
replicas, (Sync)BatchNormalization across replicas, and ``summary()``'s text.

simdist's initial weights are copied into TF's model; losses per epoch, final weights and
predictions are compared. All cases run in one TF subprocess.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.keras import tf_differential as tf_oracle

pytestmark = [
    pytest.mark.slow,
    pytest.mark.tensorflow,
    pytest.mark.skipif(not tf_oracle.tf_available(), reason="needs the tensorflow extra"),
]

# TF's collective all-reduce mixes up instance keys between several MirroredStrategy
# objects in one process ("Shape mismatch in the collective instance"); every case reduces
# through one device instead (same sums, no collective ops), in TF and in simdist alike.
_MIRRORED = textwrap.dedent(
    """
    def mirrored(tf, devices):
        return tf.distribute.MirroredStrategy(
            devices, cross_device_ops=tf.distribute.ReductionToOneDevice())
    """
)

_FIT = _MIRRORED + textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        L = tf.keras.layers
        tf.random.set_seed(0)  # simdist's initial weights (TF's are overwritten with them)
        rng = np.random.default_rng(0)
        a = rng.standard_normal((32, 4)).astype("float32")
        seq = rng.standard_normal((32, 3, 2)).astype("float32")
        y_reg = (a[:, :1] * 0.5 + seq[:, -1, :1]).astype("float32")
        y_cls = (a[:, 1] > 0).astype("int64")
        strategy = mirrored(tf, devices) if len(devices) > 1 else tf.distribute.get_strategy()
        with strategy.scope():
            ia = tf.keras.Input((4,), name="a")
            iseq = tf.keras.Input((3, 2), name="seq")
            shared = L.Dense(5, activation="tanh", name="shared")
            x = L.LayerNormalization(name="ln")(shared(ia))
            r = L.GRU(4, name="gru")(iseq)
            again = shared(L.Dense(4)(r))  # the shared layer's second call
            z = L.Concatenate(name="cat")([x, r, L.Multiply(name="mul")([x, again])])
            z = L.BatchNormalization(name="bn")(z)
            reg = L.Dense(1, name="reg")(z)
            cls = L.Dense(2, name="cls")(L.Dropout(0.0)(z))
            model = tf.keras.Model([ia, iseq], [reg, cls])
            if weights is not None:
                model.set_weights(weights)
            start = model.get_weights()
            model.compile(
                optimizer=tf.keras.optimizers.SGD(learning_rate=0.05),
                loss=["mse", tf.keras.losses.SparseCategoricalCrossentropy(from_logits=True)],
                loss_weights=[1.0, 0.5],
                metrics={"cls": ["accuracy"]},
                run_eagerly=True,  # TF traces nothing: the same steps, seconds not minutes
            )
        # 16 per step: 4 per replica at 4 replicas (BatchNormalization over 2 examples would
        # amplify rounding differences past any useful tolerance).
        history = model.fit([a, seq], [y_reg, y_cls], batch_size=16, epochs=2, shuffle=False,
                            verbose=0, validation_data=([a[:8], seq[:8]], [y_reg[:8], y_cls[:8]]))
        h = history.history
        pred = model.predict([a[:6], seq[:6]], verbose=0)
        return {"weights": start, "loss": h["loss"], "reg_loss": h["reg_loss"],
                "cls_loss": h["cls_loss"], "acc": h["cls_accuracy"], "val_loss": h["val_loss"],
                "final": model.get_weights(), "pred": list(pred)}
    """
)

_SUBCLASSED = _MIRRORED + textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        L = tf.keras.layers

        class Block(tf.keras.layers.Layer):
            def __init__(self, units, **kwargs):
                super().__init__(**kwargs)
                self.units = units

            def build(self, input_shape):
                self.w = self.add_weight("w", shape=(int(input_shape[-1]), self.units),
                                         initializer="glorot_uniform")
                self.b = self.add_weight("b", shape=(self.units,), initializer="zeros")

            def call(self, inputs, training=None):
                out = tf.matmul(inputs, self.w) + self.b
                self.add_loss(0.01 * tf.reduce_sum(tf.square(self.w)))
                return tf.nn.relu(out)

        class Net(tf.keras.Model):
            def __init__(self):
                super().__init__()
                self.block = Block(6)
                self.conv = L.Conv1D(3, 2, padding="causal")
                self.pool = L.GlobalAveragePooling1D()
                self.out = L.Dense(1)

            def call(self, inputs, training=None):
                h = self.conv(inputs)
                return self.out(self.block(self.pool(h)))

        rng = np.random.default_rng(1)
        x = rng.standard_normal((16, 5, 2)).astype("float32")
        y = rng.standard_normal((16, 1)).astype("float32")
        strategy = mirrored(tf, devices) if len(devices) > 1 else tf.distribute.get_strategy()
        with strategy.scope():
            net = Net()
            net(x[:1])
            if weights is not None:
                net.set_weights(weights)
            start = net.get_weights()
            net.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss="mse", run_eagerly=True)
        h = net.fit(x, y, batch_size=8, epochs=3, shuffle=False, verbose=0,
                    sample_weight=np.linspace(0.5, 1.5, 16).astype("float32")).history
        return {"weights": start, "loss": h["loss"], "final": net.get_weights()}
    """
)

_BN = _MIRRORED.replace("{", "{{").replace("}", "}}") + textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        layer_cls = {cls}
        strategy = mirrored(tf, devices)
        batch = np.random.default_rng(5).standard_normal((8, 3)).astype("float32") * 2 + 1
        parts = np.split(batch, len(devices))
        with strategy.scope():
            layer = layer_cls(momentum=0.7)
            layer.build((None, 3))
        values = strategy.experimental_distribute_values_from_function(
            lambda ctx: tf.constant(parts[ctx.replica_id_in_sync_group]))

        def step(x):
            with tf.GradientTape() as tape:
                y = layer(x, training=True)
                loss = tf.reduce_sum(y * y + y)
            return y, tape.gradient(loss, layer.gamma)

        ys, grads = strategy.run(step, args=(values,))
        outs = [np.asarray(v) for v in strategy.experimental_local_results(ys)]
        return {{"out": outs, "grad": np.asarray(strategy.reduce("SUM", grads, axis=None)),
                 "moving_mean": np.asarray(layer.moving_mean),
                 "moving_variance": np.asarray(layer.moving_variance)}}
    """
)

_SUMMARY = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        import re
        L = tf.keras.layers
        lines = []
        a = tf.keras.Input((3,), name="a")
        b = tf.keras.Input((2,), name="b")
        x = L.Dense(4, name="da")(a)
        y = L.Dense(4, name="db")(b)
        m = tf.keras.Model([a, b], L.Dense(1, name="head")(
            L.Concatenate(name="cat")([L.Add(name="sum")([x, y]), a])), name="two")
        m.summary(print_fn=lines.append)
        i = tf.keras.Input((5, 2), name="i")
        chain = tf.keras.Model(i, L.Dense(2, name="d2")(L.LSTM(3, name="lstm")(i)), name="c")
        chain.summary(print_fn=lines.append)
        shared = L.Dense(2, name="sh")
        p, q = tf.keras.Input((3,), name="p"), tf.keras.Input((3,), name="q")
        siamese = tf.keras.Model([p, q], L.Subtract(name="sub")([shared(p), shared(q)]),
                                 name="s")
        siamese.summary(print_fn=lines.append)
        text = [re.sub(r" \\([0-9.]+ [KMG]?Byte\\)", "", line) for line in lines]
        return {"text": np.array(text)}
    """
)

SOURCES = {"summary": (_SUMMARY, 1)}
for n in (1, 2, 4):
    SOURCES[f"functional_fit_{n}"] = (_FIT, n)
for n in (1, 2):
    SOURCES[f"subclassed_fit_{n}"] = (_SUBCLASSED, n)
for n in (2, 4):
    SOURCES[f"batch_norm_{n}"] = (_BN.format(cls="tf.keras.layers.BatchNormalization"), n)
    SOURCES[f"sync_batch_norm_{n}"] = (
        _BN.format(cls="tf.keras.layers.experimental.SyncBatchNormalization"),
        n,
    )


@pytest.fixture(scope="module")
def compared():
    ours = {name: tf_oracle.run_simdist(src, n) for name, (src, n) in SOURCES.items()}
    theirs, failures = tf_oracle.run_tf(
        {name: (src, ours[name], n) for name, (src, n) in SOURCES.items()}
    )
    return ours, theirs, failures


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_model_matches_tf(compared, name):
    ours, theirs, failures = compared
    assert name not in failures, failures.get(name)
    # Training for a few steps lets float32 rounding (summation orders) grow: 1e-4 there.
    tolerance = 1e-4 if "fit" in name else 2e-5
    tf_oracle.assert_match(name, ours[name], theirs[name], rtol=10 * tolerance, atol=tolerance)
