"""The roofline compute model: the kernels layers describe, priced on a device.

An op that performs ``flops`` floating-point operations and moves ``nbytes`` to and from
device memory takes ``max(flops / peak_flops[dtype], nbytes / memory_bandwidth)`` seconds
(Williams, Waterman & Patterson, "Roofline: an insightful visual performance model for
multicore architectures", CACM 52(4), 2009), plus an optional fixed launch overhead.

The FLOPs and bytes come from the layers themselves: each layer gives a
:class:`~simdist.core.compute_description.ComputeDescription` through core's protocol (a
``compute_description`` method, or a rule registered for its class; the built-in Keras
layers' rules live in ``simdist.keras.layers.compute_rules``). This module knows no layer
class. A layer that describes nothing is *unpriced*: :func:`layer_costs` raises for it by
default, or, with ``unpriced="report"``, returns it as a :class:`LayerCost` with
``priced=False`` so that reports list it by name instead of pricing it as zero.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence

from simdist.core.compute_description import Kernel, describe_compute
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

OpCost = Kernel  # one kernel: name, FLOPs, bytes (and whether it is a GEMM)


@dataclasses.dataclass(frozen=True)
class LayerCost:
    """One layer at one batch size: its ops forward and backward, and its parameters.

    ``priced`` is False for a layer the model cannot price (its ops are empty and a report
    must say so, with ``unpriced_reason``); ``output_shape`` is then unknown (``()``).
    """

    name: str
    kind: str
    output_shape: tuple[int, ...]  # per example (no batch axis)
    params: tuple[int, ...]  # element count of each trainable weight, in the layer's order
    forward: tuple[OpCost, ...]
    backward: tuple[OpCost, ...]
    priced: bool = True
    unpriced_reason: str = ""

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


def layer_costs(
    layers,
    input_shape: Sequence[int],
    batch: int,
    dtype: str = "float32",
    unpriced: str = "raise",
) -> tuple[LayerCost, ...]:
    """FLOPs and bytes of every layer of a ``Sequential`` (or a list of layers, or every call
    of a Functional model's graph, at the input shape the graph gives it).

    The first layer with weights computes no input gradient (nothing needs it); in a graph,
    a call whose inputs depend on no weights computes none.

    Args:
        layers: a model with ``.layers``, a Functional model, or a sequence of layers.
        input_shape: one example's shape, without the batch axis (e.g. ``(28, 28, 1)``).
        batch: examples per step on one device.
        dtype: the compute dtype (sets bytes per element).
        unpriced: ``"raise"`` (NotImplementedError for a layer that describes no compute)
            or ``"report"`` (an unpriced :class:`LayerCost`; the layers after it, whose
            input shape is then unknown, are unpriced too).

    Returns:
        One :class:`LayerCost` per layer, in forward order (an input layer is left out).

    Raises:
        ValueError: a non-positive batch, an unknown dtype or ``unpriced``, or a shape a
            layer cannot take.
        NotImplementedError: a layer that describes no compute (``unpriced="raise"``).
    """
    if isinstance(batch, bool) or not isinstance(batch, int) or batch <= 0:
        raise ValueError(f"batch must be a positive integer, got {batch!r}")
    if dtype not in DTYPE_SIZES:
        raise ValueError(f"unknown dtype {dtype!r}; use one of {sorted(DTYPE_SIZES)}")
    if unpriced not in ("raise", "report"):
        raise ValueError(f"unpriced must be 'raise' or 'report', got {unpriced!r}")
    size = DTYPE_SIZES[dtype]
    if getattr(layers, "_nodes", None) is not None:  # a Functional model: its graph's calls
        graph_shape = tuple(layers._flat_inputs[0].shape.as_list()[1:])
        given = tuple(int(d) for d in input_shape)
        if len(graph_shape) != len(given) or any(
            g is not None and g != d for g, d in zip(graph_shape, given, strict=True)
        ):
            raise ValueError(
                f"model {getattr(layers, 'name', '')!r} takes one example of shape "
                f"{graph_shape}, not {given}; give that input shape"
            )
        return _graph_costs(layers._nodes, batch, size, unpriced)
    layer_list = list(getattr(layers, "layers", layers))
    shape: tuple[int, ...] | None = tuple(int(d) for d in input_shape)
    costs = []
    seen_weights = False
    first_unpriced = ""
    for layer in layer_list:
        name = getattr(layer, "name", type(layer).__name__)
        kind = type(layer).__name__
        description = None if shape is None else describe_compute(layer, shape, batch, size)
        if description is None:
            if unpriced == "raise":
                raise NotImplementedError(
                    f"the cost model does not know layer {name!r} of type {kind}: it gives no "
                    "compute description (see simdist.core.compute_description)"
                )
            reason = (
                f"its input shape is unknown after the unpriced layer {first_unpriced}"
                if shape is None
                else "describes no compute"
            )
            first_unpriced = first_unpriced or repr(name)
            costs.append(LayerCost(name, kind, (), (), (), (), False, reason))
            shape = None
            continue
        if kind == "InputLayer":
            shape = description.output_shape
            continue
        # the input gradient of the first layer with weights is needed by nothing
        needs_input_grad = seen_weights or not description.params
        backward = description.weight_grads + (description.input_grads if needs_input_grad else ())
        seen_weights = seen_weights or bool(description.params)
        costs.append(
            LayerCost(
                name, kind, description.output_shape, description.params,
                description.forward, backward,
            )
        )  # fmt: skip
        shape = description.output_shape
    return tuple(costs)


def _graph_costs(nodes, batch: int, size: int, unpriced: str) -> tuple[LayerCost, ...]:
    """Each call (graph node) of a Functional model, at the input shape the graph gives it.

    A call needs its input gradient when one of its inputs depends on weights (for a chain:
    every layer after the first with weights); a layer called twice owns its weights once.
    """
    costs = []
    differentiable: set[int] = set()  # ids of symbolic tensors that depend on weights
    owners: set[int] = set()  # layers whose weights are already counted
    for node in nodes:
        layer = node.layer
        name = getattr(layer, "name", type(layer).__name__)
        kind = type(layer).__name__
        if kind == "InputLayer" or not node.inbound_tensors:
            continue
        dims = node.inbound_tensors[0].shape.as_list()[1:]
        description = None
        if all(d is not None for d in dims):
            description = describe_compute(layer, tuple(int(d) for d in dims), batch, size)
        if description is None:
            if unpriced == "raise":
                raise NotImplementedError(
                    f"the cost model does not know layer {name!r} of type {kind}: it gives no "
                    "compute description (see simdist.core.compute_description)"
                )
            reason = "describes no compute" if None not in dims else "input shape not known"
            costs.append(LayerCost(name, kind, (), (), (), (), False, reason))
            differentiable.update(id(t) for t in node.output_tensors)  # assume it may
            continue
        needs_input_grad = any(id(t) in differentiable for t in node.inbound_tensors)
        params = description.params if id(layer) not in owners else ()
        owners.add(id(layer))
        if description.params or needs_input_grad:
            differentiable.update(id(t) for t in node.output_tensors)
        grads = description.input_grads if needs_input_grad else ()
        costs.append(
            LayerCost(
                name, kind, description.output_shape, params, description.forward,
                description.weight_grads + grads,
            )
        )  # fmt: skip
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
