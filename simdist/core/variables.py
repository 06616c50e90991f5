"""``Variable``: mutable state with TF's synchronization and aggregation settings.

A variable holds a NumPy array that ``assign`` replaces. Reading it (``value()``, or using it
in an op) yields a tensor that active tapes connect back to the variable, so
``tape.gradient(loss, variable)`` works. ``tf.Variable(...)`` goes through the stack of
``variable_creator_scope`` creators first: that is how a strategy's ``scope()`` turns one
``tf.Variable`` call into a mirrored variable.
"""

from __future__ import annotations

import contextlib
import enum
import inspect
from collections.abc import Callable, Iterator

import numpy as np

from simdist.core import dtypes
from simdist.core.context import state
from simdist.core.device import current_device
from simdist.core.shape import TensorShape, as_shape
from simdist.core.tape import record
from simdist.core.tensor import Tensor, _numpy_text, _Ref, make_tensor, new_id
from simdist.core.trackable import VARIABLE_VALUE, Trackable

__all__ = [
    "Variable",
    "VariableSynchronization",
    "VariableAggregation",
    "VariableAggregationV2",
    "ResourceVariable",
    "variable_creator_scope",
]


class VariableSynchronization(enum.Enum):
    """When a distributed variable's copies are brought into agreement."""

    AUTO = 0
    NONE = 1
    ON_WRITE = 2
    ON_READ = 3


class VariableAggregationV2(enum.Enum):
    """How per-replica updates (or per-replica values, for ON_READ) combine.

    ``tf.VariableAggregation`` (TF's own class behind that name is ``VariableAggregationV2``,
    so reprs read ``<VariableAggregationV2.SUM: 1>`` in both)."""

    NONE = 0
    SUM = 1
    MEAN = 2
    ONLY_FIRST_REPLICA = 3


VariableAggregation = VariableAggregationV2


@contextlib.contextmanager
def variable_creator_scope(creator: Callable) -> Iterator[None]:
    """Route ``tf.Variable(...)`` calls in this block through ``creator(next_creator, **kw)``.

    The innermost scope's creator runs first; ``next_creator(**kw)`` calls the next outer
    one, and finally the plain constructor.
    """
    state.variable_creators.append(creator)
    try:
        yield
    finally:
        state.variable_creators.pop()


_INIT_PARAMS = (
    "initial_value",
    "trainable",
    "validate_shape",
    "caching_device",
    "name",
    "variable_def",
    "dtype",
    "import_scope",
    "constraint",
    "synchronization",
    "aggregation",
    "shape",
    "experimental_enable_variable_lifting",
)


class _VariableMeta(type):
    def __call__(cls, *args, **kwargs):
        concrete = ResourceVariable if cls is Variable else cls  # TF: tf.Variable(...) makes one
        if cls is not Variable or not state.variable_creators:
            if state.name_scope and concrete is ResourceVariable:
                args, kwargs = _with_scoped_name(args, kwargs)
            return type.__call__(concrete, *args, **kwargs)
        if len(args) > len(_INIT_PARAMS):
            raise TypeError(f"Variable takes at most {len(_INIT_PARAMS)} positional arguments.")
        kwargs.update(zip(_INIT_PARAMS, args, strict=False))  # args may be fewer
        # As TF: creators see every argument, the unspecified ones with their defaults.
        kwargs = {**_creator_defaults(), **kwargs}
        # The name scope is the caller's (a replica thread's variable is made on another).
        if state.name_scope or kwargs.get("name") is not None:
            kwargs["name"] = _scoped_name(kwargs.get("name"))

        def make(**kw):
            return type.__call__(concrete, **kw)

        creator = make
        for outer_to_inner in state.variable_creators:
            creator = _chain(outer_to_inner, creator)
        return creator(**kwargs)


class _ScopedName(str):
    """A variable name that already carries its ``tf.name_scope`` prefix."""


def _scoped_name(name) -> _ScopedName:
    if isinstance(name, _ScopedName):
        return name
    base = "Variable" if name is None else str(name)
    return _ScopedName(state.name_scope + base)


_NAME_POSITION = _INIT_PARAMS.index("name")


def _with_scoped_name(args: tuple, kwargs: dict) -> tuple[tuple, dict]:
    if len(args) > _NAME_POSITION:
        args = (
            *args[:_NAME_POSITION],
            _scoped_name(args[_NAME_POSITION]),
            *args[_NAME_POSITION + 1 :],
        )
    else:
        kwargs = dict(kwargs, name=_scoped_name(kwargs.get("name")))
    return args, kwargs


def _creator_defaults() -> dict:
    params = inspect.signature(Variable.__init__).parameters
    return {name: params[name].default for name in _INIT_PARAMS}


