"""Differential tests: each new layer on simdist and on real TF 2.21 + tf_keras, same weights.

Each case builds the layer on inputs from a fixed seed, copies simdist's initial weights into
TF's layer, and compares the outputs, the gradients of a random projection of the outputs
with respect to the inputs and to every trainable weight, and the weights after the call
(BatchNormalization's moving statistics). Stateful and weighted layers also run under
MirroredStrategy with 2 and 4 replicas. All cases run in one TF subprocess.
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

_LAYER_CASE = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        rng = np.random.default_rng({seed})
        shapes = {shapes}
        xs = [rng.standard_normal(s).astype("float32") for s in shapes]
        layer = {expr}
        inputs = [tf.constant(x) for x in xs]
        arg = inputs if {multi} else inputs[0]
        layer(arg)
        if weights is not None:
            layer.set_weights(weights)
        start = layer.get_weights()
        with tf.GradientTape() as tape:
            for t in inputs:
                tape.watch(t)
            out = layer(arg, training={training})
            outs = list(out) if isinstance(out, (list, tuple)) else [out]
            proj = np.random.default_rng(1)
            loss = tf.add_n([
                tf.reduce_sum(o * proj.standard_normal(tuple(o.shape)).astype("float32"))
                for o in outs
            ])
        grads = tape.gradient(loss, inputs + list(layer.trainable_weights))
        return {{
            "weights": start,
            "out": [o.numpy() for o in outs],
            "grads": [np.zeros(1) if g is None else g.numpy() for g in grads],
            "after": layer.get_weights(),
        }}
    """
)

# Under MirroredStrategy: the layer is made in the strategy's scope, each replica calls it on
# its slice of the batch, the weight gradients are summed over replicas, and the weights read
# afterwards (BatchNormalization's moving statistics: the MEAN of the replicas' copies).
_MIRRORED_LAYER_CASE = textwrap.dedent(
    """
    def case(tf, np, weights, devices):
        strategy = tf.distribute.MirroredStrategy(
            devices, cross_device_ops=tf.distribute.ReductionToOneDevice())
        rng = np.random.default_rng({seed})
        x = rng.standard_normal({shape}).astype("float32")
        parts = np.split(x, len(devices))
        with strategy.scope():
            layer = {expr}
            layer(tf.constant(parts[0]))
            if weights is not None:
                layer.set_weights(weights)
        start = layer.get_weights()
        values = strategy.experimental_distribute_values_from_function(
            lambda ctx: tf.constant(parts[ctx.replica_id_in_sync_group]))

        def step(inputs):
            with tf.GradientTape() as tape:
                out = layer(inputs, training=True)
                loss = tf.reduce_sum(out * out * 0.5 + out)
            return out, tape.gradient(loss, layer.trainable_weights)

        outs, grads = strategy.run(step, args=(values,))
        local = [np.asarray(v) for v in strategy.experimental_local_results(outs)]
        summed = [np.asarray(strategy.reduce("SUM", g, axis=None)) for g in grads]
        return {{"weights": start, "out": local, "grads": summed,
                 "after": layer.get_weights()}}
    """
)

