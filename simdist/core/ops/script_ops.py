"""``tf.py_function`` and ``tf.numpy_function``: Python code called as an op, eagerly.

``py_function(func, inp, Tout)`` calls ``func`` on the inputs as tensors, with every tape
still recording, so gradients flow through the tensor ops ``func`` runs (as TF's eager py
function records them on a tape of its own); each result is converted to its ``Tout``
dtype. ``Tout`` is a dtype (or TensorSpec): one result; a list or tuple of them: a list.
As TF's kernel maps a Python exception to an error class, so does simdist: ``ValueError``
and ``TypeError`` become ``InvalidArgumentError``, ``StopIteration`` ``OutOfRangeError``,
``MemoryError`` ``ResourceExhaustedError``, ``NotImplementedError`` ``UnimplementedError``,
any other ``UnknownError`` (a TF error passes through); the message starts with the
exception's class name, and the original is the ``__cause__``.

``numpy_function(func, inp, Tout)`` calls ``func`` on NumPy copies of the inputs. Eagerly
(outside ``tf.function``) it does what TF's eager one does: each result converted as it is,
``Tout`` not applied, exceptions not mapped, and no gradient. Inside ``tf.function`` the
results are converted to ``Tout``, as TF's graph op does.

Both work as decorators when ``func`` is omitted (``@tf.py_function(Tout=tf.float32)``).
"""

from __future__ import annotations

import functools

import numpy as np

from simdist import errors
from simdist.core import dtypes, nest
from simdist.core.convert import convert_to_tensor
from simdist.core.function import executing_eagerly
from simdist.core.tensor import Tensor
from simdist.core.tensor_spec import TensorSpec

__all__ = ["py_function", "numpy_function", "eager_py_func"]

_MAPPED = (
    ((ValueError, TypeError), errors.InvalidArgumentError),
    ((StopIteration,), errors.OutOfRangeError),
    ((MemoryError,), errors.ResourceExhaustedError),
    ((NotImplementedError,), errors.UnimplementedError),
)


def _decorator_or_check(script_op: str, func, Tout, make_call):
    if Tout is None:
        raise TypeError(
            "Missing required argument: 'Tout'\n"
            f"  If using {script_op} as a decorator, set `Tout`\n"
            "  **by name** above the function:\n"
            f"  `@{script_op}(Tout=tout)`"
        )
    if func is None:
        call = make_call(Tout)

        def decorator(f):
            @functools.wraps(f)
            def wrapped(*args):
                return call(f, list(args))

            return wrapped

        return decorator
    return None


def _dtype_of(spec) -> dtypes.DType:
    return spec.dtype if isinstance(spec, TensorSpec) else dtypes.as_dtype(spec)


def _mapped(exc: BaseException) -> errors.OpError:
    if isinstance(exc, errors.OpError):
        return exc
    message = f"{type(exc).__name__}: {exc}"
    for kinds, error in _MAPPED:
        if isinstance(exc, kinds):
            return error(message)
    return errors.UnknownError(message)


def _convert(value, dtype: dtypes.DType) -> Tensor:
    if hasattr(value, "assign") and hasattr(value, "_to_tensor"):
        raise RuntimeError(
            "Attempting to return a variable from an eagerly executed py_func. Only numeric "
            "data structures like Tensors or NumPy arrays should be returned; call "
            f".read_value() on the variable to return its value: {value!r}"
        )
    return convert_to_tensor(value, dtype=dtype)


def py_function(func=None, inp=None, Tout=None, name=None):
    """Call ``func`` on ``inp`` (as tensors) and convert its result(s) to ``Tout``.

    >>> import simdist as tf
    >>> float(tf.py_function(lambda x, y: x * y, [tf.constant(2.0), 3.0], Tout=tf.float32))
    6.0

    Raises:
        TypeError: ``Tout`` is missing.
        InvalidArgumentError, UnknownError...: ``func`` raised (mapped as above), or a result
            does not convert to its ``Tout`` dtype.
    """
    decorator = _decorator_or_check("tf.py_function", func, Tout, _run_py_function)
    if decorator is not None:
        return decorator
    return _run_py_function(Tout)(func, inp)


def _run_py_function(Tout):
    many = isinstance(Tout, (list, tuple))
    out_dtypes = [_dtype_of(t) for t in (Tout if many else [Tout])]

    def call(func, inp):
        inputs = [convert_to_tensor(x) for x in (inp or [])]
        try:
            result = func(*inputs)
            if result is None:  # an op of no outputs: [] for a list of Tout
                return [] if many else None
            values = list(result) if isinstance(result, (list, tuple)) else [result]
            outputs = [_convert(v, d) for v, d in zip(values, out_dtypes, strict=False)]
        except Exception as exc:  # the kernel's mapping of func's exception to an error class
            raise _mapped(exc) from exc
        return outputs if many else outputs[0]

    return call


eager_py_func = py_function


def numpy_function(func=None, inp=None, Tout=None, stateful=True, name=None):
    """Call ``func`` on NumPy copies of ``inp``; its results as tensors (no gradient).

    >>> import simdist as tf
    >>> tf.numpy_function(lambda x: x * 2, [tf.constant([1.0, 2.0])], Tout=tf.float32).numpy()
    array([2., 4.], dtype=float32)

    Raises:
        TypeError: ``Tout`` is missing.
        Whatever ``func`` raises (eagerly, as TF's eager numpy_function).
    """
    decorator = _decorator_or_check("tf.numpy_function", func, Tout, _run_numpy_function)
    if decorator is not None:
        return decorator
    return _run_numpy_function(Tout)(func, inp)


def _run_numpy_function(Tout):
    many = isinstance(Tout, (list, tuple))
    out_dtypes = [_dtype_of(t) for t in (Tout if many else [Tout])]

    def call(func, inp):
        arrays = [np.array(convert_to_tensor(x)._value) for x in (inp or [])]
        result = func(*arrays)
        if executing_eagerly():  # TF's eager path: results as they are, Tout unused
            flat = [None if r is None else convert_to_tensor(r) for r in nest.flatten(result)]
            return flat[0] if len(flat) == 1 else flat
        values = list(result) if isinstance(result, (list, tuple)) else [result]
        outputs = [convert_to_tensor(np.asarray(v).astype(d._np) if d != dtypes.string else v, d)
                   for v, d in zip(values, out_dtypes, strict=False)]  # fmt: skip
        return outputs if many else outputs[0]

    return call
