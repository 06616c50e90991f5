"""The new layers describe their compute for the cost model (core's compute protocol)."""

from __future__ import annotations

import math

import numpy as np
import pytest

import simdist as tf
from simdist.core.compute_description import describe_compute

L = tf.keras.layers

CASES = [
    (lambda: L.Reshape((4, -1)), (2, 6)),
    (lambda: L.Permute((2, 1)), (3, 4)),
    (lambda: L.RepeatVector(3), (5,)),
    (lambda: L.ZeroPadding2D(1), (4, 4, 2)),
    (lambda: L.UpSampling2D(2), (3, 3, 2)),
    (lambda: L.GlobalAveragePooling2D(), (4, 4, 3)),
    (lambda: L.GlobalMaxPooling1D(), (6, 3)),
    (lambda: L.Conv1D(4, 3, padding="causal", activation="relu"), (10, 2)),
    (lambda: L.LayerNormalization(), (5, 6)),
    (lambda: L.BatchNormalization(), (7,)),
    (lambda: L.experimental.SyncBatchNormalization(), (7,)),
    (lambda: L.SimpleRNN(3, return_sequences=True), (4, 2)),
    (lambda: L.LSTM(3), (5, 2)),
    (lambda: L.GRU(3), (5, 2)),
    (lambda: L.GRU(3, reset_after=False), (5, 2)),
    (lambda: L.Rescaling(0.5), (3,)),
    (lambda: L.Normalization(mean=0.0, variance=1.0), (3,)),
]


@pytest.mark.parametrize("make, shape", CASES, ids=[str(i) for i in range(len(CASES))])
def test_description_matches_the_layer(make, shape):
    layer = make()
    out = layer(np.zeros((2, *shape), "float32"))
    description = describe_compute(layer, shape, batch=8, bytes_per_element=4)
    assert description is not None
    assert description.output_shape == tuple(out.shape[1:])
    assert sum(description.params) == sum(
        int(np.prod(tuple(w.shape))) for w in layer.trainable_weights
    )
    for kernel in (*description.forward, *description.weight_grads, *description.input_grads):
        assert kernel.flops >= 0 and kernel.nbytes > 0


def test_conv1d_and_lstm_flops_are_the_gemms():
    conv = L.Conv1D(4, 3)
    conv(np.zeros((1, 10, 2), "float32"))
    gemm = describe_compute(conv, (10, 2), batch=8, bytes_per_element=4).forward[0]
    assert gemm.matmul and gemm.flops == 2 * 8 * 8 * 4 * 3 * 2  # outputs * k * channels
    lstm = L.LSTM(3)
    lstm(np.zeros((1, 5, 2), "float32"))
    description = describe_compute(lstm, (5, 2), batch=8, bytes_per_element=4)
    gemm_flops = sum(k.flops for k in description.forward if k.matmul)
    assert gemm_flops == 5 * (2 * 8 * 2 * 12 + 2 * 8 * 3 * 12)


def test_embedding_and_lookups():
    embedding = L.Embedding(10, 4)
    embedding(np.zeros((1, 3), "int32"))
    description = describe_compute(embedding, (3,), batch=2, bytes_per_element=4)
    assert description.output_shape == (3, 4) and description.params == (40,)
    assert describe_compute(L.StringLookup(vocabulary=["a"]), (3,), 2, 4) is None
    assert math.isclose(description.forward[0].flops, 0.0)
