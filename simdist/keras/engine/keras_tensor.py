"""Symbolic tensors of the Functional API: ``KerasTensor`` and the ``Node`` that made it.

``tf.keras.Input(shape)`` returns a ``KerasTensor``: a shape (batch axis ``None``), a dtype,
and where it came from (``_keras_history``: the layer, which of its calls, which output).
Calling a layer on KerasTensors computes nothing: it records a :class:`Node` (the layer, the
call's arguments with KerasTensors in place, and the output KerasTensors) and returns
symbolic outputs. Their shapes and dtypes come from calling the layer on zeros
(:func:`symbolic_call`): once with an unknown batch axis as 1 (other unknown axes as 32) and,
when there are unknown dimensions, once more with them as 2 (33); an output dimension that
differs between the two probes is unknown (``None``). Where the layer has a
``compute_output_shape`` of its own, an output dimension it calls unknown stays unknown even
when both probes agree on it (a strided convolution can map 32 and 33 rows to 16); and where
that rule knows every other dimension of a float output as the first probe gave it, the
second probe is not run (building a ResNet152 probed every convolution at batch 1 and 2).
The probes build the layer (its variables are created then, in the current strategy
scope), run in inference mode (``training`` as the call gives it, else False) and their
``add_loss`` values are dropped. A small integer output (``tf.shape(x)``, at most 16
elements) keeps the values the probes gave it, and later probes use them instead of zeros,
so ``tf.reshape(y, tf.shape(x))`` probes as it will run (as Keras 2 keeps such a tensor's
inferred value).

TF ops and Python operators on KerasTensors (``tf.nn.relu(x)``, ``x + 1``, ``x[:, 0]``)
record Keras 2's op layers (``simdist.keras.layers.tf_op_layer``): the operators are
installed on :class:`KerasTensor` there; the public op functions dispatch to it from the faces
(``simdist.symbolic_dispatch``). ``==`` and ``!=`` stay identity comparisons (see
docs/differences.md).
"""

from __future__ import annotations

import numpy as np

from simdist.core import dtypes, nest
from simdist.core.convert import convert_to_tensor
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tensor import Tensor

__all__ = ["KerasTensor", "Node", "is_symbolic", "symbolic_call"]

_SMALL = 16  # an integer output of at most this many elements keeps its probe values
_PROBE_EXTRA = 31  # unknown non-batch axes are probed 32 and 33 long


class KerasTensor:
    """A symbolic tensor: ``shape``, ``dtype``, ``name`` and the node that produced it."""

    __array_priority__ = 1000  # NumPy defers to __radd__ & co.: np.float32(2) * x is an op layer

    def __init__(self, shape, dtype, name: str | None = None) -> None:
        self.shape = as_shape(shape)
        self.dtype = dtypes.as_dtype(dtype)
        self.name = name
        self._keras_history = None  # (layer, node_index, tensor_index) once a node owns it
        self._probe_values = None  # a small integer tensor's values in the two probes

    @property
    def node(self) -> Node:
        return self._keras_history[0]._inbound_nodes[self._keras_history[1]]

    def __repr__(self) -> str:
        layer = self._keras_history[0].name if self._keras_history else None
        return (
            f"<KerasTensor: shape={tuple(self.shape.as_list())} dtype={self.dtype.name} "
            f"(created by layer '{layer}')>"
        )

    def _probe(self, fill: int) -> Tensor:
        """Zeros of this shape: an unknown batch axis ``fill`` long, other unknown axes
        ``fill + 31`` (long enough for the windows of ``'valid'`` convolutions and pooling);
        a shape computed in the graph gives the values it had in the probes."""
        if self._probe_values is not None:
            return self._probe_values[fill - 1]
        dims = [
            (fill if axis == 0 else fill + _PROBE_EXTRA) if d is None else d
            for axis, d in enumerate(self.shape.as_list())
        ]
        if self.dtype == dtypes.string:
            return convert_to_tensor(np.full(dims, b"", dtype=object))
        return convert_to_tensor(np.zeros(dims, dtype=self.dtype.as_numpy_dtype))

    def __array__(self, dtype=None, copy=None):
        raise TypeError(
            f"You are passing {self!r}, an intermediate Keras symbolic input/output, to a "
            "function that converts it to a NumPy array. Its value is only known when the "
            "model runs: use TF ops (tf.nn.relu(x), x + 1...) or a Keras layer on it instead."
        )

    def __iter__(self):  # as Keras 2: x[0], x[1]... when the first dimension is known
        dims = self.shape.as_list() if self.shape.rank is not None else None
        if dims is None:
            raise TypeError("Cannot iterate over a Tensor with unknown shape.")
        if not dims:
            raise TypeError("Cannot iterate over a scalar.")
        if dims[0] is None:
            raise TypeError("Cannot iterate over a Tensor with unknown first dimension.")
        return iter([self[i] for i in range(dims[0])])

    def __len__(self) -> int:
        raise TypeError(
            f"{self!r} has no len(): Keras symbolic inputs/outputs do not implement `__len__`. "
            "A function that needs the length of the value cannot be recorded in a Functional "
            "model; use TF ops (tf.shape(x)[0]) or a layer of your own."
        )

    def __bool__(self) -> bool:
        raise TypeError(
            "Using a symbolic Keras tensor as a Python bool is not allowed: its value is "
            "only known when the model runs."
        )


