"""Properties of distributed variables: mirrored updates, sync-on-read reads and assigns,
and checkpoint round trips.

Rules: the ``tf.Variable`` aggregation/synchronization docs and ``tf.distribute`` guide, as
stated in ``simdist_reference.variables``; simdist's documented strict NONE choice.
"""

from __future__ import annotations

import tempfile

import numpy as np
import simdist_reference as ref
from hypothesis import strategies as st

from simdist.testing import strategies as sds
from simdist.testing.properties._base import expect_close, expect_length, prop

VAR_DOC = "tf.VariableAggregation / tf.VariableSynchronization; values.py update rules"


@st.composite
def _mirrored(draw, m: int):
    aggregation = draw(sds.aggregations())
    dtype = draw(st.sampled_from(sds.FLOAT_DTYPES if aggregation == "MEAN" else sds.VALUE_DTYPES))
    values = draw(sds.per_replica_values(m, dtype=dtype, max_rank=1, bound=10.0))
    if aggregation == "NONE":
        values = [values[0].copy() for _ in values]  # the one case NONE allows
    initial = np.full(values[0].shape, 3 if dtype == np.int32 else 1.5, dtype)
    return {
        "initial": initial,
        "values": values,
        "aggregation": aggregation,
        "kind": draw(sds.update_kinds()),
    }


@prop(
    "variables.mirrored.replica_update",
    "assign/assign_add/assign_sub of a mirrored variable in replica context aggregates "
    "the replicas' values (SUM, MEAN, ONLY_FIRST_REPLICA; NONE with equal values) and "
    "applies the one result to every copy.",
    VAR_DOC,
    ["mirrored_update"],
    _mirrored,
)
def mirrored_replica_update(adapter, ex):
    got = adapter.mirrored_update(ex["initial"], ex["values"], ex["aggregation"], ex["kind"])
    copies = ref.broadcast(ex["initial"], len(ex["values"]))
    expected = ref.mirrored_update_replica_context(
        copies, ex["values"], ex["aggregation"], ex["kind"]
    )
    what = f"{ex['kind']} with aggregation {ex['aggregation']}"
    expect_length(got, len(expected), what)
    for r, (g, e) in enumerate(zip(got, expected, strict=True)):
        expect_close(g, e, [*ex["values"], ex["initial"]], f"{what}, copy {r}")


@prop(
    "variables.mirrored.cross_replica_update",
    "An update of a mirrored variable in cross-replica context applies the one value to "
    "every copy.",
    VAR_DOC,
    ["mirrored_update_cross_replica"],
    lambda m: st.fixed_dictionaries(
        {
            "n": sds.replica_counts(m),
            "kind": sds.update_kinds(),
            "value": sds.per_replica_values(1, dtype=np.float32, max_rank=1, bound=10.0),
        }
    ),
)
def mirrored_cross_replica(adapter, ex):
    value = ex["value"][0]
    initial = np.ones(value.shape, value.dtype)
    got = adapter.mirrored_update_cross_replica(initial, value, ex["n"], ex["kind"])
    expected = ref.mirrored_update_cross_replica(ref.broadcast(initial, ex["n"]), value, ex["kind"])
    expect_length(got, ex["n"], ex["kind"])
    for r, (g, e) in enumerate(zip(got, expected, strict=True)):
        expect_close(g, e, [value, initial], f"cross-replica {ex['kind']}, copy {r}")


def _on_read(m: int, aggregations=None, dtypes=sds.FLOAT_DTYPES):
    return st.fixed_dictionaries(
        {
            "aggregation": sds.aggregations(include_none=False)
            if aggregations is None
            else aggregations,
            "values": st.sampled_from(dtypes).flatmap(
                lambda d: sds.per_replica_values(m, dtype=d, max_rank=1, bound=10.0)
            ),
        }
    )


@prop(
    "variables.sync_on_read.local_read",
    "In replica context an ON_READ variable reads the replica's own copy, unsynchronised.",
    VAR_DOC,
    ["sync_on_read"],
    _on_read,
)
def sync_on_read_local(adapter, ex):
    values = ex["values"]
    local, _ = adapter.sync_on_read(np.zeros_like(values[0]), values, ex["aggregation"])
    expect_length(local, len(values), "replica-context reads")
    for r, got in enumerate(local):
        expect_close(got, ref.sync_on_read_local(values, r), values, f"read on replica {r}")


@prop(
    "variables.sync_on_read.read_aggregates",
    "In cross-replica context an ON_READ variable reads its copies aggregated: SUM, MEAN, "
    "or replica 0's for ONLY_FIRST_REPLICA.",
    VAR_DOC,
    ["sync_on_read"],
    _on_read,
)
def sync_on_read_aggregates(adapter, ex):
    values = ex["values"]
    _, read = adapter.sync_on_read(np.zeros_like(values[0]), values, ex["aggregation"])
    expect_close(
        read,
        ref.sync_on_read_value(values, ex["aggregation"]),
        values,
        f"cross-replica read with aggregation {ex['aggregation']}",
    )


