"""Compute descriptions of the layers added with the Functional API work (read by ``cost``).

Rules for the single-input layers of ``reshaping``, ``global_pooling``, ``conv1d``,
``embedding``, ``normalization``, ``sync_batch_norm``, ``rnn`` and the numeric preprocessing
layers, counted as ``compute_rules`` counts (a multiply-add is 2 FLOPs; each tensor a kernel
reads or writes crosses device memory once):

* moves without arithmetic (Permute, RepeatVector, ZeroPadding2D, UpSampling2D): one copy
  kernel of 0 FLOPs reading the input and writing the output; the gradient copies (or, for
  repeats, sums: one FLOP per output element) back. Reshape is a view: no kernel.
* global pooling: one FLOP per input element forward; the gradient broadcasts back (max
  pooling re-reads the input to find the maxima).
* Conv1D: a 2-D convolution's GEMM (``2 * outputs * kernel_size * channels``), bias and
  activation kernels, and the kernel and input gradients of the same FLOPs.
* Embedding: a gather (0 FLOPs; reads the looked-up rows, writes the output); its weight
  gradient a scatter-add of one FLOP per output element. No input gradient (integers).
* LayerNormalization / (Sync)BatchNormalization: a moments kernel (3 FLOPs per element:
  sum, square, sum) and a normalize kernel (4 per element: subtract, multiply by the inverse
  deviation, scale, shift); backward gamma/beta gradients (2 per element) and the input
  gradient (8 per element). Inference BatchNormalization is the normalize kernel alone; the
  description assumes training. SyncBatchNormalization's all-reduce of the statistics is a
  collective, priced by the cost model's collective side, not here.
* SimpleRNN / LSTM / GRU: per time step the input GEMM (``2 * features * gates * units``) and
  the recurrent GEMM (``2 * units * gates * units``) per example, and the gate arithmetic
  (SimpleRNN: 1 kernel; LSTM: 4 gates + cell update; GRU: 3 gates + blend) as element-wise
  kernels; backward doubles each GEMM (weight gradient and input/state gradient).
* Rescaling / Normalization: one element-wise kernel (2 FLOPs per element each way).

* merge layers (Add, Subtract, Multiply, Maximum, Minimum, Average) of ``k`` inputs, as
  the layer's graph node has them (a layer never called in a Functional graph describes
  nothing): forward one kernel of ``k - 1`` FLOPs per output element reading the ``k``
  inputs and writing the output (Average one more for the division). Backward: Add routes
  the output gradient to every input unchanged (no kernel, as TensorFlow's gradient of a
  sum); the others one kernel writing the ``k`` input gradients (one FLOP each), reading the
  output gradient and, for Multiply/Maximum/Minimum, the ``k`` inputs.

* Concatenate of ``k`` inputs (their shapes as the layer's graph node has them): one copy
  kernel of 0 FLOPs reading every input and writing the output; backward one kernel
  slicing the output gradient into the ``k`` input gradients (reads and writes each element
  once).

The lookup/hashing layers (host-side, strings) describe nothing: the cost report lists them
as unpriced.
"""

from __future__ import annotations

import functools
import math

from simdist.core.compute_description import (
    ComputeDescription,
    Kernel,
    elementwise_kernel,
    register_compute_rule,
)
from simdist.keras.layers.conv1d import Conv1D
from simdist.keras.layers.embedding import Embedding
from simdist.keras.layers.global_pooling import (
    GlobalAveragePooling1D,
    GlobalAveragePooling2D,
    GlobalMaxPooling1D,
    GlobalMaxPooling2D,
)
from simdist.keras.layers.merging import (
    Add,
    Average,
    Concatenate,
    Maximum,
    Minimum,
    Multiply,
    Subtract,
)
from simdist.keras.layers.normalization import BatchNormalization, LayerNormalization
from simdist.keras.layers.preprocessing.numeric import Normalization, Rescaling
from simdist.keras.layers.reshaping import (
    Permute,
    RepeatVector,
    Reshape,
    UpSampling2D,
    ZeroPadding2D,
)
from simdist.keras.layers.rnn import RNN
from simdist.keras.layers.rnn_cells import GRUCell, LSTMCell

