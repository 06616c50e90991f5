"""Compute descriptions of Keras 2's dot, einsum-dense, group/unit normalisation, noise and
1D/3D reshaping layers (read by ``cost``), counted as ``compute_rules`` counts:

* Dot: a batched GEMM, ``2 * outputs * contracted`` FLOPs; with ``normalize`` an L2
  normalisation of each input first (3 FLOPs per element). Backward: one GEMM per input.
* EinsumDense: the GEMM ``2 * outputs * contracted`` (``contracted``: the kernel's elements
  over those of its axes that reach the output), then bias and activation; backward the
  kernel and the input gradients, the same FLOPs each.
* GroupNormalization: as LayerNormalization (mean, variance, normalise, scale and shift: 8
  FLOPs per element forward, 8 for the input gradient, 2 for gamma/beta). UnitNormalization:
  square, sum, rsqrt and multiply (3 per element), 4 back.
* GaussianNoise / GaussianDropout / AlphaDropout / SpatialDropout1D/2D: element-wise in
  training (the draw and the add or multiply: 2 FLOPs per element), 1 back.
* Conv3D: the GEMM ``2 * outputs * kd * kh * kw * in`` with bias and activation, as Conv2D.
  MaxPooling3D / AveragePooling3D: one FLOP per window element, the gradient scattered back.
* UpSampling1D / ZeroPadding1D: copies (0 FLOPs; the upsampling gradient sums). Global
  3D pooling: one FLOP per input element, as the 2D ones.
"""

from __future__ import annotations

import math

from simdist.core.compute_description import (
    ComputeDescription,
    Kernel,
    elementwise_kernel,
    register_compute_rule,
)
from simdist.keras.layers.compute_rules import _activation_name, _gemm
from simdist.keras.layers.compute_rules_extra import _copy, _global_pool, _shape_of
from simdist.keras.layers.convolutional3d import AveragePooling3D, Conv3D, MaxPooling3D
from simdist.keras.layers.dot import Dot, _axes_of
from simdist.keras.layers.einsum_dense import EinsumDense, analyze_einsum
from simdist.keras.layers.global_pooling import GlobalAveragePooling3D, GlobalMaxPooling3D
from simdist.keras.layers.group_normalization import GroupNormalization, UnitNormalization
from simdist.keras.layers.noise import (
    AlphaDropout,
    GaussianDropout,
    GaussianNoise,
    SpatialDropout1D,
    SpatialDropout2D,
)
from simdist.keras.layers.reshaping import UpSampling1D, ZeroPadding1D

__all__: list[str] = []


def _pointwise(name: str, shape, batch: int, size: int, forward: float, backward: float):
    elements = batch * math.prod(shape)
    return ComputeDescription(
        tuple(shape),
        (),
        (Kernel(name, forward * elements, float(2 * elements * size)),),
        (),
        (Kernel(f"{name}_grad", backward * elements, float(2 * elements * size)),),
    )


for _cls, _kind in (
    (GaussianNoise, "gaussian_noise"),
    (GaussianDropout, "gaussian_dropout"),
    (AlphaDropout, "alpha_dropout"),
    (SpatialDropout1D, "spatial_dropout"),
    (SpatialDropout2D, "spatial_dropout"),
):
    register_compute_rule(_cls)(
        lambda layer, shape, batch, size, kind=_kind: _pointwise(kind, shape, batch, size, 2, 1)
    )


@register_compute_rule(UnitNormalization)
def _unit_norm(layer, shape, batch, size):
    return _pointwise("l2_normalize", shape, batch, size, 3, 4)


@register_compute_rule(GroupNormalization)
def _group_norm(layer, shape, batch, size):
    elements = batch * math.prod(shape)
    params = tuple(shape[layer.axis - 1 if layer.axis > 0 else layer.axis] for _ in range(
        int(layer.scale) + int(layer.center)))  # fmt: skip
    forward = (Kernel("group_norm", 8.0 * elements, float(2 * elements * size)),)
    weight_grads = (Kernel("group_norm_affine_grad", 2.0 * elements, float(2 * elements * size)),)
    input_grads = (Kernel("group_norm_input_grad", 8.0 * elements, float(3 * elements * size)),)
    return ComputeDescription(tuple(shape), params, forward, weight_grads, input_grads)


@register_compute_rule(UpSampling1D)
def _upsampling1d(layer, shape, batch, size):
    return _copy("upsample", shape, _shape_of(layer, shape), batch, size, sums=True)


@register_compute_rule(ZeroPadding1D)
def _zero_padding1d(layer, shape, batch, size):
    return _copy("pad", shape, _shape_of(layer, shape), batch, size)


@register_compute_rule(GlobalAveragePooling3D)
def _gap3d(layer, shape, batch, size):
    return _global_pool(layer, shape, batch, size, "global_avg_pool", False)


@register_compute_rule(GlobalMaxPooling3D)
def _gmp3d(layer, shape, batch, size):
    return _global_pool(layer, shape, batch, size, "global_max_pool", True)