def _chain(creator: Callable, next_creator: Callable) -> Callable:
    return lambda **kw: creator(next_creator, **kw)


def _as_enum(enum_cls, value, what: str):
    if isinstance(value, enum_cls):
        return value
    if isinstance(value, str) and value.upper() in enum_cls.__members__:
        return enum_cls[value.upper()]
    raise ValueError(
        f"Invalid {what} {value!r}; use one of "
        f"{', '.join(f'{enum_cls.__name__}.{m}' for m in enum_cls.__members__)}."
    )


class Variable(Trackable, metaclass=_VariableMeta):
    """A mutable tensor-like value (``tf.Variable``).

    >>> import simdist as tf
    >>> v = tf.Variable([1.0, 2.0])
    >>> v.assign_add([1.0, 1.0]).numpy()
    array([2., 3.], dtype=float32)
    """

    _autocast = False  # True: a mixed-precision layer's weight (see simdist.core.autocast)

    def __init__(
        self,
        initial_value=None,
        trainable=None,
        validate_shape=True,
        caching_device=None,
        name=None,
        variable_def=None,
        dtype=None,
        import_scope=None,
        constraint=None,
        synchronization=VariableSynchronization.AUTO,
        aggregation=VariableAggregation.NONE,
        shape=None,
        experimental_enable_variable_lifting=True,
    ) -> None:
        from simdist.core.context import mark_runtime_started
        from simdist.core.convert import convert_to_tensor

        mark_runtime_started()
        if initial_value is None:
            raise ValueError("initial_value must be specified (a value or a callable).")
        if callable(initial_value) and not isinstance(initial_value, Tensor):
            initial_value = initial_value()
        self._synchronization = _as_enum(
            VariableSynchronization, synchronization, "synchronization"
        )
        self._aggregation = _as_enum(VariableAggregation, aggregation, "aggregation")
        if trainable is None:
            trainable = self._synchronization is not VariableSynchronization.ON_READ
        elif trainable and self._synchronization is VariableSynchronization.ON_READ:
            raise ValueError(
                "Synchronization value can be set to VariableSynchronization.ON_READ only for "
                "non-trainable variables. You have specified trainable=True and "
                "synchronization=VariableSynchronization.ON_READ."
            )
        value = convert_to_tensor(initial_value, dtype=dtype)
        self._dtype = value.dtype
        self._value = np.array(value._value)  # a private, writable copy
        if shape is None:
            self._shape = TensorShape(self._value.shape) if validate_shape else TensorShape(None)
        else:
            self._shape = as_shape(shape)
            if not self._shape.is_compatible_with(self._value.shape):
                raise ValueError(
                    f"The initial value's shape {self._value.shape} is not compatible with the "
                    f"explicitly supplied `shape` argument {self._shape}."
                )
        self._trainable = bool(trainable)
        self._name = "Variable" if name is None else str(name)  # scoped by _VariableMeta
        if self._name.endswith(":0"):
            self._name = self._name[:-2]
        self._device = current_device()
        self._constraint = constraint
        self._id = new_id()

    # --- identity -----------------------------------------------------------------------
    @property
    def name(self) -> str:
        return f"{self._name}:0"

    @property
    def dtype(self) -> dtypes.DType:
        return self._dtype

    @property
    def shape(self) -> TensorShape:
        if self._shape.rank is None:
            return TensorShape(None)
        return TensorShape(self._value.shape)

    def get_shape(self) -> TensorShape:
        return self.shape

    @property
    def device(self) -> str:
        return self._device

    @property
    def trainable(self) -> bool:
        return self._trainable

    @property
    def synchronization(self) -> VariableSynchronization:
        return self._synchronization

    @property
    def aggregation(self) -> VariableAggregation:
        return self._aggregation

    @property
    def constraint(self):
        return self._constraint

    def ref(self) -> _Ref:
        return _Ref(self)

    experimental_ref = ref

    def __hash__(self) -> int:
        raise TypeError("Variable is unhashable. Instead, use variable.ref() as the key.")

    # --- reading ------------------------------------------------------------------------
    def value(self) -> Tensor:
        """The current value as a tensor that tapes trace back to this variable."""
        # No copy: the variable's array is never written in place (_write swaps in a new
        # array), so a read-only alias is a snapshot of the value at this read.
        out = Tensor(self._value, self._dtype, self._device)
        tapes = state.tapes
        if tapes:  # outside any tape a read records nothing
            for tape in tapes:
                tape._on_variable_read(self)
            record("ReadVariableOp", [_VariableHandle(self._id)], [out], _IDENTITY_VJPS)
        return out

    read_value = value

    def _to_tensor(self, dtype=None) -> Tensor:
        if dtype is not None and dtypes.as_dtype(dtype) != self._dtype:
            raise ValueError(
                f"Tensor conversion requested dtype {dtypes.as_dtype(dtype).name} for "
                f"variable {self.name} of dtype {self._dtype.name}; use tf.cast."
            )
        return self.value()

    def numpy(self):
        return self._value[()] if self._value.ndim == 0 else self._value.copy()

    def __array__(self, dtype=None, copy=None):
        return self._value.copy() if dtype is None else self._value.astype(dtype)

    # --- writing ------------------------------------------------------------------------
    def _checked_value(self, value, op: str) -> np.ndarray:
        from simdist.core.convert import convert_to_tensor

        try:
            t = convert_to_tensor(value, dtype=self._dtype)
        except ValueError as exc:
            raise ValueError(f"Cannot {op} to variable {self.name}: {exc}") from None
        if self._shape.rank is not None and t._value.shape != self._value.shape:
            raise ValueError(
                f"Cannot {op} to variable {self.name}: shape mismatch. The variable shape is "
                f"{TensorShape(self._value.shape)} and the assigned value shape is {t.shape}; "
                "they must be equal."
            )
        return t._value

    def _write(self, new: np.ndarray, read_value: bool):
        if self._constraint is not None:
            constrained = self._constraint(make_tensor(new, self._dtype))
            new = np.asarray(constrained, self._dtype.as_numpy_dtype)
        # A new array (or a read-only one nobody writes): never mutate self._value in place.
        self._value = np.asarray(new, dtype=self._dtype.as_numpy_dtype)
        return self if read_value else None

    def assign(self, value, use_locking=None, name=None, read_value=True):
        """Replace the value; shape and dtype must match. Returns the variable."""
        return self._write(self._checked_value(value, "assign"), read_value)

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        return self._write(self._value + self._checked_value(delta, "assign_add"), read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        return self._write(self._value - self._checked_value(delta, "assign_sub"), read_value)

    # --- the trackable protocol (simdist.core.trackable) ---------------------------------
    def _checkpoint_value(self) -> np.ndarray:
        """The one array a checkpoint stores (distributed variables: primary or aggregate)."""
        return np.asarray(self.numpy())

    def _serialize_to_tensors(self) -> dict[str, np.ndarray]:
        return {VARIABLE_VALUE: np.array(self._checkpoint_value(), self.dtype.as_numpy_dtype)}

    def _validate_restore(self, tensors: dict[str, np.ndarray]) -> None:
        value = tensors[VARIABLE_VALUE]
        if np.dtype(self.dtype.as_numpy_dtype) != value.dtype:
            raise ValueError(
                f"the checkpoint holds dtype {value.dtype.name}, variable {self.name} has "
                f"dtype {self.dtype.name}. Create the variable with the saved dtype."
            )
        shape = self.shape
        if shape.rank is not None and tuple(shape.as_list()) != value.shape:
            raise ValueError(
                f"the checkpoint holds shape {value.shape}, variable {self.name} has shape "
                f"{tuple(shape.as_list())}. Build the model the same way as the one that "
                "was saved (same layer sizes and input shape)."
            )

    def _restore_from_tensors(self, tensors: dict[str, np.ndarray]) -> None:
        self.assign(tensors[VARIABLE_VALUE])  # a distributed variable writes every copy

    # --- printing -----------------------------------------------------------------------
    def __repr__(self) -> str:
        return (
            f"<tf.Variable '{self.name}' shape={self.shape} dtype={self._dtype.name}, "
            f"numpy={_numpy_text(self._value, is_repr=True)}>"
        )

    def __format__(self, spec: str) -> str:
        return self.numpy().__format__(spec)

    def __bool__(self) -> bool:
        return bool(self.value())

    def __float__(self) -> float:
        return float(self.value())

    def __int__(self) -> int:
        return int(self.value())

    def __index__(self) -> int:
        return self.value().__index__()

    def __len__(self) -> int:
        return len(self.value())

    def __iter__(self):
        return iter(self.value())


def _identity_vjp(dy):
    return dy


_IDENTITY_VJPS = (_identity_vjp,)  # a read's one vjp, shared by every read


class ResourceVariable(Variable):
    """What ``tf.Variable(...)`` makes, as in TF (``type(v).__name__ == "ResourceVariable"``);
    ``isinstance(v, tf.Variable)`` holds."""


class _VariableHandle:
    """Stands in for a variable as the input of the ReadVariableOp the tape records."""

    __slots__ = ("_id",)

    def __init__(self, variable_id: int) -> None:
        self._id = variable_id
