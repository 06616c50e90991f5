"""``tf.keras.utils`` on simdist and on real TF 2.21 + tf_keras: one TF process.

``to_categorical`` and ``normalize`` on the same inputs must be identical (``normalize``
within 1e-12); ``fit`` on a ``Sequence`` (no shuffle) gives the losses and weights of TF's
``fit`` on it within float32 rounding (``rtol=1e-5, atol=1e-6``).
"""

from __future__ import annotations

import textwrap

import pytest

from tests.keras import tf_differential as tf_oracle

pytestmark = [
    pytest.mark.tensorflow,
    pytest.mark.skipif(not tf_oracle.tf_available(), reason="needs the tensorflow extra"),
]

HELPERS = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        u = tf.keras.utils
        rng = np.random.default_rng(0)
        x = rng.standard_normal((3, 4))
        x[1] = 0.0
        return {
            "onehot": [u.to_categorical([0, 2, 1]), u.to_categorical([[1], [0]], 3),
                       u.to_categorical([[0, 1], [2, 1]], 4, dtype="int32"),
                       u.to_categorical([-1, 0], 3)],
            "normalized": [u.normalize(x), u.normalize(x, axis=0, order=1),
                           u.normalize(x[0], order=2)],
            "packed": [np.asarray(u.unpack_x_y_sample_weight((1, 2))[2] is None),
                       np.asarray(len(u.pack_x_y_sample_weight(1, 2, 3)))],
        }
    """
)

SEQUENCE_FIT = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        rng = np.random.default_rng(1)
        x = rng.standard_normal((20, 3)).astype("float32")
        y = (x @ np.array([[1.0], [2.0], [-1.0]], "float32")).astype("float32")

        class Batches(tf.keras.utils.Sequence):
            def __len__(self):
                return 3

            def __getitem__(self, i):
                return x[i * 8:(i + 1) * 8], y[i * 8:(i + 1) * 8]

        model = tf.keras.Sequential([tf.keras.layers.Dense(1, input_shape=(3,))])
        if weights is not None:
            model.set_weights(weights)
        start = model.get_weights()
        model.compile(tf.keras.optimizers.SGD(0.1), "mse")
        history = model.fit(Batches(), epochs=3, shuffle=False, verbose=0)
        return {"weights": start, "loss": history.history["loss"],
                "after": model.get_weights()}
    """
)


def test_utils_match_tensorflow():
    ours = {
        "helpers": tf_oracle.run_simdist(HELPERS),
        "sequence_fit": tf_oracle.run_simdist(SEQUENCE_FIT),
    }
    theirs, failures = tf_oracle.run_tf(
        {
            "helpers": (HELPERS, ours["helpers"], 1),
            "sequence_fit": (SEQUENCE_FIT, ours["sequence_fit"], 1),
        }
    )
    assert not failures, failures
    tf_oracle.assert_match("helpers", ours["helpers"], theirs["helpers"], rtol=0, atol=1e-12)
    tf_oracle.assert_match(
        "sequence_fit", ours["sequence_fit"], theirs["sequence_fit"], rtol=1e-5, atol=1e-6
    )
