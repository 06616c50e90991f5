"""Layers describe their own compute (core protocol); cost prices them and lists the rest."""

import pytest

import simdist as tf
from simdist.core.compute_description import (
    ComputeDescription,
    Kernel,
    describe_compute,
    register_compute_rule,
)
from simdist.cost.compute import layer_costs
from simdist.cost.step import StepAssumptions, format_step_report, kernel_time, scaling_table
from simdist.topology import get_topology
from simdist.topology.model import Device


class Scale(tf.keras.layers.Layer):
    """A layer that describes itself with a method."""

    def call(self, x):
        return x * 2.0

    def compute_description(self, input_shape, batch, bytes_per_element):
        n = batch * int(__import__("math").prod(input_shape))
        return ComputeDescription(
            tuple(input_shape), (), (Kernel("scale", n, 2.0 * n * bytes_per_element),), (), ()
        )


class Shift(tf.keras.layers.Layer):
    def call(self, x):
        return x + 1.0


class Mystery(tf.keras.layers.Layer):
    def call(self, x):
        return x


@register_compute_rule(Shift)
def _shift(layer, shape, batch, size):
    return ComputeDescription(tuple(shape), (), (Kernel("shift", 1.0, 1.0),), (), ())


def model(*extra):
    return tf.keras.Sequential([tf.keras.layers.Dense(8), *extra, tf.keras.layers.Dense(2)])


def test_a_method_and_a_registered_rule_are_both_priced():
    costs = layer_costs(model(Scale(), Shift()), (4,), batch=3)
    assert [c.kind for c in costs] == ["Dense", "Scale", "Shift", "Dense"]
    assert costs[1].forward[0].flops == 3 * 8 and costs[2].forward[0].name == "shift"


def test_an_undescribed_layer_raises_or_is_reported_unpriced_never_zero():
    with pytest.raises(NotImplementedError, match="gives no compute description"):
        layer_costs(model(Mystery()), (4,), batch=3)
    costs = layer_costs(model(Mystery()), (4,), batch=3, unpriced="report")
    assert [c.priced for c in costs] == [True, False, False]
    rows = scaling_table(model(Mystery()), (4,), 16, get_topology("dgx-h100"), [1, 2])
    first, second = rows[-1].step.unpriced
    assert first.endswith("(Mystery): describes no compute")
    assert "(Dense): its input shape is unknown after the unpriced layer 'mystery" in second
    report = format_step_report(rows)
    assert f"# unpriced: {first}; its time is NOT counted" in report
    assert rows[-1].step.compute_time > 0  # the first Dense is still priced


def test_a_description_of_the_wrong_type_is_a_type_error():
    class Bad(tf.keras.layers.Layer):
        def compute_description(self, input_shape, batch, bytes_per_element):
            return {"flops": 1}

    with pytest.raises(TypeError, match="must be a ComputeDescription"):
        describe_compute(Bad(), (4,), 1, 4)


def test_kernel_time_adds_launch_and_framework_and_uses_tf32_for_matmuls():
    device = Device("d", "GPU", {"float32": 1e12, "tfloat32": 8e12}, 1e12, 2**30)
    assumptions = StepAssumptions(launch_overhead=4e-6, framework_overhead=5e-6)
    gemm = Kernel("dense", 8e12, 1.0, matmul=True)
    add = Kernel("bias_add", 1e12, 1.0)
    assert kernel_time(gemm, device, "float32", assumptions) == pytest.approx(1.0 + 9e-6)
    assert kernel_time(add, device, "float32", assumptions) == pytest.approx(1.0 + 9e-6)
    no_tf32 = StepAssumptions(tf32=False)
    assert kernel_time(gemm, device, "float32", no_tf32) == pytest.approx(8.0 + 9e-6)
    with pytest.raises(ValueError, match="finite number of seconds"):
        StepAssumptions(launch_overhead=float("nan"))
    with pytest.raises(ValueError, match="finite number of seconds"):
        StepAssumptions(framework_overhead=-1e-6)


def test_every_step_report_prints_its_assumptions():
    rows = scaling_table(model(), (4,), 16, get_topology("dgx-h100"), [1, 8])
    report = format_step_report(rows)
    for line in StepAssumptions().lines():
        assert f"# assumption: {line}" in report
    assert "# all-reduce: nccl:" in report
