"""Properties of MultiWorkerMirroredStrategy: collectives, replica numbering, variables, training.

A cluster of W workers with L replicas each runs W*L replicas in sync, numbered worker-major
(worker w runs the global replicas w*L .. w*L+L-1). Rules: the
``tf.distribute.MultiWorkerMirroredStrategy`` API page and the multi-worker training
tutorial, checked against ``simdist_reference`` over all W*L replicas in global order.
"""

from __future__ import annotations

import numpy as np
import simdist_reference as ref
from hypothesis import strategies as st

from simdist.testing import strategies as sds
from simdist.testing.properties import training
from simdist.testing.properties._base import (
    Violation,
    expect_close,
    expect_equal,
    expect_length,
    prop,
)

MWMS_DOC = "tf.distribute.MultiWorkerMirroredStrategy (API page)"
REDUCE_DOC = "tf.distribute.Strategy.reduce, 'What should axis be?'; " + MWMS_DOC


@st.composite
def _cluster_values(
    draw, limits, op: str | None = None, min_workers: int = 1, min_replicas: int = 1, **kw
):
    """A cluster and a per-replica value over all its W*L replicas (global order)."""
    cluster = draw(sds.clusters_within(limits, min_workers))
    n = cluster.num_replicas
    if n < min_replicas:  # the limits allow no larger cluster: use more local replicas
        cluster = sds.ClusterShape(cluster.workers, limits.max_devices_per_worker)
        n = cluster.num_replicas
    values = draw(sds.per_replica_values(n, min_replicas=n, **kw))
    chosen = op if op else draw(sds.reduce_ops())
    return {"workers": cluster.workers, "op": chosen, "values": values}


def _check_reduce(adapter, ex, axis=None) -> None:
    got = adapter.multi_worker_reduce(ex["op"], ex["values"], ex["workers"], axis)
    expected = ref.reduce(ex["op"], ex["values"], axis=axis)
    expect_length(got, ex["workers"], "per-worker results")
    for w, g in enumerate(got):
        expect_close(g, expected, ex["values"], f"reduce({ex['op']}, axis={axis}) on worker {w}")


def _reduce_prop(id_: str, statement: str, op: str | None, axis, **kw):
    @prop(
        id_,
        statement,
        REDUCE_DOC,
        ["multi_worker_reduce"],
        lambda limits: _cluster_values(limits, op, **kw),
        cluster=True,
    )
    def check(adapter, ex):
        _check_reduce(adapter, ex, axis)

    return check


_reduce_prop(
    "multi_worker.reduce.sum.axis_none",
    "On every worker, reduce(SUM, v, axis=None) is the element-wise sum over all W*L "
    "replicas of the cluster, not only the worker's own.",
    "SUM",
    None,
)
_reduce_prop(
    "multi_worker.reduce.mean.axis_none",
    "On every worker, reduce(MEAN, v, axis=None) divides the sum over all W*L replicas by W*L.",
    "MEAN",
    None,
)
_reduce_prop(
    "multi_worker.reduce.sum.along_axis",
    "On every worker, reduce(SUM, v, axis=0) sums every replica's batch of every worker; "
    "batch sizes may differ between replicas and workers.",
    "SUM",
    0,
    mismatch="batch",
)
_reduce_prop(
    "multi_worker.reduce.mean.partial_batch",
    "On every worker, reduce(MEAN, v, axis=0) with unequal batches divides by the element "
    "count of the whole cluster, not a mean of per-worker or per-replica means.",
    "MEAN",
    0,
    mismatch="batch",
    min_replicas=2,
)


@st.composite
def _with_empty_replica(draw, limits):
    ex = draw(_cluster_values(limits, None, min_replicas=2, mismatch="batch"))
    empty = draw(st.integers(0, len(ex["values"]) - 1))
    ex["values"][empty] = ex["values"][empty][:0]
    return ex