L = "tf.keras.layers."
LAYER_CASES = {
    "reshape": (L + "Reshape((4, -1))", [(2, 3, 4)]),
    "permute": (L + "Permute((2, 1))", [(2, 3, 4)]),
    "repeat_vector": (L + "RepeatVector(3)", [(2, 4)]),
    "zero_padding2d": (L + "ZeroPadding2D(((1, 0), (2, 1)))", [(2, 3, 3, 2)]),
    "upsampling2d": (L + "UpSampling2D((2, 3))", [(2, 2, 3, 2)]),
    "add": (L + "Add()", [(2, 3), (2, 3), (2, 3)]),
    "subtract": (L + "Subtract()", [(2, 3), (2, 3)]),
    "multiply": (L + "Multiply()", [(2, 3), (2, 3)]),
    "average": (L + "Average()", [(2, 3), (2, 3), (2, 3)]),
    "maximum": (L + "Maximum()", [(2, 3), (2, 3)]),
    "minimum": (L + "Minimum()", [(2, 3), (2, 3)]),
    "concatenate": (L + "Concatenate(axis=1)", [(2, 3, 2), (2, 1, 2)]),
    "gap2d": (L + "GlobalAveragePooling2D()", [(2, 3, 4, 2)]),
    "gmp2d": (L + "GlobalMaxPooling2D(keepdims=True)", [(2, 3, 4, 2)]),
    "gap1d": (L + "GlobalAveragePooling1D()", [(2, 5, 3)]),
    "gmp1d": (L + "GlobalMaxPooling1D()", [(2, 5, 3)]),
    "avgpool2d": (L + "AveragePooling2D(2, strides=1, padding='same')", [(2, 4, 4, 2)]),
    "conv1d_valid": (L + "Conv1D(3, 3, activation='relu')", [(2, 7, 2)]),
    "conv1d_same_stride": (L + "Conv1D(4, 2, strides=2, padding='same')", [(2, 7, 3)]),
    "conv1d_causal_dilated": (L + "Conv1D(2, 3, padding='causal', dilation_rate=2)", [(2, 8, 2)]),
    "layer_norm": (L + "LayerNormalization()", [(3, 5)]),
    "layer_norm_axes": (L + "LayerNormalization(axis=[1, 2], epsilon=1e-5)", [(2, 3, 4)]),
    "batch_norm_train": (L + "BatchNormalization(momentum=0.9)", [(6, 4)]),
    "batch_norm_infer": (L + "BatchNormalization(moving_mean_initializer='ones')", [(6, 4)]),
    "batch_norm_conv": (L + "BatchNormalization(axis=-1)", [(4, 3, 3, 2)]),
    "batch_norm_axis1": (L + "BatchNormalization(axis=1, center=False)", [(4, 3, 5)]),
    "simple_rnn": (L + "SimpleRNN(3, return_sequences=True)", [(2, 4, 2)]),
    "simple_rnn_state_back": (
        L + "SimpleRNN(3, return_state=True, go_backwards=True)",
        [(2, 4, 2)],
    ),
    "lstm": (L + "LSTM(3)", [(2, 5, 2)]),
    "lstm_seq_state": (L + "LSTM(2, return_sequences=True, return_state=True)", [(3, 4, 3)]),
    "gru": (L + "GRU(3, return_sequences=True)", [(2, 5, 2)]),
    "gru_state": (L + "GRU(2, return_state=True)", [(2, 3, 4)]),
    "gru_reset_before": (L + "GRU(3, reset_after=False, return_sequences=True)", [(2, 4, 2)]),
    "rescaling": (L + "Rescaling(0.5, offset=-1.0)", [(2, 3)]),
    "normalization_given": (
        L + "Normalization(mean=[1.0, 2.0, 3.0], variance=[1.0, 4.0, 0.25])",
        [(4, 3)],
    ),
    "dropout_infer": (L + "Dropout(0.5)", [(3, 4)]),
}
TRAINING_OFF = {"batch_norm_infer", "dropout_infer"}

_MISC_CASES = {
    "embedding": textwrap.dedent(
        """
        def case(tf, np, weights, devices):
            layer = tf.keras.layers.Embedding(7, 3)
            ids = tf.constant(np.array([[1, 2, 2], [6, 0, 1]], "int32"))
            layer(ids)
            if weights is not None:
                layer.set_weights(weights)
            start = layer.get_weights()
            with tf.GradientTape() as tape:
                out = layer(ids)
                loss = tf.reduce_sum(out * np.arange(18, dtype="float32").reshape(2, 3, 3))
            grad = tape.gradient(loss, layer.embeddings)
            grad = tf.convert_to_tensor(grad).numpy()
            return {"weights": start, "out": out.numpy(), "grad": grad}
        """
    ),
    "normalization_adapt": textwrap.dedent(
        """
        def case(tf, np, weights, devices):
            data = np.random.default_rng(3).standard_normal((50, 3)).astype("float32") * 4 + 2
            layer = tf.keras.layers.Normalization()
            layer.adapt(data, batch_size=16)
            x = data[:5]
            return {"out": layer(x).numpy(), "mean": layer.mean.numpy(),
                    "variance": layer.variance.numpy()}
        """
    ),
    "lookups": textwrap.dedent(
        """
        def case(tf, np, weights, devices):
            L = tf.keras.layers
            words = ["b", "a", "c", "a", "b", "d", "b", "e", "e", "f"]
            probe = ["a", "zz", "e", "", "q", "f"]
            out = {}
            for i, kw in enumerate([{}, {"num_oov_indices": 3}, {"mask_token": ""},
                                    {"max_tokens": 4}, {"output_mode": "one_hot"},
                                    {"output_mode": "multi_hot", "mask_token": ""},
                                    {"output_mode": "count", "num_oov_indices": 2}]):
                s = L.StringLookup(**kw)
                s.adapt(words)
                out[f"s{i}"] = s(probe if kw.get("output_mode", "int") in ("int", "one_hot")
                                 else [probe, probe[::-1]]).numpy()
                out[f"v{i}"] = np.array(s.get_vocabulary(), dtype=object).astype(str)
            inv = L.StringLookup(vocabulary=["x", "y"], invert=True)
            out["inv"] = inv(np.array([0, 1, 2, 1])).numpy()
            ints = [5, 3, 5, 7, 7, 7, 11]
            for i, kw in enumerate([{}, {"mask_token": 0, "num_oov_indices": 2},
                                    {"output_mode": "multi_hot"}]):
                n = L.IntegerLookup(**kw)
                n.adapt(ints)
                probe_i = np.array([[0, 5, 3, 9], [11, 12, 7, 7]])
                out[f"i{i}"] = n(probe_i).numpy()
                out[f"iv{i}"] = np.array(n.get_vocabulary())
            for mode in ("one_hot", "multi_hot", "count"):
                c = L.CategoryEncoding(num_tokens=5, output_mode=mode)
                pairs = np.array([[1], [4]]) if mode == "one_hot" else np.array([[1, 4], [3, 3]])
                out[f"c_{mode}"] = c(pairs).numpy()
                out[f"c1_{mode}"] = c(np.array([1, 4, 0])).numpy()
            c = L.CategoryEncoding(num_tokens=5, output_mode="count")
            out["c_weighted"] = c(np.array([[1, 1], [4, 0]]),
                                  count_weights=np.array([[0.5, 2.0], [1.0, 3.0]])).numpy()
            return out
        """
    ),
    "hashing": textwrap.dedent(
        """
        def case(tf, np, weights, devices):
            rng = np.random.default_rng(11)
            alphabet = list("abcdefghijklmnopqrstuvwxyz0123456789 _-é")
            strings = ["", "a", "hello", "x" * 16, "y" * 17, "z" * 33, "w" * 64, "v" * 65,
                       "u" * 200] + ["".join(rng.choice(alphabet, size=int(rng.integers(0, 140))))
                                     for _ in range(2000)]
            L = tf.keras.layers
            out = {"fast": L.Hashing(num_bins=2**31 - 1)(strings).numpy(),
                   "bins7": L.Hashing(num_bins=7)(strings).numpy(),
                   "mask": L.Hashing(num_bins=9, mask_value="")(strings[:200]).numpy(),
                   "ints": L.Hashing(num_bins=13)(np.arange(-50, 300).reshape(50, 7)).numpy(),
                   "salt": L.Hashing(num_bins=1000, salt=[3, 12345678901])(strings[:500]).numpy(),
                   "salt_int": L.Hashing(num_bins=97, salt=7)(strings[:500]).numpy(),
                   "one_hot": L.Hashing(num_bins=4, output_mode="one_hot")(strings[:20]).numpy()}
            return out
        """
    ),
}


