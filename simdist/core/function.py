"""``function``: TF's ``tf.function`` decorator, with eager semantics kept.

simdist runs the decorated Python function eagerly on every call; there is no graph. What
the decorator does keep from TF:

* code inside it runs "in a function": ``executing_eagerly()`` is False there, and APIs
  that TF allows only inside ``tf.function`` (``TPUStrategy.run``) accept the call;
* ``input_signature`` is enforced: arguments that do not fit raise before the body runs;
* numbers and NumPy arrays it returns come back as tensors, as from a traced graph;
* a trace count (``experimental_get_tracing_count``) that grows when TF would retrace: a
  new combination of Python argument values, tensor dtypes and shapes (relaxed to the
  signature when one is given; with ``reduce_retracing=True`` a call that differs from an
  earlier one only in dims of the same rank traces once more with those dims relaxed to
  ``None``, and later such calls reuse it); a distributed value is traced by its components;
* variables are created on the first call only: a later call that creates one raises TF's
  ``ValueError`` (the first call is TF's first trace; for a method, per instance);
* ``input_signature`` may be a distributed dataset's ``element_spec`` (``PerReplicaSpec``).

Where simdist differs from graph tracing (documented, deliberate): Python side effects
(``print``, appending to a list, reading a global) happen on every call, not once per
trace; Python ``if``/``for`` on tensor values just run (no AutoGraph conversion); and
``tf.config.run_functions_eagerly(True)`` makes calls count as eager.
"""

from __future__ import annotations

import functools
import weakref
from collections.abc import Callable

import numpy as np

from simdist.core import nest
from simdist.core.context import state
from simdist.core.tensor import Tensor
from simdist.core.tensor_spec import TensorSpec
from simdist.core.variables import variable_creator_scope

__all__ = ["function", "Function", "executing_eagerly", "run_functions_eagerly", "inside_function"]

_run_eagerly = False


class InputSignatureError(TypeError, ValueError):
    """Arguments do not fit ``input_signature`` (TF raises TypeError or ValueError by version)."""


def run_functions_eagerly(run_eagerly: bool) -> None:
    """Make every ``function`` call count as eager (``tf.config.run_functions_eagerly``)."""
    global _run_eagerly
    _run_eagerly = bool(run_eagerly)


def functions_run_eagerly() -> bool:
    return _run_eagerly


def inside_function() -> bool:
    """True while a ``function``-decorated call is running on this thread."""
    return state.function_depth > 0


def executing_eagerly() -> bool:
    """False inside a ``function`` call, as in TF; True everywhere else."""
    return not inside_function()


