"""Reverse-mode autodiff: ``GradientTape``, op recording, ``stop_gradient``.

An op that computes ``outputs`` from ``inputs`` calls :func:`record` with one
vector-Jacobian product (vjp) per input: ``vjp(dy) -> dx`` as NumPy arrays, the forward rule
and its gradient rule side by side in the op's module (a fused op whose input gradients
share work calls :func:`record_joint` with one vjp for all its inputs). Each active tape on
the thread keeps the ops that touch a watched tensor, in execution order; ``gradient`` walks
them backwards, which is a topological order by construction (no sort, no recursion, no
dependence on object ids), and calls only the vjps of inputs that lead to a requested
source.

Gradients are computed in NumPy and are not themselves recorded: a nested tape cannot
differentiate through ``gradient`` (higher-order gradients). Trying raises
``UnimplementedError`` at the outer tape's ``gradient`` call instead of a silent zero.
"""

from __future__ import annotations

import enum
from collections.abc import Callable, Sequence

import numpy as np

from simdist import errors
from simdist.core import nest, profile_hook
from simdist.core.context import state
from simdist.core.tensor import Tensor, make_tensor

__all__ = ["GradientTape", "UnconnectedGradients", "record", "record_joint", "stop_gradient"]

Vjp = Callable[..., "np.ndarray | None"]
JointVjp = Callable[..., "Sequence[np.ndarray | None]"]


class UnconnectedGradients(enum.Enum):
    """What ``gradient`` returns for a source the target does not depend on."""

    NONE = "none"
    ZERO = "zero"


class _Node:
    """One recorded op: which ids went in and out, and how to pull a gradient back."""

    __slots__ = ("name", "input_ids", "output_ids", "output_meta", "vjps", "joint")

    def __init__(self, name, input_ids, output_ids, output_meta, vjps, joint=None) -> None:
        self.name = name
        self.input_ids = input_ids
        self.output_ids = output_ids
        # (shape, numpy dtype) per output, to build zeros for the outputs that got no
        # gradient; None for a one-output op (the backward walk skips it when its one output
        # has no gradient, so it never needs zeros).
        self.output_meta = output_meta
        self.vjps = vjps  # one per input, or None when ``joint`` computes them all at once
        self.joint = joint


def _is_differentiable(dtype) -> bool:
    return dtype.is_floating


def record(
    name: str, inputs: Sequence[Tensor], outputs: Sequence[Tensor], vjps: Sequence[Vjp | None]
) -> None:
    """Record an op on every active tape that watches one of its inputs.

    Args:
        name: the op's name, shown in errors.
        inputs: the op's tensor inputs (variables already read into tensors).
        outputs: the tensors the op produced.
        vjps: one per input: ``vjp(*dys) -> dx`` (an array of the input's shape) or ``None``
            when the input gets no gradient (an integer index, a shape).
    """
    if state.tapes:
        _record(name, inputs, outputs, tuple(vjps), None)


def record_joint(
    name: str, inputs: Sequence[Tensor], outputs: Sequence[Tensor], vjp: JointVjp
) -> None:
    """Record an op whose input gradients share work, computed by one call.

    Args:
        name: the op's name, shown in errors.
        inputs: the op's tensor inputs.
        outputs: the tensors the op produced.
        vjp: ``vjp(wanted, *dys) -> grads``: ``wanted`` holds one bool per input (does the
            tape need that input's gradient?); ``grads`` one array or ``None`` per input.
            A fused op (conv + bias + relu) computes the relu-masked gradient once for all.
    """
    if state.tapes:
        _record(name, inputs, outputs, None, vjp)


def _record(name, inputs, outputs, vjps, joint) -> None:
    input_ids = tuple([t._id for t in inputs])
    node = None
    for tape in state.tapes:
        if not tape._recording:
            continue
        watched = tape._watched
        if watched.isdisjoint(input_ids):  # no input is watched by this tape
            continue
        if node is None:
            node = _Node(
                name,
                input_ids,
                tuple([t._id for t in outputs]),
                tuple([(t._value.shape, t._value.dtype) for t in outputs])
                if len(outputs) > 1
                else None,
                vjps,
                joint,
            )
        tape._nodes.append(node)
        for out in outputs:
            if out._dtype.is_floating:  # _is_differentiable, inlined: once per op output
                watched.add(out._id)


