"""Tests for simdist.cost.compute: the roofline and the layers' FLOPs and bytes."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

import simdist as tf
from simdist.cost.compute import OpCost, layer_costs, optimizer_cost, roofline_time
from simdist.demo import create_model
from simdist.topology.model import Device

DEVICE = Device("d", "GPU", {"float32": 1e12, "float16": 4e12}, 1e11, 2**30)


@given(flops=st.floats(0, 1e15), nbytes=st.floats(0, 1e13))
def test_roofline_is_the_slower_of_compute_and_memory(flops, nbytes):
    t = roofline_time(OpCost("op", flops, nbytes), DEVICE)
    assert t == max(flops / 1e12, nbytes / 1e11)


def test_roofline_uses_the_dtype_peak_and_adds_launch_overhead():
    op = OpCost("gemm", 4e12, 1.0)
    assert roofline_time(op, DEVICE, "float16") == pytest.approx(1.0)
    assert roofline_time(op, DEVICE, "float16", launch_overhead=5e-6) == pytest.approx(1.000005)


def test_roofline_rejects_a_dtype_the_device_lacks():
    with pytest.raises(ValueError, match="no peak FLOP/s for dtype 'bfloat16'"):
        roofline_time(OpCost("op", 1, 1), DEVICE, "bfloat16")


def test_fashion_mnist_cnn_shapes_params_and_gemm_flops():
    costs = layer_costs(create_model(), (28, 28, 1), batch=64)
    assert [c.output_shape for c in costs] == [
        (26, 26, 32),
        (13, 13, 32),
        (11, 11, 64),
        (5, 5, 64),
        (1600,),
        (64,),
        (10,),
    ]
    # the same parameter count Keras reports for this model (Model.summary: 121,930)
    assert sum(c.param_count for c in costs) == 121930
    conv1, conv2 = costs[0], costs[2]
    assert conv1.forward[0].flops == 2 * 64 * 26 * 26 * 32 * 3 * 3 * 1
    assert conv2.forward[0].flops == 2 * 64 * 11 * 11 * 64 * 3 * 3 * 32
    # the first layer's input gradient is not computed; later layers' is
    assert [op.name for op in conv1.backward] == ["relu_grad", "bias_grad", "conv2d_kernel_grad"]
    assert conv2.backward[-1].name == "conv2d_input_grad"
    assert costs[4].forward == () and costs[4].backward == ()


def test_gemm_bytes_count_inputs_kernel_and_outputs():
    model = tf.keras.Sequential([tf.keras.layers.Dense(3, use_bias=False)])
    (dense,) = layer_costs(model, (5,), batch=2)
    assert dense.forward == (OpCost("dense", 2.0 * 2 * 3 * 5, (2 * 5 + 15 + 2 * 3) * 4.0),)
    assert dense.params == (15,)


def test_same_padding_strides_and_float16_bytes():
    model = tf.keras.Sequential([tf.keras.layers.Conv2D(4, 3, strides=2, padding="same")])
    (conv,) = layer_costs(model, (9, 9, 2), batch=1, dtype="float16")
    assert conv.output_shape == (5, 5, 4)
    assert conv.forward[0].nbytes == (9 * 9 * 2 + 3 * 3 * 2 * 4 + 5 * 5 * 4) * 2


def test_unknown_layer_and_bad_arguments_raise():
    with pytest.raises(NotImplementedError, match="does not know layer"):
        layer_costs([object()], (4,), batch=1)
    with pytest.raises(ValueError, match="batch must be a positive integer"):
        layer_costs(create_model(), (28, 28, 1), batch=0)
    with pytest.raises(ValueError, match="unknown dtype"):
        layer_costs(create_model(), (28, 28, 1), batch=1, dtype="int4")
    with pytest.raises(ValueError, match="does not fit"):
        layer_costs(create_model(), (2, 2, 1), batch=1)


def test_optimizer_cost():
    assert optimizer_cost(10, "sgd") == OpCost("sgd_update", 20.0, 120.0)
    assert optimizer_cost(10, "adam").nbytes == 7 * 10 * 4
    with pytest.raises(ValueError, match="unknown optimizer"):
        optimizer_cost(10, "lamb")
