"""How a layer describes its own compute: kernels with FLOPs and bytes (read by the cost model).

The cost model (``simdist.cost``) prices what layers say of themselves and knows no layer
class. A layer says it in one of two ways, looked up in this order:

1. a method on the layer class::

       def compute_description(self, input_shape, batch, bytes_per_element):
           return ComputeDescription(output_shape=..., params=..., forward=(...), ...)

2. a rule registered for the class (or a base class) with :func:`register_compute_rule`,
   for layers whose files should not grow a method::

       @register_compute_rule(MyLayer)
       def _my_layer(layer, input_shape, batch, bytes_per_element):
           return ComputeDescription(...)

``input_shape`` is one example's shape (no batch axis), ``batch`` the examples per call,
``bytes_per_element`` the compute dtype's size. Return None when the layer cannot say
(the report then lists it as unpriced); raise ValueError for an input shape the layer cannot
take. Counting rules shared by the built-in layers: a multiply-add is 2 FLOPs, every tensor a
kernel reads or writes crosses device memory once (no cache reuse across kernels).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

__all__ = [
    "Kernel",
    "ComputeDescription",
    "register_compute_rule",
    "describe_compute",
    "elementwise_kernel",
]


@dataclasses.dataclass(frozen=True)
class Kernel:
    """One device kernel: its FLOPs, the bytes it reads and writes, and whether it is a GEMM.

    ``matmul`` marks matrix-multiply kernels (dense, convolution), which run on tensor cores
    where the device has them.
    """

    name: str
    flops: float
    nbytes: float
    matmul: bool = dataclasses.field(default=False, compare=False)


@dataclasses.dataclass(frozen=True)
class ComputeDescription:
    """A layer's kernels at one input shape and batch.

    Attributes:
        output_shape: one example's output shape (no batch axis).
        params: element count of each trainable weight, in the layer's weight order.
        forward: the forward kernels, in order.
        weight_grads: backward kernels that produce the weights' gradients (and the
            activation gradient they need), in order.
        input_grads: backward kernels that produce the input's gradient (skipped when
            nothing needs it, e.g. the model's first layer).
    """

    output_shape: tuple[int, ...]
    params: tuple[int, ...] = ()
    forward: tuple[Kernel, ...] = ()
    weight_grads: tuple[Kernel, ...] = ()
    input_grads: tuple[Kernel, ...] = ()


Rule = Callable[[object, tuple, int, int], "ComputeDescription | None"]
_RULES: dict[type, Rule] = {}


def register_compute_rule(cls: type) -> Callable[[Rule], Rule]:
    """Register ``rule(layer, input_shape, batch, bytes_per_element)`` for ``cls``.

    A rule for a class also serves its subclasses that have neither their own rule nor a
    ``compute_description`` method. Registering a class twice replaces the rule.
    """
    if not isinstance(cls, type):
        raise TypeError(f"register_compute_rule takes a class, got {cls!r}")

    def decorate(rule: Rule) -> Rule:
        _RULES[cls] = rule
        return rule

    return decorate


def describe_compute(
    layer, input_shape: tuple[int, ...], batch: int, bytes_per_element: int
) -> ComputeDescription | None:
    """The layer's :class:`ComputeDescription`, or None when it describes none.

    Raises:
        ValueError: the layer cannot take ``input_shape``.
        TypeError: a description of the wrong type.
    """
    shape = tuple(int(d) for d in input_shape)
    method = getattr(type(layer), "compute_description", None)
    description = None
    if callable(method):
        description = method(layer, shape, batch, bytes_per_element)
    else:
        for cls in type(layer).__mro__:
            rule = _RULES.get(cls)
            if rule is not None:
                description = rule(layer, shape, batch, bytes_per_element)
                break
    if description is not None and not isinstance(description, ComputeDescription):
        raise TypeError(
            f"{type(layer).__name__}'s compute description must be a ComputeDescription, got "
            f"{type(description).__name__}"
        )
    return description


def elementwise_kernel(
    name: str, elements: float, bytes_per_element: int, reads: int, writes: int = 1
) -> Kernel:
    """A kernel of one FLOP per element that reads ``reads`` and writes ``writes`` tensors."""
    return Kernel(name, float(elements), float((reads + writes) * elements * bytes_per_element))
