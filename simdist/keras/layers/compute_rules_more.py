"""Compute descriptions of the attention, wrapper and transposed/depthwise convolution layers
(read by ``cost``), counted as ``compute_rules`` counts (a multiply-add is 2 FLOPs; each
tensor a kernel reads or writes crosses device memory once):

* Conv2DTranspose / Conv1DTranspose: the GEMM of the convolution it transposes, ``2 *
  input_pixels * kernel_size * filters * in_channels`` (every input pixel meets every kernel
  entry), bias and activation kernels, and the kernel and input gradients of the same FLOPs.
* DepthwiseConv2D (and 1D): not a GEMM: ``2 * outputs * kh * kw`` FLOPs (each output channel reads
  one input channel), the same for each gradient. SeparableConv2D (and 1D): that, then the 1x1
  pointwise GEMM (``2 * output_pixels * in * multiplier * filters``).
* Cropping2D: one copy kernel (0 FLOPs), its gradient a padded copy back.
* TimeDistributed: the inner layer's description at ``batch * time`` examples.
* Bidirectional: both recurrent layers' kernels (prefixed ``forward_``/``backward_``) and a
  merge kernel (none for ``merge_mode=None``).
* MultiHeadAttention (built, so its query/key/value shapes are known): the four projection
  GEMMs, the scores GEMM (``2 * heads * T * S * key_dim``), the softmax (5 FLOPs per score:
  max, subtract, exp, sum, divide), the weighted sum (``2 * heads * T * S * value_dim``);
  backward each GEMM twice (weight and input gradient) and the softmax gradient (3 per
  score). Not built: nothing (unpriced).

* Attention / AdditiveAttention, from their Functional graph node (the value's shape is
  known only there; never called in a graph: nothing, unpriced): the scores (dot: a GEMM
  ``2 * Tq * Tv * dim``; concat and additive: 4 FLOPs per ``(q, k, feature)``: add, scale,
  tanh, sum), the softmax (5 per score) and the weighted sum (a GEMM ``2 * Tq * Tv *
  value_dim``); backward each GEMM twice and the element-wise parts again.
"""

from __future__ import annotations

import math

from simdist.core.compute_description import (
    ComputeDescription,
    Kernel,
    describe_compute,
    elementwise_kernel,
    register_compute_rule,
)
from simdist.keras.layers.attention import AdditiveAttention, Attention
from simdist.keras.layers.compute_rules import _activation_name, _gemm
from simdist.keras.layers.conv_transpose import _ConvTranspose
from simdist.keras.layers.cropping import Cropping2D
from simdist.keras.layers.depthwise import DepthwiseConv2D, SeparableConv2D
from simdist.keras.layers.multi_head_attention import MultiHeadAttention
from simdist.keras.layers.wrappers import Bidirectional, TimeDistributed

__all__: list[str] = []


def _out_shape(layer, shape: tuple) -> tuple[int, ...]:
    dims = layer.compute_output_shape((None, *shape)).as_list()[1:]
    if any(d is None for d in dims):
        raise ValueError(f"{layer.name!r}: output shape {dims} is not fully known")
    return tuple(int(d) for d in dims)


@register_compute_rule(_ConvTranspose)
def _conv_transpose(layer, shape, batch, size):
    if len(shape) != layer._RANK + 1:
        raise ValueError(f"{layer.name!r} needs {layer._LAYOUT} without the batch, got {shape}")
    out_shape = _out_shape(layer, shape)
    inputs, outputs = batch * math.prod(shape), batch * math.prod(out_shape)
    weights = math.prod(layer.kernel_size) * shape[-1] * layer.filters
    flops = 2.0 * inputs * math.prod(layer.kernel_size) * layer.filters
    moved = float((inputs + weights + outputs) * size)
    forward = [Kernel("conv_transpose", flops, moved, True)]
    weight_grads = []
    act = _activation_name(layer)
    if layer.use_bias:
        forward.append(elementwise_kernel("bias_add", outputs, size, reads=1))
    if act != "linear":
        forward.append(elementwise_kernel(act, outputs, size, reads=1))
        weight_grads.append(elementwise_kernel(f"{act}_grad", outputs, size, reads=2))
    if layer.use_bias:
        weight_grads.append(
            Kernel("bias_grad", float(outputs), float((outputs + layer.filters) * size))
        )
    weight_grads.append(Kernel("conv_transpose_kernel_grad", flops, moved, True))
    params = (weights, layer.filters) if layer.use_bias else (weights,)
    return ComputeDescription(
        out_shape,
        params,
        tuple(forward),
        tuple(weight_grads),
        (Kernel("conv_transpose_input_grad", flops, moved, True),),
    )


