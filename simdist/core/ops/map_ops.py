"""``tf.map_fn`` and ``tf.vectorized_map``: a function applied to each slice along axis 0.

``map_fn`` follows TF's eager rules. ``elems`` is a tensor or a nested structure of them
(a Python list is a structure, not a tensor); each is unstacked along its first axis, which
must have one length for all, and ``fn`` gets slice ``i`` in the structure of ``elems``.
What ``fn`` returns must match ``fn_output_signature`` (a DType, a TensorSpec, or a
structure of them; ``dtype`` is its older name), which defaults to the structure and
dtypes of ``elems``: a result of another structure is a ``ValueError``, a tensor of another
dtype an ``InvalidArgumentError``, and Python numbers are converted to the signature's
dtype. Each output is the results stacked along a new axis 0 (their shapes must agree).
The slicing and stacking are ops of the core, so gradients flow to ``elems`` and to any
variable ``fn`` reads.

``vectorized_map`` computes what ``map_fn`` does (simdist has no vectorising compiler, so it
loops); its output signature is whatever ``fn`` returns for the first slice, and an output
that does not depend on the slice is broadcast, as TF's ``pfor`` does.
"""

from __future__ import annotations

import numpy as np

from simdist import errors
from simdist.core import dtypes, nest
from simdist.core.convert import convert_to_tensor
from simdist.core.ops.join_ops import stack, unstack
from simdist.core.tensor import Tensor, make_tensor
from simdist.core.tensor_spec import TensorSpec

__all__ = ["map_fn", "vectorized_map"]


def _slices(elems) -> tuple[list[Tensor], list[list[Tensor]], int]:
    """``elems`` flattened, each as its list of slices along axis 0, and their count."""
    flat = [convert_to_tensor(e) for e in nest.flatten(elems)]
    if not flat:
        raise ValueError("elems must be a Tensor or a (possibly nested) sequence of Tensors.")
    for t in flat:
        if t._value.ndim == 0:
            raise ValueError("Elements in elems must be 1+ dimensional Tensors, not scalars")
    count = flat[0]._value.shape[0]
    for t in flat[1:]:
        if t._value.shape[0] != count:
            raise ValueError(
                f"Dimensions {count} and {t._value.shape[0]} are not compatible: every tensor "
                "of elems must have the same first dimension."
            )
    return flat, [unstack(t) for t in flat], count


def _spec_dtype(spec) -> dtypes.DType:
    return spec.dtype if isinstance(spec, TensorSpec) else dtypes.as_dtype(spec)


def _check_result(result, signature, iteration: int) -> list[Tensor]:
    nest.assert_same_structure(signature, result, check_types=False)
    out = []
    for value, spec in zip(nest.flatten(result), nest.flatten(signature), strict=True):
        dtype = _spec_dtype(spec)
        if isinstance(value, Tensor) or hasattr(value, "_to_tensor"):
            tensor = convert_to_tensor(value)
            if tensor.dtype != dtype:
                raise errors.InvalidArgumentError(
                    f"TensorArray dtype is {dtype.name} but Op is trying to write dtype "
                    f"{tensor.dtype.name}; fn returned a {tensor.dtype.name} tensor for "
                    "output of this signature (pass fn_output_signature=)."
                )
        else:
            tensor = convert_to_tensor(value, dtype=dtype)
        if isinstance(spec, TensorSpec) and not spec.shape.is_compatible_with(tensor.shape):
            raise ValueError(
                f"Incompatible shape for value ({tuple(tensor.shape)}), expected "
                f"({tuple(spec.shape)}) at iteration {iteration}."
            )
        out.append(tensor)
    return out


def map_fn(
    fn,
    elems,
    dtype=None,
    parallel_iterations=None,
    back_prop=True,
    swap_memory=False,
    infer_shape=True,
    name=None,
    fn_output_signature=None,
):
    """``fn`` applied to each slice of ``elems`` along axis 0, the results stacked.

    >>> import simdist as tf
    >>> tf.map_fn(lambda x: x * x, tf.constant([1, 2, 3])).numpy()
    array([1, 4, 9], dtype=int32)
    >>> tf.map_fn(lambda t: t[0] * t[1], (tf.constant([1., 2.]), tf.constant([3., 4.])),
    ...           fn_output_signature=tf.float32).numpy()
    array([3., 8.], dtype=float32)

    Raises:
        ValueError: a scalar in ``elems``, first dimensions that differ, a result of another
            structure than the signature, or results of different shapes.
        InvalidArgumentError: a result tensor of another dtype than the signature's.
    """
    signature = fn_output_signature if fn_output_signature is not None else dtype
    flat, slices, count = _slices(elems)
    if signature is None:
        signature = nest.pack_sequence_as(elems, [t.dtype for t in flat])
    results: list[list[Tensor]] = []
    for i in range(count):
        piece = nest.pack_sequence_as(elems, [s[i] for s in slices])
        results.append(_check_result(fn(piece), signature, i))
    stacked = [_stack_outputs([r[k] for r in results], spec, count)
               for k, spec in enumerate(nest.flatten(signature))]  # fmt: skip
    return nest.pack_sequence_as(signature, stacked)


def _stack_outputs(values: list[Tensor], spec, count: int) -> Tensor:
    if count == 0:
        dtype = _spec_dtype(spec)
        known = isinstance(spec, TensorSpec) and spec.shape.is_fully_defined()
        shape = (0,) + (tuple(spec.shape.as_list()) if known else ())
        return make_tensor(np.zeros(shape, dtype._np), dtype)
    first = tuple(values[0].shape)
    for v in values[1:]:
        if tuple(v.shape) != first:
            raise ValueError(
                f"Incompatible shape for value ({tuple(v.shape)}), expected ({first}): every "
                "result of fn must have the same shape."
            )
    return stack(values)


def vectorized_map(fn, elems, fallback_to_while_loop=True, warn=True):
    """``fn`` applied to each slice of ``elems`` along axis 0 (a loop here; TF vectorises).

    >>> import simdist as tf
    >>> tf.vectorized_map(lambda row: tf.reduce_sum(row), tf.constant([[1., 2.], [3., 4.]])).numpy()
    array([3., 7.], dtype=float32)

    Raises:
        ValueError: as ``map_fn``.
    """
    flat, slices, count = _slices(elems)
    outputs: list[list[Tensor]] = []
    structure = None
    for i in range(count):
        result = fn(nest.pack_sequence_as(elems, [s[i] for s in slices]))
        if structure is None:
            structure = result
        nest.assert_same_structure(structure, result, check_types=False)
        outputs.append([convert_to_tensor(v) for v in nest.flatten(result)])
    if structure is None:
        raise ValueError("vectorized_map of elems with a first dimension of 0 is not supported.")
    stacked = [_stack_outputs([o[k] for o in outputs], None, count)
               for k in range(len(outputs[0]))]  # fmt: skip
    return nest.pack_sequence_as(structure, stacked)
