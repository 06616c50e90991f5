"""The multi-worker catalogue: its properties, adapter operations, runner option, broken adapters.

Every property also runs on simdist and the reference in test_catalogue.py (which covers the
whole catalogue), and each broken multi-worker adapter must fail its property there too.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from simdist.testing import strategies as sds
from simdist.testing.adapters import Adapter, load_adapter
from simdist.testing.adapters.base import MULTI_WORKER_OPERATIONS
from simdist.testing.adapters.cluster_adapter import devices_per_worker
from simdist.testing.properties import CATALOGUE, select
from simdist.testing.runner import FAIL, PASS, SKIP, main, run_property

MULTI_WORKER_IDS = {
    "multi_worker.all_reduce.every_replica",
    "multi_worker.auto_shard.auto",
    "multi_worker.auto_shard.conservation",
    "multi_worker.auto_shard.data",
    "multi_worker.auto_shard.file",
    "multi_worker.auto_shard.off",
    "multi_worker.gather.global_replica_order",
    "multi_worker.local_results.local_only",
    "multi_worker.reduce.empty_batch",
    "multi_worker.reduce.mean.axis_none",
    "multi_worker.reduce.mean.partial_batch",
    "multi_worker.reduce.sum.along_axis",
    "multi_worker.reduce.sum.axis_none",
    "multi_worker.replica_id.global",
    "multi_worker.training.n_vs_1.equivalence",
    "multi_worker.training.replicas_identical",
    "multi_worker.variables.initial_from_worker_0",
}


def test_the_multi_worker_ids_are_stable_and_sized_by_the_cluster():
    assert {p.id for p in select("multi_worker.*")} == MULTI_WORKER_IDS
    for prop_id in MULTI_WORKER_IDS:
        prop = CATALOGUE[prop_id]
        assert prop.cluster and set(prop.requires) <= set(MULTI_WORKER_OPERATIONS)
    assert not any(p.cluster for p in CATALOGUE.values() if p.id not in MULTI_WORKER_IDS)


def test_an_adapter_without_multi_worker_operations_skips_them():
    outcome = run_property(CATALOGUE["multi_worker.reduce.sum.axis_none"], Adapter(4))
    assert outcome.status == SKIP and "multi_worker_reduce" in outcome.message


def test_the_simdist_adapter_runs_a_virtual_cluster_in_global_replica_order():
    adapter = load_adapter("simdist", 4)
    values = [np.float32(i) for i in range(6)]
    assert [float(x) for x in adapter.multi_worker_reduce("SUM", values, 3, None)] == [15.0] * 3
    assert adapter.multi_worker_replica_ids(3, 2) == [(6, [0, 1]), (6, [2, 3]), (6, [4, 5])]
    gathered = adapter.multi_worker_gather([np.arange(i) for i in range(4)], 2, 0)
    assert [g.tolist() for g in gathered] == [[0, 0, 1, 0, 1, 2]] * 2
    spec = sds.ShardSpec(np.arange(10), None, 4, False)
    steps = adapter.auto_shard("DATA", spec, 2, 2)
    assert [[[b.tolist() for b in w] for w in s] for s in steps] == [
        [[[0], [2]], [[1], [3]]],
        [[[4], [6]], [[5], [7]]],
        [[[8], []], [[9], []]],
    ]
    files = sds.ShardSpec(None, (np.arange(2), np.arange(2, 3)), 2, False)
    steps = adapter.auto_shard("FILE", files, 2, 1)
    assert [[w[0].tolist() for w in s] for s in steps] == [[[0], [2]], [[1], []]]


def test_cluster_limits_and_set_workers():
    adapter = load_adapter("reference", 4)
    adapter.set_workers(2)
    assert (adapter.min_workers, adapter.max_workers) == (1, 2)
    with pytest.raises(ValueError, match="workers must be an int >= 1"):
        adapter.set_workers(0)
    with pytest.raises(ValueError, match="do not fill 2 workers evenly"):
        devices_per_worker([1, 2, 3], 2)
    simdist = load_adapter("simdist", 4)
    with pytest.raises(ValueError, match="5 workers asked"):
        simdist.multi_worker_reduce("SUM", [np.float32(1)] * 5, 5, None)


@settings(max_examples=20, deadline=None)
@given(st.data())
def test_shard_specs_and_clusters_within_respect_their_bounds(data):
    limits = sds.ClusterLimits(2, 3, 2)
    cluster = data.draw(sds.clusters_within(limits))
    assert 2 <= cluster.workers <= 3 and 1 <= cluster.devices_per_worker <= 2
    spec = data.draw(sds.shard_specs(files=True, min_files=cluster.workers))
    assert spec.elements is None and len(spec.file_lines) >= cluster.workers
    flat = np.concatenate(spec.file_lines)
    assert flat.tolist() == list(range(spec.length))
    memory = data.draw(sds.shard_specs(files=False))
    assert memory.file_lines is None and memory.elements.tolist() == list(range(memory.length))


def test_the_runner_takes_workers(capsys):
    code = main(
        [
            "--impl",
            "simdist",
            "--properties",
            "multi_worker.reduce.*",
            "--workers",
            "2",
            "--max-examples",
            "3",
        ]
    )
    out = capsys.readouterr().out
    assert code == 0
    assert out.splitlines()[0] == "simdist conformance: simdist, up to 4 replicas, 1..2 workers"
    assert out.splitlines()[-1] == f"{len(select('multi_worker.reduce.*'))} pass"
    assert main(["--impl", "simdist", "--workers", "0"]) == 2


@pytest.mark.slow
def test_the_broken_multi_worker_adapters_show_the_bug():
    # Each fails the property meant to catch it in test_catalogue.py, with 2 workers (SHOWS);
    # the auto-shard bug fails the conservation property too.
    shard = load_adapter("broken.auto_shard_local_replicas")
    conservation = CATALOGUE["multi_worker.auto_shard.conservation"]
    outcome = run_property(conservation, shard, max_examples=40)
    assert outcome.status == FAIL and outcome.counterexample["workers"] == 2
    # a bug of the cluster does not show on one worker
    one = load_adapter("broken.multi_worker_local_reduce")
    one.set_workers(1)
    assert run_property(CATALOGUE["multi_worker.reduce.sum.axis_none"], one).status == PASS