class Function:
    """The callable that ``function`` returns."""

    def __init__(
        self,
        python_function: Callable,
        input_signature=None,
        name=None,
        reduce_retracing: bool = False,
    ) -> None:
        self._python_function = python_function
        self._input_signature = None if input_signature is None else tuple(input_signature)
        if self._input_signature is not None:
            for spec in nest.flatten(self._input_signature):
                if not isinstance(spec, TensorSpec) and not hasattr(spec, "_fit_value"):
                    raise TypeError(
                        "input_signature must hold tf.TensorSpec objects (or a distributed "
                        f"dataset's element_spec), got {spec!r}."
                    )
        self._reduce_retracing = bool(reduce_retracing)
        self._trace_keys: list = []
        self._called_without_instance = False
        self._called_instances: weakref.WeakSet = weakref.WeakSet()
        self._called_instance_ids: set[int] = set()  # instances that take no weak reference
        self.__name__ = name or getattr(python_function, "__name__", "function")
        functools.update_wrapper(self, python_function)

    @property
    def python_function(self) -> Callable:
        return self._python_function

    @property
    def input_signature(self):
        return self._input_signature

    def experimental_get_tracing_count(self) -> int:
        """How many times TF would have traced so far (see the module docstring)."""
        return len(self._trace_keys)

    def _record_trace(self, key: tuple) -> None:
        if self._reduce_retracing:
            if any(_covers(seen, key) for seen in self._trace_keys):
                return
            for seen in self._trace_keys:
                relaxed = _relax(seen, key)
                if relaxed is not None:
                    self._trace_keys.append(relaxed)
                    return
        if key not in self._trace_keys:
            self._trace_keys.append(key)

    def _first_call(self, instance) -> bool:
        """Whether this is the first call (for ``instance``, for a method); records it."""
        if instance is None:
            first, self._called_without_instance = not self._called_without_instance, True
            return first
        try:
            first = instance not in self._called_instances
            self._called_instances.add(instance)
        except TypeError:
            first = id(instance) not in self._called_instance_ids
            self._called_instance_ids.add(id(instance))
        return first

    def __get__(self, instance, owner):
        if instance is None:
            return self
        bound = _BoundFunction(self, instance)
        return bound

    def __call__(self, *args, **kwargs):
        return self._call(args, kwargs)

    def _call(self, args, kwargs, instance=None):
        if self._input_signature is not None:
            args = self._check_signature(args, kwargs)
        self._record_trace(self._trace_key(args, kwargs))
        call_args = args if instance is None else (instance, *args)
        if _run_eagerly:
            return self._python_function(*call_args, **kwargs)
        first = self._first_call(instance)
        state.function_depth += 1
        try:
            if first:
                return _outputs_as_tensors(self._python_function(*call_args, **kwargs))
            with variable_creator_scope(_refuse_variable_creation):
                return _outputs_as_tensors(self._python_function(*call_args, **kwargs))
        finally:
            state.function_depth -= 1

    def _check_signature(self, args, kwargs) -> tuple:
        sig = self._input_signature
        if kwargs or len(args) != len(sig):
            raise InputSignatureError(
                f"{self.__name__} takes {len(sig)} positional argument(s) matching its "
                f"input_signature {sig}; got {len(args)} positional and "
                f"{sorted(kwargs)} keyword argument(s)."
            )
        checked = []
        for i, (arg, spec) in enumerate(zip(args, sig, strict=True)):
            if isinstance(spec, TensorSpec) and not isinstance(arg, dict):
                # a leaf spec takes any value convertible to one tensor (a list, as TF)
                checked.append(self._fit_tensor(arg, spec, i))
                continue
            try:
                nest.assert_same_structure(spec, arg, check_types=False)
            except (TypeError, ValueError) as exc:
                raise InputSignatureError(
                    f"Argument {i} of {self.__name__} does not match the structure of its "
                    f"input_signature entry {spec}: {exc}"
                ) from None

            def fit(value, s, i=i):
                if not isinstance(s, TensorSpec):  # a composite spec (PerReplicaSpec)
                    return s._fit_value(value, lambda v, c: fit(v, c))
                return self._fit_tensor(value, s, i)

            checked.append(nest.map_structure(fit, arg, spec))
        return tuple(checked)

    def _fit_tensor(self, value, spec: TensorSpec, index: int) -> Tensor:
        """``value`` as a tensor that ``spec`` accepts.

        Raises:
            InputSignatureError: its dtype or shape does not fit (TF's words first).
        """
        from simdist.core.convert import convert_to_tensor

        t = convert_to_tensor(value, dtype_hint=spec.dtype)
        if not spec.is_compatible_with(t):
            raise InputSignatureError(
                "Binding inputs to tf.function failed due to `Can not cast "
                f"{TensorSpec(t.shape, t.dtype)} to {spec}`. Python inputs incompatible with "
                f"input_signature: argument {index} of {self.__name__} is a tensor with "
                f"shape={t.shape}, dtype={t.dtype.name} but the signature expects {spec}."
            )
        return t

    def _trace_key(self, args, kwargs):
        def key(value):
            components = getattr(value, "_trace_components", None)
            if components is not None:  # a distributed value: traced by its components
                name, parts = components()
                return ("composite", name, tuple(key(p) for p in parts))
            if isinstance(value, Tensor) or hasattr(value, "_to_tensor"):
                shape = tuple(value.shape) if value.shape.rank is not None else None
                if self._input_signature is not None:
                    return ("tensor", value.dtype.name)
                return ("tensor", value.dtype.name, shape)
            try:
                hash(value)
                return ("py", type(value).__name__, value)
            except TypeError:
                return ("obj", id(value))

        flat = [key(v) for v in nest.flatten((list(args), dict(sorted(kwargs.items()))))]
        return tuple(flat)


