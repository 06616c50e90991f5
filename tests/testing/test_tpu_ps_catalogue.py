"""The TPU and parameter-server catalogue: ids, adapter operations, broken adapters, TF.

Every property also runs on simdist and the reference in test_catalogue.py (the whole
catalogue); here: the ids are stable, the simdist adapter's operations give the documented
answers, and TensorFlow's partitioners (in-process, no cluster) agree with the reference. Each
broken TPU and PS adapter shows its bug in a small counterexample in test_catalogue.py (SHOWS).
"""

from __future__ import annotations

import numpy as np
import pytest

from simdist import errors
from simdist.testing.adapters import Adapter, load_adapter
from simdist.testing.properties import CATALOGUE, select
from simdist.testing.runner import PASS, SKIP, run_property

TPU_IDS = {
    "tpu.dynamic_batch",
    "tpu.gather.identical_shapes",
    "tpu.host_order.invariance",
    "tpu.replicas_per_slice",
    "tpu.run.eager_refused",
}
PS_IDS = {
    "ps.closures.exactly_once",
    "ps.failure.ps_raises_unavailable",
    "ps.partitioners.shard_counts",
    "ps.seed.reproducible",
    "ps.sharded.equals_unsharded",
}


@pytest.fixture(scope="module")
def simdist_adapter():
    return load_adapter("simdist", 4)


def test_the_ids_are_stable():
    assert {p.id for p in select("tpu.*")} == TPU_IDS
    assert {p.id for p in select("ps.*")} == PS_IDS
    assert not any(CATALOGUE[i].cluster for i in TPU_IDS | PS_IDS)


def test_an_adapter_without_the_operations_skips_them():
    for prop_id in sorted(TPU_IDS | PS_IDS):
        outcome = run_property(CATALOGUE[prop_id], Adapter(4))
        assert outcome.status == SKIP and "does not implement" in outcome.message


def test_simdist_tpu_operations(simdist_adapter):
    a = simdist_adapter
    assert [a.tpu_num_replicas(n) for n in ("v3-8", "v4-8", "v5litepod-16")] == [8, 4, 16]
    values = [np.full((1, 2), r, np.float32) for r in range(4)]
    assert a.tpu_gather("v4-8", values, 1).tolist() == [[0, 0, 1, 1, 2, 2, 3, 3]]
    ragged = [np.ones((r + 1, 2), np.float32) for r in range(4)]
    with pytest.raises(errors.InvalidArgumentError, match="exactly the same rank and shape"):
        a.tpu_gather("v4-8", ragged, 0)
    with pytest.raises(errors.InvalidArgumentError, match="exactly the same rank and shape"):
        a.tpu_all_gather("v4-8", ragged, 0)
    with pytest.raises(NotImplementedError, match="does not support pure eager execution"):
        a.tpu_run("v4-8", False)
    assert a.tpu_run("v4-8", True) == [0, 1, 2, 3]
    steps = a.tpu_steps("v4-8", np.arange(10), 8, False, True, None)
    assert [[b.tolist() for b in s] for s, _ in steps] == [
        [[0, 1], [2, 3], [4, 5], [6, 7]],
        [[8], [9], [], []],
    ]
    assert [float(loss) for _, loss in steps] == [140 / 8, 145 / 8]
    with pytest.raises(errors.InvalidArgumentError, match="Run-time shape mismatch"):
        a.tpu_steps("v4-8", np.arange(10), 8, False, False, None)


def test_simdist_host_order_moves_examples_between_replicas_only(simdist_adapter):
    plain = simdist_adapter.tpu_steps("v4-16", np.arange(32), 16, False, True, None)
    moved = simdist_adapter.tpu_steps("v4-16", np.arange(32), 16, False, True, 5)
    assert any(
        [b.tolist() for b in p] != [b.tolist() for b in m]
        for (p, _), (m, _) in zip(plain, moved, strict=True)
    )
    for (p, lp), (m, lm) in zip(plain, moved, strict=True):
        assert sorted(np.concatenate(p).tolist()) == sorted(np.concatenate(m).tolist())
        assert float(lp) == pytest.approx(float(lm), rel=1e-12)


def test_simdist_ps_operations(simdist_adapter):
    a = simdist_adapter
    assert a.partitioner_shards(
        "MinSize", {"min_shard_bytes": 4, "max_shards": 2}, [6, 1], "float32"
    ) == [2, 1]
    got = a.sharded_variable(
        np.arange(10.0).reshape(5, 2), 3, np.ones((5, 2)), np.ones((5, 2)), 0.5
    )
    assert [s.shape for s in got["shards"]] == [(2, 2), (2, 2), (1, 2)]
    assert got["after_sgd"].tolist() == (np.arange(10.0).reshape(5, 2) + 0.5).tolist()
    counter, results = a.ps_counter_closures(2, 5, {0: (1, None), 1: (2, 0.25)}, 3)
    assert int(counter) == 5 and results == [0, 1, 2, 3, 4]
    # one worker: in schedule order; x = 1 -> 1.5 -> 3.25 -> 6.875, each function reads x
    assert a.ps_async_run(1, 3, 0).tolist() == [6.875, 1.0, 1.5, 3.25]
    several = a.ps_async_run(3, 6, 11)
    assert several.tolist() == a.ps_async_run(3, 6, 11).tolist()
    with pytest.raises(errors.UnavailableError):
        a.ps_failure_run(2, 2, 4, 1, 2)


def test_a_ps_failing_before_any_function_finishes(simdist_adapter):
    # The catalogue found this: a ps planned to fail after 0 closures used to never fail.
    with pytest.raises(errors.UnavailableError):
        simdist_adapter.ps_failure_run(1, 1, 2, 0, 0)


@pytest.mark.tensorflow
@pytest.mark.slow
def test_tensorflow_partitioners_agree_with_the_reference():
    pytest.importorskip("tensorflow", reason="TensorFlow is not installed")
    adapter = load_adapter("tensorflow", 4)
    outcome = run_property(CATALOGUE["ps.partitioners.shard_counts"], adapter, max_examples=150)
    assert outcome.status == PASS, f"{outcome.message} {outcome.counterexample_text}"
    for prop_id in sorted(TPU_IDS | PS_IDS - {"ps.partitioners.shard_counts"}):
        outcome = run_property(CATALOGUE[prop_id], adapter, max_examples=3)
        assert outcome.status == SKIP, prop_id
        reason = "needs a TPU" if prop_id.startswith("tpu.") else "tf.distribute.Server"
        assert reason in outcome.message, outcome.message
