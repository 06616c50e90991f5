"""Control flow: ``cond``, ``while_loop`` and ``control_dependencies``, run eagerly (no graphs).

TF runs these eagerly outside ``tf.function`` too: ``cond`` calls the branch the predicate
picks and returns what it returns; ``while_loop`` calls ``body`` while ``cond`` holds.
simdist does the same everywhere, so gradients flow through whichever branch or iterations
ran, recorded on the tape op by op, as TF's eager gradients do.

What a graph would also check, simdist checks inside ``tf.function`` too, so that code
that passes here does not fail when TF traces it: a ``while_loop`` variable must keep its
dtype and (unless ``shape_invariants`` relaxes it) its shape across iterations. Where TF's
tracing differs and simdist does not imitate it (documented in docs/differences.md): a
``cond`` inside ``tf.function`` runs one branch only, so a branch that would fail to trace
(or return another structure than the other branch) goes unnoticed while it is not taken.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable

import numpy as np

from simdist.core import nest
from simdist.core.convert import convert_to_tensor
from simdist.core.function import inside_function
from simdist.core.shape import TensorShape
from simdist.core.tensor import Tensor

__all__ = ["cond", "while_loop", "control_dependencies"]


def _truth(pred) -> bool:
    """The predicate's value, as TF's eager cond reads it (a scalar, any dtype)."""
    value = convert_to_tensor(pred)._value
    if value.size != 1 or value.ndim > 1:
        raise ValueError(
            f"The truth value of an array with more than one element is ambiguous: cond's "
            f"predicate has shape {list(value.shape)}; reduce it (tf.reduce_all / "
            "tf.reduce_any) to a scalar first."
        )
    return bool(np.asarray(value).reshape(()))


def cond(pred, true_fn: Callable | None = None, false_fn: Callable | None = None, name=None):
    """``true_fn()`` if ``pred`` else ``false_fn()`` (``tf.cond``).

    >>> import simdist as tf
    >>> tf.cond(tf.constant(2) > 1, lambda: "yes", lambda: "no")
    'yes'

    Args:
        pred: a scalar (bool tensor, Python bool or number).
        true_fn: called when ``pred`` is true.
        false_fn: called when ``pred`` is false.

    Returns:
        What the called branch returns, as it returns it (TF 2's cond is strict: a
        one-element list stays a list).

    Raises:
        TypeError: a branch missing or not callable.
        ValueError: a predicate with more than one element.
    """
    for label, fn in (("true_fn", true_fn), ("false_fn", false_fn)):
        if fn is None:
            raise TypeError(f"cond(): '{label}' argument required")
        if not callable(fn):
            raise TypeError(f"'{label}' must be callable.")
    return true_fn() if _truth(pred) else false_fn()


def _as_loop_value(value):
    """Loop variables become tensors, as in TF: numbers, arrays and variables (read) are
    converted; a tensor, or anything else (a TensorArray), stays itself."""
    if isinstance(value, Tensor):
        return value
    if hasattr(value, "_to_tensor") or isinstance(value, (bool, int, float, np.ndarray, np.number)):
        return convert_to_tensor(value)
    return value


def _check_iteration(before: list, after: list, invariants: list | None, step: int) -> None:
    """Inside ``tf.function``: what TF's graph checks (dtype kept; shape kept or relaxed)."""
    for i, (old, new) in enumerate(zip(before, after, strict=True)):
        if not (isinstance(old, Tensor) and isinstance(new, Tensor)):
            continue
        if old.dtype != new.dtype:
            raise TypeError(
                f"Loop var {i} enters the loop with type {old.dtype!r}, but has type "
                f"{new.dtype!r} after {step} iteration(s); a while_loop variable must keep its "
                "dtype (tf.cast it in the body)."
            )
        allowed = TensorShape(old.shape) if invariants is None else invariants[i]
        if not allowed.is_compatible_with(new.shape):
            raise ValueError(
                f"Input tensor {i} enters the loop with shape {tuple(old.shape)}, but has "
                f"shape {tuple(new.shape)} after {step} iteration(s). To allow the shape to "
                "vary across iterations, use the `shape_invariants` argument of "
                "tf.while_loop to specify a less-specific shape."
            )