__all__: list[str] = []


def _shape_of(layer, shape: tuple) -> tuple[int, ...]:
    out = layer.compute_output_shape((None, *shape))
    dims = out.as_list()[1:]
    if any(d is None for d in dims):
        raise ValueError(f"{layer.name!r}: output shape {dims} is not fully known")
    return tuple(int(d) for d in dims)


def _copy(name: str, shape, out_shape, batch: int, size: int, sums: bool = False):
    inputs, outputs = batch * math.prod(shape), batch * math.prod(out_shape)
    moved = float((inputs + outputs) * size)
    forward = (Kernel(name, 0.0, moved),)
    backward = (Kernel(f"{name}_grad", float(outputs) if sums else 0.0, moved),)
    return ComputeDescription(tuple(out_shape), (), forward, (), backward)


@register_compute_rule(Reshape)
def _reshape(layer, shape, batch, size):
    return ComputeDescription(_shape_of(layer, shape))


@register_compute_rule(Permute)
def _permute(layer, shape, batch, size):
    return _copy("transpose", shape, _shape_of(layer, shape), batch, size)


@register_compute_rule(RepeatVector)
def _repeat(layer, shape, batch, size):
    return _copy("tile", shape, _shape_of(layer, shape), batch, size, sums=True)


@register_compute_rule(ZeroPadding2D)
def _zero_padding(layer, shape, batch, size):
    return _copy("pad", shape, _shape_of(layer, shape), batch, size)


@register_compute_rule(UpSampling2D)
def _upsampling(layer, shape, batch, size):
    return _copy("upsample", shape, _shape_of(layer, shape), batch, size, sums=True)


def _global_pool(layer, shape, batch, size, kind: str, is_max: bool):
    out_shape = _shape_of(layer, shape)
    inputs, outputs = batch * math.prod(shape), batch * math.prod(out_shape)
    forward = (Kernel(kind, float(inputs), float((inputs + outputs) * size)),)
    grad_bytes = (2 * inputs + 2 * outputs) if is_max else (inputs + outputs)
    backward = (Kernel(f"{kind}_grad", float(inputs), float(grad_bytes * size)),)
    return ComputeDescription(out_shape, (), forward, (), backward)


@register_compute_rule(GlobalAveragePooling2D)
def _gap2d(layer, shape, batch, size):
    return _global_pool(layer, shape, batch, size, "global_avg_pool", False)


@register_compute_rule(GlobalMaxPooling2D)
def _gmp2d(layer, shape, batch, size):
    return _global_pool(layer, shape, batch, size, "global_max_pool", True)


@register_compute_rule(GlobalAveragePooling1D)
def _gap1d(layer, shape, batch, size):
    return _global_pool(layer, shape, batch, size, "global_avg_pool", False)


@register_compute_rule(GlobalMaxPooling1D)
def _gmp1d(layer, shape, batch, size):
    return _global_pool(layer, shape, batch, size, "global_max_pool", True)


def _activation_name(fn) -> str:
    return "linear" if fn is None else getattr(fn, "__name__", "activation")


@register_compute_rule(Conv1D)
def _conv1d(layer, shape, batch, size):
    if len(shape) != 2:
        raise ValueError(f"Conv1D {layer.name!r} needs (steps, channels), got {shape}")
    out_shape = _shape_of(layer, shape)
    outputs, inputs = batch * math.prod(out_shape), batch * math.prod(shape)
    (kernel_size,) = layer.kernel_size
    kernel = kernel_size * shape[1] * layer.filters
    flops = 2.0 * outputs * kernel_size * shape[1]
    gemm_bytes = float((inputs + outputs + kernel) * size)
    forward = [Kernel("conv1d", flops, gemm_bytes, True)]
    weight_grads = []
    act = _activation_name(layer.activation)
    if layer.use_bias:
        forward.append(elementwise_kernel("bias_add", outputs, size, reads=1))
    if act != "linear":
        forward.append(elementwise_kernel(act, outputs, size, reads=1))
        weight_grads.append(elementwise_kernel(f"{act}_grad", outputs, size, reads=2))
    if layer.use_bias:
        weight_grads.append(
            Kernel("bias_grad", float(outputs), float((outputs + layer.filters) * size))
        )
    weight_grads.append(Kernel("conv1d_kernel_grad", flops, gemm_bytes, True))
    params = (kernel, layer.filters) if layer.use_bias else (kernel,)
    return ComputeDescription(
        out_shape,
        params,
        tuple(forward),
        tuple(weight_grads),
        (Kernel("conv1d_input_grad", flops, gemm_bytes, True),),
    )