def _operator(method: str):
    def apply(self, *args):
        from simdist.keras.layers import tf_op_layer  # the op layers build on this module

        return tf_op_layer.apply_operator(method, self, *args)

    apply.__name__ = method
    return apply


# x + y, x[1:], -x... record op layers as in Keras 2 (tf_op_layer.OPERATORS lists them).
for _method in (
    "__add__", "__radd__", "__sub__", "__rsub__", "__mul__", "__rmul__", "__truediv__",
    "__rtruediv__", "__floordiv__", "__rfloordiv__", "__mod__", "__rmod__", "__pow__",
    "__rpow__", "__matmul__", "__rmatmul__", "__neg__", "__abs__", "__lt__", "__le__",
    "__gt__", "__ge__", "__and__", "__rand__", "__or__", "__ror__", "__xor__", "__rxor__",
    "__invert__", "__getitem__",
):  # fmt: skip
    setattr(KerasTensor, _method, _operator(_method))
del _method


class Node:
    """One call of ``layer`` in a graph: its arguments and its symbolic outputs."""

    def __init__(self, layer, call_args: tuple, call_kwargs: dict, outputs) -> None:
        self.layer = layer
        self.call_args = call_args
        self.call_kwargs = call_kwargs
        self.outputs = outputs
        self.inbound_tensors = [
            t for t in nest.flatten((call_args, call_kwargs)) if isinstance(t, KerasTensor)
        ]
        self.output_tensors = [t for t in nest.flatten(outputs) if isinstance(t, KerasTensor)]
        inbound = layer.__dict__.setdefault("_inbound_nodes", [])
        index = len(inbound)
        inbound.append(self)
        for i, tensor in enumerate(self.output_tensors):
            tensor._keras_history = (layer, index, i)

    @property
    def parent_nodes(self) -> list[Node]:
        return [t.node for t in self.inbound_tensors]

    def run(self, values: dict, training=None):
        """Call the layer with each KerasTensor replaced by ``values[id(tensor)]``."""
        args, kwargs = nest.map_structure(
            lambda t: values[id(t)] if isinstance(t, KerasTensor) else t,
            (self.call_args, self.call_kwargs),
        )
        if training is not None and "training" not in kwargs:
            kwargs = {**kwargs, "training": training}
        outputs = self.layer(*args, **kwargs)
        for tensor, value in zip(self.output_tensors, nest.flatten(outputs), strict=True):
            values[id(tensor)] = value


