"""A compiled loss function that returns a scalar (rank 0), against TF 2.21 + tf_keras.

Keras 2 reduces such a loss like per-example losses broadcast over the batch (so it is scaled
by the mean sample weight) and then divides it by the number of replicas; the loss values of
``fit`` and the weights it reaches must be TF's, with and without sample weights, on 1 and 2
replicas.
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

_CASE = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        rng = np.random.default_rng(3)
        x = rng.standard_normal((16, 3)).astype("float32")
        y = (x @ np.array([[1.0], [-2.0], [0.5]], "float32")).astype("float32")
        sample_weight = rng.uniform(0.5, 2.0, 16).astype("float32") if WEIGHTED else None
        if len(devices) > 1:
            strategy = tf.distribute.MirroredStrategy(
                devices, cross_device_ops=tf.distribute.ReductionToOneDevice())
        else:
            strategy = tf.distribute.get_strategy()

        def scalar_loss(y_true, y_pred):  # one number for the whole batch
            return tf.reduce_mean(tf.square(y_true - y_pred)) + tf.reduce_max(y_pred) * 0.1

        with strategy.scope():
            model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
            if weights is not None:
                model.set_weights(weights)
            start = model.get_weights()
            model.compile(optimizer=tf.keras.optimizers.SGD(0.1), loss=scalar_loss)
        history = model.fit(x, y, sample_weight=sample_weight, batch_size=8, epochs=3,
                            shuffle=False, verbose=0)
        evaluated = model.evaluate(x, y, sample_weight=sample_weight, batch_size=8, verbose=0)
        return {"weights": start, "loss": np.array(history.history["loss"]),
                "after": model.get_weights(), "evaluate": np.array(evaluated)}
    """
)

SOURCES = {
    f"{kind}_{n}": (f"WEIGHTED = {kind == 'weighted'}\n" + _CASE, n)
    for kind in ("plain", "weighted")
    for n in (1, 2)
}


@pytest.fixture(scope="module")
def compared():
    ours = {name: tf_oracle.run_simdist(src, n) for name, (src, n) in SOURCES.items()}
    theirs, failures = tf_oracle.run_tf(
        {name: (src, ours[name], n) for name, (src, n) in SOURCES.items()}
    )
    return ours, theirs, failures


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_scalar_loss_matches_tf(compared, name):
    ours, theirs, failures = compared
    assert name not in failures, failures.get(name)
    tf_oracle.assert_match(name, ours[name], theirs[name], rtol=1e-5, atol=1e-6)