@register_compute_rule(Embedding)
def _embedding(layer, shape, batch, size):
    out_shape = (*shape, layer.output_dim)
    indices, outputs = batch * math.prod(shape), batch * math.prod(out_shape)
    forward = (Kernel("gather", 0.0, float(indices * 4 + 2 * outputs * size)),)
    grads = (Kernel("scatter_add", float(outputs), float(indices * 4 + 2 * outputs * size)),)
    return ComputeDescription(out_shape, (layer.input_dim * layer.output_dim,), forward, grads)


def _normalization(layer, shape, batch, size, kind: str):
    elements = batch * math.prod(shape)
    params = (
        tuple(
            int(math.prod(layer._param_shape)) for w in (layer.gamma, layer.beta) if w is not None
        )
        if layer.built
        else ()
    )
    forward = (
        Kernel(f"{kind}_moments", 3.0 * elements, float(elements * size)),
        Kernel(f"{kind}_normalize", 4.0 * elements, float(2 * elements * size)),
    )
    weight_grads = (Kernel(f"{kind}_affine_grad", 2.0 * elements, float(2 * elements * size)),)
    input_grads = (Kernel(f"{kind}_input_grad", 8.0 * elements, float(3 * elements * size)),)
    return ComputeDescription(tuple(shape), params, forward, weight_grads, input_grads)


@register_compute_rule(LayerNormalization)
def _layer_norm(layer, shape, batch, size):
    return _normalization(layer, shape, batch, size, "layer_norm")


@register_compute_rule(BatchNormalization)
def _batch_norm(layer, shape, batch, size):
    return _normalization(layer, shape, batch, size, "batch_norm")


def _cell_kernels(cell, steps: int, features: int, batch: int, size: int, prefix: str):
    """One cell's kernels over ``steps`` steps: (forward, weight_grads, input_grads, params)."""
    units = cell.units
    gates = 4 if isinstance(cell, LSTMCell) else 3 if isinstance(cell, GRUCell) else 1
    width = gates * units
    x_flops = 2.0 * batch * features * width
    h_flops = 2.0 * batch * units * width
    state = batch * width
    forward, weight_grads, input_grads = [], [], []
    for t in range(steps):
        forward += [
            Kernel(
                f"{prefix}rnn_input_gemm_{t}",
                x_flops,
                float((batch * features + features * width + state) * size),
                True,
            ),
            Kernel(
                f"{prefix}rnn_recurrent_gemm_{t}",
                h_flops,
                float((batch * units + units * width + state) * size),
                True,
            ),
            elementwise_kernel(f"{prefix}rnn_gates_{t}", 2 * state, size, reads=2),
        ]
        weight_grads += [
            elementwise_kernel(f"{prefix}rnn_gates_grad_{t}", 3 * state, size, reads=3),
            Kernel(f"{prefix}rnn_input_kernel_grad_{t}", x_flops, float(2 * state * size), True),
            Kernel(
                f"{prefix}rnn_recurrent_kernel_grad_{t}", h_flops, float(2 * state * size), True
            ),
        ]
        input_grads.append(
            Kernel(
                f"{prefix}rnn_input_grad_{t}",
                x_flops,
                float((state + batch * features) * size),
                True,
            )
        )
    bias = (2 * width if getattr(cell, "reset_after", False) else width) if cell.use_bias else 0
    params = (features * width, units * width) + ((bias,) if bias else ())
    return forward, weight_grads, input_grads, params


