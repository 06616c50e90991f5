"""The built-in layers' compute descriptions (read by ``simdist.cost`` through core's protocol).

Each rule returns a :class:`~simdist.core.compute_description.ComputeDescription` from the
layer's attributes (``filters``, ``kernel_size``, ``strides``, ``padding``, ``units``,
``pool_size``, ``activation``) and the input shape. Counting rules:

* Conv2D / Dense forward: the GEMM (``2 * outputs * fan_in``), then bias-add and the
  activation as separate element-wise kernels. Backward: activation gradient, bias gradient
  and kernel gradient (the forward GEMM's FLOPs) as weight gradients; the input gradient
  (the same FLOPs again) as the input gradient.
* MaxPooling2D / AveragePooling2D: one FLOP per window element forward; backward scatters
  each output gradient into its window (max pooling re-reads input and output).
* Activation / ReLU / Dropout: element-wise, one FLOP per element each way.
* Flatten and InputLayer: no kernel (a reshape, a placeholder).

A layer added later describes itself the same way: a ``compute_description`` method or a
rule registered here with :func:`~simdist.core.compute_description.register_compute_rule`.
"""

from __future__ import annotations

import math

from simdist.core.compute_description import (
    ComputeDescription,
    Kernel,
    elementwise_kernel,
    register_compute_rule,
)
from simdist.keras.engine.input_layer import InputLayer
from simdist.keras.layers.convolutional import Conv2D
from simdist.keras.layers.core import Activation, Dense, Dropout, Flatten, ReLU
from simdist.keras.layers.pooling import AveragePooling2D, MaxPooling2D

__all__: list[str] = []


def _out_length(size: int, window: int, stride: int, padding: str, dilation: int = 1) -> int:
    if padding.upper() == "SAME":
        return -(-size // stride)
    span = (window - 1) * dilation + 1
    if size < span:
        raise ValueError(f"a window of {span} does not fit an input dimension of {size}")
    return (size - span) // stride + 1


def _activation_name(layer) -> str:
    fn = getattr(layer, "activation", None)
    return "linear" if fn is None else getattr(fn, "__name__", "activation")


def _gemm(
    layer,
    kind: str,
    *,
    batch: int,
    output_elements: int,
    fan_in: int,
    input_elements: int,
    kernel_elements: int,
    bias_elements: int,
    bytes_per_element: int,
    output_shape: tuple[int, ...],
) -> ComputeDescription:
    size = bytes_per_element
    outputs, inputs = batch * output_elements, batch * input_elements
    flops = 2.0 * outputs * fan_in
    forward = [Kernel(kind, flops, float((inputs + kernel_elements + outputs) * size), True)]
    weight_grads = []
    act = _activation_name(layer)
    if bias_elements:
        forward.append(elementwise_kernel("bias_add", outputs, size, reads=1))
    if act != "linear":
        forward.append(elementwise_kernel(act, outputs, size, reads=1))
        weight_grads.append(elementwise_kernel(f"{act}_grad", outputs, size, reads=2))
    if bias_elements:
        weight_grads.append(
            Kernel("bias_grad", float(outputs), float((outputs + bias_elements) * size))
        )
    gemm_bytes = float((inputs + outputs + kernel_elements) * size)
    weight_grads.append(Kernel(f"{kind}_kernel_grad", flops, gemm_bytes, True))
    input_grads = (Kernel(f"{kind}_input_grad", flops, gemm_bytes, True),)
    params = (kernel_elements, bias_elements) if bias_elements else (kernel_elements,)
    return ComputeDescription(
        output_shape, params, tuple(forward), tuple(weight_grads), input_grads
    )


@register_compute_rule(Conv2D)
def _conv2d(layer, shape, batch, size):
    if len(shape) != 3:
        raise ValueError(f"Conv2D {layer.name!r} needs (height, width, channels), got {shape}")
    (kh, kw), (sh, sw), (dh, dw) = layer.kernel_size, layer.strides, layer.dilation_rate
    out_shape = (
        _out_length(shape[0], kh, sh, layer.padding, dh),
        _out_length(shape[1], kw, sw, layer.padding, dw),
        layer.filters,
    )
    return _gemm(
        layer,
        "conv2d",
        batch=batch,
        output_elements=math.prod(out_shape),
        fan_in=kh * kw * shape[2],
        input_elements=math.prod(shape),
        kernel_elements=kh * kw * shape[2] * layer.filters,
        bias_elements=layer.filters if layer.use_bias else 0,
        bytes_per_element=size,
        output_shape=out_shape,
    )


@register_compute_rule(Dense)
def _dense(layer, shape, batch, size):
    if not shape:
        raise ValueError(f"Dense {layer.name!r} needs at least one input dimension")
    out_shape = (*shape[:-1], layer.units)
    return _gemm(
        layer,
        "dense",
        batch=batch,
        output_elements=math.prod(out_shape),
        fan_in=shape[-1],
        input_elements=math.prod(shape),
        kernel_elements=shape[-1] * layer.units,
        bias_elements=layer.units if layer.use_bias else 0,
        bytes_per_element=size,
        output_shape=out_shape,
    )


def _pooling(layer, shape, batch, size, is_max: bool):
    if len(shape) != 3:
        raise ValueError(f"pooling {layer.name!r} needs (height, width, channels), got {shape}")
    (ph, pw), (sh, sw) = layer.pool_size, layer.strides
    out_shape = (
        _out_length(shape[0], ph, sh, layer.padding),
        _out_length(shape[1], pw, sw, layer.padding),
        shape[2],
    )
    outputs, inputs = batch * math.prod(out_shape), batch * math.prod(shape)
    kind = "max_pool" if is_max else "avg_pool"
    forward = (Kernel(kind, float(outputs * ph * pw), float((inputs + outputs) * size)),)
    grad_bytes = (2 * inputs + 2 * outputs) if is_max else (inputs + outputs)
    backward = (Kernel(f"{kind}_grad", float(inputs), float(grad_bytes * size)),)
    return ComputeDescription(out_shape, (), forward, (), backward)


@register_compute_rule(MaxPooling2D)
def _max_pooling(layer, shape, batch, size):
    return _pooling(layer, shape, batch, size, is_max=True)


@register_compute_rule(AveragePooling2D)
def _average_pooling(layer, shape, batch, size):
    return _pooling(layer, shape, batch, size, is_max=False)


@register_compute_rule(Flatten)
def _flatten(layer, shape, batch, size):
    return ComputeDescription((math.prod(shape),))


@register_compute_rule(InputLayer)
def _input_layer(layer, shape, batch, size):
    return ComputeDescription(tuple(shape))


def _elementwise_layer(kind: str, shape, batch, size) -> ComputeDescription:
    elements = batch * math.prod(shape)
    return ComputeDescription(
        tuple(shape),
        (),
        (elementwise_kernel(kind, elements, size, reads=1),),
        (),
        (elementwise_kernel(f"{kind}_grad", elements, size, reads=2),),
    )


@register_compute_rule(Activation)
def _activation(layer, shape, batch, size):
    return _elementwise_layer(_activation_name(layer), shape, batch, size)


@register_compute_rule(ReLU)
def _relu(layer, shape, batch, size):
    return _elementwise_layer("relu", shape, batch, size)


@register_compute_rule(Dropout)
def _dropout(layer, shape, batch, size):
    return _elementwise_layer("dropout", shape, batch, size)