@register_compute_rule(EinsumDense)
def _einsum_dense(layer, shape, batch, size):
    kernel, bias, output = analyze_einsum(
        layer.equation, layer.bias_axes, [None, *shape], layer.partial_output_shape
    )
    out_shape = tuple(int(d) for d in output[1:])
    outputs = batch * math.prod(out_shape)
    kernel_elements = math.prod(kernel)
    in_spec = layer.equation.split(",")[0].replace("...", "")
    kernel_spec = layer.equation.split(",")[1].split("->")[0]
    contracted = math.prod(k for d, k in zip(kernel_spec, kernel, strict=True) if d in in_spec)
    inputs = batch * math.prod(shape)
    flops = 2.0 * outputs * contracted
    gemm_bytes = float((inputs + outputs + kernel_elements) * size)
    forward = [Kernel("einsum_dense", flops, gemm_bytes, True)]
    weight_grads = []
    bias_elements = math.prod(bias) if bias is not None else 0
    if bias_elements:
        forward.append(elementwise_kernel("bias_add", outputs, size, reads=1))
        weight_grads.append(
            Kernel("bias_grad", float(outputs), float((outputs + bias_elements) * size))
        )
    activation = _activation_name(layer)
    if activation != "linear":
        forward.append(elementwise_kernel(activation, outputs, size, reads=1))
        weight_grads.insert(0, elementwise_kernel(f"{activation}_grad", outputs, size, reads=2))
    weight_grads.append(Kernel("einsum_dense_kernel_grad", flops, gemm_bytes, True))
    input_grads = (Kernel("einsum_dense_input_grad", flops, gemm_bytes, True),)
    params = (kernel_elements, bias_elements) if bias_elements else (kernel_elements,)
    return ComputeDescription(out_shape, params, tuple(forward), tuple(weight_grads), input_grads)


@register_compute_rule(Dot)
def _dot(layer, shape, batch, size):
    nodes = getattr(layer, "_inbound_nodes", None) or []
    if not nodes or len(nodes[0].inbound_tensors) != 2:
        return None  # the second input's shape is known only from the layer's graph node
    first, second = ([int(d) for d in t.shape[1:]] for t in nodes[0].inbound_tensors)
    i, j = _axes_of(layer.axes, (len(first) + 1, len(second) + 1))
    contracted = first[i - 1]
    kept = [d for k, d in enumerate(first) if k != i - 1]
    out_shape = tuple(kept + [d for k, d in enumerate(second) if k != j - 1]) or (1,)
    outputs = batch * math.prod(out_shape)
    elements = batch * (math.prod(first) + math.prod(second))
    flops = 2.0 * outputs * contracted
    moved = float((elements + outputs) * size)
    forward = [Kernel("batch_dot", flops, moved, True)]
    backward = [Kernel("batch_dot_grad_a", flops, moved, True),
                Kernel("batch_dot_grad_b", flops, moved, True)]  # fmt: skip
    if layer.normalize:
        forward.insert(0, Kernel("l2_normalize", 3.0 * elements, float(2 * elements * size)))
        backward.append(Kernel("l2_normalize_grad", 4.0 * elements, float(2 * elements * size)))
    return ComputeDescription(out_shape, (), tuple(forward), (), tuple(backward))


@register_compute_rule(Conv3D)
def _conv3d(layer, shape, batch, size):
    if len(shape) != 4:
        raise ValueError(
            f"Conv3D {layer.name!r} needs (depth, height, width, channels), got {shape}"
        )
    out_shape = _shape_of(layer, shape)
    window = math.prod(layer.kernel_size) * shape[3]
    return _gemm(
        layer,
        "conv3d",
        batch=batch,
        output_elements=math.prod(out_shape),
        fan_in=window,
        input_elements=math.prod(shape),
        kernel_elements=window * layer.filters,
        bias_elements=layer.filters if layer.use_bias else 0,
        bytes_per_element=size,
        output_shape=out_shape,
    )


def _pooling3d(layer, shape, batch, size, is_max: bool):
    out_shape = _shape_of(layer, shape)
    outputs, inputs = batch * math.prod(out_shape), batch * math.prod(shape)
    kind = "max_pool3d" if is_max else "avg_pool3d"
    window = math.prod(layer.pool_size)
    forward = (Kernel(kind, float(outputs * window), float((inputs + outputs) * size)),)
    grad_bytes = (2 * inputs + 2 * outputs) if is_max else (inputs + outputs)
    backward = (Kernel(f"{kind}_grad", float(inputs), float(grad_bytes * size)),)
    return ComputeDescription(out_shape, (), forward, (), backward)


@register_compute_rule(MaxPooling3D)
def _max_pooling3d(layer, shape, batch, size):
    return _pooling3d(layer, shape, batch, size, is_max=True)


@register_compute_rule(AveragePooling3D)
def _average_pooling3d(layer, shape, batch, size):
    return _pooling3d(layer, shape, batch, size, is_max=False)