def _refuse_variable_creation(next_creator, **kwargs):
    raise ValueError(
        "Creating variables on a non-first call to a function decorated with tf.function. "
        "tf.function only supports singleton tf.Variables created on the first call: create "
        "the tf.Variable once (e.g. `if self.v is None:`) or outside the function."
    )


def _is_tensor_entry(entry) -> bool:
    return isinstance(entry, tuple) and len(entry) == 3 and entry[0] == "tensor"


def _covers(general: tuple, key: tuple) -> bool:
    """Whether a trace for ``general`` (``None`` dims or rank: any) accepts ``key``'s call."""
    if len(general) != len(key):
        return False
    for g, k in zip(general, key, strict=True):
        if g == k:
            continue
        if not (_is_tensor_entry(g) and _is_tensor_entry(k)) or g[1] != k[1]:
            return False
        if g[2] is None:  # unknown rank
            continue
        if k[2] is None or len(g[2]) != len(k[2]):
            return False
        if any(a is not None and a != b for a, b in zip(g[2], k[2], strict=True)):
            return False
    return True


def _relax(seen: tuple, key: tuple) -> tuple | None:
    """``reduce_retracing``: the most specific key covering both calls when they differ only
    in tensor shapes (differing dims become None, differing ranks an unknown rank, as TF's
    shape supertype); None when they differ otherwise (a new trace of its own)."""
    if len(seen) != len(key):
        return None
    relaxed = []
    for a, b in zip(seen, key, strict=True):
        if a == b:
            relaxed.append(a)
            continue
        if not (_is_tensor_entry(a) and _is_tensor_entry(b)) or a[1] != b[1]:
            return None
        if a[2] is None or b[2] is None or len(a[2]) != len(b[2]):
            relaxed.append((*a[:2], None))
        else:
            dims = tuple(x if x == y else None for x, y in zip(a[2], b[2], strict=True))
            relaxed.append((*a[:2], dims))
    return tuple(relaxed)


def _outputs_as_tensors(outputs):
    """As TF: numbers and arrays a function returns come back as tensors (None stays None)."""
    from simdist.core.convert import constant

    def convert(leaf):
        if isinstance(leaf, (bool, int, float, np.generic, np.ndarray)):
            return constant(leaf)
        return leaf

    return nest.map_structure(convert, outputs)


class _BoundFunction:
    """A ``Function`` bound to an instance (a decorated method)."""

    def __init__(self, fn: Function, instance) -> None:
        self._fn = fn
        self._instance = instance

    def __call__(self, *args, **kwargs):
        return self._fn._call(args, kwargs, instance=self._instance)

    def experimental_get_tracing_count(self) -> int:
        return self._fn.experimental_get_tracing_count()

    @property
    def python_function(self):
        return self._fn.python_function


def function(
    func: Callable | None = None,
    input_signature=None,
    autograph: bool = True,
    jit_compile=None,
    reduce_retracing: bool = False,
    experimental_relax_shapes=None,
    name: str | None = None,
    **unused,
):
    """Decorate a Python function as TF's ``tf.function`` does (see the module docstring).

    Usable bare (``@tf.function``) or with arguments (``@tf.function(input_signature=...)``).
    """

    if experimental_relax_shapes is not None:  # TF's older name of reduce_retracing
        reduce_retracing = reduce_retracing or bool(experimental_relax_shapes)

    def decorate(f: Callable) -> Function:
        return Function(
            f, input_signature=input_signature, name=name, reduce_retracing=reduce_retracing
        )

    return decorate if func is None else decorate(func)
