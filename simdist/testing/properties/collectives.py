"""Properties of cross-replica reduction and gathering: reduce, all_reduce, gather, all_gather.

Rules: the ``tf.distribute.Strategy`` API page (``reduce`` and its "What should axis be?"
section, ``gather``), ``tf.distribute.ReplicaContext`` (``all_reduce``, ``all_gather``), as
stated in ``simdist_reference.reduce`` and ``simdist_reference.collectives``.
"""

from __future__ import annotations

import numpy as np
import simdist_reference as ref
from hypothesis import strategies as st

from simdist.testing import strategies as sds
from simdist.testing.properties._base import (
    Violation,
    expect_close,
    expect_equal,
    expect_length,
    prop,
)

REDUCE_DOC = "tf.distribute.Strategy.reduce (API page)"
AXIS_DOC = "tf.distribute.Strategy.reduce, 'What should axis be?'"


def _values_and_op(m: int, op: str | None = None, **kw) -> st.SearchStrategy:
    ops = st.just(op) if op else sds.reduce_ops()
    return st.fixed_dictionaries({"op": ops, "values": sds.per_replica_values(m, **kw)})


def _check_reduce(adapter, ex, axis=None) -> None:
    got = adapter.reduce(ex["op"], ex["values"], axis)
    expected = ref.reduce(ex["op"], ex["values"], axis=axis)
    expect_close(got, expected, ex["values"], f"reduce({ex['op']}, axis={axis})")


@prop(
    "reduce.sum.axis_none",
    "reduce(SUM, v, axis=None) is the element-wise sum of the replicas' values.",
    REDUCE_DOC,
    ["reduce"],
    lambda m: _values_and_op(m, "SUM"),
)
def reduce_sum_axis_none(adapter, ex):
    _check_reduce(adapter, ex)


@prop(
    "reduce.mean.axis_none",
    "reduce(MEAN, v, axis=None) is the element-wise sum divided by the replica count.",
    REDUCE_DOC,
    ["reduce"],
    lambda m: _values_and_op(m, "MEAN"),
)
def reduce_mean_axis_none(adapter, ex):
    _check_reduce(adapter, ex)


@prop(
    "reduce.op.any_case",
    "A reduce op given as a string is upper-cased first: 'sum', 'Mean' mean SUM, MEAN.",
    "tf.distribute.Strategy.reduce (reduce_op: a ReduceOp value or its string name)",
    ["reduce"],
    lambda m: st.fixed_dictionaries(
        {
            "op": st.sampled_from(["sum", "Sum", "mean", "MEAN", "mEaN"]),
            "values": sds.per_replica_values(m, max_rank=1),
        }
    ),
)
def reduce_op_any_case(adapter, ex):
    _check_reduce(adapter, ex)


@prop(
    "reduce.sum.along_axis",
    "reduce(SUM, v, axis=0) sums along the batch axis on each replica, then across "
    "replicas; replicas may hold different batch sizes.",
    AXIS_DOC,
    ["reduce"],
    lambda m: _values_and_op(m, "SUM", mismatch="batch"),
)
def reduce_sum_along_axis(adapter, ex):
    _check_reduce(adapter, ex, axis=0)


@prop(
    "reduce.mean.partial_batch",
    "reduce(MEAN, v, axis=0) with unequal per-replica batches divides by the total "
    "element count, not the mean of the per-replica means.",
    AXIS_DOC,
    ["reduce"],
    lambda m: _values_and_op(m, "MEAN", mismatch="batch", min_replicas=min(2, m)),
)
def reduce_mean_partial_batch(adapter, ex):
    _check_reduce(adapter, ex, axis=0)


@st.composite
def _with_empty_replica(draw, m: int):
    values = draw(sds.per_replica_values(m, min_replicas=min(2, m), mismatch="batch"))
    empty = draw(st.integers(0, len(values) - 1))
    values[empty] = values[empty][:0]
    return {"op": draw(sds.reduce_ops()), "values": values}


@prop(
    "reduce.mean.empty_batch",
    "A replica with an empty batch adds nothing to reduce(op, v, axis=0): neither to "
    "the sum nor to MEAN's count (all empty: NaN).",
    AXIS_DOC,
    ["reduce"],
    _with_empty_replica,
)
def reduce_mean_empty_batch(adapter, ex):
    _check_reduce(adapter, ex, axis=0)


@prop(
    "reduce.axis.negative",
    "A negative axis counts from the end: reduce(op, v, axis=-rank) == axis=0.",
    AXIS_DOC,
    ["reduce"],
    lambda m: _values_and_op(m, mismatch="batch", max_rank=2),
)
def reduce_axis_negative(adapter, ex):
    rank = ex["values"][0].ndim
    got = adapter.reduce(ex["op"], ex["values"], -rank)
    expected = ref.reduce(ex["op"], ex["values"], axis=0)
    expect_close(got, expected, ex["values"], f"reduce({ex['op']}, axis={-rank})")


def _check_all_reduce(adapter, ex) -> None:
    got = adapter.all_reduce(ex["op"], ex["values"])
    expected = ref.all_reduce(ex["op"], ex["values"])
    expect_length(got, len(expected), f"all_reduce({ex['op']})")
    for r, (g, e) in enumerate(zip(got, expected, strict=True)):
        expect_close(g, e, ex["values"], f"all_reduce({ex['op']}) on replica {r}")


