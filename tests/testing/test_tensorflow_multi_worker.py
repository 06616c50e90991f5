"""The multi-worker catalogue against the real TensorFlow: MultiWorkerMirroredStrategy in 2
local processes (TF_CONFIG on localhost ports), one CPU replica each.

Skipped where TensorFlow is not installed. One pool of worker processes serves every
property (TensorFlow takes seconds to start); the whole module takes about 30 s.
"""

from __future__ import annotations

import importlib.util

import pytest

if importlib.util.find_spec("tensorflow") is None:  # found, not imported at collection
    pytest.skip(
        "TensorFlow is not installed (pip install 'simdist[tensorflow]'); the TensorFlow "
        "adapter cannot run",
        allow_module_level=True,
    )

import numpy as np

from simdist.testing.adapters import load_adapter
from simdist.testing.adapters.tensorflow_adapter import MW_ZERO_SIZE_CRASH
from simdist.testing.known_differences import KNOWN_DIFFERENCES
from simdist.testing.runner import FAIL, PASS, SKIP, XFAIL, XPASS, run

pytestmark = pytest.mark.tensorflow  # runs real TensorFlow: only with --tensorflow


@pytest.fixture(scope="module")
def adapter():
    adapter = load_adapter("tensorflow", 4)
    yield adapter
    adapter.close()


@pytest.mark.slow
def test_the_cluster_is_real_multi_worker_tensorflow(adapter):
    assert (adapter.min_workers, adapter.max_workers, adapter.max_devices_per_worker) == (2, 2, 1)
    assert adapter.multi_worker_replica_ids(2, 1) == [(2, [0]), (2, [1])]
    assert adapter._pool.num_replicas_in_sync == 2 and adapter._pool.alive
    got = adapter.multi_worker_reduce("MEAN", [np.float32([1, 2]), np.float32([3, 6])], 2, None)
    assert [g.tolist() for g in got] == [[2.0, 4.0]] * 2


@pytest.mark.slow
def test_the_multi_worker_catalogue_on_tensorflow(adapter):
    outcomes = run(adapter, "multi_worker.*", max_examples=6)
    report = "\n".join(f"{o.property.id} {o.status} {o.message[:300]}" for o in outcomes)
    assert not [o for o in outcomes if o.status in (FAIL, XPASS, SKIP)], report
    for o in outcomes:
        if o.status == PASS and o.message:  # inputs not run: only those that crash TF
            assert MW_ZERO_SIZE_CRASH in o.message, report
    xfails = {o.property.id for o in outcomes if o.status == XFAIL}
    recorded = {r.property for r in KNOWN_DIFFERENCES if r.impl == "tensorflow"}
    assert xfails == {p for p in recorded if p.startswith("multi_worker.")}, report
    assert sum(o.status == PASS for o in outcomes) >= 17 - len(xfails), report
