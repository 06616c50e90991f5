"""Property: a Functional model over a random graph computes what calling its layers in order
computes, bit for bit, and lists each layer once, before every layer that reads it."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf

L = tf.keras.layers
WIDTH = 3


@st.composite
def graphs(draw):
    """A list of nodes: (kind, indices of earlier tensors); tensor 0 and 1 are inputs."""
    nodes = []
    for i in range(draw(st.integers(1, 6))):
        available = 2 + i
        kind = draw(st.sampled_from(["dense", "add", "multiply", "concat"]))
        arity = 1 if kind == "dense" else 2
        sources = draw(st.lists(st.integers(0, available - 1), min_size=arity, max_size=arity))
        nodes.append((kind, sources))
    outputs = draw(st.lists(st.integers(2, 1 + len(nodes)), min_size=1, max_size=2, unique=True))
    return nodes, outputs


def _layer(kind: str):
    if kind == "dense":
        return L.Dense(WIDTH, activation="tanh")
    if kind == "add":
        return L.Add()
    if kind == "multiply":
        return L.Multiply()
    return tf.keras.Sequential([L.Concatenate(), L.Dense(WIDTH)])  # a model as a layer


@settings(max_examples=25, deadline=None)
@given(graph=graphs(), seed=st.integers(0, 1000))
def test_random_graph_runs_like_its_layers(graph, seed):
    nodes, output_ids = graph
    inputs = [tf.keras.Input((WIDTH,)), tf.keras.Input((WIDTH,))]
    symbolic, layers = list(inputs), []
    for kind, sources in nodes:
        layer = _layer(kind)
        args = symbolic[sources[0]] if kind == "dense" else [symbolic[s] for s in sources]
        symbolic.append(layer(args))
        layers.append(layer)
    model = tf.keras.Model(inputs, [symbolic[i] for i in output_ids])
    rng = np.random.default_rng(seed)
    data = [rng.standard_normal((4, WIDTH)).astype("float32") for _ in range(2)]
    values = [tf.constant(d) for d in data]
    for (kind, sources), layer in zip(nodes, layers, strict=True):
        args = values[sources[0]] if kind == "dense" else [values[s] for s in sources]
        values.append(layer(args))
    got = model(data)
    for out, i in zip(got, output_ids, strict=True):
        np.testing.assert_array_equal(np.asarray(out), np.asarray(values[i]))
    order = {id(layer): k for k, layer in enumerate(model.layers)}
    assert len(order) == len(model.layers)
    for node in model._nodes:
        for parent in node.parent_nodes:
            assert order[id(parent.layer)] < order[id(node.layer)]
