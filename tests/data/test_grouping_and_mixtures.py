"""group_by_window, bucket_by_sequence_length, rebatch, scan, take_while, unique, and the
random and chosen mixtures: their rules, against plain-Python references.

Their values against TF 2.21 are in the differential snippet ``data.grouping_and_mixtures``.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import simdist as tf

D = tf.data.Dataset


def values(ds) -> list:
    return [e.numpy().tolist() for e in ds]


def group_by_window_reference(items, key, size):
    """TF's rule, written out: emit a window when it fills, flush the rest by key."""
    out, windows = [], {}
    for x in items:
        windows.setdefault(key(x), []).append(x)
        if len(windows[key(x)]) == size:
            out.append(windows.pop(key(x)))
    return out + [windows[k] for k in sorted(windows)]


@settings(max_examples=60, deadline=None)
@given(
    items=st.lists(st.integers(0, 50), max_size=30),
    keys=st.integers(1, 4),
    size=st.integers(1, 5),
)
def test_group_by_window_follows_the_rule(items, keys, size):
    ds = D.from_tensor_slices(np.asarray(items, np.int64)) if items else D.range(0)
    out = ds.group_by_window(lambda x: x % keys, lambda k, w: w.batch(size), window_size=size)
    assert values(out) == group_by_window_reference(items, lambda x: x % keys, size)


@settings(max_examples=40, deadline=None)
@given(n=st.integers(0, 30), before=st.integers(1, 6), after=st.integers(1, 6), drop=st.booleans())
def test_rebatch_is_unbatch_then_batch(n, before, after, drop):
    ds = D.range(n).batch(before)
    assert values(ds.rebatch(after, drop)) == values(ds.unbatch().batch(after, drop))


def test_rebatch_takes_sizes_in_turn():
    assert values(D.range(7).batch(7).rebatch([1, 2])) == [[0], [1, 2], [3], [4, 5], [6]]


@settings(max_examples=40, deadline=None)
@given(lengths=st.lists(st.integers(1, 12), min_size=1, max_size=20))
def test_buckets_hold_lengths_between_their_boundaries_and_pad_to_the_longest(lengths):
    seqs = D.from_generator(
        lambda: (np.ones(n, np.int32) for n in lengths),
        output_signature=tf.TensorSpec([None], tf.int32),
    )
    boundaries = [4, 8]
    out = seqs.bucket_by_sequence_length(lambda x: tf.shape(x)[0], boundaries, [3, 2, 2])
    seen = []
    for batch in out:
        rows = batch.numpy()
        counts = rows.sum(axis=1).tolist()
        bucket = {int(np.searchsorted(boundaries, c, side="right")) for c in counts}
        assert len(bucket) == 1  # one bucket per batch
        assert rows.shape[1] == max(counts)  # padded to the longest in the batch
        seen += counts
    assert sorted(seen) == sorted(lengths)


def test_scan_carries_its_state_and_restarts_each_iteration():
    ds = D.range(5).scan(tf.constant(0, tf.int64), lambda s, x: (s + x, s + x))
    assert values(ds) == [0, 1, 3, 6, 10] and values(ds) == [0, 1, 3, 6, 10]
    with pytest.raises(TypeError, match="changed the state's structure or dtypes"):
        values(D.range(2).scan(tf.constant(0.0), lambda s, x: (x, x)))


def test_take_while_stops_at_the_first_false_and_unique_keeps_first_occurrences():
    assert values(D.from_tensor_slices([1, 2, 5, 1]).take_while(lambda x: x < 3)) == [1, 2]
    assert values(D.from_tensor_slices([4, 1, 4, 2, 1]).unique()) == [4, 1, 2]
    with pytest.raises(TypeError, match="only supports datasets with 1 component"):
        D.from_tensor_slices([1.0, 2.0]).unique()


@settings(max_examples=30, deadline=None)
@given(a=st.integers(0, 8), b=st.integers(0, 8), seed=st.integers(0, 2**31 - 1))
def test_sampling_without_stopping_yields_every_element_once_in_each_inputs_order(a, b, seed):
    ds = D.sample_from_datasets([D.range(a), D.range(100, 100 + b)], [0.3, 0.7], seed=seed)
    out = values(ds)
    assert sorted(out) == list(range(a)) + list(range(100, 100 + b))
    assert [x for x in out if x < 100] == list(range(a))  # each input keeps its order
    assert values(ds) == out  # the same draws on every iteration by default


def test_sampling_follows_the_weights_and_the_seed():
    ds = D.sample_from_datasets([D.counter(0, 0), D.counter(1, 0)], [0.2, 0.8], seed=7)
    draws = np.asarray(values(ds.take(4000)))
    assert abs(draws.mean() - 0.8) < 0.03
    again = D.sample_from_datasets([D.counter(0, 0), D.counter(1, 0)], [0.2, 0.8], seed=7)
    assert values(again.take(50)) == draws[:50].tolist()


def test_rerandomized_sampling_differs_per_iteration_and_its_iterator_restores(tmp_path):
    ds = D.sample_from_datasets(
        [D.range(0, 50), D.range(100, 150)], seed=1, rerandomize_each_iteration=True
    )
    first, second = values(ds), values(ds)
    assert first != second and sorted(first) == sorted(second)
    it = iter(ds)
    for _ in range(7):
        next(it)
    ckpt = tf.train.Checkpoint(iterator=it)
    path = ckpt.save(str(tmp_path / "ckpt"))
    expected = [next(it).numpy().tolist() for _ in range(5)]
    restored = iter(ds)
    tf.train.Checkpoint(iterator=restored).restore(path)
    assert [next(restored).numpy().tolist() for _ in range(5)] == expected


def test_choose_stops_at_an_empty_input_unless_told_not_to():
    sources = [D.range(2), D.range(10, 13)]
    choice = D.from_tensor_slices(np.asarray([0, 0, 0, 1], np.int64))
    assert values(D.choose_from_datasets(sources, choice)) == [0, 1]
    keep = D.choose_from_datasets(sources, choice, stop_on_empty_dataset=False)
    assert values(keep) == [0, 1, 10]
