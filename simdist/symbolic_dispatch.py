"""TF ops on Keras symbolic tensors: the public op functions become Keras op layers there.

In TF, ``tf.nn.relu(x)``, ``tf.concat([a, b], -1)`` or ``x + y`` on KerasTensors of the
Functional API record a ``TFOpLambda`` layer (``SlicingOpLambda`` for ``x[...]``) named after
the op (``tf.nn.relu``, ``tf.__operators__.add``), which the model runs like any layer. simdist
does it here, at the face: :func:`install` replaces each public op function of a namespace
(``simdist``, ``simdist.math``, ``simdist.nn``, ``simdist.linalg``, ``simdist.image``) by a
wrapper that looks at its arguments: when one of them (at any depth of a list, tuple or dict)
is a KerasTensor it builds the op layer and calls it; otherwise it calls the op. One function
gets one wrapper, whichever namespaces show it (``tf.add is tf.math.add`` still), with the
function's ``__name__``, ``__module__``, ``__doc__`` and signature.

On plain tensors the wrapper costs one dict lookup until Keras is imported, then a scan of
the arguments' types (``scenarios/bench_symbolic_dispatch.py`` measures it; docs/benchmarks.md).
The core never sees KerasTensors, so the core's own callers pay nothing.

The op layer saves the op's TF API name (``"nn.relu"``); :class:`_Directory`, registered in
``simdist.core.api_symbols``, gives Keras that name and the function back for it, as TF's
``get_canonical_name_for_symbol`` and ``get_symbol_from_name`` do.
"""

from __future__ import annotations

import functools
import inspect
import sys

import numpy as np

from simdist.core import api_symbols, dtypes
from simdist.core.ops import array_ops, comparison_ops, math_ops, slicing_ops
from simdist.core.tensor import Tensor

__all__ = ["install", "is_wrapped"]

# Public functions that take no tensor (or that TF does not dispatch): left as they are.
_NOT_OPS = frozenset(
    {
        "as_dtype", "constant", "convert_to_tensor", "is_tensor", "device", "name_scope",
        "function", "executing_eagerly", "control_dependencies", "cond", "while_loop", "print",
        "variable_creator_scope", "zeros", "ones", "fill", "range", "assert_equal",
        "assert_greater", "assert_less", "assert_rank",
    }
)  # fmt: skip

# simdist's first path of an op (its top-level name when it has one) -> TF's canonical API
# name, where that is not the first of simdist's namespaces that show the op (math, linalg,
# nn, image, then the top level: TF's usual order); read from TF 2.21's
# get_canonical_name_for_symbol, and tests/keras/test_tf_op_layer_vs_tf.py checks every
# wrapped op's name against it.
_CANONICAL = {
    "cast": "cast", "clip_by_value": "clip_by_value", "einsum": "einsum", "eye": "eye",
    "nn.swish": "nn.silu",
    "matmul": "linalg.matmul", "saturate_cast": "dtypes.saturate_cast",
    "sigmoid": "math.sigmoid", "nn.softplus": "math.softplus", "tanh": "math.tanh",
    "tensordot": "tensordot", "transpose": "transpose",
}  # fmt: skip

# TF's ops that come straight from its generated op wrappers hand Keras every argument by
# name, defaults included (``tf.nn.relu(x)`` records ``name=None``); the op layer of these
# records the same (read from TF 2.21: the ops whose function lives in a gen_*_ops module).
_RECORDS_EVERY_ARGUMENT = frozenset(
    {
        "broadcast_to", "elu", "floormod", "greater", "greater_equal", "l2_loss", "less",
        "less_equal", "log", "log1p", "logical_and", "logical_not", "logical_or", "maximum",
        "minimum", "negative", "reciprocal", "relu", "reverse", "scatter_nd", "segment_max",
        "segment_mean", "segment_min", "segment_sum", "selu", "softsign", "square", "tanh",
        "tensor_scatter_nd_add", "tensor_scatter_nd_sub", "tile", "unsorted_segment_max",
        "unsorted_segment_min", "unsorted_segment_sum",
    }
)  # fmt: skip
# TF's v2 ops (by top-level name) that hand their arguments to the v1 op of the same name,
# which is then what Keras records, with the arguments v2 passes on; read from TF 2.21.
_RECORDED_AS = {
    name: f"compat.v1.{name}" for name in ("transpose", "shape", "size", "squeeze", "gather", "pad")
}

