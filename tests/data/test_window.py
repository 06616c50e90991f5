"""``Dataset.window`` against its definition: window ``i`` starts at ``i * shift`` and takes
``size`` elements ``stride`` apart (fewer at the end, dropped with ``drop_remainder``).
Checked against TF 2.21 in ``tests/differential/snippets_surface.py`` (``data.window``)."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf
from simdist import errors


def _definition(n, size, shift, stride, drop):
    windows = [
        [s + k * stride for k in range(size) if s + k * stride < n] for s in range(0, n, shift)
    ]
    return [w for w in windows if len(w) == size or not drop]


def _seen(windowed):
    return [[int(x) for x in w] for w in windowed]


@settings(max_examples=150, deadline=None)
@given(
    n=st.integers(0, 30),
    size=st.integers(1, 6),
    shift=st.one_of(st.none(), st.integers(1, 6)),
    stride=st.integers(1, 4),
    drop=st.booleans(),
)
def test_windows_are_the_definition_and_cardinality_counts_them(n, size, shift, stride, drop):
    windowed = tf.data.Dataset.range(n).window(size, shift, stride, drop)
    expected = _definition(n, size, size if shift is None else shift, stride, drop)
    assert _seen(windowed) == expected
    assert int(windowed.cardinality()) == len(expected)
    # the same windows when the input's length is unknown (filter) or the input is infinite
    assert (
        _seen(tf.data.Dataset.range(n).filter(lambda x: True).window(size, shift, stride, drop))
        == expected
    )
    endless = tf.data.Dataset.range(n).concatenate(tf.data.Dataset.range(n, 10**9).repeat())
    head = list(endless.window(size, shift, stride, drop).take(3))
    assert _seen(head) == _definition(100, size, size if shift is None else shift, stride, drop)[:3]


def test_a_structured_element_gives_the_same_structure_of_windows():
    pairs = tf.data.Dataset.from_tensor_slices(({"a": [1, 2, 3]}, [4.0, 5.0, 6.0])).window(2)
    spec = pairs.element_spec
    assert isinstance(spec[0]["a"], tf.data.DatasetSpec)
    assert spec[1].element_spec == tf.TensorSpec([], tf.float32)
    first = next(iter(pairs))
    assert [int(v) for v in first[0]["a"]] == [1, 2]
    assert [float(v) for v in first[1]] == [4.0, 5.0]
    zipped = pairs.flat_map(lambda d, y: tf.data.Dataset.zip((d["a"].batch(2), y.batch(2))))
    assert [a.numpy().tolist() for a, _ in zipped] == [[1, 2], [3]]


def test_time_series_windows_train_under_a_strategy():
    series = tf.data.Dataset.range(40).map(lambda x: tf.cast(x, tf.float32))
    ds = (
        series.window(5, 1, drop_remainder=True)
        .flat_map(lambda w: w.batch(5))
        .map(lambda w: (w[:-1], w[-1:]))
        .batch(8)
    )
    strategy = tf.distribute.MirroredStrategy(["GPU:0", "GPU:1"])
    with strategy.scope():
        model = tf.keras.Sequential([tf.keras.layers.Dense(1)])
        model.compile("sgd", "mse")
    history = model.fit(ds, epochs=1, verbose=0)
    assert np.isfinite(history.history["loss"][0])
    assert ds.element_spec[0] == tf.TensorSpec(
        [None, None], tf.float32
    )  # as TF: a window's size is not static


@pytest.mark.parametrize(
    "args, what", [((0,), "size"), ((2, 0), "shift"), ((2, 1, 0), "stride"), ((-3,), "size")]
)
def test_sizes_must_be_positive(args, what):
    with pytest.raises(
        errors.InvalidArgumentError, match=f"Window {what} must be greater than zero"
    ):
        tf.data.Dataset.range(3).window(*args)


def test_windows_cannot_be_read_as_numpy_nor_batched():
    with pytest.raises(TypeError, match="as_numpy_iterator"):
        tf.data.Dataset.range(3).window(2).as_numpy_iterator()
    with pytest.raises(TypeError, match="Batching datasets of datasets"):
        list(tf.data.Dataset.range(3).window(2).batch(2))


def test_map_over_windows_infers_its_spec_from_a_stand_in_window():
    source = tf.data.Dataset.from_generator(
        lambda: iter(range(5)), output_signature=tf.TensorSpec([], tf.int64)
    )
    sums = source.window(2).map(lambda w: w.reduce(tf.constant(0, tf.int64), lambda a, b: a + b))
    assert sums.element_spec == tf.TensorSpec([], tf.int64)
    assert [int(v) for v in sums] == [1, 5, 4]