@prop(
    "multi_worker.reduce.empty_batch",
    "A replica of any worker with an empty batch adds nothing to reduce(op, v, axis=0): "
    "neither to the sum nor to MEAN's count.",
    REDUCE_DOC,
    ["multi_worker_reduce"],
    _with_empty_replica,
    cluster=True,
)
def reduce_empty_batch(adapter, ex):
    _check_reduce(adapter, ex, 0)


@prop(
    "multi_worker.all_reduce.every_replica",
    "ReplicaContext.all_reduce(op, x) gives every replica of every worker the reduction "
    "over all W*L replicas.",
    "tf.distribute.ReplicaContext.all_reduce; " + MWMS_DOC,
    ["multi_worker_all_reduce"],
    lambda limits: _cluster_values(limits),
    cluster=True,
)
def all_reduce_every_replica(adapter, ex):
    got = adapter.multi_worker_all_reduce(ex["op"], ex["values"], ex["workers"])
    expected = ref.reduce(ex["op"], ex["values"])
    local = len(ex["values"]) // ex["workers"]
    expect_length(got, ex["workers"], "per-worker results")
    for w, results in enumerate(got):
        expect_length(results, local, f"worker {w}'s local results")
        for i, g in enumerate(results):
            expect_close(
                g, expected, ex["values"], f"all_reduce({ex['op']}) on replica {w * local + i}"
            )


@prop(
    "multi_worker.gather.global_replica_order",
    "On every worker, gather(v, axis=0) concatenates all W*L replicas' values in global "
    "replica order (worker-major); batch sizes may differ.",
    "tf.distribute.Strategy.gather; " + MWMS_DOC,
    ["multi_worker_gather"],
    lambda limits: _cluster_values(limits, "SUM", mismatch="batch"),
    cluster=True,
)
def gather_global_order(adapter, ex):
    got = adapter.multi_worker_gather(ex["values"], ex["workers"], 0)
    expect_length(got, ex["workers"], "per-worker results")
    for w, g in enumerate(got):
        expect_equal(g, ref.gather(ex["values"], 0), f"gather(axis=0) on worker {w}")


@prop(
    "multi_worker.local_results.local_only",
    "On worker w, experimental_local_results holds only its L local replicas' values: "
    "those of global replicas w*L .. w*L+L-1.",
    "tf.distribute.Strategy.experimental_local_results; " + MWMS_DOC,
    ["multi_worker_local_results"],
    lambda limits: _cluster_values(limits, "SUM", dtype=np.int32, max_rank=1),
    cluster=True,
)
def local_results_local_only(adapter, ex):
    got = adapter.multi_worker_local_results(ex["values"], ex["workers"])
    local = len(ex["values"]) // ex["workers"]
    expect_length(got, ex["workers"], "per-worker results")
    for w, results in enumerate(got):
        expect_length(results, local, f"worker {w}'s local results")
        for i, g in enumerate(results):
            expect_equal(g, ex["values"][w * local + i], f"worker {w}'s local result {i}")


@prop(
    "multi_worker.replica_id.global",
    "num_replicas_in_sync is W*L on every worker, and replica_id_in_sync_group of worker "
    "w's local replica i is w*L + i.",
    "tf.distribute.ReplicaContext.replica_id_in_sync_group; " + MWMS_DOC,
    ["multi_worker_replica_ids"],
    lambda limits: sds.clusters_within(limits),
    cluster=True,
)
def replica_id_global(adapter, cluster):
    got = adapter.multi_worker_replica_ids(cluster.workers, cluster.devices_per_worker)
    expect_length(got, cluster.workers, "per-worker results")
    local = cluster.devices_per_worker
    for w, (n, ids) in enumerate(got):
        if n != cluster.num_replicas:
            raise Violation(
                f"worker {w}: num_replicas_in_sync {n}, expected {cluster.num_replicas}"
            )
        want = list(range(w * local, (w + 1) * local))
        if list(ids) != want:
            raise Violation(f"worker {w}: replica ids {list(ids)}, expected {want}")