def stop_gradient(x) -> Tensor:
    """The same value, seen by every tape as a constant."""
    from simdist.core.convert import convert_to_tensor

    x = convert_to_tensor(x)
    return make_tensor(x._value, x._dtype, x._device)


class GradientTape:
    """Records ops for reverse-mode differentiation (``tf.GradientTape``).

    >>> import simdist as tf
    >>> x = tf.Variable(3.0)
    >>> with tf.GradientTape() as tape:
    ...     y = x * x
    >>> float(tape.gradient(y, x))
    6.0
    """

    def __init__(self, persistent: bool = False, watch_accessed_variables: bool = True) -> None:
        self._persistent = persistent
        self._watch_accessed_variables = watch_accessed_variables
        self._nodes: list[_Node] = []
        self._watched: set[int] = set()
        self._watched_variables: list = []
        self._recording = False
        self._used = False

    def __enter__(self) -> GradientTape:
        if self in state.tapes:
            raise ValueError("This GradientTape is already recording; do not enter it twice.")
        state.tapes.append(self)
        self._recording = True
        return self

    def __exit__(self, *exc) -> None:
        self._recording = False
        if self in state.tapes:
            state.tapes.remove(self)

    # --- watching -----------------------------------------------------------------------
    def watch(self, tensor) -> None:
        """Watch a tensor, a variable, or a nested structure of them."""
        from simdist.core.variables import Variable

        for t in nest.flatten(tensor):
            if isinstance(t, Variable):
                self._watch_variable(t)
            elif isinstance(t, Tensor):
                if _is_differentiable(t._dtype):
                    self._watched.add(t._id)
            else:
                raise ValueError(
                    f"GradientTape.watch takes tensors or variables, got {type(t).__name__}; "
                    "convert it with tf.convert_to_tensor first."
                )

    def _watch_variable(self, variable) -> None:
        if variable._id not in self._watched:
            self._watched.add(variable._id)
            self._watched_variables.append(variable)

    def _on_variable_read(self, variable) -> None:
        if self._recording and self._watch_accessed_variables and variable.trainable:
            self._watch_variable(variable)

    def watched_variables(self) -> tuple:
        return tuple(self._watched_variables)

    def stop_recording(self):
        """Context manager: ops in the block are not recorded."""
        return _StopRecording(self)

    def reset(self) -> None:
        """Forget everything recorded so far (the tape keeps recording if it was)."""
        self._nodes.clear()
        self._watched.clear()
        self._watched_variables.clear()

    # --- differentiating ----------------------------------------------------------------
    def gradient(
        self,
        target,
        sources,
        output_gradients=None,
        unconnected_gradients=UnconnectedGradients.NONE,
    ):
        """d(sum of targets)/d(source) for each source, in the structure of ``sources``.

        Args:
            target: a tensor or nested structure of tensors (their sum is differentiated).
            sources: a tensor, variable, or nested structure of them.
            output_gradients: optional upstream gradients, one per target.
            unconnected_gradients: ``"none"`` (default) or ``"zero"`` for sources the
                target does not depend on.

        Raises:
            RuntimeError: a non-persistent tape's gradient is asked for twice.
        """
        from simdist.core.convert import convert_to_tensor
        from simdist.core.variables import Variable

        if self._used and not self._persistent:
            raise RuntimeError(
                "A non-persistent GradientTape can only be used to compute one set of "
                "gradients; create it with tf.GradientTape(persistent=True) to call gradient "
                "more than once."
            )
        self._used = True
        if self._recording and not self._persistent:
            self.__exit__(None, None, None)
        unconnected = (
            unconnected_gradients
            if isinstance(unconnected_gradients, UnconnectedGradients)
            else UnconnectedGradients(str(unconnected_gradients).lower())
        )

        if type(target) is Tensor:  # one loss: what flatten and convert give
            targets = [target]
        else:
            targets = [convert_to_tensor(t) for t in nest.flatten(target)]
        leaf_types = (Tensor, Variable)
        if type(sources) is list and all(isinstance(s, leaf_types) for s in sources):
            flat_sources = sources  # already flat (a model's trainable_variables)
        else:
            flat_sources = nest.flatten(sources)
            for s in flat_sources:
                if not isinstance(s, leaf_types):
                    raise ValueError(
                        "gradient() sources must be tensors or variables, got "
                        f"{type(s).__name__}."
                    )
        source_ids = [s._id for s in flat_sources]

        upstream = (
            [None] * len(targets) if output_gradients is None else nest.flatten(output_gradients)
        )
        if len(upstream) != len(targets):
            raise ValueError(
                f"output_gradients has {len(upstream)} entries for {len(targets)} targets."
            )
        grads: dict[int, np.ndarray] = {}
        for t, g in zip(targets, upstream, strict=True):
            if not _is_differentiable(t._dtype):
                continue
            seed = (
                np.ones(t._value.shape, t._value.dtype)
                if g is None
                else np.asarray(convert_to_tensor(g, dtype=t._dtype)._value)
            )
            grads[t._id] = grads[t._id] + seed if t._id in grads else seed

        computed = self._backward(grads, set(source_ids))
        results = []
        for s, s_id in zip(flat_sources, source_ids, strict=True):
            g = computed.get(s_id)  # the id read above: a mirrored variable's id costs a lookup
            dtype = s.dtype
            if not dtype.is_floating:  # _is_differentiable
                g = None
            elif g is None and unconnected is UnconnectedGradients.ZERO:
                g = np.zeros(tuple(s.shape), dtype.as_numpy_dtype)
            results.append(None if g is None else make_tensor(g, dtype, s.device))
        self._guard_outer_tapes(targets, [r for r in results if r is not None])
        profile_hook.gradient_done()
        if flat_sources is sources:  # what pack_sequence_as gives for a flat list
            return results
        return nest.pack_sequence_as(sources, results)

    def _backward(self, grads: dict[int, np.ndarray], source_ids: set[int]) -> dict:
        # Forward sweep: which recorded tensors depend on a source (only those need vjps).
        reaches = set(source_ids)
        relevant = []
        for node in self._nodes:
            if not reaches.isdisjoint(node.input_ids):
                reaches.update(node.output_ids)
                relevant.append(node)
        keep = source_ids
        for node in reversed(relevant):
            output_ids = node.output_ids
            if len(output_ids) == 1:  # most ops: one output, no zeros to build
                dy = grads.get(output_ids[0])
                if dy is None:
                    continue
                dys = (dy,)
            else:
                dys = [grads.get(o) for o in output_ids]
                if all(d is None for d in dys):
                    continue
                dys = [
                    np.zeros(shape, dtype) if d is None else d
                    for d, (shape, dtype) in zip(dys, node.output_meta, strict=True)
                ]
            input_ids = node.input_ids
            if node.joint is not None:
                wanted = tuple([i in reaches for i in input_ids])
                pulled = node.joint(wanted, *dys)
            else:
                pulled = [
                    vjp(*dys) if vjp is not None and in_id in reaches else None
                    for in_id, vjp in zip(input_ids, node.vjps, strict=True)
                ]
            for in_id, g in zip(input_ids, pulled, strict=True):
                if g is None:
                    continue
                prev = grads.get(in_id)
                grads[in_id] = g if prev is None else prev + g
            for o in output_ids:  # every consumer is done: free the memory
                if o not in keep:
                    grads.pop(o, None)
        return grads

    def _guard_outer_tapes(self, targets, results) -> None:
        """Make an enclosing tape fail loudly if it differentiates through these gradients."""
        if not results or not any(t is not self and t._recording for t in state.tapes):
            return

        def refuse(*_):
            raise errors.UnimplementedError(
                "simdist computes gradients in NumPy and does not record them, so a tape "
                "cannot differentiate through another tape's gradient (higher-order "
                "gradients are not supported)."
            )

        record("GradientTape.gradient", targets, results, [refuse] * len(targets))


class _StopRecording:
    def __init__(self, tape: GradientTape) -> None:
        self._tape = tape
        self._was = False

    def __enter__(self) -> None:
        self._was = self._tape._recording
        self._tape._recording = False

    def __exit__(self, *exc) -> None:
        self._tape._recording = self._was
