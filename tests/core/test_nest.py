"""tf.nest: stable flattening (sorted dict keys), rebuilding, and no reference cycles."""

import collections
import gc
import weakref

import pytest
from hypothesis import given
from hypothesis import strategies as st

from simdist.core import nest

leaves = st.integers()
structures = st.recursive(
    leaves,
    lambda children: (
        st.lists(children, max_size=3)
        | st.tuples(children, children)
        | st.dictionaries(st.text("abc", min_size=1, max_size=2), children, max_size=3)
    ),
    max_leaves=12,
)


@given(structures)
def test_pack_of_flatten_is_the_identity(structure):
    assert nest.pack_sequence_as(structure, nest.flatten(structure)) == structure


def test_dicts_flatten_in_sorted_key_order_and_keep_their_order_when_rebuilt():
    d = {"b": 1, "a": 2}
    assert nest.flatten(d) == [2, 1]
    rebuilt = nest.pack_sequence_as(d, [20, 10])
    assert rebuilt == {"b": 10, "a": 20} and list(rebuilt) == ["b", "a"]


def test_namedtuples_survive():
    Pair = collections.namedtuple("Pair", "x y")
    assert nest.map_structure(lambda v: v * 2, Pair(1, 2)) == Pair(2, 4)


def test_mismatched_structures_are_reported():
    with pytest.raises(ValueError, match="leaves"):
        nest.pack_sequence_as((1, 2), [1])
    with pytest.raises((ValueError, TypeError)):
        nest.assert_same_structure((1, 2), [1, [2]])


def test_rebuilding_leaves_no_reference_cycle():
    # Regression: a self-referencing closure kept every leaf (a step's activations) alive
    # until the cycle collector ran, costing page faults and memory on every training step.
    class Leaf:
        pass

    leaf = Leaf()
    ref = weakref.ref(leaf)
    gc.disable()
    try:
        out = nest.pack_sequence_as((0, [0]), [leaf, 1])
        del out, leaf
        assert ref() is None
    finally:
        gc.enable()


def _signature(x):
    """The structure of ``x`` as TF's nest sees it, leaves erased (the rule, written out)."""
    if isinstance(x, dict):
        return ("dict", tuple((k, _signature(x[k])) for k in sorted(x)))
    if isinstance(x, (list, tuple)):
        return (type(x).__name__, tuple(_signature(c) for c in x))
    return "leaf"


_structures = st.recursive(
    st.integers(0, 3),
    lambda inner: st.lists(inner, max_size=3)
    | st.lists(inner, max_size=3).map(tuple)
    | st.dictionaries(st.sampled_from("abc"), inner, max_size=3),
    max_leaves=8,
)


@given(_structures, _structures)
def test_assert_same_structure_raises_exactly_when_the_structures_differ(a, b):
    for x, y in ((a, b), (a, a), (b, b)):
        same = _signature(x) == _signature(y)
        try:
            nest.assert_same_structure(x, y)
        except (TypeError, ValueError):
            assert not same
        else:
            assert same