def while_loop(
    cond: Callable,
    body: Callable,
    loop_vars,
    shape_invariants=None,
    parallel_iterations=10,
    back_prop=True,
    swap_memory=False,
    maximum_iterations=None,
    name=None,
):
    """Repeat ``loop_vars = body(*loop_vars)`` while ``cond(*loop_vars)`` (``tf.while_loop``).

    >>> import simdist as tf
    >>> float(tf.while_loop(lambda i, s: i < 3, lambda i, s: (i + 1, s * 2.0), (0, 1.0))[1])
    8.0

    Args:
        cond: returns a scalar predicate from the loop variables.
        body: returns new loop variables, of the same structure.
        loop_vars: a list or tuple (possibly nested) of tensors, numbers or TensorArrays.
        shape_invariants: per loop variable, the shapes allowed (checked in tf.function).
        maximum_iterations: stop after this many iterations even if ``cond`` holds.

    Returns:
        The loop variables after the last iteration, in the structure ``body`` returns.

    Raises:
        TypeError: ``cond`` or ``body`` not callable; inside tf.function, a loop variable
            that changes dtype.
        ValueError: no loop variables; a body result of another structure; inside
            tf.function, a shape that changes outside its invariant.
    """
    if not callable(cond):
        raise TypeError("'cond' must be callable.")
    if not callable(body):
        raise TypeError("'body' must be callable.")
    if isinstance(loop_vars, Tensor) or not isinstance(loop_vars, (list, tuple)):
        raise TypeError(
            f"'loop_vars' must be a list or tuple of loop variables, got {type(loop_vars)}; "
            "wrap a single one: loop_vars=[x] (and return [x] or (x,) from body)."
        )
    if not loop_vars:
        raise ValueError("'loop_vars' must be provided.")
    if maximum_iterations is not None:
        limit = convert_to_tensor(maximum_iterations)._value
        if limit.ndim != 0:
            raise ValueError(
                f"maximum_iterations must be a scalar, saw shape: {list(limit.shape)}"
            )
        maximum_iterations = int(limit)
    invariants = None
    if shape_invariants is not None:
        invariants = [TensorShape(s) for s in nest.flatten(shape_invariants)]
    structure = loop_vars
    loop_vars = nest.map_structure(_as_loop_value, loop_vars)
    check = inside_function()
    steps = 0
    while maximum_iterations is None or steps < maximum_iterations:
        if not _truth(cond(*loop_vars)):
            break
        result = body(*loop_vars)
        if not isinstance(result, (list, tuple)):
            raise TypeError(
                f"while_loop's body must return a list or tuple like loop_vars, got "
                f"{type(result).__name__}; for one loop variable return [x] or (x,)."
            )
        try:
            nest.assert_same_structure(list(structure), list(result), check_types=False)
        except (TypeError, ValueError) as error:
            raise ValueError(
                f"The two structures don't have the same nested structure: loop_vars "
                f"{structure!r} and what body returned, {result!r} ({error}); body must "
                "return one value per loop variable, nested as loop_vars."
            ) from None
        result = nest.map_structure(_as_loop_value, result)
        steps += 1
        if check:
            _check_iteration(nest.flatten(loop_vars), nest.flatten(result), invariants, steps)
        loop_vars = result
    return loop_vars


def control_dependencies(control_inputs):
    """A context that orders nothing (``tf.control_dependencies``, as TF runs it eagerly).

    Eagerly every op has already run when the next one starts, so there is nothing to order;
    as in TF, callables among ``control_inputs`` are called now. An assertion inside it
    (``tf.debugging.assert_equal`` returns None eagerly) has raised already if it failed.
    """
    for control in control_inputs or ():
        if callable(control):
            control()
    return contextlib.nullcontext()
