"""simdist.testing.strategies draws what each strategy's docstring promises."""

from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

from simdist.testing import strategies as sds
from simdist.topology.presets import get_topology

FEW = settings(max_examples=15, deadline=None)


@FEW
@given(sds.per_replica_values(max_replicas=3))
def test_matching_values_share_one_shape_and_dtype(values):
    assert 1 <= len(values) <= 3
    assert len({(v.shape, v.dtype) for v in values}) == 1


@FEW
@given(sds.per_replica_values(max_replicas=4, mismatch="batch"))
def test_batch_mismatch_differs_only_in_the_first_dimension(values):
    assert len({v.shape[1:] for v in values}) == 1 and values[0].ndim >= 1


@FEW
@given(sds.per_replica_values(max_replicas=4, mismatch="outside_batch"))
def test_outside_batch_mismatch_always_differs_outside_axis_0(values):
    assert len(values) >= 2 and len({v.shape[1:] for v in values}) == 2


@FEW
@given(sds.dataset_specs(max_replicas=4))
def test_dataset_specs_number_their_elements(spec):
    leaf = spec.elements
    while not isinstance(leaf, np.ndarray):
        leaf = leaf[0] if isinstance(leaf, tuple) else leaf["features"]
    assert leaf.shape[0] == spec.length
    firsts = leaf.reshape(spec.length, -1)[:, 0] if leaf[0:1].size else np.arange(0)
    assert np.array_equal(firsts % 1000, np.arange(len(firsts)))
    assert 1 <= spec.num_replicas <= 4 and spec.auto_shard_policy in ("AUTO", "OFF")


@FEW
@given(st.data())
def test_cluster_shapes_fault_plans_and_topologies_are_plain_usable_data(data):
    cluster = data.draw(sds.cluster_shapes(max_workers=3, max_devices=2))
    assert cluster.num_replicas == cluster.workers * cluster.devices_per_worker
    plan = data.draw(sds.fault_plans(cluster))
    assert set(plan["kills"]) | set(plan["delays"]) <= set(range(cluster.workers))
    built = sds.to_fault_plan(plan)
    assert built.delays == plan["delays"] and built is not sds.to_fault_plan(plan)
    assert get_topology(data.draw(sds.topology_names())) is not None