def _depthwise_kernels(layer, shape, out_shape, batch, size):
    taps = math.prod(layer.kernel_size)
    inputs, outputs = batch * math.prod(shape), batch * math.prod(out_shape)
    weights = taps * shape[-1] * layer.depth_multiplier
    flops = 2.0 * outputs * taps
    moved = float((inputs + weights + outputs) * size)
    return (
        Kernel("depthwise_conv2d", flops, moved),
        Kernel("depthwise_conv2d_kernel_grad", flops, moved),
        Kernel("depthwise_conv2d_input_grad", flops, moved),
        weights,
    )


@register_compute_rule(DepthwiseConv2D)
def _depthwise(layer, shape, batch, size):
    if len(shape) != layer._RANK + 1:
        raise ValueError(f"{layer.name!r} needs {layer._LAYOUT} without the batch, got {shape}")
    out_shape = _out_shape(layer, shape)
    forward, kernel_grad, input_grad, weights = _depthwise_kernels(
        layer, shape, out_shape, batch, size
    )
    outputs = batch * math.prod(out_shape)
    forward_kernels, weight_grads = [forward], [kernel_grad]
    params = [weights]
    if layer.use_bias:
        forward_kernels.append(elementwise_kernel("bias_add", outputs, size, reads=1))
        weight_grads.append(Kernel("bias_grad", float(outputs), float(2 * outputs * size)))
        params.append(out_shape[-1])
    return ComputeDescription(
        out_shape, tuple(params), tuple(forward_kernels), tuple(weight_grads), (input_grad,)
    )


@register_compute_rule(SeparableConv2D)
def _separable(layer, shape, batch, size):
    if len(shape) != layer._RANK + 1:
        raise ValueError(f"{layer.name!r} needs {layer._LAYOUT} without the batch, got {shape}")
    out_shape = _out_shape(layer, shape)
    middle = shape[-1] * layer.depth_multiplier
    depth_shape = (*out_shape[:-1], middle)
    forward, kernel_grad, input_grad, weights = _depthwise_kernels(
        layer, shape, depth_shape, batch, size
    )
    pointwise = _gemm(
        layer,
        "pointwise_conv2d",
        batch=batch,
        output_elements=math.prod(out_shape),
        fan_in=middle,
        input_elements=math.prod(depth_shape),
        kernel_elements=middle * layer.filters,
        bias_elements=layer.filters if layer.use_bias else 0,
        bytes_per_element=size,
        output_shape=out_shape,
    )
    return ComputeDescription(
        out_shape,
        (weights, *pointwise.params),
        (forward, *pointwise.forward),
        (kernel_grad, *pointwise.weight_grads),
        (*pointwise.input_grads, input_grad),
    )


@register_compute_rule(Cropping2D)
def _cropping(layer, shape, batch, size):
    out_shape = _out_shape(layer, shape)
    moved = float(batch * (math.prod(shape) + math.prod(out_shape)) * size)
    return ComputeDescription(
        out_shape, (), (Kernel("crop", 0.0, moved),), (), (Kernel("crop_grad", 0.0, moved),)
    )


@register_compute_rule(TimeDistributed)
def _time_distributed(layer, shape, batch, size):
    if len(shape) < 2:
        raise ValueError(f"{layer.name!r} needs (time, ...), got {shape}")
    inner = describe_compute(layer.layer, shape[1:], batch * shape[0], size)
    if inner is None:
        return None
    return ComputeDescription(
        (shape[0], *inner.output_shape),
        inner.params,
        inner.forward,
        inner.weight_grads,
        inner.input_grads,
    )


def _prefixed(prefix: str, kernels) -> tuple:
    return tuple(Kernel(prefix + k.name, k.flops, k.nbytes, k.matmul) for k in kernels)


@register_compute_rule(Bidirectional)
def _bidirectional(layer, shape, batch, size):
    forward = describe_compute(layer.forward_layer, shape, batch, size)
    backward = describe_compute(layer.backward_layer, shape, batch, size)
    if forward is None or backward is None:
        return None
    merged = math.prod(forward.output_shape) * batch
    merge = ()
    out_shape = forward.output_shape
    if layer.merge_mode == "concat":
        out_shape = (*out_shape[:-1], out_shape[-1] + backward.output_shape[-1])
        merge = (Kernel("concat", 0.0, float(2 * merged * size)),)
    elif layer.merge_mode is not None:
        merge = (elementwise_kernel(layer.merge_mode, merged, size, reads=2),)
    return ComputeDescription(
        out_shape,
        forward.params + backward.params,
        _prefixed("forward_", forward.forward) + _prefixed("backward_", backward.forward) + merge,
        _prefixed("forward_", forward.weight_grads) + _prefixed("backward_", backward.weight_grads),
        _prefixed("forward_", forward.input_grads) + _prefixed("backward_", backward.input_grads),
    )