@st.composite
def _initials(draw, limits):
    cluster = draw(sds.clusters_within(limits, min_workers=2))
    values = draw(sds.per_replica_values(cluster.workers, min_replicas=cluster.workers))
    return {"initials": values, "devices_per_worker": cluster.devices_per_worker}


@prop(
    "multi_worker.variables.initial_from_worker_0",
    "A variable created in scope with a different initial value on each worker starts "
    "equal on every replica of every worker, holding worker 0's value.",
    MWMS_DOC + " (variables are initialised from worker 0's values by broadcast)",
    ["multi_worker_variable_init"],
    _initials,
    cluster=True,
)
def initial_from_worker_0(adapter, ex):
    got = adapter.multi_worker_variable_init(ex["initials"], ex["devices_per_worker"])
    expect_length(got, len(ex["initials"]), "per-worker results")
    for w, components in enumerate(got):
        expect_length(components, ex["devices_per_worker"], f"worker {w}'s components")
        for i, c in enumerate(components):
            expect_equal(c, ex["initials"][0], f"worker {w}'s copy {i}")


@st.composite
def _cluster_step(draw, limits, min_workers: int = 1):
    """A training step over a cluster: per-replica batch sizes (partial, empty) and a seed."""
    cluster = draw(sds.clusters_within(limits, min_workers))
    sizes = [draw(st.integers(0, 3)) for _ in range(cluster.num_replicas)]
    if sum(sizes) == 0:
        sizes[0] = 1
    return {
        "workers": cluster.workers,
        "sizes": sizes,
        "seed": draw(st.integers(0, 2**16)),
        "lr": 0.25,
    }


def _cluster_run(adapter, ex):
    data = training._data(ex)
    return adapter.multi_worker_train_step(
        data["params"], data["xs"], data["ys"], ex["lr"], sum(ex["sizes"]), ex["workers"]
    )


@prop(
    "multi_worker.training.n_vs_1.equivalence",
    "A step on W workers x L replicas (loss scaled by the global batch, gradients "
    "SUM-reduced across workers) equals the single-device step on the whole batch.",
    training.LOSS_DOC + "; multi-worker training tutorial; " + MWMS_DOC,
    ["multi_worker_train_step"],
    _cluster_step,
    cluster=True,
)
def n_vs_1(adapter, ex):
    losses, params = _cluster_run(adapter, ex)
    want = training._single(ex)
    summary = f"{ex['workers']} workers, per-replica batch sizes {ex['sizes']}"
    expect_length(losses, ex["workers"], "per-worker losses")
    for w, (loss, local) in enumerate(zip(losses, params, strict=True)):
        training._close(loss, want.loss, f"loss on worker {w} ({summary})")
        for i, replica_params in enumerate(local):
            for name, got, expected in zip(("w", "b"), replica_params, want.params, strict=True):
                training._close(got, expected, f"{name} on worker {w}, replica {i} ({summary})")


@prop(
    "multi_worker.training.replicas_identical",
    "After a step every replica of every worker holds bit-identical parameters.",
    MWMS_DOC + " (mirrored variables stay in sync); simdist's determinism contract",
    ["multi_worker_train_step"],
    lambda limits: _cluster_step(limits, min_workers=2),
    cluster=True,
)
def replicas_identical(adapter, ex):
    _, params = _cluster_run(adapter, ex)
    first = params[0][0]
    for w, local in enumerate(params):
        for i, replica_params in enumerate(local):
            for got, want in zip(replica_params, first, strict=True):
                if np.asarray(got).tobytes() != np.asarray(want).tobytes():
                    raise Violation(
                        f"worker {w}, replica {i}: parameters differ from worker 0's replica 0 "
                        f"(sizes {ex['sizes']})"
                    )
