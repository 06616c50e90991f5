"""The catalogue against the real TensorFlow (tf.distribute on logical CPUs).

Skipped where TensorFlow is not installed (the extra ``simdist[tensorflow]`` brings it).
Every property must PASS on TensorFlow, or fail only where a known difference says why
(XFAIL), or SKIP for a recorded reason (inputs that crash TensorFlow's process).
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

from simdist.testing.adapters import load_adapter
from simdist.testing.adapters.tensorflow_adapter import (
    MISMATCH_ABORT,
    ZERO_SIZE_CRASH,
)
from simdist.testing.known_differences import KNOWN_DIFFERENCES
from simdist.testing.properties import CATALOGUE
from simdist.testing.runner import FAIL, PASS, SKIP, XFAIL, XPASS, run

pytestmark = pytest.mark.tensorflow  # runs real TensorFlow: only with --tensorflow


@pytest.fixture(scope="module")
def adapter():
    return load_adapter("tensorflow", 4)


def test_the_adapter_runs_real_mirrored_strategies_on_logical_cpus(adapter):
    import tensorflow as tf

    assert len(tf.config.list_logical_devices("CPU")) >= 4
    strategy = adapter.make_strategy("mirrored", 4)
    assert isinstance(strategy, tf.distribute.MirroredStrategy)
    assert strategy.num_replicas_in_sync == 4
    assert [float(x) for x in adapter.all_reduce("SUM", [1.0, 2.0, 3.0, 4.0])] == [10.0] * 4


# multi-worker, TPU and parameter-server properties: their own modules
SINGLE_HOST = [
    p for p in CATALOGUE if not CATALOGUE[p].cluster and CATALOGUE[p].area not in ("tpu", "ps")
]


@pytest.mark.slow
def test_the_catalogue_on_tensorflow(adapter):
    outcomes = run(adapter, SINGLE_HOST, max_examples=6)
    report = "\n".join(f"{o.property.id} {o.status} {o.message[:300]}" for o in outcomes)
    assert not [o for o in outcomes if o.status in (FAIL, XPASS)], report
    skipped = {o.property.id for o in outcomes if o.status == SKIP}
    assert skipped <= {"errors.gather.shape_mismatch_outside_axis"}, report
    for o in outcomes:
        if o.status == SKIP:  # every input would crash TF or poison its collectives
            assert set(o.message.split("; ")) <= {MISMATCH_ABORT, ZERO_SIZE_CRASH}, report
        if o.status == XFAIL:
            assert o.message.startswith("known difference: "), report
    xfails = {o.property.id for o in outcomes if o.status == XFAIL}
    recorded = {r.property for r in KNOWN_DIFFERENCES if r.impl == "tensorflow"}
    assert xfails == {p for p in recorded if p in SINGLE_HOST}, report
    assert sum(o.status == PASS for o in outcomes) >= 40, report
