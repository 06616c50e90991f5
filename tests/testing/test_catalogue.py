"""The catalogue holds on simdist and the reference, and catches every planted bug."""

from __future__ import annotations

import re

import pytest

from simdist.testing import known_differences
from simdist.testing.adapters import OPERATIONS, load_adapter
from simdist.testing.adapters.broken import BROKEN, CATCHES
from simdist.testing.properties import CATALOGUE, describe, select
from simdist.testing.runner import FAIL, PASS, SKIP, run_property

IDS = sorted(CATALOGUE)
MAX_EXAMPLES = 8
#: properties of a runtime's behaviour the reference does not state (it SKIPs them)
REFERENCE_SKIPS = {"tpu.run.eager_refused", "ps.failure.ps_raises_unavailable"}


def _cases():
    for impl in ("simdist", "reference"):
        for prop_id in IDS:
            yield pytest.param(impl, prop_id, id=f"{prop_id}-{impl}")


@pytest.fixture(scope="module")
def adapters():
    return {name: load_adapter(name, 4) for name in ("simdist", "reference")}


def test_the_catalogue_covers_every_area_of_the_single_host_semantics():
    areas = {CATALOGUE[i].area for i in IDS}
    assert {
        "reduce",
        "all_reduce",
        "gather",
        "all_gather",
        "input",
        "loss",
        "training",
        "variables",
        "checkpoint",
        "errors",
    } <= areas
    assert len(IDS) >= 40


@pytest.mark.parametrize("prop_id", IDS)
def test_a_property_is_well_formed(prop_id):
    prop = CATALOGUE[prop_id]
    assert re.fullmatch(r"[a-z_0-9]+(\.[a-z_0-9]+){1,3}", prop.id)
    assert "\n" not in prop.statement and prop.statement.endswith(".")
    assert prop.rule and set(prop.requires) <= set(OPERATIONS)


@pytest.mark.parametrize("impl, prop_id", list(_cases()))
def test_every_property_passes(adapters, impl, prop_id):
    outcome = run_property(CATALOGUE[prop_id], adapters[impl], max_examples=MAX_EXAMPLES)
    if impl == "reference" and prop_id in REFERENCE_SKIPS:
        assert outcome.status == SKIP and "does not implement" in outcome.message
        return
    assert outcome.status == PASS, (
        f"{outcome.message}\ncounterexample: {outcome.counterexample_text}"
    )


def _replicas(example) -> int:
    """How many replicas a counterexample uses (its longest per-replica list)."""
    if hasattr(example, "num_replicas"):
        return example.num_replicas
    if isinstance(example, dict):
        lists = [v for v in example.values() if isinstance(v, list)]
        return max((len(v) for v in lists), default=1)
    return len(example) if isinstance(example, list) else 1


# What the shrunk counterexample of a broken adapter shows of its bug, beyond failing (these
# were separate runs of the same property on the same adapter in test_tpu_ps_catalogue.py and
# test_multi_worker_catalogue.py; one run each now holds them all).
SHOWS = {
    # a factor of N shows first at N = 2
    "mean_after_scaling": lambda o: (
        len(o.counterexample["sizes"]) == 2 and "|got|/|expected| = 0.5" in o.message
    ),
    "all_reduce_drops_replica": lambda o: (
        "all_reduce(SUM)" in o.message and o.counterexample["op"] == "SUM"
    ),
    "tpu_cores_as_replicas": lambda o: o.counterexample.startswith(("v4-", "v5p-")),
    "tpu_gather_ragged": lambda o: (
        "accepted" in o.message and o.counterexample["accelerator"] == "v4-8"
    ),
    "partitioner_rounds_down": lambda o: o.counterexample["kind"] == "MinSize",
    "closure_reapplied": lambda o: (
        o.counterexample["closures"] == 1 and "counter after join is 2, expected 1" in o.message
    ),
    # 2 workers x 1 replica
    "multi_worker_local_reduce": lambda o: (
        o.counterexample["workers"] == 2 and len(o.counterexample["values"]) == 2
    ),
    "auto_shard_local_replicas": lambda o: o.counterexample["workers"] == 2,
}


@pytest.mark.slow
@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_every_broken_adapter_fails_the_property_meant_to_catch_it(broken):
    adapter = load_adapter(f"broken.{broken}", 4)
    # 100: the derandomized example stream moves with unrelated code; 60 missed a ragged gather
    outcome = run_property(CATALOGUE[CATCHES[broken]], adapter, max_examples=100)
    assert outcome.status == FAIL
    text = outcome.counterexample_text
    assert outcome.counterexample is not None and len(text) < 300, text
    # shrunk, not just any failure (a TPU slice with several replicas has at least 4)
    assert _replicas(outcome.counterexample) <= (4 if broken.startswith("tpu_") else 3), text
    shows = SHOWS.get(broken)
    assert shows is None or shows(outcome), f"{outcome.message}\ncounterexample: {text}"


@pytest.mark.parametrize("broken", sorted(BROKEN))
def test_a_broken_adapter_still_passes_what_it_does_not_break(broken):
    adapter = load_adapter(f"broken.{broken}", 4)
    for prop in select("reduce.sum.*,gather.concat_in_replica_order"):
        assert run_property(prop, adapter, max_examples=5).status == PASS


def test_known_differences_name_existing_properties():
    for record in known_differences.KNOWN_DIFFERENCES:
        assert select(record.property), record
        assert record.reason


def test_describe_renders_arrays_briefly():
    import numpy as np

    assert describe([np.float32([1, 2]), np.int32(3)]) == "[float32[1.0, 2.0], int32(3)]"
    assert (
        describe({"op": "SUM", "values": (np.zeros((0,)),)}) == "{op: 'SUM', values: (float64[],)}"
    )
