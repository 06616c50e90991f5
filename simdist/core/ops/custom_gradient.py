"""``tf.custom_gradient`` and ``tf.recompute_grad``: a function whose gradient you write.

``@tf.custom_gradient`` wraps ``f(*args) -> (y, grad_fn)``. Calling the wrapped function
runs ``f`` (its own ops are recorded as usual, but lead nowhere), then gives each output of
``y`` a fresh tensor that the tapes connect to the inputs through one op whose gradient is
``grad_fn(*dys)``: one gradient per flattened argument, in order (None for none). Variables
``f`` reads that are not among its arguments are found as TF's ``VariableWatcher`` finds
them (in the order they were first read); ``grad_fn`` must then accept ``variables=`` and
return ``(input_grads, variable_grads)``, one per variable. Upstream gradients an output did
not get are zeros. ``grad_fn`` runs with the enclosing tapes paused (simdist does not record
gradients), so a tape it opens itself works, which is how ``recompute_grad`` recomputes
``f`` under a tape of its own in the backward pass instead of keeping ``f``'s activations.

Replica threads under ``strategy.run`` each have their own tapes, so this works there as
it does outside a strategy.

Raises, as TF: ``TypeError`` when ``f`` reads variables and ``grad_fn`` takes no
``variables``; ``ValueError`` when ``grad_fn`` returns the wrong number of gradients.
"""

from __future__ import annotations

import functools
import inspect

import numpy as np

from simdist.core import nest
from simdist.core.context import state
from simdist.core.convert import convert_to_tensor
from simdist.core.tape import GradientTape, record_joint
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["custom_gradient", "recompute_grad"]


def _accepts_variables(grad_fn) -> bool:
    try:
        params = inspect.signature(grad_fn).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.name == "variables" or p.kind is p.VAR_KEYWORD for p in params)


class _PausedTapes:
    """The thread's tapes stop recording in the block (restored after), all of them or all
    but the innermost (``recompute_grad``'s forward pass keeps the variable watcher)."""

    def __init__(self, keep_innermost: bool = False) -> None:
        self._keep = keep_innermost

    def __enter__(self) -> None:
        tapes = state.tapes[:-1] if self._keep else state.tapes
        self._was = [(t, t._recording) for t in tapes]
        for tape, _ in self._was:
            tape._recording = False

    def __exit__(self, *exc) -> None:
        for tape, was in self._was:
            tape._recording = was


def _as_array(grad, like: Tensor):
    if grad is None:
        return None
    return np.asarray(convert_to_tensor(grad, dtype=like.dtype)._value).reshape(like._value.shape)


def _call_with_custom_gradient(f, args, kwargs):
    watcher = GradientTape(watch_accessed_variables=True)
    with watcher:
        result, grad_fn = f(*args, **kwargs)
    flat_args = nest.flatten(args)
    variables = [v for v in watcher.watched_variables() if all(v is not a for a in flat_args)]
    if variables and not _accepts_variables(grad_fn):
        raise TypeError(
            "@tf.custom_gradient grad_fn must accept keyword argument 'variables', since "
            f"function uses variables: {variables}"
        )
    inputs = [convert_to_tensor(a) for a in flat_args]
    # read after f, as TF converts them: the enclosing tapes see the reads and watch them
    variable_reads = [v.value() for v in variables]
    flat_result = [convert_to_tensor(r) for r in nest.flatten(result)]
    outputs = [make_tensor(r._value, r._dtype, r._device) for r in flat_result]
    arg_count = len(inputs)

    def vjp(wanted, *dys):
        upstream = [make_tensor(d, o._dtype) for d, o in zip(dys, outputs, strict=True)]
        with _PausedTapes():
            if variables:
                input_grads, variable_grads = grad_fn(*upstream, variables=variables)
                variable_grads = list(variable_grads)
                if len(variable_grads) != len(variables):
                    raise ValueError(
                        "Must return gradient for each variable from @custom_gradient grad_fn."
                    )
            else:
                input_grads, variable_grads = grad_fn(*upstream), []
        flat_grads = nest.flatten(input_grads)
        if len(flat_grads) != arg_count:
            raise ValueError(
                f"custom_gradient function expected to return {arg_count} gradients, but "
                f"returned {len(flat_grads)} instead."
            )
        grads = [_as_array(g, t) for g, t in zip(flat_grads, inputs, strict=True)]
        grads += [_as_array(g, r) for g, r in zip(variable_grads, variable_reads, strict=True)]
        return grads

    name = getattr(f, "__name__", "CustomGradient")
    record_joint(name, inputs + variable_reads, outputs, vjp)
    return nest.pack_sequence_as(result, outputs)


class _CustomGradient:
    """What ``@tf.custom_gradient`` returns: a callable, and a method when bound."""

    def __init__(self, f) -> None:
        self._f = f
        functools.update_wrapper(self, f)

    def __call__(self, *args, **kwargs):
        return _call_with_custom_gradient(self._f, args, kwargs)

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        return _CustomGradient(self._f.__get__(instance, owner))


def custom_gradient(f=None):
    """Decorate ``f(*args) -> (y, grad_fn)`` so that tapes use ``grad_fn`` for its gradient.

    >>> import simdist as tf
    >>> @tf.custom_gradient
    ... def log1pexp(x):
    ...     e = tf.exp(x)
    ...     def grad(upstream):
    ...         return upstream * (1 - 1 / (1 + e))
    ...     return tf.math.log(1 + e), grad
    >>> x = tf.constant(100.0)
    >>> with tf.GradientTape() as tape:
    ...     tape.watch(x)
    ...     y = log1pexp(x)
    >>> float(tape.gradient(y, x))
    1.0
    """
    if f is None:
        return custom_gradient
    return _CustomGradient(f)


def recompute_grad(f):
    """``f`` with its gradient recomputed in the backward pass (TF's tape checkpointing):
    the forward pass keeps only the inputs, and the gradient reruns ``f`` under a tape."""

    @custom_gradient
    def wrapped(*args):
        with _PausedTapes(keep_innermost=True):  # custom_gradient's watcher sees variables
            result = f(*args)

        def grad_fn(*dys, variables=None):
            with GradientTape(watch_accessed_variables=True) as tape:
                tensors = [convert_to_tensor(a) for a in args]
                tape.watch(tensors)
                again = f(*nest.pack_sequence_as(list(args), tensors))
            sources = tensors + list(variables or [])
            grads = tape.gradient(again, sources, output_gradients=list(dys))
            input_grads = grads[: len(tensors)]
            return (input_grads, grads[len(tensors) :]) if variables else input_grads

        return result, grad_fn

    return functools.wraps(f)(lambda *args, **kwargs: wrapped(*args, **kwargs))
