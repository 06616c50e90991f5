"""Error properties: which inputs an implementation must reject, and with which exception.

Each property draws an input the rule forbids and requires the kind of exception that
``simdist_reference`` raises for it: ``INVALID_ARGUMENT`` (ValueError, or TF's run-time
form of it, InvalidArgumentError) or TypeError. Accepting the input, or
raising another class, is a violation (TensorFlow's own deviations are recorded in
``simdist.testing.known_differences``, never accepted here).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from simdist.testing import strategies as sds
from simdist.testing.properties._base import INVALID_ARGUMENT, expect_raises, prop


@st.composite
def _shape_mismatch(draw, m: int):
    values = draw(sds.per_replica_values(m, min_replicas=min(2, m), mismatch="batch"))
    if len({v.shape for v in values}) == 1:
        values[-1] = np.concatenate(
            [
                values[-1],
                values[-1][:1]
                if len(values[-1])
                else np.zeros((1, *values[-1].shape[1:]), values[-1].dtype),
            ]
        )
    return {"op": draw(sds.reduce_ops()), "values": values}


@prop(
    "errors.reduce.shape_mismatch",
    "reduce(op, v, axis=None) of per-replica values of different shapes is an invalid argument.",
    "tf.distribute.Strategy.reduce (axis=None: element-wise, shapes must match)",
    ["reduce"],
    lambda m: _shape_mismatch(m).filter(lambda ex: len(ex["values"]) > 1),
)
def reduce_shape_mismatch(adapter, ex):
    expect_raises(
        INVALID_ARGUMENT,
        lambda: adapter.reduce(ex["op"], ex["values"], None),
        f"reduce({ex['op']}) of shapes {[v.shape for v in ex['values']]}",
    )


@prop(
    "errors.reduce.axis_out_of_range",
    "reduce(op, v, axis) with axis outside [-rank, rank) is an invalid argument.",
    "tf.distribute.Strategy.reduce ('`axis` = 2 out of range for `value` with rank 2')",
    ["reduce"],
    lambda m: st.tuples(
        sds.reduce_ops(),
        sds.per_replica_values(m, min_rank=1, max_rank=2),
        st.integers(0, 2),
        st.booleans(),
    ),
)
def reduce_axis_out_of_range(adapter, ex):
    op, values, extra, negative = ex
    rank = values[0].ndim
    axis = -(rank + 1 + extra) if negative else rank + extra
    expect_raises(
        INVALID_ARGUMENT,
        lambda: adapter.reduce(op, values, axis),
        f"reduce({op}, axis={axis}) of rank-{rank} values",
    )


@prop(
    "errors.reduce.unknown_op",
    "A reduce op other than SUM or MEAN (e.g. 'MAX') is an invalid argument.",
    "tf.distribute.ReduceOp (SUM and MEAN only)",
    ["reduce"],
    lambda m: st.tuples(
        st.sampled_from(["MAX", "min", "PROD", "average"]), sds.per_replica_values(m, max_rank=1)
    ),
)
def reduce_unknown_op(adapter, ex):
    op, values = ex
    expect_raises(INVALID_ARGUMENT, lambda: adapter.reduce(op, values, None), f"reduce({op!r})")


@prop(
    "errors.gather.scalar",
    "gather of rank-0 per-replica values is an invalid argument (expand_dims first).",
    "tf.distribute.Strategy.gather (non-zero rank required)",
    ["gather"],
    lambda m: sds.per_replica_values(m, max_rank=0),
)
def gather_scalar(adapter, values):
    expect_raises(INVALID_ARGUMENT, lambda: adapter.gather(values, 0), "gather of scalars")


@prop(
    "errors.gather.shape_mismatch_outside_axis",
    "gather(v, axis=0) of values whose shapes differ outside axis 0 is an invalid argument.",
    "tf.distribute.Strategy.gather ((1, 2, 3) and (1, 3, 3) gather along 1 only)",
    ["gather"],
    lambda m: sds.per_replica_values(max(m, 2), mismatch="outside_batch").filter(
        lambda v: len(v) <= m
    ),
)
def gather_shape_mismatch(adapter, values):
    expect_raises(
        INVALID_ARGUMENT,
        lambda: adapter.gather(values, 0),
        f"gather(axis=0) of shapes {[v.shape for v in values]}",
    )


@prop(
    "errors.loss.rank0",
    "compute_average_loss of a rank-0 per-example loss is an invalid argument.",
    "tf.nn.compute_average_loss (per_example_loss needs rank >= 1)",
    ["compute_average_loss"],
    lambda m: st.tuples(sds.replica_counts(m), st.floats(0, 10, width=32)),
)
def loss_rank0(adapter, ex):
    n, value = ex
    losses = [np.float32(value)] * n
    expect_raises(
        INVALID_ARGUMENT,
        lambda: adapter.compute_average_loss(losses, 4),
        "compute_average_loss of a scalar",
    )


@prop(
    "errors.input.batch_not_divisible",
    "get_per_replica_batch_size(B) when N replicas do not divide B is an invalid argument.",
    "tf.distribute.InputContext.get_per_replica_batch_size",
    ["per_replica_batch_size"],
    lambda m: st.tuples(st.integers(1, 30), sds.replica_counts(m, min(2, m))).filter(
        lambda t: t[0] % t[1] != 0
    ),
)
def batch_not_divisible(adapter, ex):
    batch, n = ex
    expect_raises(
        INVALID_ARGUMENT,
        lambda: adapter.per_replica_batch_size(batch, n),
        f"get_per_replica_batch_size({batch}) over {n} replicas",
    )


@prop(
    "errors.mirrored.mean_on_integer",
    "Updating an integer mirrored variable with aggregation MEAN in replica context is "
    "an invalid argument.",
    "values_util.apply_aggregation ('Cannot update non-float variables with "
    "tf.VariableAggregation.MEAN aggregation in replica context')",
    ["mirrored_update"],
    lambda m: st.tuples(sds.per_replica_values(m, dtype=np.int32, max_rank=0), sds.update_kinds()),
)
def mean_on_integer(adapter, ex):
    values, kind = ex
    expect_raises(
        INVALID_ARGUMENT,
        lambda: adapter.mirrored_update(np.int32(3), values, "MEAN", kind),
        f"{kind} of an int32 MEAN mirrored variable",
    )


@st.composite
def _differing(draw, m: int):
    values = draw(
        sds.per_replica_values(max(m, 2), min_replicas=2, dtype=np.float32, max_rank=0, bound=10.0)
    )
    values = values[: max(m, 1)]
    if len(values) > 1 and all(np.array_equal(v, values[0]) for v in values):
        values[-1] = values[-1] + np.float32(1)
    return {"values": values, "kind": draw(sds.update_kinds())}


@prop(
    "errors.mirrored.none_differing_values",
    "Updating a mirrored variable with aggregation NONE from different per-replica values "
    "is an invalid argument (the copies would diverge).",
    "simdist's documented choice (reference/variables.py, strict_none=True)",
    ["mirrored_update"],
    lambda m: _differing(m).filter(lambda ex: len(ex["values"]) > 1),
)
def none_differing(adapter, ex):
    expect_raises(
        INVALID_ARGUMENT,
        lambda: adapter.mirrored_update(np.float32(1.5), ex["values"], "NONE", ex["kind"]),
        f"{ex['kind']} of differing values under aggregation NONE",
    )


@prop(
    "errors.sync_on_read.assign_add_sum",
    "assign_add / assign_sub of a SUM ON_READ variable in cross-replica context is "
    "an invalid argument.",
    "values_util.on_read_assign_add_cross_replica",
    ["sync_on_read_assign"],
    lambda m: st.tuples(
        sds.per_replica_values(m, dtype=np.float32, max_rank=0, bound=10.0),
        st.sampled_from(["assign_add", "assign_sub"]),
    ),
)
def assign_add_sum(adapter, ex):
    values, kind = ex
    expect_raises(
        INVALID_ARGUMENT,
        lambda: adapter.sync_on_read_assign(np.float32(0), values, np.float32(1), "SUM", kind),
        f"cross-replica {kind} of a SUM ON_READ variable",
    )


@prop(
    "errors.sync_on_read.read_none",
    "Reading an ON_READ variable with aggregation NONE in cross-replica context is "
    "an invalid argument.",
    "ReduceOp.from_variable_aggregation (NONE has no reduce op)",
    ["sync_on_read"],
    lambda m: sds.per_replica_values(m, dtype=np.float32, max_rank=0, bound=10.0),
)
def read_none(adapter, values):
    expect_raises(
        INVALID_ARGUMENT,
        lambda: adapter.sync_on_read(np.float32(0), values, "NONE"),
        "cross-replica read of a NONE ON_READ variable",
    )
