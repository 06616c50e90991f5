"""Tests for simdist.cost.step: per-device clocks, bucketing, overlap, scaling."""

import pytest

from simdist.cost.step import format_scaling_table, price_step, scaling_table
from simdist.topology import get_topology

SHAPE = (28, 28, 1)


@pytest.fixture(scope="module")
def dgx():
    return get_topology("dgx-h100")


def test_one_device_has_no_communication(dgx):
    step = price_step("fashion-mnist-cnn", SHAPE, 64, dgx, 1)
    assert step.comm_time == 0.0 and step.exposed_comm_time == 0.0 and step.buckets == ()
    assert step.bottleneck is None
    assert step.step_time == pytest.approx(step.compute_time)
    assert {e.stream for e in step.timeline.events} == {"compute"}


def test_timeline_is_consistent_with_the_split(dgx):
    step = price_step("fashion-mnist-cnn", SHAPE, 256, dgx, 4, algorithm="ring")
    assert step.comm_time > 0 and step.bottleneck is not None
    assert step.timeline.end == pytest.approx(step.step_time)
    assert step.idle_time == pytest.approx(step.step_time - step.compute_time)
    for device in range(4):
        assert step.timeline.busy("compute", device) == pytest.approx(step.compute_time)
        assert step.timeline.busy("comm", device) == pytest.approx(step.comm_time)
    # compute events on one device never overlap, and comm starts after its gradients exist
    events = [e for e in step.timeline.events if e.device == 0 and e.stream == "compute"]
    for a, b in zip(events, events[1:], strict=False):
        assert b.start >= a.end - 1e-18


def test_small_buckets_overlap_backward_and_reduce_exposed_comm(dgx):
    # one bucket: all-reduce starts only after the whole backward pass (nothing hidden)
    one = price_step("fashion-mnist-cnn", SHAPE, 4096, dgx, 8, algorithm="ring", bucket_bytes=2**30)
    # small buckets: the last layers' gradients are reduced while earlier layers run backward
    many = price_step("fashion-mnist-cnn", SHAPE, 4096, dgx, 8, algorithm="ring", bucket_bytes=4096)
    assert len(one.buckets) == 1 and len(many.buckets) > 1
    backward_end = max(
        e.end for e in one.timeline.events if e.category == "backward" and e.device == 0
    )
    assert one.buckets[0][1] == pytest.approx(backward_end)
    assert one.exposed_comm_time == pytest.approx(one.comm_time)
    assert many.buckets[0][1] < backward_end
    assert many.exposed_comm_time < many.comm_time


def test_bucket_sizes_add_up_to_the_gradient_bytes(dgx):
    step = price_step(
        "fashion-mnist-cnn", SHAPE, 64, dgx, 2, algorithm="ring", bucket_bytes=100_000
    )
    assert sum(nbytes for nbytes, _, _ in step.buckets) == 121930 * 4
    assert all(
        b[1] >= a[1] + a[2] - 1e-18 for a, b in zip(step.buckets, step.buckets[1:], strict=False)
    )


def test_bad_arguments_raise(dgx):
    with pytest.raises(ValueError, match="not divisible by 3 devices"):
        price_step("fashion-mnist-cnn", SHAPE, 64, dgx, 3)
    with pytest.raises(ValueError, match="fewer than the 16 asked for"):
        price_step("fashion-mnist-cnn", SHAPE, 64, dgx, 16)
    with pytest.raises(ValueError, match="unknown model name"):
        price_step("resnet", SHAPE, 64, dgx, 1)
    with pytest.raises(ValueError, match="device_counts is empty"):
        scaling_table("fashion-mnist-cnn", SHAPE, 64, dgx, [])


def test_weak_scaling_table(dgx):
    rows = scaling_table("fashion-mnist-cnn", SHAPE, 64, dgx, [1, 2, 4, 8], algorithm="ring")
    assert [r.global_batch for r in rows] == [64, 128, 256, 512]
    assert rows[0].efficiency == 1.0
    for row in rows:
        assert row.efficiency == pytest.approx(rows[0].step.step_time / row.step.step_time)
        assert row.throughput == pytest.approx(row.global_batch / row.step.step_time)
        assert 0 < row.efficiency <= 1.0
    text = format_scaling_table(rows)
    assert text.splitlines()[0].split()[:3] == ["devices", "batch", "step"]
    assert len(text.splitlines()) == 5
