"""Reference loss scaling: the custom-training tutorial's worked example and TF's rules."""

import numpy as np
import pytest
import simdist_reference as ref
from hypothesis import given
from hypothesis import strategies as st


def test_tutorial_example_scaled_losses_and_the_mean_metric_pitfall():
    # Two replicas, losses [2, 3] and [4, 5], global batch 4.
    scaled = [
        ref.compute_average_loss(np.array(v), global_batch_size=4) for v in ([2.0, 3.0], [4.0, 5.0])
    ]
    assert scaled == [1.25, 2.25]
    assert ref.reduce("SUM", scaled) == 3.5  # the loss of the global batch: 14 / 4
    assert ref.mean_metric(scaled) == 1.75  # total 3.5, count 2: off by num_replicas


def test_default_global_batch_is_local_batch_times_replicas():
    loss = np.array([1.0, 2.0, 3.0])
    assert ref.compute_average_loss(loss, num_replicas_in_sync=2) == pytest.approx(6.0 / 6)
    assert ref.compute_average_loss(loss) == pytest.approx(2.0)


def test_sum_is_over_every_element():
    loss = np.array([[1.0, 2.0], [3.0, 4.0]])
    assert ref.compute_average_loss(loss, global_batch_size=4) == 2.5


def test_sample_weight_rules():
    loss = np.array([1.0, 2.0, 3.0, 4.0])
    assert ref.compute_average_loss(loss, sample_weight=2.0, global_batch_size=4) == 5.0
    w = np.array([1.0, 0.0, 1.0, 0.0])
    assert ref.compute_average_loss(loss, sample_weight=w, global_batch_size=4) == 1.0
    # one rank higher with a trailing 1: squeezed
    assert ref.compute_average_loss(loss, sample_weight=w[:, None], global_batch_size=4) == 1.0
    # one rank lower: expanded on the last axis
    loss2 = np.ones((2, 3))
    assert (
        ref.compute_average_loss(loss2, sample_weight=np.array([1.0, 2.0]), global_batch_size=2)
        == 4.5
    )
    with pytest.raises(ValueError, match="broadcast"):
        ref.compute_average_loss(loss, sample_weight=np.ones(3), global_batch_size=4)


def test_zero_global_batch_gives_zero_and_bad_values_raise():
    assert ref.compute_average_loss(np.zeros((0,)), global_batch_size=0) == 0.0
    assert ref.compute_average_loss(np.array([1.0]), global_batch_size=0) == 0.0
    with pytest.raises(ValueError, match="at least rank 1"):
        ref.compute_average_loss(np.float64(1.0), global_batch_size=1)
    with pytest.raises(TypeError, match="integer"):
        ref.compute_average_loss(np.ones(2), global_batch_size=2.0)
    with pytest.raises(ValueError, match="non-negative"):
        ref.compute_average_loss(np.ones(2), global_batch_size=-1)


def test_scale_regularization_loss():
    assert ref.scale_regularization_loss(np.array([1.0, 3.0]), 4) == 1.0
    assert ref.scale_regularization_loss(2.0) == 2.0
    with pytest.raises(ValueError):
        ref.scale_regularization_loss(1.0, 0)


def test_mean_metric_weights_and_empty():
    assert ref.mean_metric([np.array([1.0, 3.0])], [np.array([1.0, 0.0])]) == 1.0
    assert ref.mean_metric([]) == 0.0


@given(
    st.integers(1, 8).flatmap(
        lambda n: st.lists(
            st.lists(st.floats(0, 10), min_size=0, max_size=4), min_size=n, max_size=n
        )
    )
)
def test_scaled_losses_summed_over_replicas_equal_the_global_mean(per_replica):
    total = sum(len(v) for v in per_replica)
    scaled = [
        ref.compute_average_loss(np.array(v, dtype=np.float64), global_batch_size=total)
        for v in per_replica
    ]
    flat = [x for v in per_replica for x in v]
    expected = np.mean(flat) if flat else 0.0
    assert ref.reduce("SUM", scaled) == pytest.approx(expected, rel=1e-12, abs=1e-12)