_KERAS_TENSOR_MODULE = "simdist.keras.engine.keras_tensor"
# argument types that are never a KerasTensor nor hold one (checked first: the common case)
_PLAIN_TYPES = frozenset({Tensor, int, float, bool, str, type(None), np.ndarray})
_keras_tensor_type = None  # KerasTensor, once Keras is imported
# (id(original), name) -> its one wrapper (which holds the original: the id stays unique)
_wrappers: dict[tuple[int, str], object] = {}


def _has_keras_tensor(value, keras_tensor) -> bool:
    if isinstance(value, keras_tensor):
        return True
    if isinstance(value, (list, tuple)):
        return any(_has_keras_tensor(v, keras_tensor) for v in value)
    if isinstance(value, dict):
        return any(_has_keras_tensor(v, keras_tensor) for v in value.values())
    return False


def _keras_tensor():
    """KerasTensor, or None while Keras is not imported (then no argument can be one)."""
    global _keras_tensor_type
    if _keras_tensor_type is None:
        module = sys.modules.get(_KERAS_TENSOR_MODULE)
        if module is not None:
            _keras_tensor_type = module.KerasTensor
    return _keras_tensor_type


def _symbolic(args: tuple, kwargs: dict) -> bool:
    """Whether a KerasTensor is among the arguments, at any depth of a list, tuple or dict."""
    keras_tensor = _keras_tensor_type or _keras_tensor()
    if keras_tensor is None:
        return False
    plain = _PLAIN_TYPES
    for value in args:
        if type(value) not in plain and _has_keras_tensor(value, keras_tensor):
            return True
    if kwargs:
        for value in kwargs.values():
            if type(value) not in plain and _has_keras_tensor(value, keras_tensor):
                return True
    return False


def _op_layer(public, args: tuple, kwargs: dict):
    from simdist.keras.layers import tf_op_layer

    first = public._tf_api_paths[0]  # the top-level name, where the op has one
    if first.rpartition(".")[2] in _RECORDS_EVERY_ARGUMENT or first in _RECORDED_AS:
        bound = inspect.signature(public).bind(*args, **kwargs)
        bound.apply_defaults()
        args, kwargs = (), dict(bound.arguments)
    if first in _RECORDED_AS:
        public = _DIRECTORY.resolve(_RECORDED_AS[first])
        kwargs = {k: kwargs[k] for k in inspect.signature(public).parameters if k in kwargs}
    return tf_op_layer.op_layer_for(public)(*args, **kwargs)


def _wrap(function, name: str):
    """The one public wrapper of ``function`` shown as ``name`` (made on first request).

    A function simdist shows under two names that are two functions in TF (``divide`` and
    ``truediv``) gets one wrapper per name, so each op layer is named as TF names it.
    """
    wrapper = _wrappers.get((id(function), name))
    if wrapper is not None:
        return wrapper

    modules = sys.modules

    @functools.wraps(function)
    def wrapper(*args, **kwargs):
        if (_keras_tensor_type is not None or _KERAS_TENSOR_MODULE in modules) and _symbolic(
            args, kwargs
        ):
            return _op_layer(wrapper, args, kwargs)
        return function(*args, **kwargs)

    wrapper._tf_api_paths = []  # "math.add", "add": where the faces show it
    _wrappers[(id(function), name)] = wrapper
    return wrapper


def is_wrapped(function) -> bool:
    """Whether ``function`` is a public op wrapper of this module."""
    return hasattr(function, "_tf_api_paths")


def install(namespace: dict, prefix: str, names=None) -> None:
    """Replace the public op functions of a namespace (a module's ``globals()``) by wrappers.

    Args:
        namespace: the module's globals.
        prefix: the namespace's TF API path (``"math"``; ``""`` for the top level).
        names: the names to consider (default: the public names); only plain functions of
            simdist's that take tensors are wrapped.
    """
    for name in list(namespace if names is None else names):
        function = namespace.get(name)
        if name.startswith("_") or name in _NOT_OPS or not inspect.isfunction(function):
            continue
        if not function.__module__.startswith("simdist"):
            continue
        public = function if is_wrapped(function) else _wrap(function, name)
        path = f"{prefix}.{name}" if prefix else name
        if path not in public._tf_api_paths:
            public._tf_api_paths.append(path)
        namespace[name] = public


