"""Reference TPU: the slice table, TPU input steps over hosts, static shapes, step losses."""

import doctest

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from simdist_reference import tpu as ref


def test_docstring_examples():
    assert doctest.testmod(ref).failed == 0


@pytest.mark.parametrize(
    "name, replicas, hosts",
    [("v3-8", 8, 1), ("v4-8", 4, 1), ("v4-32", 16, 4), ("v5p-8", 4, 1), ("v5litepod-16", 16, 2)],
)
def test_the_table(name, replicas, hosts):
    assert ref.replicas_per_slice(name) == replicas and ref.hosts_per_slice(name) == hosts


def test_the_naming_rules_hold_for_every_entry():
    for name, (replicas, _) in ref.ACCELERATORS.items():
        generation, count = name.rsplit("-", 1)
        per_name = 2 if generation in ("v4", "v5p") else 1  # megacore: 2 cores, 1 device
        assert replicas * per_name == int(count), name


def test_unknown_accelerator():
    with pytest.raises(ValueError, match="unknown accelerator 'v9-8'"):
        ref.replicas_per_slice("v9-8")


def test_one_host_steps_are_the_single_host_split():
    steps = ref.tpu_steps(np.arange(10), 8, "v4-8", drop_remainder=False)
    assert [[b.tolist() for b in s] for s in steps] == [
        [[0, 1], [2, 3], [4, 5], [6, 7]],
        [[8], [9], [], []],
    ]
    assert not ref.static_shapes(steps[1]) and ref.static_shapes(steps[0])
    assert ref.tpu_steps(np.arange(10), 8, "v4-8", drop_remainder=True)[-1][0].tolist() == [0, 1]


def test_two_hosts_read_their_data_shards():
    steps = ref.tpu_steps(np.arange(8), 8, "v4-16", drop_remainder=False)
    assert [b.tolist() for b in steps[0]] == [[0], [2], [4], [6], [1], [3], [5], [7]]


@given(st.integers(0, 40), st.integers(1, 12), st.sampled_from(["v4-8", "v4-16", "v3-8"]))
def test_steps_conserve_examples_and_losses_add_up(length, batch, name):
    steps = ref.tpu_steps(np.arange(length), batch, name, drop_remainder=False)
    flat = [x for s in steps for b in s for x in b.tolist()]
    assert sorted(flat) == list(range(length))
    assert all(len(s) == ref.replicas_per_slice(name) for s in steps)
    total = sum(float(ref.step_loss(s, batch)) for s in steps)
    assert total == pytest.approx(float(np.sum(np.arange(length, dtype=float) ** 2)) / batch)