@register_compute_rule(RNN)
def _rnn(layer, shape, batch, size):
    """One cell's kernels per step; a StackedRNNCells' cells one after another (each cell's
    kernels prefixed ``cell<i>_``, its input the previous cell's output)."""
    if len(shape) != 2:
        raise ValueError(f"{layer.name!r} needs (time, features), got {shape}")
    steps, features = shape
    stacked = getattr(layer.cell, "cells", None)
    cells = [layer.cell] if stacked is None else list(stacked)
    forward, weight_grads, input_grads, params = [], [], [], ()
    for i, cell in enumerate(cells):
        prefix = "" if stacked is None else f"cell{i}_"
        parts = _cell_kernels(cell, steps, features, batch, size, prefix)
        forward += parts[0]
        weight_grads += parts[1]
        input_grads += parts[2]
        params += parts[3]
        features = cell.units
    units = cells[-1].units
    out_shape = (steps, units) if layer.return_sequences else (units,)
    return ComputeDescription(
        out_shape, params, tuple(forward), tuple(weight_grads), tuple(input_grads)
    )


def _scale_shift(layer, shape, batch, size, kind):
    elements = batch * math.prod(shape)
    return ComputeDescription(
        tuple(shape),
        (),
        (Kernel(kind, 2.0 * elements, float(2 * elements * size)),),
        (),
        (Kernel(f"{kind}_grad", float(elements), float(2 * elements * size)),),
    )


@register_compute_rule(Rescaling)
def _rescaling(layer, shape, batch, size):
    return _scale_shift(layer, shape, batch, size, "rescale")


@register_compute_rule(Normalization)
def _normalize_features(layer, shape, batch, size):
    return _scale_shift(layer, shape, batch, size, "normalize")


def _merge(layer, shape, batch, size, reads_inputs: bool, extra_flop: bool = False):
    nodes = getattr(layer, "_inbound_nodes", None) or []
    if not nodes:
        return None  # how many inputs it merges is known only from its graph node
    k = len(nodes[0].inbound_tensors)
    if k < 2:
        return None
    elements = batch * math.prod(shape)
    kind = type(layer).__name__.lower()
    flops = float((k - 1 + (1 if extra_flop else 0)) * elements)
    forward = (Kernel(kind, flops, float((k + 1) * elements * size)),)
    if isinstance(layer, Add):
        backward = ()
    else:
        reads = 1 + (k if reads_inputs else 0)
        backward = (
            Kernel(f"{kind}_grad", float(k * elements), float((reads + k) * elements * size)),
        )
    return ComputeDescription(tuple(shape), (), forward, (), backward)


# Add, Subtract and Average need only the output gradient; the products and the extrema read
# their inputs again. Average's division is one more FLOP per element.
for _cls, _reads, _extra in (
    (Add, False, False),
    (Subtract, False, False),
    (Average, False, True),
    (Multiply, True, False),
    (Maximum, True, False),
    (Minimum, True, False),
):
    register_compute_rule(_cls)(functools.partial(_merge, reads_inputs=_reads, extra_flop=_extra))


@register_compute_rule(Concatenate)
def _concatenate(layer, shape, batch, size):
    nodes = getattr(layer, "_inbound_nodes", None) or []
    if not nodes or len(nodes[0].inbound_tensors) < 2:
        return None  # the other inputs' shapes are known only from its graph node
    shapes = [tuple(t.shape.as_list()[1:]) for t in nodes[0].inbound_tensors]
    axis = layer.axis % (len(shape) + 1)  # the layer's axis counts the batch axis
    if tuple(shape) != shapes[0] or axis == 0 or any(d is None for s in shapes for d in s):
        return None
    out_shape = list(shapes[0])
    out_shape[axis - 1] = sum(s[axis - 1] for s in shapes)
    return _copy("concat", out_shape, out_shape, batch, size)
