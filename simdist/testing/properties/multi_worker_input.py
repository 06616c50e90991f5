"""Properties of input across workers: which elements each worker and replica sees per step.

Rules: the distributed-input guide ("Sharding", ``tf.data.experimental.AutoShardPolicy``)
and ``Strategy.experimental_distribute_dataset``, as stated (and checked against TF 2.21)
in ``simdist_reference.sharding``: FILE gives worker w the files w, w+W, ...; DATA keeps
worker w's slices of each global batch cut into W*L pieces; AUTO is FILE on files and DATA
otherwise; OFF gives every worker everything; a step happens while any replica has data.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from simdist_reference import sharding

from simdist.testing import strategies as sds
from simdist.testing.properties._base import Violation, describe, expect_equal, prop

DOC = (
    "distributed input guide, 'Sharding'; tf.data.experimental.AutoShardPolicy; "
    "tf.distribute.Strategy.experimental_distribute_dataset"
)


@st.composite
def _sharded(draw, limits, policy: str, files: bool | None, drop: bool | None = None):
    """A cluster, a dataset (files: at least one file per worker) and a policy."""
    cluster = draw(sds.clusters_within(limits))
    spec = draw(sds.shard_specs(files=files, min_files=cluster.workers))
    if drop is not None:
        spec = sds.ShardSpec(spec.elements, spec.file_lines, spec.global_batch_size, drop)
    return {
        "policy": policy,
        "workers": cluster.workers,
        "local": cluster.devices_per_worker,
        "spec": spec,
    }


def _expected(ex):
    spec = ex["spec"]
    return sharding.distribute_across_workers(
        spec.global_batch_size,
        ex["workers"],
        ex["local"],
        elements=spec.elements,
        file_lines=spec.file_lines,
        policy=ex["policy"],
        drop_remainder=spec.drop_remainder,
    )


def _steps(adapter, ex):
    return adapter.auto_shard(ex["policy"], ex["spec"], ex["workers"], ex["local"])


def _as_lists(steps) -> list:
    return [[[np.asarray(b).tolist() for b in worker] for worker in step] for step in steps]


def _check(adapter, ex) -> None:
    got, expected = _steps(adapter, ex), _expected(ex)
    if len(got) != len(expected):
        raise Violation(
            f"{len(got)} steps, expected {len(expected)}: got {_as_lists(got)}, "
            f"expected {_as_lists(expected)} (steps[step][worker][replica])"
        )
    for s, (step, want) in enumerate(zip(got, expected, strict=True)):
        if len(step) != ex["workers"]:
            raise Violation(f"step {s} has {len(step)} workers, expected {ex['workers']}")
        for w, (local, wanted) in enumerate(zip(step, want, strict=True)):
            if len(local) != ex["local"]:
                raise Violation(
                    f"step {s}, worker {w}: {len(local)} per-replica batches, "
                    f"expected {ex['local']}"
                )
            for r, (batch, wanted_batch) in enumerate(zip(local, wanted, strict=True)):
                expect_equal(
                    np.asarray(batch).astype(np.int64),
                    np.asarray(wanted_batch).astype(np.int64),
                    f"step {s}, worker {w}, replica {r} (all steps: got {_as_lists(got)}, "
                    f"expected {_as_lists(expected)})",
                )


def _policy_prop(id_: str, statement: str, policy: str, files: bool | None):
    @prop(
        id_,
        statement,
        DOC,
        ["auto_shard"],
        lambda limits: _sharded(limits, policy, files),
        cluster=True,
    )
    def check(adapter, ex):
        _check(adapter, ex)

    return check


_policy_prop(
    "multi_worker.auto_shard.data",
    "Under DATA each global batch is cut into W*L slices and worker w keeps slices w, w+W, "
    "... for its replicas, from memory or from files.",
    "DATA",
    None,
)
_policy_prop(
    "multi_worker.auto_shard.file",
    "Under FILE worker w reads files w, w+W, ... and cuts its own stream into per-replica "
    "batches; a step happens while any replica of any worker has data.",
    "FILE",
    True,
)
_policy_prop(
    "multi_worker.auto_shard.off",
    "Under OFF every worker reads the whole dataset and cuts it into its own per-replica "
    "batch sizes (the global batch split over W*L replicas).",
    "OFF",
    None,
)
_policy_prop(
    "multi_worker.auto_shard.auto",
    "AUTO shards by FILE when the dataset reads files and by DATA otherwise.",
    "AUTO",
    None,
)


@st.composite
def _whole(draw, limits):
    policy = draw(st.sampled_from(["DATA", "FILE", "AUTO"]))
    return draw(_sharded(limits, policy, True if policy == "FILE" else None, drop=False))


@prop(
    "multi_worker.auto_shard.conservation",
    "Under DATA, FILE and AUTO without drop_remainder, every element reaches exactly one "
    "replica of one worker: none is lost, none is read twice.",
    DOC,
    ["auto_shard"],
    _whole,
    cluster=True,
)
def conservation(adapter, ex):
    got = _steps(adapter, ex)
    flat = [np.asarray(b).reshape(-1) for step in got for worker in step for b in worker]
    seen = np.sort(np.concatenate(flat)) if flat else np.zeros(0, np.int64)
    expect_equal(
        seen.astype(np.int64),
        np.arange(ex["spec"].length, dtype=np.int64),
        f"the elements seen over all steps, workers and replicas, sorted "
        f"(got steps {describe(_as_lists(got))})",
    )
