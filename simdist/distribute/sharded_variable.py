"""``ShardedVariable``: shards of one variable (split along axis 0) that act as one variable.

Reading concatenates the shards (gradients flow back to each shard, and to the sharded
variable itself); ``assign``/``assign_add``/``assign_sub`` take a value of the full shape
and write each shard its rows; a checkpoint saves the full value under the variable's
name, so a checkpoint restores into any sharding, or into an unsharded variable, and back.

>>> import simdist as tf
>>> v = ShardedVariable([tf.Variable([[1.0, 2.0], [3.0, 4.0]]), tf.Variable([[5.0, 6.0]])])
>>> v.shape, [s.shape for s in v.variables]
(TensorShape([3, 2]), [TensorShape([2, 2]), TensorShape([1, 2])])
>>> embedding_lookup(v, [2, 0]).numpy()
array([[5., 6.],
       [1., 2.]], dtype=float32)

Where simdist differs from TF, on purpose: ``isinstance(v, tf.Variable)`` is True, so
``tape.watch(v)`` and ``tape.gradient(loss, v)`` work (TF raises for a sharded source and
wants ``v.variables``; both work here), and ``name`` defaults to the variable's name rather
than the literal ``"ShardedVariable"`` (so checkpoint keys equal the unsharded twin's).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from simdist import errors
from simdist.core import dtypes
from simdist.core.context import state
from simdist.core.convert import convert_to_tensor
from simdist.core.shape import TensorShape
from simdist.core.tape import record
from simdist.core.tensor import Tensor, make_tensor, new_id
from simdist.core.variables import Variable, _identity_vjp, _VariableHandle

__all__ = ["ShardedVariable", "embedding_lookup"]


class ShardedVariable(Variable):
    """A list of variables treated as row blocks of one larger variable.

    Args:
        variables: the shards, in row order: same dtype, same shape after axis 0.
        name: the name of the whole (default ``"ShardedVariable"``, as TF).

    Raises:
        TypeError: ``variables`` is empty or holds something other than variables.
        ValueError: the shards' dtypes differ, or their shapes differ after axis 0.
    """

    def __init__(self, variables: Sequence[Variable], name: str = "ShardedVariable") -> None:
        # Deliberately not Variable.__init__: the state lives in the shards.
        if (
            not isinstance(variables, Sequence)
            or not variables
            or any(not isinstance(v, Variable) for v in variables)
        ):
            raise TypeError(
                "Argument `variables` should be a non-empty list of `variables.Variable`s. "
                f"Received {variables}"
            )
        if len({v.dtype for v in variables}) > 1:
            raise ValueError(
                "All elements in argument `variables` must have the same dtype. "
                f"Received dtypes: {[v.dtype for v in variables]}"
            )
        tails = {tuple(v.shape.as_list()[1:]) for v in variables}
        if len(tails) > 1 or any(v.shape.rank in (None, 0) for v in variables):
            raise ValueError(
                "All elements in argument `variables` must have the same shapes except for "
                f"the first axis. Received shapes: {[v.shape for v in variables]}"
            )
        self._variables = list(variables)
        self._sv_name = str(name)
        rows = [int(v.shape[0]) for v in variables]
        self._offsets = np.concatenate([[0], np.cumsum(rows)]).astype(int).tolist()
        self._full_shape = TensorShape([self._offsets[-1], *variables[0].shape.as_list()[1:]])
        self._id = new_id()
        self._strategy = getattr(variables[0], "distribute_strategy", None)

    # --- what it is ------------------------------------------------------------------------
    @property
    def variables(self) -> list[Variable]:
        """The shards, in row order."""
        return self._variables

    @property
    def name(self) -> str:
        return self._sv_name

    dtype = property(lambda self: self._variables[0].dtype)
    shape = property(lambda self: self._full_shape)
    trainable = property(lambda self: self._variables[0].trainable)
    synchronization = property(lambda self: self._variables[0].synchronization)
    aggregation = property(lambda self: self._variables[0].aggregation)
    constraint = property(lambda self: None)
    device = property(lambda self: self._variables[0].device)

    @property
    def distribute_strategy(self):
        return self._strategy

    def get_shape(self) -> TensorShape:
        return self._full_shape

    def __iter__(self):
        """The shards (as TF: iterating a sharded variable yields its variables)."""
        return iter(self._variables)

    def __len__(self) -> int:
        return self._offsets[-1]

    def __repr__(self) -> str:
        shards = ", ".join(f"{v.name} {v.shape.as_list()}" for v in self._variables)
        return (
            f"<ShardedVariable '{self.name}' shape={self.shape} dtype={self.dtype.name}, "
            f"{len(self._variables)} shards: {shards}>"
        )

    # --- reading ---------------------------------------------------------------------------
    def value(self) -> Tensor:
        """The full value (the shards concatenated); tapes reach the shards and this object."""
        parts = [convert_to_tensor(v) for v in self._variables]
        out = make_tensor(
            np.concatenate([p._value for p in parts], axis=0), self.dtype, self.device
        )
        vjps = [self._slice_vjp(i) for i in range(len(parts))] + [_identity_vjp]
        record("ReadShardedVariable", [*parts, _VariableHandle(self._id)], [out], vjps)
        return out

    read_value = value

    def _slice_vjp(self, i: int):
        lo, hi = self._offsets[i], self._offsets[i + 1]
        return lambda dy: dy[lo:hi]

    def _to_tensor(self, dtype=None) -> Tensor:
        if dtype is not None and dtypes.as_dtype(dtype) != self.dtype:
            raise ValueError(
                f"Incompatible type conversion requested to type {dtypes.as_dtype(dtype).name!r} "
                f"for variable of type {self.dtype.name!r}"
            )
        return self.value()

    @property
    def _value(self) -> np.ndarray:
        return np.concatenate([np.asarray(v) for v in self._variables], axis=0)

    def numpy(self):
        return self._value

    def __array__(self, dtype=None, copy=None):
        return self._value if dtype is None else self._value.astype(dtype)

    def _checkpoint_value(self) -> np.ndarray:
        """The full value, saved as one variable."""
        parts = [getattr(v, "_checkpoint_value", lambda v=v: np.asarray(v))() for v in self]
        return np.concatenate(parts, axis=0)

    # --- writing ---------------------------------------------------------------------------
    def _split(self, value, op: str) -> list[np.ndarray]:
        array = convert_to_tensor(value, dtype=self.dtype)._value
        if tuple(array.shape) != tuple(self._full_shape.as_list()):
            raise errors.InvalidArgumentError(
                f"Cannot {op} a value of shape {list(array.shape)} to ShardedVariable "
                f"{self.name} of shape {self._full_shape.as_list()}: the value must have the "
                "variable's full shape (each shard takes its rows)."
            )
        bounds = zip(self._offsets[:-1], self._offsets[1:], strict=True)
        return [array[lo:hi] for lo, hi in bounds]

    def _write_shards(self, op: str, value, read_value: bool):
        pieces = self._split(value, op)
        for shard, piece in zip(self._variables, pieces, strict=True):
            getattr(shard, op)(piece, read_value=False)
        return self if read_value else None

    def assign(self, value, use_locking=None, name=None, read_value=True):
        return self._write_shards("assign", value, read_value)

    def assign_add(self, delta, use_locking=None, name=None, read_value=True):
        return self._write_shards("assign_add", delta, read_value)

    def assign_sub(self, delta, use_locking=None, name=None, read_value=True):
        return self._write_shards("assign_sub", delta, read_value)

    def _write(self, new, read_value: bool):
        return self._write_shards("assign", new, read_value)


def embedding_lookup(params, ids, max_norm=None, name=None) -> Tensor:
    """Rows ``ids`` of ``params`` (a tensor, variable or ``ShardedVariable``), gathering each
    id from the shard that holds it; gradients reach only the shards that were read.

    Raises:
        InvalidArgumentError: an id outside ``[0, rows)``.
    """
    if max_norm is not None:
        raise errors.UnimplementedError("embedding_lookup(max_norm=...) is not supported.")
    ids_t = convert_to_tensor(ids)
    flat = np.asarray(ids_t._value).reshape(-1).astype(np.int64)
    if not isinstance(params, ShardedVariable):
        from simdist.core.ops.slicing_ops import gather

        return gather(params, ids_t)
    rows = params._offsets[-1]
    bad = flat[(flat < 0) | (flat >= rows)]
    if bad.size:
        raise errors.InvalidArgumentError(
            f"indices[{int(np.flatnonzero((flat < 0) | (flat >= rows))[0])}] = {int(bad[0])} "
            f"is not in [0, {rows})"
        )
    shard_of = np.searchsorted(np.asarray(params._offsets[1:]), flat, side="right")
    tail = params.shape.as_list()[1:]
    out = np.empty((flat.size, *tail), params.dtype.as_numpy_dtype)
    used, parts = [], []
    for i, shard in enumerate(params.variables):
        mask = shard_of == i
        if not mask.any():
            continue
        part = convert_to_tensor(shard)
        out[mask] = part._value[flat[mask] - params._offsets[i]]
        used.append((i, mask))
        parts.append(part)
    result = make_tensor(out.reshape((*ids_t.shape.as_list(), *tail)), params.dtype)

    def shard_vjp(i: int, mask: np.ndarray, shape: tuple):
        def vjp(dy):
            grad = np.zeros(shape, dy.dtype)
            np.add.at(grad, flat[mask] - params._offsets[i], dy.reshape((flat.size, *tail))[mask])
            return grad

        return vjp

    vjps = [
        shard_vjp(i, mask, tuple(p._value.shape)) for (i, mask), p in zip(used, parts, strict=True)
    ]
    if state.tapes:
        record("ShardedEmbeddingLookup", parts, [result], vjps)
    return result
