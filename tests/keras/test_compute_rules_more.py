"""The attention, wrapper and transposed/depthwise convolution layers describe their compute
for the cost model: shapes and parameter counts as the layers have them, GEMM FLOPs."""

from __future__ import annotations

import numpy as np
import pytest

import simdist as tf
from simdist.core.compute_description import describe_compute

L = tf.keras.layers


CASES = [
    (lambda: L.Conv2DTranspose(3, 3, strides=2, padding="same", activation="relu"), (4, 4, 2)),
    (lambda: L.Conv2DTranspose(2, 2, output_padding=0, strides=1, use_bias=False), (3, 5, 2)),
    (lambda: L.Conv1DTranspose(4, 3, strides=2), (6, 2)),
    (lambda: L.DepthwiseConv2D(3, depth_multiplier=2, padding="same"), (5, 5, 3)),
    (lambda: L.DepthwiseConv2D(2, use_bias=False), (4, 4, 2)),
    (lambda: L.SeparableConv2D(4, 3, strides=2, depth_multiplier=2), (7, 7, 3)),
    (lambda: L.Cropping2D(((1, 0), (0, 2))), (4, 5, 2)),
    (lambda: L.DepthwiseConv1D(3, depth_multiplier=2, padding="same"), (6, 3)),
    (lambda: L.SeparableConv1D(4, 3, padding="causal"), (6, 3)),
    (lambda: L.TimeDistributed(L.Dense(3)), (4, 5)),
    (lambda: L.Bidirectional(L.LSTM(3, return_sequences=True)), (4, 2)),
    (lambda: L.Bidirectional(L.GRU(2), merge_mode="sum"), (4, 2)),
]


@pytest.mark.parametrize("make, shape", CASES, ids=[str(i) for i in range(len(CASES))])
def test_description_matches_the_layer(make, shape):
    layer = make()
    out = layer(np.zeros((2, *shape), "float32"))
    description = describe_compute(layer, shape, batch=8, bytes_per_element=4)
    assert description is not None
    assert description.output_shape == tuple(out.shape[1:])
    assert list(description.params) == [
        int(np.prod(tuple(w.shape))) for w in layer.trainable_weights
    ]
    for kernel in (*description.forward, *description.weight_grads, *description.input_grads):
        assert kernel.flops >= 0 and kernel.nbytes > 0


def test_conv_transpose_flops_are_the_transposed_convolutions():
    """A transposed convolution costs what the convolution it transposes costs."""
    transpose = L.Conv2DTranspose(3, 3, strides=2, padding="same")
    transpose(np.zeros((1, 4, 4, 2), "float32"))
    conv = L.Conv2D(2, 3, strides=2, padding="same")  # [8, 8, 3] -> [4, 4, 2]
    conv(np.zeros((1, 8, 8, 3), "float32"))
    t = describe_compute(transpose, (4, 4, 2), batch=8, bytes_per_element=4).forward[0]
    c = describe_compute(conv, (8, 8, 3), batch=8, bytes_per_element=4).forward[0]
    assert t.matmul and t.flops == c.flops == 2 * 8 * 16 * 9 * 2 * 3


def test_depthwise_and_separable_flops():
    dw = L.DepthwiseConv2D(3, depth_multiplier=2, padding="same")
    dw(np.zeros((1, 5, 5, 3), "float32"))
    kernel = describe_compute(dw, (5, 5, 3), batch=4, bytes_per_element=4).forward[0]
    assert not kernel.matmul and kernel.flops == 2 * 4 * 25 * 6 * 9
    sep = L.SeparableConv2D(4, 3, padding="same", depth_multiplier=2)
    sep(np.zeros((1, 5, 5, 3), "float32"))
    forward = describe_compute(sep, (5, 5, 3), batch=4, bytes_per_element=4).forward
    assert [k.flops for k in forward[:2]] == [2 * 4 * 25 * 6 * 9, 2 * 4 * 25 * 6 * 4]


def test_multi_head_attention_flops_once_built():
    mha = L.MultiHeadAttention(num_heads=2, key_dim=3, value_dim=4)
    assert describe_compute(mha, (5, 6), batch=2, bytes_per_element=4) is None  # not built
    mha(np.zeros((1, 5, 6), "float32"), np.zeros((1, 7, 8), "float32"))
    description = describe_compute(mha, (5, 6), batch=2, bytes_per_element=4)
    assert description.output_shape == (5, 6)
    assert sum(description.params) == mha.count_params()
    gemms = {k.name: k.flops for k in description.forward if k.matmul}
    assert gemms == {
        "query_projection": 2 * 2 * 5 * 6 * 6,
        "key_projection": 2 * 2 * 7 * 8 * 6,
        "value_projection": 2 * 2 * 7 * 8 * 8,
        "attention_scores": 2 * 2 * 2 * 5 * 3 * 7,
        "attention_combine": 2 * 2 * 2 * 5 * 7 * 4,
        "output_projection": 2 * 2 * 5 * 8 * 6,
    }


def test_attention_is_described_from_its_graph_node():
    att = L.Attention(use_scale=True)
    assert describe_compute(att, (5, 3), batch=2, bytes_per_element=4) is None  # no graph
    q, v = tf.keras.Input((5, 3)), tf.keras.Input((7, 4))
    out = att([q, v, L.Dense(3)(v)])  # value (7, 4), key (7, 3)
    assert tuple(out.shape[1:]) == (5, 4)
    description = describe_compute(att, (5, 3), batch=2, bytes_per_element=4)
    assert description.output_shape == (5, 4) and description.params == (1,)
    flops = {k.name: k.flops for k in description.forward}
    assert flops == {
        "attention_scores": 2 * 2 * 5 * 7 * 3,
        "softmax": 5 * 2 * 5 * 7,
        "attention_combine": 2 * 2 * 5 * 7 * 4,
    }
    additive = L.AdditiveAttention()
    additive([q, L.Dense(3)(v)])
    described = describe_compute(additive, (5, 3), batch=2, bytes_per_element=4)
    assert described.output_shape == (5, 3) and described.params == (3,)
    assert not described.forward[0].matmul