@prop(
    "variables.sync_on_read.cross_replica_assign",
    "assign(v) of an ON_READ variable in cross-replica context gives every copy v / N "
    "under SUM (so the SUM read is v) and v otherwise; assign_add/sub move every copy "
    "(not allowed under SUM).",
    VAR_DOC,
    ["sync_on_read_assign"],
    lambda m: (
        st.tuples(
            _on_read(m, dtypes=sds.VALUE_DTYPES), sds.update_kinds(), st.floats(-10, 10, width=32)
        )
        .filter(
            lambda t: (
                not (t[0]["aggregation"] == "SUM" and t[1] != "assign")
                and not (t[0]["aggregation"] == "MEAN" and t[0]["values"][0].dtype.kind == "i")
            )
        )
        .map(lambda t: dict(t[0], kind=t[1], value=t[2]))
    ),
)
def sync_on_read_assign(adapter, ex):
    values = ex["values"]
    value = np.full(values[0].shape, ex["value"], values[0].dtype)
    got = adapter.sync_on_read_assign(
        np.zeros_like(values[0]), values, value, ex["aggregation"], ex["kind"]
    )
    expected = ref.sync_on_read_assign_cross_replica(values, value, ex["aggregation"], ex["kind"])
    what = f"cross-replica {ex['kind']} with aggregation {ex['aggregation']}"
    expect_length(got, len(values), what)
    for r, (g, e) in enumerate(zip(got, expected, strict=True)):
        expect_close(g, e, [*values, value], f"{what}, copy {r}")


@st.composite
def _checkpoint(draw, m: int, synchronization: str):
    include = synchronization == "ON_WRITE"
    ex = draw(_on_read(m, sds.aggregations(include_none=include)))
    if synchronization == "ON_WRITE":
        ex["values"] = [ex["values"][0].copy() for _ in ex["values"]]
    ex["restore_replicas"] = draw(sds.replica_counts(m))
    return ex


def _round_trip(adapter, ex, synchronization):
    with tempfile.TemporaryDirectory(prefix="simdist-conformance-") as directory:
        return adapter.checkpoint_round_trip(
            ex["values"], synchronization, ex["aggregation"], ex["restore_replicas"], directory
        )


@prop(
    "checkpoint.mirrored.round_trip",
    "A mirrored variable saved on N replicas restores on M replicas with every copy equal "
    "to the saved value.",
    "tf.train.Checkpoint with tf.distribute (custom-training tutorial, checkpoints)",
    ["checkpoint_round_trip"],
    lambda m: _checkpoint(m, "ON_WRITE"),
)
def checkpoint_mirrored(adapter, ex):
    got = _round_trip(adapter, ex, "ON_WRITE")
    expect_length(got, ex["restore_replicas"], "restored copies")
    for r, g in enumerate(got):
        expect_close(g, ex["values"][0], ex["values"], f"restored copy {r}")


@prop(
    "checkpoint.sync_on_read.round_trip",
    "An ON_READ variable saves its aggregated value; restoring assigns it in cross-replica "
    "context (SUM: value / M per copy), so the restored variable reads the saved value.",
    "tf.train.Checkpoint with tf.distribute; values_util on_read_assign_cross_replica",
    ["checkpoint_round_trip"],
    lambda m: _checkpoint(m, "ON_READ"),
)
def checkpoint_sync_on_read(adapter, ex):
    got = _round_trip(adapter, ex, "ON_READ")
    saved = ref.sync_on_read_value(ex["values"], ex["aggregation"])
    zeros = ref.broadcast(np.zeros_like(ex["values"][0]), ex["restore_replicas"])
    expected = ref.sync_on_read_assign_cross_replica(zeros, saved, ex["aggregation"])
    expect_length(got, ex["restore_replicas"], "restored copies")
    for r, (g, e) in enumerate(zip(got, expected, strict=True)):
        expect_close(g, e, ex["values"], f"restored copy {r} (aggregation {ex['aggregation']})")


@prop(
    "variables.sync_on_read.sum_assign_integer_truncates",
    "assign(v) of an integer SUM ON_READ variable in cross-replica context gives every copy "
    "v / N truncated toward zero (TF casts the quotient): -7 over 2 replicas is -3 each.",
    "values_util.on_read_assign_cross_replica (cast(value / num_replicas, dtype))",
    ["sync_on_read_assign"],
    lambda m: st.fixed_dictionaries(
        {
            "values": sds.per_replica_values(m, min(2, m), dtype=np.int32, max_rank=0),
            "value": st.integers(-20, 20),
        }
    ),
)
def sync_on_read_sum_assign_integer(adapter, ex):
    values, value = ex["values"], np.int32(ex["value"])
    got = adapter.sync_on_read_assign(np.int32(0), values, value, "SUM", "assign")
    expected = ref.sync_on_read_assign_cross_replica(values, value, "SUM", "assign")
    expect_length(got, len(values), "cross-replica assign")
    for r, (g, e) in enumerate(zip(got, expected, strict=True)):
        expect_close(g, e, [value], f"assign({value}) over {len(values)} replicas, copy {r}")
