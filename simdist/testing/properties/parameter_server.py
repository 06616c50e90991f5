"""Properties of ParameterServerStrategy: partitioners, sharded variables, closures under
faults, seeded runs, ps failures.

Rules: the ``tf.distribute.experimental.partitioners`` API pages, ``ShardedVariable``, the
``ClusterCoordinator`` API page and the parameter-server training tutorial (a function whose
worker fails is re-run on another worker; a ps failure is an ``UnavailableError`` for the
coordinator), and simdist's documented seeded interleaving; checked against
``simdist_reference.partitioners`` and plain NumPy.

``ps.failure.ps_raises_unavailable`` draws ps failures after 0 to 3 finished functions (0:
the ps is down from the start; this property found simdist ignoring that case, now fixed).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp
from simdist_reference import partitioners as ref_part

from simdist.testing.properties._base import (
    ErrorKind,
    Violation,
    expect_close,
    expect_equal,
    expect_length,
    expect_raises,
    prop,
)

PARTITIONERS_DOC = "tf.distribute.experimental.partitioners (MinSize/MaxSize/FixedShards pages)"
COORDINATOR_DOC = "tf.distribute.experimental.coordinator.ClusterCoordinator (API page)"
PS_TUTORIAL = "Parameter server training with ParameterServerStrategy (tutorial, fault tolerance)"
PARTITIONER_DTYPES = ("float32", "float64", "int32", "int64", "bool", "float16", "string")
UNAVAILABLE = ErrorKind("UnavailableError", (), ("UnavailableError",))


@st.composite
def _partitioner_examples(draw, max_replicas):
    kind = draw(st.sampled_from(ref_part.KINDS))
    shape = draw(st.lists(st.integers(1, 40), min_size=1, max_size=3))
    dtype = draw(st.sampled_from(PARTITIONER_DTYPES))
    params: dict = {}
    if kind == "FixedShards":
        params["num_shards"] = draw(st.integers(1, 12))
    elif kind == "MinSize":
        params["min_shard_bytes"] = draw(st.integers(1, 2048))
        params["max_shards"] = draw(st.integers(1, 12))
    else:
        params["max_shard_bytes"] = draw(st.integers(1, 2048))
        if draw(st.booleans()):
            params["max_shards"] = draw(st.integers(1, 12))
    if dtype == "string" and kind != "FixedShards" and draw(st.booleans()):
        params["bytes_per_string"] = draw(st.integers(1, 64))
    return {"kind": kind, "params": params, "shape": shape, "dtype": dtype}


@prop(
    "ps.partitioners.shard_counts",
    "MinSizePartitioner, MaxSizePartitioner and FixedShardsPartitioner give TF's shard count "
    "along axis 0 (1 on every other axis) for any shape and dtype.",
    PARTITIONERS_DOC,
    ["partitioner_shards"],
    _partitioner_examples,
)
def partitioner_shard_counts(adapter, ex):
    got = adapter.partitioner_shards(ex["kind"], ex["params"], ex["shape"], ex["dtype"])
    want = ref_part.shard_counts(ex["kind"], ex["params"], ex["shape"], ex["dtype"])
    if [int(c) for c in got] != want:
        raise Violation(f"{ex['kind']}Partitioner: got {list(got)}, expected {want}")


@st.composite
def _sharded_examples(draw, max_replicas):
    rows = draw(st.integers(1, 7))
    cols = draw(st.integers(1, 3))
    shards = draw(st.integers(1, rows))
    floats = st.floats(-10, 10, allow_nan=False, width=64)

    def array():
        return draw(hnp.arrays(np.float64, (rows, cols), elements=floats))

    return {
        "initial": array(),
        "num_shards": shards,
        "delta": array(),
        "grad": array(),
        "lr": draw(st.sampled_from([0.5, 0.25, 1.0])),  # exact in float32 (Keras keeps lr so)
    }


@prop(
    "ps.sharded.equals_unsharded",
    "A variable split into shards by FixedShardsPartitioner reads, assign_adds and takes an "
    "SGD step exactly as the same variable unsharded; shards are TF's row blocks.",
    "tf.distribute.experimental.partitioners.FixedShardsPartitioner; ShardedVariable; "
    + PS_TUTORIAL,
    ["sharded_variable"],
    _sharded_examples,
)
def sharded_equals_unsharded(adapter, ex):
    got = adapter.sharded_variable(
        ex["initial"], ex["num_shards"], ex["delta"], ex["grad"], ex["lr"]
    )
    initial = ex["initial"]
    want_shards = ref_part.split_rows(initial, ex["num_shards"])
    expect_length(got["shards"], len(want_shards), "shards")
    for i, (g, w) in enumerate(zip(got["shards"], want_shards, strict=True)):
        expect_equal(g, w, f"shard {i}")
    expect_equal(got["read"], initial, "the sharded variable's value")
    added = initial + ex["delta"]
    inputs = [initial, ex["delta"], ex["grad"]]
    expect_close(got["after_assign_add"], added, inputs, "after assign_add")
    stepped = added - ex["lr"] * ex["grad"]
    expect_close(got["after_sgd"], stepped, inputs, "after one SGD step")


@st.composite
def _fault_examples(draw, max_replicas):
    workers = draw(st.integers(1, 3))
    closures = draw(st.integers(1, 8))
    kills = {}
    for w in range(workers):
        if draw(st.booleans()):
            restart = draw(st.sampled_from([None, 0.25, 2.0]))
            kills[w] = (draw(st.integers(1, 4)), restart)
    # some worker must finish the work: one never dies, or a dead one comes back
    if len(kills) == workers and all(r is None for _, r in kills.values()):
        step, _ = kills[workers - 1]
        kills[workers - 1] = (step, 0.25)
    return {
        "workers": workers,
        "closures": closures,
        "kills": kills,
        "seed": draw(st.integers(0, 100)),
    }


@prop(
    "ps.closures.exactly_once",
    "Whatever workers die (and rejoin) mid-run, every scheduled function's update lands "
    "exactly once and its RemoteValue holds its own result.",
    COORDINATOR_DOC
    + " ('schedule': at-most-once if the worker fails, re-run elsewhere); "
    + PS_TUTORIAL,
    ["ps_counter_closures"],
    _fault_examples,
)
def closures_exactly_once(adapter, ex):
    counter, results = adapter.ps_counter_closures(
        ex["workers"], ex["closures"], ex["kills"], ex["seed"]
    )
    if int(np.asarray(counter)) != ex["closures"]:
        raise Violation(
            f"counter after join is {int(np.asarray(counter))}, expected {ex['closures']} "
            "(one increment per scheduled function)"
        )
    if [int(r) for r in results] != list(range(ex["closures"])):
        raise Violation(f"fetched results {list(results)}, expected {list(range(ex['closures']))}")


def sequential_async_run(closures: int) -> np.ndarray:
    """One worker runs the functions of ``ps_async_run`` one after another (plain NumPy)."""
    x, reads = 1.0, []
    for i in range(closures):
        reads.append(x)
        x = x + (0.5 * x + i)
    return np.asarray([x, *reads], np.float64)


@prop(
    "ps.seed.reproducible",
    "The same coordinator seed gives bit-identical results, and one worker runs the "
    "functions in schedule order (the sequential NumPy result).",
    "simdist ClusterCoordinator (simdist_seed: one seed, one interleaving); " + COORDINATOR_DOC,
    ["ps_async_run"],
    lambda m: st.fixed_dictionaries(
        {"workers": st.integers(1, 3), "closures": st.integers(1, 6), "seed": st.integers(0, 99)}
    ),
)
def seed_reproducible(adapter, ex):
    first = adapter.ps_async_run(ex["workers"], ex["closures"], ex["seed"])
    again = adapter.ps_async_run(ex["workers"], ex["closures"], ex["seed"])
    expect_equal(again, first, f"a second run with seed {ex['seed']}")
    if ex["workers"] == 1:
        want = sequential_async_run(ex["closures"])
        expect_close(first, want, [want], "one worker: the sequential result")


@prop(
    "ps.failure.ps_raises_unavailable",
    "A ps task that fails while functions still need it makes the coordinator raise "
    "UnavailableError from join or fetch.",
    PS_TUTORIAL + " (parameter server failure: the coordinator sees UnavailableError)",
    ["ps_failure_run"],
    lambda m: st.integers(1, 2).flatmap(
        lambda ps: st.fixed_dictionaries(
            {
                "workers": st.integers(1, 3),
                "num_ps": st.just(ps),
                "failing_ps": st.integers(0, ps - 1),
                "after": st.integers(0, 3),
                "extra": st.integers(1, 3),
            }
        )
    ),
)
def ps_failure_unavailable(adapter, ex):
    closures = ex["after"] + ex["extra"]
    expect_raises(
        UNAVAILABLE,
        lambda: adapter.ps_failure_run(
            ex["workers"], ex["num_ps"], closures, ex["failing_ps"], ex["after"]
        ),
        f"ps {ex['failing_ps']} failing after {ex['after']} of {closures} functions",
    )
