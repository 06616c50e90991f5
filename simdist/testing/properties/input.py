"""Properties of input distribution: how experimental_distribute_dataset splits batches.

Rules: the ``Strategy.experimental_distribute_dataset`` API page and the distributed-input
guide, as stated (and checked against TF 2.21) in ``simdist_reference.batching``.
"""

from __future__ import annotations

import numpy as np
import simdist_reference as ref
from hypothesis import strategies as st

from simdist.testing import strategies as sds
from simdist.testing.adapters.reference_adapter import ReferenceAdapter, leaves
from simdist.testing.properties._base import Violation, describe, expect_equal, prop

DOC = "tf.distribute.Strategy.experimental_distribute_dataset; distributed input guide"


def _distribute(adapter, spec):
    return adapter.distribute_dataset(
        spec.elements,
        spec.global_batch_size,
        spec.num_replicas,
        spec.drop_remainder,
        spec.auto_shard_policy,
    )


def _check_split(adapter, spec) -> None:
    got = _distribute(adapter, spec)
    expected = ReferenceAdapter(spec.num_replicas).distribute_dataset(
        spec.elements,
        spec.global_batch_size,
        spec.num_replicas,
        spec.drop_remainder,
        spec.auto_shard_policy,
    )
    if len(got) != len(expected):
        raise Violation(
            f"{len(got)} steps, expected {len(expected)}: got "
            f"{describe(got)}, expected {describe(expected)}"
        )
    for s, (step, want) in enumerate(zip(got, expected, strict=True)):
        if len(step) != spec.num_replicas:
            raise Violation(
                f"step {s} has {len(step)} per-replica batches, expected {spec.num_replicas}"
            )
        for r, (batch, wanted) in enumerate(zip(step, want, strict=True)):
            for g, e in zip(leaves(batch), leaves(wanted), strict=True):
                expect_equal(g, e, f"step {s}, replica {r}")


def _specs(policy: str, **kw):
    return lambda m: sds.dataset_specs(m, policies=(policy,), **kw)


@prop(
    "input.split.auto",
    "Under AutoShardPolicy.AUTO (one worker) each global batch of b elements is cut into "
    "num_replicas slices of ceil(b/num_replicas), in order; element structures are kept.",
    DOC,
    ["distribute_dataset"],
    _specs("AUTO"),
)
def split_auto(adapter, spec):
    _check_split(adapter, spec)


@prop(
    "input.split.off",
    "Under AutoShardPolicy.OFF the element stream is re-cut by the declared global batch "
    "size into per-replica sizes that differ by at most one (7 over 4: 2, 2, 2, 1).",
    DOC,
    ["distribute_dataset"],
    _specs("OFF"),
)
def split_off(adapter, spec):
    _check_split(adapter, spec)


@st.composite
def _partial(draw, m: int):
    spec = draw(sds.dataset_specs(m, structures=False))
    length = spec.global_batch_size * draw(st.integers(0, 2)) + draw(
        st.integers(1, max(1, spec.global_batch_size - 1))
    )
    if length % spec.global_batch_size == 0:
        length += 1
    return sds.DatasetSpec(
        np.arange(length, dtype=np.int64),
        length,
        spec.global_batch_size,
        False,
        spec.num_replicas,
        spec.auto_shard_policy,
    )


@prop(
    "input.partial_batch.fills_replicas_in_order",
    "A last partial batch fills the replicas in order; the replicas left without data "
    "get an empty batch (batch dimension 0) and the step still happens.",
    DOC,
    ["distribute_dataset"],
    _partial,
)
def partial_batch(adapter, spec):
    _check_split(adapter, spec)


@prop(
    "input.conservation",
    "Every element reaches exactly one replica, in order: concatenating the steps' "
    "per-replica batches gives the dataset (less the dropped remainder).",
    DOC,
    ["distribute_dataset"],
    lambda m: sds.dataset_specs(m, structures=False),
)
def conservation(adapter, spec):
    got = _distribute(adapter, spec)
    flat = [np.asarray(b).reshape(-1) for step in got for b in step]
    seen = np.concatenate(flat) if flat else np.zeros(0, np.int64)
    kept = spec.length - (spec.length % spec.global_batch_size if spec.drop_remainder else 0)
    expect_equal(seen, np.arange(kept), "the elements in step and replica order")


@prop(
    "input.drop_remainder.full_steps",
    "With drop_remainder=True every step holds exactly global_batch_size elements.",
    DOC,
    ["distribute_dataset"],
    lambda m: sds.dataset_specs(m, structures=False).map(
        lambda s: sds.DatasetSpec(
            s.elements, s.length, s.global_batch_size, True, s.num_replicas, s.auto_shard_policy
        )
    ),
)
def drop_remainder(adapter, spec):
    for s, step in enumerate(_distribute(adapter, spec)):
        total = sum(int(np.shape(b)[0]) for b in step)
        if total != spec.global_batch_size:
            raise Violation(f"step {s} holds {total} elements, expected {spec.global_batch_size}")


@prop(
    "input.per_replica_batch_size.divides",
    "InputContext.get_per_replica_batch_size(B * N) == B over N replicas.",
    "tf.distribute.InputContext.get_per_replica_batch_size",
    ["per_replica_batch_size"],
    lambda m: st.tuples(st.integers(0, 16), sds.replica_counts(m)),
)
def per_replica_batch_size(adapter, ex):
    per, n = ex
    got = adapter.per_replica_batch_size(per * n, n)
    if got != ref.get_per_replica_batch_size(per * n, n):
        raise Violation(
            f"get_per_replica_batch_size({per * n}) over {n} replicas gave {got}, expected {per}"
        )