def _layer_source(name: str) -> str:
    expr, shapes = LAYER_CASES[name]
    return _LAYER_CASE.format(
        seed=sum(map(ord, name)),
        shapes=repr(shapes),
        expr=expr,
        multi=len(shapes) > 1,
        training=name not in TRAINING_OFF,
    )


SOURCES = {**{name: _layer_source(name) for name in LAYER_CASES}, **_MISC_CASES}
DEVICES = dict.fromkeys(SOURCES, 1)
MIRRORED_CASES = {
    "conv1d": (L + "Conv1D(3, 2, padding='causal', activation='relu')", (8, 5, 2)),
    "layer_norm": (L + "LayerNormalization()", (8, 5)),
    "batch_norm": (L + "BatchNormalization(momentum=0.8)", (8, 3)),
    "batch_norm_4d": (L + "BatchNormalization(momentum=0.8)", (8, 2, 2, 3)),
    "sync_batch_norm": (L + "experimental.SyncBatchNormalization(momentum=0.8)", (8, 3)),
    "simple_rnn": (L + "SimpleRNN(3, return_sequences=True)", (8, 3, 2)),
    "lstm": (L + "LSTM(3)", (8, 4, 2)),
    "gru": (L + "GRU(2, return_sequences=True)", (8, 3, 2)),
    "reshape_permute": (L + "Permute((2, 1))", (8, 3, 2)),
    "upsampling2d": (L + "UpSampling2D(2)", (8, 2, 2, 1)),
    "global_max_pool": (L + "GlobalMaxPooling2D()", (8, 3, 3, 2)),
    "rescaling": (L + "Rescaling(2.0, offset=0.5)", (8, 3)),
}
for _name, (_expr, _shape) in MIRRORED_CASES.items():
    for _n in (2, 4):
        key = f"mirrored{_n}_{_name}"
        SOURCES[key] = _MIRRORED_LAYER_CASE.format(
            seed=sum(map(ord, _name)), shape=repr(_shape), expr=_expr
        )
        DEVICES[key] = _n


@pytest.fixture(scope="module")
def compared():
    ours = {name: tf_oracle.run_simdist(src, DEVICES[name]) for name, src in SOURCES.items()}
    theirs, failures = tf_oracle.run_tf(
        {name: (src, ours[name], DEVICES[name]) for name, src in SOURCES.items()}
    )
    return ours, theirs, failures


@pytest.mark.parametrize("name", sorted(SOURCES))
def test_layer_matches_tf(compared, name):
    ours, theirs, failures = compared
    assert name not in failures, failures.get(name)
    tolerance = 1e-4 if "rnn" in name or "lstm" in name or "gru" in name else 2e-5
    tf_oracle.assert_match(name, ours[name], theirs[name], rtol=tolerance, atol=tolerance)
