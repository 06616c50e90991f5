"""Reference distributed-variable rules: mirrored updates and sync-on-read reads/writes."""

import enum

import numpy as np
import pytest
import simdist_reference as ref
from hypothesis import given
from hypothesis import strategies as st


class FakeAggregation(enum.Enum):
    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


def values(*xs):
    return [np.float64(x) for x in xs]


def test_mirrored_assign_in_replica_context_by_aggregation():
    copies = values(1.0, 1.0)
    assigned = values(2.0, 4.0)
    assert ref.mirrored_update_replica_context(copies, assigned, "SUM") == [6.0, 6.0]
    assert ref.mirrored_update_replica_context(copies, assigned, "MEAN") == [3.0, 3.0]
    assert ref.mirrored_update_replica_context(
        copies, assigned, FakeAggregation.ONLY_FIRST_REPLICA
    ) == [2.0, 2.0]


def test_mirrored_assign_add_sums_the_deltas_then_applies_them():
    copies = values(10.0, 10.0, 10.0)
    deltas = values(1.0, 2.0, 3.0)
    assert ref.mirrored_update_replica_context(copies, deltas, "SUM", "assign_add") == [16.0] * 3
    assert ref.mirrored_update_replica_context(copies, deltas, "MEAN", "assign_add") == [12.0] * 3
    assert ref.mirrored_update_replica_context(copies, deltas, "MEAN", "assign_sub") == [8.0] * 3
    assert (
        ref.mirrored_update_replica_context(copies, deltas, "ONLY_FIRST_REPLICA", "assign_sub")
        == [9.0] * 3
    )


def test_mirrored_none_strict_refuses_divergence_tf_diverges():
    copies = values(0.0, 0.0)
    with pytest.raises(ValueError, match="diverge"):
        ref.mirrored_update_replica_context(copies, values(1.0, 2.0), "NONE")
    assert ref.mirrored_update_replica_context(copies, values(1.0, 1.0), "NONE") == [1.0, 1.0]
    tf_like = ref.mirrored_update_replica_context(
        copies, values(1.0, 2.0), "NONE", strict_none=False
    )
    assert tf_like == [1.0, 2.0]


def test_mirrored_mean_on_integer_variable_is_refused():
    with pytest.raises(ValueError, match="Cannot update non-float variables"):
        ref.mirrored_update_replica_context(
            [np.int32(1), np.int32(1)], [np.int32(1), np.int32(2)], "MEAN"
        )
    out = ref.mirrored_update_replica_context(
        [np.int32(1), np.int32(1)], [np.int32(1), np.int32(2)], "SUM", "assign_add"
    )
    assert [int(v) for v in out] == [4, 4] and out[0].dtype == np.int32


def test_mirrored_update_errors():
    with pytest.raises(ValueError, match="per-replica values"):
        ref.mirrored_update_replica_context(values(0.0, 0.0), values(1.0), "SUM")
    with pytest.raises(ValueError, match="kind"):
        ref.mirrored_update_replica_context(values(0.0), values(1.0), "SUM", "assign_mul")
    with pytest.raises(ValueError, match="VariableAggregation"):
        ref.mirrored_update_replica_context(values(0.0), values(1.0), "MAX")


def test_mirrored_cross_replica_update_applies_value_to_every_copy():
    copies = [np.array([1.0, 2.0])] * 3
    out = ref.mirrored_update_cross_replica(copies, np.array([5.0, 6.0]))
    assert all(np.array_equal(c, [5.0, 6.0]) for c in out)
    out = ref.mirrored_update_cross_replica(copies, 1.0, "assign_add")
    assert all(np.array_equal(c, [2.0, 3.0]) for c in out)


def test_sync_on_read_cross_replica_read():
    copies = values(1.0, 2.0, 6.0)
    assert ref.sync_on_read_value(copies, "SUM") == 9.0
    assert ref.sync_on_read_value(copies, "MEAN") == 3.0
    assert ref.sync_on_read_value(copies, "ONLY_FIRST_REPLICA") == 1.0
    with pytest.raises(ValueError, match="Could not convert from `tf.VariableAggregation`"):
        ref.sync_on_read_value(copies, "NONE")
    assert ref.sync_on_read_local(copies, 2) == 6.0


def test_sync_on_read_cross_replica_assign():
    copies = values(1.0, 2.0, 3.0, 4.0)
    assert ref.sync_on_read_assign_cross_replica(copies, 8.0, "SUM") == [2.0] * 4
    for aggregation in ("MEAN", "ONLY_FIRST_REPLICA", "NONE"):
        assert ref.sync_on_read_assign_cross_replica(copies, 8.0, aggregation) == [8.0] * 4
    assert ref.sync_on_read_assign_cross_replica(copies, 1.0, "MEAN", "assign_add") == [
        2.0,
        3.0,
        4.0,
        5.0,
    ]
    with pytest.raises(ValueError, match="does not support `assign_add` in cross-replica"):
        ref.sync_on_read_assign_cross_replica(copies, 1.0, "SUM", "assign_add")
    with pytest.raises(ValueError, match="does not support `assign_sub` in cross-replica"):
        ref.sync_on_read_assign_cross_replica(copies, 1.0, "SUM", "assign_sub")


def test_sync_on_read_sum_assign_of_integers_truncates():
    out = ref.sync_on_read_assign_cross_replica([np.int32(0)] * 4, np.int32(10), "SUM")
    assert [int(v) for v in out] == [2, 2, 2, 2] and out[0].dtype == np.int32


def test_sync_on_read_replica_update_touches_only_its_copy():
    out = ref.sync_on_read_update_local(values(1.0, 1.0), 1, 5.0, "assign_add")
    assert out == [1.0, 6.0]


def test_reduce_op_from_aggregation():
    assert ref.reduce_op_from_aggregation("sum") == "SUM"
    assert ref.reduce_op_from_aggregation(FakeAggregation.MEAN) == "MEAN"
    for bad in ("NONE", "ONLY_FIRST_REPLICA"):
        with pytest.raises(ValueError):
            ref.reduce_op_from_aggregation(bad)


replicated = st.integers(1, 8).flatmap(
    lambda n: st.lists(st.floats(-100, 100), min_size=n, max_size=n)
)


@given(
    replicated,
    st.sampled_from(["SUM", "MEAN", "ONLY_FIRST_REPLICA"]),
    st.sampled_from(["assign", "assign_add", "assign_sub"]),
)
def test_mirrored_copies_stay_identical(vals, aggregation, kind):
    copies = [np.float64(0.5)] * len(vals)
    out = ref.mirrored_update_replica_context(
        copies, [np.float64(v) for v in vals], aggregation, kind
    )
    assert all(np.array_equal(c, out[0]) for c in out)


@given(replicated, st.floats(-100, 100))
def test_sync_on_read_sum_assign_then_read_round_trips(vals, value):
    copies = ref.sync_on_read_assign_cross_replica([np.float64(v) for v in vals], value, "SUM")
    assert ref.sync_on_read_value(copies, "SUM") == pytest.approx(value, abs=1e-9)