# --- the Python operators, as TF's tf.__operators__ namespace holds some of them ------------
def add(x, y, name=None):
    """``x + y`` (TF's ``tf.__operators__.add``)."""
    return math_ops.add(x, y)


def getitem(tensor, slice_spec, var=None):
    """``tensor[slice_spec]`` (TF's ``tf.__operators__.getitem``)."""
    return slicing_ops.getitem(tensor, slice_spec)


def eq(self, other):
    """``x == y`` (TF's ``tf.__operators__.eq``)."""
    return comparison_ops.tensor_equals(self, other)


def ne(self, other):
    """``x != y`` (TF's ``tf.__operators__.ne``)."""
    return comparison_ops.tensor_not_equals(self, other)


install(
    {"add": add, "getitem": getitem, "eq": eq, "ne": ne}, "__operators__"
)  # what "__operators__.add" and "__operators__.getitem" name in a saved model
# TF's v1 ops that its v2 ops hand over to (see _RECORDED_AS), with the parameters v2 passes
def _transpose_v1(a, perm=None, name="transpose", conjugate=False):
    """TF's ``tf.compat.v1.transpose``."""
    return array_ops.transpose(a, perm, conjugate=conjugate)


def _shape_v1(input, name=None, out_type=None):
    """TF's ``tf.compat.v1.shape``."""
    return array_ops.shape(input, out_type=out_type or dtypes.int32)


def _size_v1(input, name=None, out_type=None):
    """TF's ``tf.compat.v1.size``."""
    return array_ops.size(input, out_type=out_type or dtypes.int32)


def _squeeze_v1(input, axis=None, name=None):
    """TF's ``tf.compat.v1.squeeze``."""
    return array_ops.squeeze(input, axis)


def _gather_v1(params, indices, validate_indices=None, name=None, axis=None, batch_dims=0):
    """TF's ``tf.compat.v1.gather``."""
    return slicing_ops.gather(params, indices, axis=axis, batch_dims=batch_dims)


def _pad_v1(tensor, paddings, mode="CONSTANT", name=None, constant_values=0):
    """TF's ``tf.compat.v1.pad``."""
    return array_ops.pad(tensor, paddings, mode=mode, constant_values=constant_values)


# what Keras records for ``x // y`` and for the v2 ops of _RECORDED_AS
install(
    {"floor_div": math_ops.floordiv, "transpose": _transpose_v1, "shape": _shape_v1,
     "size": _size_v1, "squeeze": _squeeze_v1, "gather": _gather_v1, "pad": _pad_v1},
    "compat.v1",
)  # fmt: skip


class _Directory:
    """The faces' public functions by TF API name (see ``simdist.core.api_symbols``)."""

    _ORDER = ("math", "linalg", "nn", "image", "__operators__")

    def __init__(self) -> None:
        self._by_name: dict[str, object] = {}  # every TF API name (canonical or not) -> op
        self._indexed = 0  # how many wrappers _by_name covers

    @staticmethod
    def _namespaces() -> dict:
        from simdist import image, linalg, math, nn  # each installs its wrappers

        return {"math": math, "linalg": linalg, "nn": nn, "image": image}

    def name_of(self, function) -> str | None:
        paths = getattr(function, "_tf_api_paths", None)
        if not paths:
            return None
        self._namespaces()  # function._tf_api_paths is complete now
        if paths[0] in _CANONICAL:
            return _CANONICAL[paths[0]]
        for prefix in self._ORDER:
            for path in paths:
                if path.startswith(prefix + "."):
                    return path
        return paths[0]

    def resolve(self, name: str):
        self._namespaces()
        if self._indexed != len(_wrappers):
            for wrapper in _wrappers.values():
                for path in wrapper._tf_api_paths:
                    self._by_name.setdefault(path, wrapper)
            for wrapper in _wrappers.values():  # a canonical name wins over a path
                canonical = self.name_of(wrapper)
                if canonical is not None:
                    self._by_name[canonical] = wrapper
            self._indexed = len(_wrappers)
        return self._by_name.get(name)


_DIRECTORY = _Directory()
api_symbols.register(_DIRECTORY)