def is_symbolic(structure) -> bool:
    """Whether ``structure`` holds a KerasTensor."""
    if type(structure) is Tensor:
        return False
    if isinstance(structure, KerasTensor):
        return True
    if isinstance(structure, (list, tuple, dict)):
        return any(isinstance(t, KerasTensor) for t in nest.flatten(structure))
    return False


def symbolic_call(layer, call, args: tuple, kwargs: dict):
    """Record ``layer(*args, **kwargs)`` on KerasTensors; returns its symbolic outputs.

    ``call(*args, **kwargs)`` performs a real call (the layer's ``__call__``) on tensors, in
    probe mode (the layer drops its ``add_loss`` values then).
    """
    kwargs_probe = dict(kwargs)
    kwargs_probe.setdefault("training", False)
    flat = nest.flatten((args, kwargs_probe))
    unknown = any(
        t._probe_values is not None and t._probe_values[0] is not t._probe_values[1]
        or any(d is None for d in t.shape.as_list())
        for t in flat
        if isinstance(t, KerasTensor)
    )

    def probe(fill: int):
        concrete = [t._probe(fill) if isinstance(t, KerasTensor) else t for t in flat]
        p_args, p_kwargs = nest.pack_sequence_as((args, kwargs_probe), concrete)
        return call(*p_args, **p_kwargs)

    first = probe(1)
    declared = _declared_shape(layer, args) if unknown and isinstance(first, Tensor) else None
    # The second probe only finds which dimensions vary; where the layer's own rule says
    # that of a float output and agrees with the first probe on every dimension it knows,
    # it is not run (it costs twice the first: a batch of 2).
    second = first if not unknown or _declared_suffices(declared, first) else probe(2)
    name = getattr(layer, "name", None)

    def symbolic(a, b):
        if not isinstance(a, Tensor):
            return a
        dims = [
            da if da == db else None
            for da, db in zip(a.shape.as_list(), b.shape.as_list(), strict=True)
        ]
        if declared is not None and declared.rank == len(dims):
            dims = [None if d is None else p for d, p in zip(declared.as_list(), dims, strict=True)]
        tensor = KerasTensor(TensorShape(dims), a.dtype, name=name)
        if a.dtype.is_integer and a.shape == b.shape and a.shape.num_elements() <= _SMALL:
            same = np.array_equal(a.numpy(), b.numpy())
            tensor._probe_values = (a, a if same else b)  # tf.shape(x) as the probes see it
        return tensor

    outputs = nest.map_structure(symbolic, first, second)
    Node(layer, tuple(args), dict(kwargs), outputs)
    return outputs


def _declared_suffices(declared: TensorShape | None, first: Tensor) -> bool:
    """Whether the layer's declared output shape can stand in for the second probe: a float
    output (a small integer one keeps both probes' values), the same rank as the first
    probe's, and every dimension it knows equal to the first probe's."""
    if declared is None or declared.rank is None or not first.dtype.is_floating:
        return False
    dims = first.shape.as_list()
    return declared.rank == len(dims) and all(
        d is None or d == p for d, p in zip(declared.as_list(), dims, strict=True)
    )


def _declared_shape(layer, args: tuple) -> TensorShape | None:
    """The output shape the layer's own ``compute_output_shape`` gives for the symbolic inputs
    (None when it has none of its own, or cannot say).

    Two probes can agree by accident on a dimension that is unknown: a 7x7 stride-2 ``valid``
    convolution gives 1 from 7 and from 8 rows. Where the layer's own rule says unknown, the
    output dimension is unknown.
    """
    method = getattr(type(layer), "compute_output_shape", None)
    if method is None or getattr(method, "_probes", False) or not args:
        return None
    shapes = nest.map_structure(
        lambda t: t.shape if isinstance(t, KerasTensor) else t, args[0]
    )
    try:
        shape = layer.compute_output_shape(shapes)
    except (ValueError, TypeError, NotImplementedError, AttributeError, IndexError):
        return None
    try:
        return as_shape(shape)
    except (ValueError, TypeError):
        return None
