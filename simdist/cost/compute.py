"""The roofline compute model: FLOPs and bytes of a Keras model's layers, priced on a device.

An op that performs ``flops`` floating-point operations and moves ``nbytes`` to and from
device memory takes ``max(flops / peak_flops[dtype], nbytes / memory_bandwidth)`` seconds
(Williams, Waterman & Patterson, "Roofline: an insightful visual performance model for
multicore architectures", CACM 52(4), 2009), plus an optional fixed launch overhead.

The FLOPs and bytes come from a small analytical model of each layer, read from the layers'
attributes (``filters``, ``kernel_size``, ``strides``, ``padding``, ``units``,
``pool_size``, ``activation``) and the input shape; nothing is instrumented in the core yet.
Counting rules (a multiply-add is 2 FLOPs; every tensor an op reads or writes crosses memory
once, no cache reuse across ops):

* Conv2D / Dense forward: the GEMM (``2 * outputs * fan_in``), then bias-add and the
  activation as separate element-wise ops. Backward: activation gradient, bias gradient,
  kernel gradient (same FLOPs as the forward GEMM) and input gradient (same again) except for
  the model's first layer, whose input gradient nothing needs.
* MaxPooling2D / AveragePooling2D: one FLOP per window element forward; backward scatters
  each output gradient into its window.
* Activation / ReLU / Dropout: element-wise, one FLOP per element each way.
* Flatten: free (a reshape). InputLayer: skipped.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from simdist.topology.model import Device

__all__ = [
    "OpCost",
    "LayerCost",
    "DTYPE_SIZES",
    "OPTIMIZER_COSTS",
    "roofline_time",
    "layer_costs",
    "optimizer_cost",
]

DTYPE_SIZES = {"float16": 2, "bfloat16": 2, "float32": 4, "float64": 8}

# (FLOPs, memory accesses) per parameter of one update. SGD reads param and gradient and writes
# the param; momentum adds one slot; Adam reads param, gradient, m, v and writes param, m, v.
OPTIMIZER_COSTS = {"sgd": (2, 3), "momentum": (4, 5), "adam": (12, 7)}


@dataclasses.dataclass(frozen=True)
class OpCost:
    """One kernel: its FLOPs and the bytes it reads and writes."""

    name: str
    flops: float
    nbytes: float


@dataclasses.dataclass(frozen=True)
class LayerCost:
    """One layer at one batch size: its ops forward and backward, and its parameters."""

    name: str
    kind: str
    output_shape: tuple[int, ...]  # per example (no batch axis)
    params: tuple[int, ...]  # element count of each trainable weight, in the layer's order
    forward: tuple[OpCost, ...]
    backward: tuple[OpCost, ...]

    @property
    def param_count(self) -> int:
        return sum(self.params)


def roofline_time(
    op: OpCost, device: Device, dtype: str = "float32", launch_overhead: float = 0.0
) -> float:
    """Seconds ``op`` takes on ``device``: ``max(flops / peak, bytes / bandwidth)``.

    Args:
        op: the kernel's FLOPs and bytes.
        device: a topology device (``peak_flops`` per dtype name, ``memory_bandwidth``).
        dtype: which peak to use.
        launch_overhead: seconds added per kernel (0 by default: the pure roofline).

    Returns:
        The predicted seconds.

    Raises:
        ValueError: ``device`` has no peak for ``dtype``.
    """
    peak = device.peak_flops.get(dtype)
    if not peak:
        raise ValueError(
            f"device {device.name!r} has no peak FLOP/s for dtype {dtype!r}; it lists "
            f"{sorted(device.peak_flops)}"
        )
    return max(op.flops / peak, op.nbytes / device.memory_bandwidth) + launch_overhead


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


def _elementwise(name: str, elements: float, size: int, reads: int, writes: int = 1) -> OpCost:
    return OpCost(name, float(elements), float((reads + writes) * elements * size))


def _gemm_layer(layer, kind, batch, out_elems, fan_in, in_elems, kernel, bias, size, first):
    """Ops of a layer that is a GEMM (+ bias, + activation): Conv2D and Dense."""
    outputs = batch * out_elems
    inputs = batch * in_elems
    gemm = 2.0 * outputs * fan_in
    forward = [OpCost(f"{kind}", gemm, float((inputs + kernel + outputs) * size))]
    backward = []
    act = _activation_name(layer)
    if bias:
        forward.append(_elementwise("bias_add", outputs, size, reads=1))
    if act != "linear":
        forward.append(_elementwise(act, outputs, size, reads=1))
        backward.append(_elementwise(f"{act}_grad", outputs, size, reads=2))
    if bias:
        backward.append(OpCost("bias_grad", float(outputs), float((outputs + bias) * size)))
    backward.append(OpCost(f"{kind}_kernel_grad", gemm, float((inputs + outputs + kernel) * size)))
    if not first:
        backward.append(
            OpCost(f"{kind}_input_grad", gemm, float((outputs + kernel + inputs) * size))
        )
    return tuple(forward), tuple(backward)


def layer_costs(
    layers, input_shape: Sequence[int], batch: int, dtype: str = "float32"
) -> tuple[LayerCost, ...]:
    """FLOPs and bytes of every layer of a Keras ``Sequential`` (or a list of layers).

    Args:
        layers: a ``simdist.keras.Sequential`` or a sequence of its layers.
        input_shape: one example's shape, without the batch axis (e.g. ``(28, 28, 1)``).
        batch: examples per step on one device.
        dtype: the compute dtype (sets bytes per element).

    Returns:
        One :class:`LayerCost` per layer, in forward order.

    Raises:
        ValueError: a non-positive batch, an unknown dtype, or a shape a layer cannot take.
        NotImplementedError: a layer type the model does not know.
    """
    from simdist.keras import layers as keras_layers
    from simdist.keras.engine.input_layer import InputLayer

    if isinstance(batch, bool) or not isinstance(batch, int) or batch <= 0:
        raise ValueError(f"batch must be a positive integer, got {batch!r}")
    if dtype not in DTYPE_SIZES:
        raise ValueError(f"unknown dtype {dtype!r}; use one of {sorted(DTYPE_SIZES)}")
    size = DTYPE_SIZES[dtype]
    layer_list = list(getattr(layers, "layers", layers))
    shape = tuple(int(d) for d in input_shape)
    costs = []
    first_trainable = True
    for layer in layer_list:
        if isinstance(layer, InputLayer):
            continue
        name = getattr(layer, "name", type(layer).__name__)
        in_elems = math.prod(shape)
        params: tuple[int, ...] = ()
        forward: tuple[OpCost, ...] = ()
        backward: tuple[OpCost, ...] = ()
        if isinstance(layer, keras_layers.Conv2D):
            if len(shape) != 3:
                raise ValueError(f"Conv2D {name!r} needs (height, width, channels), got {shape}")
            (kh, kw), (sh, sw), (dh, dw) = layer.kernel_size, layer.strides, layer.dilation_rate
            rows = _out_length(shape[0], kh, sh, layer.padding, dh)
            cols = _out_length(shape[1], kw, sw, layer.padding, dw)
            out_shape = (rows, cols, layer.filters)
            kernel = kh * kw * shape[2] * layer.filters
            bias = layer.filters if layer.use_bias else 0
            params = (kernel, bias) if bias else (kernel,)
            forward, backward = _gemm_layer(
                layer,
                "conv2d",
                batch,
                math.prod(out_shape),
                kh * kw * shape[2],
                in_elems,
                kernel,
                bias,
                size,
                first_trainable,
            )
        elif isinstance(layer, keras_layers.Dense):
            out_shape = (*shape[:-1], layer.units)
            kernel = shape[-1] * layer.units
            bias = layer.units if layer.use_bias else 0
            params = (kernel, bias) if bias else (kernel,)
            forward, backward = _gemm_layer(
                layer,
                "dense",
                batch,
                math.prod(out_shape),
                shape[-1],
                in_elems,
                kernel,
                bias,
                size,
                first_trainable,
            )
        elif isinstance(layer, (keras_layers.MaxPooling2D, keras_layers.AveragePooling2D)):
            if len(shape) != 3:
                raise ValueError(f"pooling {name!r} needs (height, width, channels), got {shape}")
            (ph, pw), (sh, sw) = layer.pool_size, layer.strides
            out_shape = (
                _out_length(shape[0], ph, sh, layer.padding),
                _out_length(shape[1], pw, sw, layer.padding),
                shape[2],
            )
            outputs, inputs = batch * math.prod(out_shape), batch * in_elems
            is_max = isinstance(layer, keras_layers.MaxPooling2D)
            kind = "max_pool" if is_max else "avg_pool"
            forward = (OpCost(kind, float(outputs * ph * pw), float((inputs + outputs) * size)),)
            # max pooling's gradient re-reads input and output to find each window's argmax
            grad_bytes = (2 * inputs + 2 * outputs) if is_max else (inputs + outputs)
            backward = (OpCost(f"{kind}_grad", float(inputs), float(grad_bytes * size)),)
        elif isinstance(layer, keras_layers.Flatten):
            out_shape = (in_elems,)
        elif isinstance(layer, (keras_layers.Activation, keras_layers.ReLU, keras_layers.Dropout)):
            out_shape = shape
            kind = "dropout" if isinstance(layer, keras_layers.Dropout) else _activation_name(layer)
            if isinstance(layer, keras_layers.ReLU):
                kind = "relu"
            forward = (_elementwise(kind, batch * in_elems, size, reads=1),)
            backward = (_elementwise(f"{kind}_grad", batch * in_elems, size, reads=2),)
        else:
            raise NotImplementedError(
                f"the cost model does not know layer {name!r} of type {type(layer).__name__}; "
                "it prices Conv2D, Dense, MaxPooling2D, AveragePooling2D, Flatten, Activation, "
                "ReLU and Dropout"
            )
        if params:
            first_trainable = False
        costs.append(LayerCost(name, type(layer).__name__, out_shape, params, forward, backward))
        shape = out_shape
    return tuple(costs)


def optimizer_cost(num_params: int, optimizer: str = "adam", dtype: str = "float32") -> OpCost:
    """The update of ``num_params`` parameters as one element-wise kernel.

    Raises:
        ValueError: an unknown optimizer or dtype.
    """
    key = optimizer.lower()
    if key not in OPTIMIZER_COSTS:
        raise ValueError(f"unknown optimizer {optimizer!r}; use one of {sorted(OPTIMIZER_COSTS)}")
    if dtype not in DTYPE_SIZES:
        raise ValueError(f"unknown dtype {dtype!r}; use one of {sorted(DTYPE_SIZES)}")
    flops, accesses = OPTIMIZER_COSTS[key]
    nbytes = accesses * num_params * DTYPE_SIZES[dtype]
    return OpCost(f"{key}_update", float(flops * num_params), float(nbytes))