@prop(
    "all_reduce.sum",
    "ReplicaContext.all_reduce(SUM, x) gives every replica the sum of all replicas' x.",
    "tf.distribute.ReplicaContext.all_reduce",
    ["all_reduce"],
    lambda m: _values_and_op(m, "SUM"),
)
def all_reduce_sum(adapter, ex):
    _check_all_reduce(adapter, ex)


@prop(
    "all_reduce.mean",
    "ReplicaContext.all_reduce(MEAN, x) gives every replica the mean of all replicas' x.",
    "tf.distribute.ReplicaContext.all_reduce",
    ["all_reduce"],
    lambda m: _values_and_op(m, "MEAN"),
)
def all_reduce_mean(adapter, ex):
    _check_all_reduce(adapter, ex)


@prop(
    "all_reduce.replicas_identical",
    "Every replica receives a bit-identical all_reduce result.",
    "tf.distribute.ReplicaContext.all_reduce; simdist's determinism contract",
    ["all_reduce"],
    lambda m: _values_and_op(m, dtype=np.float32),
)
def all_reduce_replicas_identical(adapter, ex):
    got = [np.asarray(g) for g in adapter.all_reduce(ex["op"], ex["values"])]
    for r, g in enumerate(got[1:], start=1):
        if g.shape != got[0].shape or g.tobytes() != got[0].tobytes():
            raise Violation(f"replica {r} got {g.tolist()}, replica 0 got {got[0].tolist()}")


@prop(
    "gather.concat_in_replica_order",
    "gather(v, axis=0) concatenates the replicas' values in replica order; batch sizes "
    "may differ (partial and empty batches).",
    "tf.distribute.Strategy.gather",
    ["gather"],
    lambda m: sds.per_replica_values(m, mismatch="batch"),
)
def gather_concat(adapter, values):
    expect_equal(adapter.gather(values, 0), ref.gather(values, 0), "gather(axis=0)")


@st.composite
def _along_any_axis(draw, m: int, negative: bool = False):
    values = draw(sds.per_replica_values(m, min_rank=1, max_rank=3))
    rank = values[0].ndim
    axis = draw(st.integers(-rank, -1) if negative else st.integers(0, rank - 1))
    sizes = [draw(st.integers(0, 3)) for _ in values]
    resized = []
    for v, size in zip(values, sizes, strict=True):
        shape = list(v.shape)
        shape[axis] = size
        resized.append(np.resize(v, shape) if v.size else np.zeros(shape, v.dtype))
    return {"values": resized, "axis": axis}


def _check_gather(adapter, ex) -> None:
    expect_equal(
        adapter.gather(ex["values"], ex["axis"]),
        ref.gather(ex["values"], ex["axis"]),
        f"gather(axis={ex['axis']})",
    )


@prop(
    "gather.any_axis",
    "gather(v, axis) for axis in [0, rank) concatenates along that axis; the replicas' "
    "shapes may differ along it only.",
    "tf.distribute.Strategy.gather",
    ["gather"],
    _along_any_axis,
)
def gather_any_axis(adapter, ex):
    _check_gather(adapter, ex)


@prop(
    "gather.negative_axis",
    "gather(v, axis) with axis in [-rank, 0) counts from the end, as tf.concat does.",
    "simdist's documented choice (reference/collectives.py gather); TF documents axis in [0, rank)",
    ["gather"],
    lambda m: _along_any_axis(m, negative=True),
)
def gather_negative_axis(adapter, ex):
    _check_gather(adapter, ex)


@st.composite
def _split(draw, m: int):
    n = draw(sds.replica_counts(m))
    sizes = [draw(st.integers(0, 3)) for _ in range(n)]
    x = draw(sds.per_replica_values(1, dtype=np.int32, min_rank=1, max_rank=2))[0]
    x = (
        np.resize(x, (sum(sizes), *x.shape[1:]))
        if x.size
        else np.zeros((sum(sizes), *x.shape[1:]), np.int32)
    )
    return {"x": x, "sizes": sizes}


@prop(
    "gather.inverts_split",
    "gather(split(x, sizes), axis=0) == x: gathering loses, adds and reorders nothing.",
    "tf.distribute.Strategy.gather (concatenation in replica order)",
    ["gather"],
    _split,
)
def gather_inverts_split(adapter, ex):
    pieces = ref.split_along(ex["x"], ex["sizes"], 0)
    expect_equal(adapter.gather(pieces, 0), ex["x"], f"gather of x split as {ex['sizes']}")


@prop(
    "all_gather.concat",
    "ReplicaContext.all_gather(x, axis=0) gives every replica the concatenation of all "
    "replicas' x in replica order.",
    "tf.distribute.ReplicaContext.all_gather",
    ["all_gather"],
    lambda m: sds.per_replica_values(m, min_rank=1),
)
def all_gather_concat(adapter, values):
    got = adapter.all_gather(values, 0)
    expected = ref.all_gather(values, 0)
    expect_length(got, len(expected), "all_gather(axis=0)")
    for r, (g, e) in enumerate(zip(got, expected, strict=True)):
        expect_equal(g, e, f"all_gather(axis=0) on replica {r}")