@register_compute_rule(MultiHeadAttention)
def _multi_head_attention(layer, shape, batch, size):
    if not layer._built_from_signature:
        return None
    heads, kd, vd = layer._num_heads, layer._key_dim, layer._value_dim
    t_steps = math.prod(shape[:-1])
    s_steps = math.prod(int(d) for d in layer._value_shape[1:-1])
    q_dim, k_dim, v_dim = shape[-1], int(layer._key_shape[-1]), int(layer._value_shape[-1])
    out_dims = layer._output_dims()
    gemms = [  # (name, rows, inner, cols): a [rows, inner] x [inner, cols] product
        ("query_projection", batch * t_steps, q_dim, heads * kd),
        ("key_projection", batch * s_steps, k_dim, heads * kd),
        ("value_projection", batch * s_steps, v_dim, heads * vd),
        ("attention_scores", batch * heads * t_steps, kd, s_steps),
        ("attention_combine", batch * heads * t_steps, s_steps, vd),
        ("output_projection", batch * t_steps, heads * vd, math.prod(out_dims)),
    ]
    forward, weight_grads, input_grads = [], [], []
    for name, rows, inner, cols in gemms:
        flops = 2.0 * rows * inner * cols
        moved = float((rows * inner + inner * cols + rows * cols) * size)
        forward.append(Kernel(name, flops, moved, True))
        weight_grads.append(Kernel(f"{name}_grad_b", flops, moved, True))
        input_grads.append(Kernel(f"{name}_grad_a", flops, moved, True))
    scores = batch * heads * t_steps * s_steps
    forward.insert(4, Kernel("softmax", 5.0 * scores, float(2 * scores * size)))
    weight_grads.insert(4, Kernel("softmax_grad", 3.0 * scores, float(3 * scores * size)))
    params = tuple(int(math.prod(w.shape)) for w in layer.trainable_weights)
    return ComputeDescription(
        (*shape[:-1], *out_dims), params, tuple(forward), tuple(weight_grads), tuple(input_grads)
    )


def _dense_attention(layer, shape, batch, size, additive: bool):
    nodes = getattr(layer, "_inbound_nodes", None) or []
    if not nodes or len(nodes[0].inbound_tensors) < 2:
        return None  # the value's shape is known only from the layer's graph node
    tensors = nodes[0].inbound_tensors
    value = [int(d) for d in tensors[1].shape[1:]]
    key = [int(d) for d in tensors[2].shape[1:]] if len(tensors) > 2 else value
    (t_q, dim), (t_v, v_dim) = shape[-2:], value[-2:]
    scores = batch * t_q * t_v
    q_bytes, k_bytes = batch * t_q * dim, batch * t_v * key[-1]
    if additive:
        score = Kernel("attention_scores", 4.0 * scores * dim, float((q_bytes + k_bytes) * size))
    else:
        moved = float((q_bytes + k_bytes + scores) * size)
        score = Kernel("attention_scores", 2.0 * scores * dim, moved, True)
    combine_bytes = float((scores + batch * t_v * v_dim + batch * t_q * v_dim) * size)
    combine = Kernel("attention_combine", 2.0 * scores * v_dim, combine_bytes, True)
    softmax = Kernel("softmax", 5.0 * scores, float(2 * scores * size))
    weight_grads = (
        Kernel("attention_combine_grad_b", combine.flops, combine.nbytes, True),
        Kernel("softmax_grad", 3.0 * scores, float(3 * scores * size)),
        Kernel("attention_scores_grad_b", score.flops, score.nbytes, score.matmul),
    )
    input_grads = (
        Kernel("attention_combine_grad_a", combine.flops, combine.nbytes, True),
        Kernel("attention_scores_grad_a", score.flops, score.nbytes, score.matmul),
    )
    params = tuple(int(math.prod(w.shape)) for w in layer.trainable_weights)
    return ComputeDescription(
        (t_q, v_dim), params, (score, softmax, combine), weight_grads, input_grads
    )


@register_compute_rule(Attention)
def _attention(layer, shape, batch, size):
    return _dense_attention(layer, shape, batch, size, additive=layer.score_mode == "concat")


@register_compute_rule(AdditiveAttention)
def _additive_attention(layer, shape, batch, size):
    return _dense_attention(layer, shape, batch, size, additive=True)
